//! Isolation between concurrent runs and from the host: attacks that target the sandbox's
//! neighbours (other runs, the supervisors, the caller) rather than the host's files, and
//! evidence the program could try to forge.

use std::os::fd::AsRawFd;
use std::thread::JoinHandle;
use std::time::Duration;

use sandbox::{Limits, Profile, RunOutcome, RunSpec, Sandbox, Status};

use super::{expect_stdout, sandbox, Case, Fixture, Lang};

const KILL_OWN_GROUP_C: &str = r#"
#include <signal.h>
#include <unistd.h>
int main(void) { usleep(500000); kill(0, SIGKILL); return 0; }
"#;

const STOP_OWN_GROUP_C: &str = r#"
#include <signal.h>
#include <unistd.h>
int main(void) { usleep(500000); kill(0, SIGSTOP); return 0; }
"#;

const SIGSYS_PATHS_C: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
static const char *verdict(long rc) { return rc < 0 && errno == EPERM ? "EPERM" : "allowed"; }
int main(void) {
    long rc = syscall(SYS_clone, SIGSYS, 0, 0, 0, 0);
    if (rc == 0) _exit(0);
    printf("exit_signal:%s\n", verdict(rc));
    int p[2];
    if (pipe(p)) return 2;
    printf("f_setsig:%s\n", verdict(fcntl(p[0], F_SETSIG, SIGSYS)));
    printf("pdeathsig:%s\n", verdict(prctl(PR_SET_PDEATHSIG, SIGSYS)));
    struct sock_filter trap[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP) };
    struct sock_fprog prog = { 1, trap };
    printf("own_filter:%s\n", verdict(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)));
    printf("user_dispatch:%s\n", verdict(prctl(59, 1, 0, 0, 0)));
    return 0;
}
"#;

const SIGSYS_TIMER_C: &str = r#"
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(void) {
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGSYS;
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &ev, &timer)) return 2;
    struct itimerspec at = { {0, 0}, {0, 10 * 1000 * 1000} };
    timer_settime(timer, 0, &at, 0);
    for (;;) pause();
}
"#;

const KEYCTL_C: &str = r#"
#include <sys/syscall.h>
#include <unistd.h>
int main(void) { syscall(SYS_keyctl, 0, 0, 0, 0, 0); return 0; }
"#;

const HOLD_LOCKS_C: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <unistd.h>
int main(void) {
    int fd = open("/etc/ld.so.cache", O_RDONLY);
    if (fd < 0) return 2;
    struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
    printf("flock:%d fcntl:%d\n", flock(fd, LOCK_EX), fcntl(fd, F_SETLK, &lock));
    fflush(stdout);
    sleep(2);
    return 0;
}
"#;

const SOCKET_FAMILIES_C: &str = r#"
#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <sys/socket.h>
static const char *verdict(int fd) { return fd >= 0 ? "open" : errno == EACCES ? "EACCES" : "other"; }
int main(void) {
    printf("vsock:%s\n", verdict(socket(40 /* AF_VSOCK */, SOCK_STREAM, 0)));
    printf("uevent:%s\n", verdict(socket(AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT)));
    printf("packet:%s\n", verdict(socket(AF_PACKET, SOCK_RAW, 0)));
    printf("inet:%s\n", verdict(socket(AF_INET, SOCK_STREAM, 0)));
    printf("unix:%s\n", verdict(socket(AF_UNIX, SOCK_STREAM, 0)));
    return 0;
}
"#;

const SOCKET_FAMILIES_EXPECTED: &str =
    "vsock:EACCES\nuevent:EACCES\npacket:EACCES\ninet:open\nunix:open";

pub fn all() -> Vec<Case> {
    use Lang::C;
    vec![
        // A signal to the program's own process group reaches only its own run.
        Case::new(
            "kill_own_group_spares_other_runs_c",
            C,
            KILL_OWN_GROUP_C,
            Status::Signaled,
        )
        .setup(start_bystander)
        .check(|f, _| bystander_unharmed(f)),
        Case::new(
            "stop_own_group_spares_other_runs_c",
            C,
            STOP_OWN_GROUP_C,
            Status::TimeLimitWall,
        )
        .limits(|l| l.wall_time_ms = 1_500)
        .setup(start_bystander)
        .check(|f, _| bystander_unharmed(f)),
        // `disallowed_syscall` comes from the filter's listener only.
        Case::new("sigsys_paths_are_refused_c", C, SIGSYS_PATHS_C, Status::Ok).check(|_, o| {
            expect_stdout(
                o,
                "exit_signal:EPERM\nf_setsig:EPERM\npdeathsig:EPERM\nown_filter:EPERM\n\
                 user_dispatch:EPERM",
            )
        }),
        Case::new(
            "sigsys_from_a_timer_is_only_a_signal_c",
            C,
            SIGSYS_TIMER_C,
            Status::Signaled,
        )
        .check(|_, o| {
            if o.signal == Some(libc::SIGSYS) {
                Ok(())
            } else {
                Err(format!("signal {:?}", o.signal))
            }
        }),
        Case::new(
            "disallowed_call_is_named_c",
            C,
            KEYCTL_C,
            Status::DisallowedSyscall,
        )
        .check(|_, o| {
            let message = o.message.as_deref().unwrap_or_default();
            if message.contains(&format!("system call {}", libc::SYS_keyctl)) {
                Ok(())
            } else {
                Err(format!("message {message:?}"))
            }
        }),
        // Locks on shared read-only files neither block the host nor signal other runs.
        Case::new(
            "locks_on_shared_files_block_nobody_c",
            C,
            HOLD_LOCKS_C,
            Status::Ok,
        )
        .setup(|f| {
            let probe: JoinHandle<Result<(), String>> = std::thread::spawn(|| {
                std::thread::sleep(Duration::from_millis(1_000));
                lock_on_host("/etc/ld.so.cache")
            });
            keep_thread(f, probe);
        })
        .check(|f, o| {
            expect_stdout(o, "flock:0 fcntl:0")?;
            f.state.take_join::<Result<(), String>>()
        }),
        // Socket families: an allow-list, never vsock, netlink or packet sockets.
        Case::new(
            "socket_families_are_allow_listed_jvm",
            C,
            SOCKET_FAMILIES_C,
            Status::Ok,
        )
        .profile(Profile::Jvm)
        .check(|_, o| expect_stdout(o, SOCKET_FAMILIES_EXPECTED)),
        Case::new(
            "socket_families_are_allow_listed_node",
            C,
            SOCKET_FAMILIES_C,
            Status::Ok,
        )
        .profile(Profile::Node)
        .check(|_, o| expect_stdout(o, SOCKET_FAMILIES_EXPECTED)),
    ]
}

/// Takes (and drops) an exclusive `flock` and a write record lock on a host file, without
/// waiting: a run holding a lock there would make this fail.
fn lock_on_host(path: &str) -> Result<(), String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("open {path}: {e}"))?;
    let fd = file.as_raw_fd();
    // SAFETY: flock and fcntl on a descriptor we own, with a valid struct flock.
    unsafe {
        if libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) != 0 {
            return Err(format!(
                "host flock on {path}: {}",
                std::io::Error::last_os_error()
            ));
        }
        libc::flock(fd, libc::LOCK_UN);
        let mut lock: libc::flock = std::mem::zeroed();
        lock.l_type = libc::F_WRLCK as i16;
        lock.l_whence = libc::SEEK_SET as i16;
        if libc::fcntl(fd, libc::F_SETLK, &lock) != 0 {
            return Err(format!(
                "host record lock on {path}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

/// A second, innocent run started alongside the case's program.
fn start_bystander(fixture: &mut Fixture) {
    let run: JoinHandle<RunOutcome> = std::thread::spawn(|| {
        let spec = RunSpec::new("/usr/bin/sleep").args(["1.5"]).limits(Limits {
            wall_time_ms: 10_000,
            ..Limits::default()
        });
        sandbox()
            .run(&spec)
            .unwrap_or_else(|e| panic!("bystander spec: {e}"))
    });
    keep_thread(fixture, run);
}

fn bystander_unharmed(fixture: &Fixture) -> Result<(), String> {
    let outcome = fixture.state.take_join::<RunOutcome>();
    if outcome.status == Status::Ok && outcome.wall_time_ms < 5_000 {
        Ok(())
    } else {
        Err(format!(
            "the concurrent bystander ended as {} after {} ms ({:?})",
            outcome.status, outcome.wall_time_ms, outcome.message
        ))
    }
}

/// Keeps a thread the setup started, for the check to join.
fn keep_thread<T: Send + 'static>(fixture: &mut Fixture, handle: JoinHandle<T>) {
    fixture.state = Some(Box::new(std::sync::Mutex::new(Some(handle))));
}

/// Joins a thread a case's setup left in its state.
trait TakeJoin {
    fn take_join<T: 'static>(&self) -> T;
}

impl TakeJoin for Option<Box<dyn std::any::Any + Send>> {
    fn take_join<T: 'static>(&self) -> T {
        let handle = self
            .as_ref()
            .and_then(|state| state.downcast_ref::<std::sync::Mutex<Option<JoinHandle<T>>>>());
        handle
            .expect("the setup stored a join handle")
            .lock()
            .unwrap()
            .take()
            .expect("joined once")
            .join()
            .expect("the setup's thread panicked")
    }
}
