//! Isolation between concurrent runs and from the host: attacks that target the sandbox's
//! neighbours (other runs, the supervisors, the caller) rather than the host's files, and
//! evidence the program could try to forge.

use std::os::fd::AsRawFd;
use std::thread::JoinHandle;
use std::time::Duration;

use libtest_mimic::{Failed, Trial};
use sandbox::{Bind, Limits, Profile, RunOutcome, RunSpec, Sandbox, Status};

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

/// `hoard`: queues real-time signals to itself until the kernel refuses, and keeps them;
/// `probe`: later queues one.
const SIGNAL_QUEUE_C: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGRTMIN);
    sigprocmask(SIG_BLOCK, &set, 0);
    union sigval value = { 0 };
    if (argc > 1 && !strcmp(argv[1], "probe")) {
        usleep(700000);
        int rc = sigqueue(getpid(), SIGRTMIN, value);
        printf("%s\n", rc == 0 ? "queued" : strerror(errno));
        return 0;
    }
    long n = 0;
    while (sigqueue(getpid(), SIGRTMIN, value) == 0) n++;
    printf("hoarded %s\n", n > 0 ? "some" : "none");
    fflush(stdout);
    sleep(2);
    return 0;
}
"#;

/// Without arguments: 61 spinning threads; `burn`: 300 ms of CPU time, then exit.
const CPU_HOG_C: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static void *spin(void *arg) { volatile unsigned long x = 0; for (;;) x++; return arg; }
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "burn")) {
        volatile unsigned long x = 0;
        while (cpu() < 0.3) x++;
        puts("burned");
        return 0;
    }
    for (int i = 0; i < 60; i++) { pthread_t t; pthread_create(&t, 0, spin, 0); }
    spin(0);
}
"#;

const SOCKET_FAMILIES_EXPECTED: &str =
    "vsock:EACCES\nuevent:EACCES\npacket:EACCES\ninet:open\nunix:open";

/// Prints the program's ignored and blocked signal sets as `/proc` shows them.
const SIGNAL_STATE_C: &str = r#"
#include <stdio.h>
#include <string.h>
int main(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "SigIgn:", 7) || !strncmp(line, "SigBlk:", 7)) fputs(line, stdout);
    return 0;
}
"#;

pub fn all() -> Vec<Case> {
    use Lang::C;
    vec![
        // Only the signals the supervisor ignores are reset before the exec: none is left
        // ignored or blocked for the program.
        Case::new(
            "signals_start_default_and_unblocked_c",
            C,
            SIGNAL_STATE_C,
            Status::Ok,
        )
        .check(|_, o| expect_stdout(o, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000")),
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
        // Per-user kernel budgets: concurrent runs have different uids.
        Case::new(
            "per_uid_signal_queue_is_not_shared_c",
            C,
            SIGNAL_QUEUE_C,
            Status::Ok,
        )
        .setup(|f| start_program_bystander(f, "probe", 10_000))
        .check(|f, o| {
            expect_stdout(o, "hoarded some")?;
            let probe = f.state.take_join::<RunOutcome>();
            expect_stdout(&probe, "queued").map_err(|e| format!("the concurrent run: {e}"))
        }),
        // CPU: a run with 61 spinning threads does not starve a concurrent one.
        Case::new(
            "cpu_hog_spares_other_runs_c",
            C,
            CPU_HOG_C,
            Status::TimeLimitWall,
        )
        .limits(|l| {
            l.pids = 64;
            l.cpu_time_ms = 100_000;
            l.wall_time_ms = 5_000;
        })
        .setup(|f| start_program_bystander(f, "burn", 3_000))
        .check(|f, _| {
            let burner = f.state.take_join::<RunOutcome>();
            if burner.status == Status::Ok {
                Ok(())
            } else {
                Err(format!(
                    "the concurrent run ended as {} with {} ms CPU in {} ms",
                    burner.status, burner.cpu_time_ms, burner.wall_time_ms
                ))
            }
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

/// The case's own compiled program, started alongside it with `mode` as its argument.
fn start_program_bystander(fixture: &mut Fixture, mode: &'static str, wall_time_ms: u64) {
    let job = fixture.job.clone();
    let run: JoinHandle<RunOutcome> = std::thread::spawn(move || {
        let spec = RunSpec::new("/job/main")
            .args([mode])
            .job_dir(&job, false)
            .limits(Limits {
                wall_time_ms,
                ..Limits::default()
            });
        sandbox()
            .run(&spec)
            .unwrap_or_else(|e| panic!("bystander spec: {e}"))
    });
    keep_thread(fixture, run);
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

/// Host-side paths and writable directories: what a run can leave behind on the host.
pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "writable_job_dir_returns_no_setuid_bits_links_or_specials",
            writable_dir_returns_plain_files_only,
        ),
        Trial::test("writable_job_dir_is_capped", writable_dir_is_capped),
        Trial::test(
            "sparse_file_cannot_grow_on_the_host",
            sparse_file_is_an_output_limit,
        ),
        Trial::test(
            "stdin_file_behind_a_symlink_is_refused",
            stdin_symlink_refused,
        ),
        Trial::test(
            "bind_source_behind_a_symlink_is_refused",
            bind_symlink_refused,
        ),
        Trial::test(
            "read_only_bind_is_read_only_in_its_submounts",
            read_only_reaches_submounts,
        ),
        Trial::test(
            "a_run_and_everything_it_starts_stay_on_one_cpu",
            runs_are_pinned_to_one_cpu,
        ),
    ]
}

/// The program inherits its CPUs from the supervisor and passes them on; it cannot change
/// them. A run with a CPU of its own has that one; a run that found every CPU claimed by other
/// runs on the host (other suites run beside this one) has every CPU the supervisor may use.
fn runs_are_pinned_to_one_cpu() -> Result<(), Failed> {
    let outcome = run(&shell(
        "grep Cpus_allowed_list /proc/self/status; \
         taskset -p -c 0-1023 $$ >/dev/null 2>&1; grep Cpus_allowed_list /proc/$$/status",
    ))?;
    expect(&outcome, Status::Ok)?;
    let out = String::from_utf8_lossy(&outcome.stdout).into_owned();
    let cpus: Vec<&str> = out
        .lines()
        .filter_map(|line| line.strip_prefix("Cpus_allowed_list:"))
        .map(str::trim)
        .collect();
    let allowed: Vec<String> = (0..libc::CPU_SETSIZE as usize)
        .filter(|&cpu| {
            // SAFETY: an all-zero set is valid; the call fills it for this process.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
                libc::CPU_ISSET(cpu, &set)
            }
        })
        .map(|cpu| cpu.to_string())
        .collect();
    let every = cpu_list(&allowed);
    match cpus.as_slice() {
        [child, shell]
            if child == shell && (allowed.iter().any(|cpu| cpu == child) || *child == every) =>
        {
            Ok(())
        }
        _ => Err(format!("expected one allowed CPU or all of {every}, twice; got {out:?}").into()),
    }
}

/// CPUs as the kernel lists them (`0-3,6`).
fn cpu_list(cpus: &[String]) -> String {
    let numbers: Vec<u32> = cpus.iter().filter_map(|c| c.parse().ok()).collect();
    let mut ranges: Vec<String> = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let start = numbers[i];
        while i + 1 < numbers.len() && numbers[i + 1] == numbers[i] + 1 {
            i += 1;
        }
        ranges.push(if numbers[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", numbers[i])
        });
        i += 1;
    }
    ranges.join(",")
}

fn shell(script: &str) -> RunSpec {
    RunSpec::new("/bin/sh").args(["-c", script])
}

fn run(spec: &RunSpec) -> Result<RunOutcome, Failed> {
    Ok(sandbox().run(spec)?)
}

fn expect(outcome: &RunOutcome, status: Status) -> Result<(), Failed> {
    if outcome.status == status {
        Ok(())
    } else {
        Err(format!(
            "expected {status}, got {} ({:?}); stdout {:?}, stderr {:?}",
            outcome.status,
            outcome.message,
            String::from_utf8_lossy(&outcome.stdout),
            String::from_utf8_lossy(&outcome.stderr)
        )
        .into())
    }
}

fn writable_dir_returns_plain_files_only() -> Result<(), Failed> {
    let job = tempfile::tempdir()?;
    std::fs::write(
        job.path().join("source.c"),
        "int main(void) { return 0; }\n",
    )?;
    let outcome = run(&shell(
        "cp /bin/true /job/suid && chmod 6755 /job/suid && ln -s /etc/shadow /job/link \
         && ln -s / /job/root && mkdir -p /job/d/e && echo hi > /job/d/e/f && rm /job/source.c",
    )
    .job_dir(job.path(), true))?;
    expect(&outcome, Status::Ok)?;
    let suid = std::fs::symlink_metadata(job.path().join("suid"))?;
    use std::os::unix::fs::MetadataExt;
    if suid.mode() & 0o7000 != 0 || suid.uid() != 0 {
        return Err(format!(
            "suid came back as mode {:o}, uid {}",
            suid.mode(),
            suid.uid()
        )
        .into());
    }
    for gone in ["link", "root", "source.c"] {
        if std::fs::symlink_metadata(job.path().join(gone)).is_ok() {
            return Err(format!("{gone} exists on the host after the run").into());
        }
    }
    assert_eq!(std::fs::read_to_string(job.path().join("d/e/f"))?, "hi\n");
    Ok(())
}

fn writable_dir_is_capped() -> Result<(), Failed> {
    let job = tempfile::tempdir()?;
    let limits = Limits {
        tmp_bytes: 8 << 20,
        tmp_inodes: 64,
        ..Limits::default()
    };
    let outcome = run(&shell(
        "dd if=/dev/zero of=/job/big bs=1M count=100 2>/dev/null; \
         i=0; while touch /job/f$i 2>/dev/null; do i=$((i+1)); done; echo $i",
    )
    .job_dir(job.path(), true)
    .limits(limits))?;
    expect(&outcome, Status::Ok)?;
    let files: u64 = String::from_utf8_lossy(&outcome.stdout).trim().parse()?;
    let big = std::fs::metadata(job.path().join("big"))?.len();
    if files >= 64 || big > 8 << 20 {
        return Err(format!("{files} files and a {big}-byte file got through the caps").into());
    }
    Ok(())
}

fn sparse_file_is_an_output_limit() -> Result<(), Failed> {
    let job = tempfile::tempdir()?;
    let limits = Limits {
        tmp_bytes: 8 << 20,
        file_size_bytes: 1 << 40,
        ..Limits::default()
    };
    let outcome = run(&shell("truncate -s 10G /job/sparse")
        .job_dir(job.path(), true)
        .limits(limits))?;
    expect(&outcome, Status::OutputLimit)?;
    let size = std::fs::metadata(job.path().join("sparse")).map_or(0, |m| m.len());
    if size > 8 << 20 {
        return Err(format!("a {size}-byte file reached the host").into());
    }
    Ok(())
}

fn stdin_symlink_refused() -> Result<(), Failed> {
    let job = tempfile::tempdir()?;
    let planted = job.path().join("input");
    std::os::unix::fs::symlink("/etc/shadow", &planted)?;
    let outcome = run(&RunSpec::new("/bin/cat").stdin(sandbox::Stdin::File(planted)))?;
    expect(&outcome, Status::ConfigError)?;
    if !outcome.stdout.is_empty() {
        return Err("the symlink's target reached the program".into());
    }
    Ok(())
}

fn bind_symlink_refused() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let planted = dir.path().join("data");
    std::os::unix::fs::symlink("/", &planted)?;
    let outcome = run(&RunSpec::new("/bin/ls")
        .args(["/data"])
        .bind(Bind::read_only(&planted, "/data")))?;
    expect(&outcome, Status::ConfigError)
}

fn read_only_reaches_submounts() -> Result<(), Failed> {
    let dir = tempfile::tempdir()?;
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub)?;
    let target = std::ffi::CString::new(sub.as_os_str().as_encoded_bytes())?;
    // SAFETY: mounting a small tmpfs on a directory this test owns; unmounted below.
    let rc = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            0,
            c"size=1m".as_ptr().cast(),
        )
    };
    if rc != 0 {
        return Err(format!(
            "mount a tmpfs for the test: {}",
            std::io::Error::last_os_error()
        )
        .into());
    }
    let outcome = run(&shell("echo x > /data/sub/f && echo wrote || echo refused")
        .bind(Bind::read_only(dir.path(), "/data")));
    let written = sub.join("f").exists();
    // SAFETY: unmounting what this test mounted.
    unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    let outcome = outcome?;
    expect(&outcome, Status::Ok)?;
    if written || String::from_utf8_lossy(&outcome.stdout).trim() != "refused" {
        return Err("a submount of a read-only bind was written".into());
    }
    Ok(())
}
