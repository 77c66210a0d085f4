//! The table of attacks. Each entry: the program, the exact status it must end in, and any
//! further assertion about its output or the host.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use sandbox::{Profile, RunOutcome, Status};

use super::{expect_stderr_contains, expect_stdout, stdout, Case, Fixture, Lang};

const FORK_BOMB_C: &str = r#"
#include <unistd.h>
int main(void) { for (;;) fork(); }
"#;

const FORK_BOMB_PY: &str = r#"
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"#;

const THREAD_BOMB_C: &str = r#"
#include <pthread.h>
#include <unistd.h>
static void *idle(void *arg) { for (;;) pause(); return arg; }
int main(void) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 65536);
    for (;;) { pthread_t t; pthread_create(&t, &attr, idle, 0); }
}
"#;

const THREAD_BOMB_CPP: &str = r#"
#include <chrono>
#include <thread>
#include <vector>
int main() {
    std::vector<std::thread> threads;
    for (;;) {
        try {
            threads.emplace_back([] { std::this_thread::sleep_for(std::chrono::hours(1)); });
        } catch (...) {
        }
    }
}
"#;

const MEMORY_BOMB_C: &str = r#"
#include <stdlib.h>
#include <string.h>
int main(void) {
    for (;;) {
        char *p = malloc(1 << 20);
        if (!p) return 2;
        memset(p, 1, 1 << 20);
    }
}
"#;

const MEMORY_BOMB_CPP: &str = r#"
#include <vector>
int main() {
    std::vector<long> v;
    for (;;) v.push_back(42);
}
"#;

const MEMORY_BOMB_PY: &str = r#"
hoard = []
while True:
    hoard.append(bytearray(1 << 20))
"#;

const STACK_OVERFLOW_C: &str = r#"
int down(int n) { volatile char frame[4096]; frame[0] = (char)n; return down(n + 1) + frame[0]; }
int main(void) { return down(0); }
"#;

const CPU_LOOP_C: &str = r#"
int main(void) { volatile unsigned long x = 0; for (;;) x++; }
"#;

const CPU_LOOP_PY: &str = "while True:\n    pass\n";

const SLEEP_C: &str = r#"
#include <unistd.h>
int main(void) { sleep(1000); return 0; }
"#;

const SLEEP_PY: &str = "import time\ntime.sleep(1000)\n";

const CPU_THREADS_C: &str = r#"
#include <pthread.h>
static void *spin(void *arg) { volatile unsigned long x = 0; for (;;) x++; return arg; }
int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, spin, 0);
    pthread_join(t[0], 0);
}
"#;

const STDOUT_FLOOD_C: &str = r#"
#include <stdio.h>
int main(void) { for (;;) fputs("flood flood flood flood flood flood flood flood\n", stdout); }
"#;

const STDERR_FLOOD_C: &str = r#"
#include <stdio.h>
int main(void) { for (;;) fputs("flood flood flood flood flood flood flood flood\n", stderr); }
"#;

const STDOUT_FLOOD_PY: &str = "while True:\n    print('flood' * 100)\n";

const TMP_FILL_C: &str = r#"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    char path[4096];
    snprintf(path, sizeof path, "/tmp/%s", getenv("ULTICODE_CASE"));
    FILE *f = fopen(path, "w");
    if (!f) { perror("fopen"); return 1; }
    static char block[1 << 16];
    memset(block, 'x', sizeof block);
    for (;;) {
        if (fwrite(block, 1, sizeof block, f) != sizeof block || fflush(f) != 0) {
            fprintf(stderr, "write: %s\n", strerror(errno));
            return 1;
        }
    }
}
"#;

const TMP_INODES_C: &str = r#"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    char path[64];
    for (int i = 0;; i++) {
        snprintf(path, sizeof path, "/tmp/f%d", i);
        int fd = open(path, O_CREAT | O_WRONLY, 0600);
        if (fd < 0) { fprintf(stderr, "create %d: %s\n", i, strerror(errno)); return 1; }
        close(fd);
    }
}
"#;

/// Opens argv[1] for writing; reports the error and exits 1 when refused.
const WRITE_PATH_C: &str = r#"
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "w");
    if (!f) { perror(argv[1]); return 1; }
    fputs("owned\n", f);
    return fclose(f) == 0 ? 0 : 1;
}
"#;

/// Prints argv[1]'s content; reports the error and exits 1 when it cannot.
const READ_PATH_C: &str = r#"
#include <stdio.h>
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "r");
    if (!f) { perror(argv[1]); return 1; }
    int c;
    while ((c = fgetc(f)) != EOF) putchar(c);
    return 0;
}
"#;

const READ_PROC1_ENVIRON_PY: &str = r#"
import sys
try:
    with open('/proc/1/environ', 'rb') as f:
        sys.stdout.write(f.read().decode(errors='replace'))
except OSError as e:
    print(e, file=sys.stderr)
    sys.exit(1)
"#;

const LIST_PROC_PY: &str = r#"
import os
print(' '.join(sorted(p for p in os.listdir('/proc') if p.isdigit())))
"#;

const TCP_CONNECT_C: &str = r#"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
int main(int argc, char **argv) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) { perror("socket"); return 1; }
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[1])) };
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) { perror("connect"); return 1; }
    puts("connected");
    return 0;
}
"#;

const TCP_CONNECT_PY: &str = r#"
import socket, sys
try:
    socket.create_connection(('127.0.0.1', 6379), timeout=1)
    print('connected')
except OSError as e:
    print(e, file=sys.stderr)
    sys.exit(1)
"#;

const TCP_CONNECT_NODE: &str = r#"
const net = require('net');
const port = Number(process.argv[2]);
const socket = net.connect(port, '127.0.0.1', () => { console.log('connected'); process.exit(0); });
socket.on('error', (e) => { console.error(e.code); process.exit(1); });
"#;

const UDP_C: &str = r#"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
int main(void) {
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) { perror("socket"); return 1; }
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(53) };
    inet_pton(AF_INET, "8.8.8.8", &addr.sin_addr);
    if (sendto(fd, "q", 1, 0, (struct sockaddr *)&addr, sizeof addr) != 1) { perror("sendto"); return 1; }
    puts("sent");
    return 0;
}
"#;

const UDP_NODE: &str = r#"
const dgram = require('dgram');
const socket = dgram.createSocket('udp4');
socket.send('q', 6379, '127.0.0.1', (err) => {
    if (err) { console.error(err.code); process.exit(1); }
    console.log('sent');
    process.exit(0);
});
"#;

const ABSTRACT_SOCKET_NODE: &str = r#"
const net = require('net');
const socket = net.connect({ path: '\0' + process.env.ULTICODE_CASE }, () => {
    console.log('connected'); process.exit(0);
});
socket.on('error', (e) => { console.error(e.code); process.exit(1); });
"#;

const PTRACE_C: &str = r#"
#include <sys/ptrace.h>
int main(void) { ptrace(PTRACE_TRACEME, 0, 0, 0); return 0; }
"#;

const KILL_EVERYTHING_C: &str = r#"
#include <signal.h>
#include <stdio.h>
int main(void) { kill(-1, SIGKILL); puts("survived"); return 0; }
"#;

const KILL_PARENT_C: &str = r#"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    pid_t parent = getppid();
    int rc = kill(parent, SIGKILL);
    printf("parent %d: %s\n", parent, rc == 0 ? "killed" : strerror(errno));
    return 0;
}
"#;

const DAEMON_C: &str = r#"
#include <stdio.h>
#include <unistd.h>
int main(void) {
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            for (;;) sleep(1);
        }
        return 0;
    }
    puts("detached");
    return 0;
}
"#;

const MOUNT_C: &str = r#"
#include <sys/mount.h>
int main(void) { return mount("none", "/tmp", "tmpfs", 0, 0); }
"#;

const UNSHARE_C: &str = r#"
#define _GNU_SOURCE
#include <sched.h>
int main(void) { return unshare(CLONE_NEWUSER); }
"#;

const CHROOT_C: &str = r#"
#include <unistd.h>
int main(void) { return chroot("/tmp"); }
"#;

const CLOCK_SETTIME_C: &str = r#"
#include <time.h>
int main(void) { struct timespec t = { 0, 0 }; return clock_settime(CLOCK_REALTIME, &t); }
"#;

const REBOOT_C: &str = r#"
#include <sys/reboot.h>
int main(void) { return reboot(RB_POWER_OFF); }
"#;

const KEYCTL_C: &str = r#"
#include <sys/syscall.h>
#include <unistd.h>
int main(void) { return (int)syscall(SYS_keyctl, 0, 0, 0, 0, 0); }
"#;

const IO_URING_C: &str = r#"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    char params[120];
    memset(params, 0, sizeof params);
    long rc = syscall(SYS_io_uring_setup, 8, params);
    printf("%ld %d\n", rc, rc < 0 ? errno : 0);
    return 0;
}
"#;

const INT80_C: &str = r#"
int main(void) {
    int pid;
    __asm__ volatile("int $0x80" : "=a"(pid) : "a"(20));
    return pid == 0;
}
"#;

const CLONE_NEWUSER_C: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void) {
    long rc = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (rc == 0) _exit(0);
    printf("%s\n", rc < 0 ? strerror(errno) : "cloned");
    return 0;
}
"#;

const FORGE_SIGSYS_C: &str = r#"
#include <signal.h>
#include <stdio.h>
int main(void) { int rc = raise(SIGSYS); printf("raise: %d\n", rc); return 0; }
"#;

const FD_LEAK_C: &str = r#"
#include <fcntl.h>
#include <stdio.h>
int main(void) {
    int open_fds = 0;
    for (int fd = 3; fd < 4096; fd++) if (fcntl(fd, F_GETFD) != -1) open_fds++;
    printf("%d\n", open_fds);
    return 0;
}
"#;

const ENV_C: &str = r#"
#include <stdio.h>
extern char **environ;
int main(void) { for (char **e = environ; *e; e++) puts(*e); return 0; }
"#;

const DEV_PY: &str = r#"
import os
print(' '.join(sorted(os.listdir('/dev'))))
with open('/dev/null', 'w') as f:
    f.write('ok')
for device in ['/dev/sda', '/dev/vda', '/dev/mem', '/dev/kmsg']:
    print(device, os.path.exists(device))
"#;

const SYMLINK_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (symlink(argv[1], "/tmp/link") != 0) { perror("symlink"); return 2; }
    FILE *f = fopen("/tmp/link", "r");
    if (!f) { perror("/tmp/link"); return 1; }
    int c;
    while ((c = fgetc(f)) != EOF) putchar(c);
    return 0;
}
"#;

const ABORT_C: &str = r#"
#include <stdlib.h>
int main(void) { abort(); }
"#;

const UNCAUGHT_CPP: &str = r#"
#include <stdexcept>
int main() { throw std::runtime_error("boom"); }
"#;

const INCLUDE_URANDOM_C: &str = r#"
#include "/dev/urandom"
int main(void) { return 0; }
"#;

const HOSTNAME_PY: &str = "import socket\nprint(socket.gethostname())\n";

/// Every capability set, `no_new_privs` and the seccomp mode, as the kernel reports them.
const PRIVILEGES_PY: &str = r#"
fields = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
names = ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"]
print(" ".join(name + "=" + fields[name].strip() for name in names))
"#;

const SYSCTL_WRITE_C: &str = r#"
#include <stdio.h>
int main(void) {
    FILE *f = fopen("/proc/sys/kernel/hostname", "w");
    if (!f) { perror("/proc/sys/kernel/hostname"); return 1; }
    fputs("owned", f);
    return fclose(f) == 0 ? 0 : 1;
}
"#;

const CPU_BURN_500_C: &str = r#"
#include <time.h>
int main(void) {
    clock_t start = clock();
    while (clock() - start < CLOCKS_PER_SEC / 2) {}
    return 0;
}
"#;

const TOUCH_100_MIB_C: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    size_t n = 100u << 20;
    volatile char *p = malloc(n);
    if (!p) return 2;
    for (size_t i = 0; i < n; i += 4096) p[i] = 7;
    printf("%d\n", p[n - 4096]);
    return 0;
}
"#;

const COUNT_STDIN_C: &str = r#"
#include <stdio.h>
int main(void) { long n = 0; while (getchar() != EOF) n++; printf("%ld\n", n); return 0; }
"#;

const IGNORE_STDIN_C: &str = "int main(void) { return 0; }\n";

const HELLO_JS: &str = "console.log('hello from node');\n";

/// Every attack and measurement case.
pub fn all() -> Vec<Case> {
    use Lang::{CompileC, Cpp, Node, Prebuilt, Python, C};
    vec![
        // Processes and threads.
        Case::new("fork_bomb_c", C, FORK_BOMB_C, Status::ForkLimit),
        Case::new("fork_bomb_python", Python, FORK_BOMB_PY, Status::ForkLimit),
        Case::new("thread_bomb_c", C, THREAD_BOMB_C, Status::ForkLimit),
        Case::new("thread_bomb_cpp", Cpp, THREAD_BOMB_CPP, Status::ForkLimit),
        // Memory.
        Case::new(
            "memory_bomb_malloc_c",
            C,
            MEMORY_BOMB_C,
            Status::MemoryLimit,
        )
        .limits(|l| l.memory_bytes = 64 << 20),
        Case::new(
            "memory_bomb_vector_cpp",
            Cpp,
            MEMORY_BOMB_CPP,
            Status::MemoryLimit,
        )
        .limits(|l| l.memory_bytes = 64 << 20),
        Case::new(
            "memory_bomb_list_python",
            Python,
            MEMORY_BOMB_PY,
            Status::MemoryLimit,
        )
        .limits(|l| l.memory_bytes = 64 << 20),
        // With the default stack limit (= the memory limit) deep recursion is legal, so endless
        // recursion runs into the memory limit; with a small stack it is a segfault.
        Case::new(
            "stack_overflow_within_memory_c",
            C,
            STACK_OVERFLOW_C,
            Status::MemoryLimit,
        )
        .limits(|l| l.memory_bytes = 64 << 20),
        Case::new(
            "stack_overflow_small_stack_c",
            C,
            STACK_OVERFLOW_C,
            Status::Signaled,
        )
        .limits(|l| l.stack_bytes = Some(8 << 20))
        .check(|_, o| signal_is(o, libc::SIGSEGV)),
        // Time.
        Case::new("cpu_loop_c", C, CPU_LOOP_C, Status::TimeLimitCpu)
            .limits(|l| l.wall_time_ms = 10_000)
            .check(|_, o| within("cpu_time_ms", o.cpu_time_ms, 1_000, 1_300)),
        Case::new("cpu_loop_python", Python, CPU_LOOP_PY, Status::TimeLimitCpu)
            .limits(|l| l.wall_time_ms = 10_000),
        Case::new("sleep_forever_c", C, SLEEP_C, Status::TimeLimitWall)
            .limits(|l| l.wall_time_ms = 500)
            .check(|_, o| within("wall_time_ms", o.wall_time_ms, 500, 900)),
        Case::new(
            "sleep_forever_python",
            Python,
            SLEEP_PY,
            Status::TimeLimitWall,
        )
        .limits(|l| l.wall_time_ms = 500),
        Case::new(
            "cpu_in_many_threads_is_summed_c",
            C,
            CPU_THREADS_C,
            Status::TimeLimitCpu,
        )
        // A slot's one CPU may be shared with a busy machine: the wall limit stays out of
        // reach so the CPU limit is what ends the run.
        .limits(|l| l.wall_time_ms = 20_000)
        .check(|_, o| {
            // The four threads' time is summed. A run slot is pinned to one CPU where the host
            // has cpusets, so the sum grows no faster than the wall clock there.
            if o.cpu_time_ms >= 1_000 {
                Ok(())
            } else {
                Err(format!(
                    "cpu {} ms vs wall {} ms",
                    o.cpu_time_ms, o.wall_time_ms
                ))
            }
        }),
        // Output.
        Case::new("stdout_flood_c", C, STDOUT_FLOOD_C, Status::OutputLimit)
            .check(|_, o| output_capped(o.stdout.len(), o)),
        Case::new("stderr_flood_c", C, STDERR_FLOOD_C, Status::OutputLimit)
            .check(|_, o| output_capped(o.stderr.len(), o)),
        Case::new(
            "stdout_flood_python",
            Python,
            STDOUT_FLOOD_PY,
            Status::OutputLimit,
        )
        .check(|_, o| output_capped(o.stdout.len(), o)),
        // Filesystem.
        Case::new("tmp_fill_c", C, TMP_FILL_C, Status::NonzeroExit)
            .limits(|l| l.tmp_bytes = 8 << 20)
            .check(|_, o| expect_stderr_contains(o, "No space left on device")),
        Case::new("tmp_inode_fill_c", C, TMP_INODES_C, Status::NonzeroExit)
            .limits(|l| l.tmp_inodes = 64)
            .check(|_, o| expect_stderr_contains(o, "No space left on device")),
        Case::new("write_root_c", C, WRITE_PATH_C, Status::NonzeroExit)
            .args(&["/owned"])
            .check(|_, o| expect_stderr_contains(o, "Read-only file system")),
        Case::new("write_usr_c", C, WRITE_PATH_C, Status::NonzeroExit)
            .args(&["/usr/bin/owned"])
            .check(|_, o| expect_stderr_contains(o, "Read-only file system")),
        Case::new("write_job_dir_c", C, WRITE_PATH_C, Status::NonzeroExit)
            .args(&["/job/owned"])
            .check(|f, o| {
                expect_stderr_contains(o, "Read-only file system")?;
                absent(&f.job.join("owned"))
            }),
        Case::new("write_etc_passwd_c", C, WRITE_PATH_C, Status::NonzeroExit)
            .args(&["/etc/passwd"])
            .check(|_, o| expect_stderr_contains(o, "Read-only file system")),
        Case::new("read_etc_shadow_c", C, READ_PATH_C, Status::NonzeroExit)
            .args(&["/etc/shadow"])
            .check(|_, o| expect_stderr_contains(o, "No such file or directory")),
        Case::new("read_root_home_c", C, READ_PATH_C, Status::NonzeroExit)
            .args(&["/root/.bashrc"])
            .check(|_, o| expect_stderr_contains(o, "No such file or directory")),
        Case::new(
            "read_host_proc1_environ_python",
            Python,
            READ_PROC1_ENVIRON_PY,
            Status::NonzeroExit,
        )
        .check(|_, o| expect_stderr_contains(o, "No such file or directory")),
        Case::new(
            "proc_shows_only_the_run_python",
            Python,
            LIST_PROC_PY,
            Status::Ok,
        )
        .check(|_, o| expect_stdout(o, "2")),
        Case::new("read_sys_c", C, READ_PATH_C, Status::NonzeroExit)
            .args(&["/sys/kernel/uevent_helper"])
            .check(|_, o| expect_stderr_contains(o, "No such file or directory")),
        Case::new("write_proc_sys_c", C, SYSCTL_WRITE_C, Status::NonzeroExit),
        Case::new("symlink_out_of_tmp_c", C, SYMLINK_C, Status::NonzeroExit)
            .args(&["/var/tmp/ulticode-attack-secret"])
            .setup(|f| {
                std::fs::write("/var/tmp/ulticode-attack-secret", &f.marker).unwrap();
            })
            .check(|f, o| {
                expect_stderr_contains(o, "No such file or directory")?;
                if stdout(o).contains(&f.marker) {
                    return Err("the host file leaked".into());
                }
                Ok(())
            }),
        Case::new(
            "symlink_relative_escape_c",
            C,
            SYMLINK_C,
            Status::NonzeroExit,
        )
        .args(&["../../../../../etc/shadow"])
        .check(|_, o| expect_stderr_contains(o, "No such file or directory")),
        Case::new(
            "setuid_binary_stays_unprivileged",
            Prebuilt("/job/id"),
            "",
            Status::Ok,
        )
        .args(&["-u"])
        .setup(|f| {
            let copy = f.job.join("id");
            std::fs::copy("/usr/bin/id", &copy).unwrap();
            std::os::unix::fs::chown(&copy, Some(0), Some(0)).unwrap();
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o4755)).unwrap();
        })
        .check(|_, o| super::expect_run_identity(o)),
        Case::new("dev_is_minimal_python", Python, DEV_PY, Status::Ok).check(|_, o| {
            expect_stdout(
                o,
                "fd null random stderr stdin stdout urandom zero\n\
                 /dev/sda False\n/dev/vda False\n/dev/mem False\n/dev/kmsg False",
            )
        }),
        Case::new("core_dumps_are_off_c", C, ABORT_C, Status::Signaled)
            .job_writable()
            .check(|f, o| {
                signal_is(o, libc::SIGABRT)?;
                let cores: Vec<_> = std::fs::read_dir(&f.job)
                    .unwrap()
                    .flatten()
                    .filter(|e| e.file_name().to_string_lossy().starts_with("core"))
                    .collect();
                if cores.is_empty() {
                    Ok(())
                } else {
                    Err(format!("core files written: {cores:?}"))
                }
            }),
        // Network.
        Case::new(
            "tcp_connect_postgres_c",
            C,
            TCP_CONNECT_C,
            Status::NonzeroExit,
        )
        .args(&["5432"])
        .check(|_, o| expect_stderr_contains(o, "socket: Permission denied")),
        Case::new(
            "tcp_connect_redis_python",
            Python,
            TCP_CONNECT_PY,
            Status::NonzeroExit,
        )
        .check(|_, o| expect_stderr_contains(o, "Permission denied")),
        // The node profile allows sockets: the empty network namespace is what stops them.
        Case::new(
            "tcp_connect_postgres_node",
            Node,
            TCP_CONNECT_NODE,
            Status::NonzeroExit,
        )
        .args(&["5432"])
        .check(|_, o| expect_stderr_contains(o, "ENETUNREACH")),
        Case::new(
            "tcp_connect_redis_node",
            Node,
            TCP_CONNECT_NODE,
            Status::NonzeroExit,
        )
        .args(&["6379"])
        .check(|_, o| expect_stderr_contains(o, "ENETUNREACH")),
        Case::new("udp_send_c", C, UDP_C, Status::NonzeroExit)
            .check(|_, o| expect_stderr_contains(o, "socket: Permission denied")),
        Case::new("udp_send_node", Node, UDP_NODE, Status::NonzeroExit)
            .check(|_, o| expect_stderr_contains(o, "ENETUNREACH")),
        Case::new(
            "abstract_unix_socket_node",
            Node,
            ABSTRACT_SOCKET_NODE,
            Status::NonzeroExit,
        )
        .setup(|f| {
            use std::os::linux::net::SocketAddrExt;
            let addr =
                std::os::unix::net::SocketAddr::from_abstract_name(f.marker.as_bytes()).unwrap();
            let listener = UnixListener::bind_addr(&addr).unwrap();
            listener.set_nonblocking(true).unwrap();
            f.state = Some(Box::new(listener));
        })
        .check(|f, o| {
            expect_stderr_contains(o, "ECONNREFUSED")?;
            let listener = f
                .state
                .as_ref()
                .unwrap()
                .downcast_ref::<UnixListener>()
                .unwrap();
            match listener.accept() {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
                other => Err(format!("the host listener saw {other:?}")),
            }
        }),
        // Other processes and the kernel.
        Case::new("ptrace_c", C, PTRACE_C, Status::DisallowedSyscall),
        Case::new("kill_everything_c", C, KILL_EVERYTHING_C, Status::Ok)
            .setup(|f| {
                // A process of the same uid on the host: it must survive kill(-1) inside.
                let canary = Command::new("/bin/sleep")
                    .arg("30")
                    .uid(1000)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap();
                f.state = Some(Box::new(canary));
            })
            .check(|f, o| {
                expect_stdout(o, "survived")?;
                let canary = f.state.as_ref().unwrap().downcast_ref::<Child>().unwrap();
                let alive = std::path::Path::new(&format!("/proc/{}", canary.id())).exists();
                unsafe { libc::kill(canary.id() as i32, libc::SIGKILL) };
                if alive {
                    Ok(())
                } else {
                    Err("the host canary was killed".into())
                }
            }),
        Case::new("kill_parent_c", C, KILL_PARENT_C, Status::Ok)
            .check(|_, o| expect_stdout(o, "parent 1: Operation not permitted")),
        Case::new("setsid_double_fork_daemon_c", C, DAEMON_C, Status::Ok).check(|_, o| {
            expect_stdout(o, "detached")?;
            within("wall_time_ms", o.wall_time_ms, 0, 1_000)
        }),
        Case::new("mount_c", C, MOUNT_C, Status::DisallowedSyscall),
        Case::new("unshare_c", C, UNSHARE_C, Status::DisallowedSyscall),
        Case::new("chroot_c", C, CHROOT_C, Status::DisallowedSyscall),
        Case::new(
            "clock_settime_c",
            C,
            CLOCK_SETTIME_C,
            Status::DisallowedSyscall,
        ),
        Case::new("reboot_c", C, REBOOT_C, Status::DisallowedSyscall),
        Case::new("keyctl_c", C, KEYCTL_C, Status::DisallowedSyscall),
        Case::new("io_uring_answers_enosys_c", C, IO_URING_C, Status::Ok)
            .check(|_, o| expect_stdout(o, &format!("-1 {}", libc::ENOSYS))),
        Case::new(
            "int80_32bit_syscall_c",
            C,
            INT80_C,
            Status::DisallowedSyscall,
        ),
        Case::new("clone_new_user_namespace_c", C, CLONE_NEWUSER_C, Status::Ok)
            .check(|_, o| expect_stdout(o, "Operation not permitted")),
        Case::new("sigsys_cannot_be_forged_c", C, FORGE_SIGSYS_C, Status::Ok)
            .check(|_, o| expect_stdout(o, "raise: -1")),
        // Compilers run in the sandbox too: an include of an endless device ends at the
        // compile limits instead of hanging or exhausting the host.
        Case::new(
            "include_dev_urandom_at_compile_time",
            CompileC,
            INCLUDE_URANDOM_C,
            Status::MemoryLimit,
        )
        .job_writable()
        .limits(|l| {
            l.cpu_time_ms = 10_000;
            l.wall_time_ms = 20_000;
            l.memory_bytes = 256 << 20;
        }),
        Case::new(
            "uncaught_exception_cpp",
            Cpp,
            UNCAUGHT_CPP,
            Status::Signaled,
        )
        .check(|_, o| signal_is(o, libc::SIGABRT)),
        // Leaks.
        Case::new("no_descriptor_leaks_c", C, FD_LEAK_C, Status::Ok)
            .check(|_, o| expect_stdout(o, "0")),
        Case::new("environment_is_clean_c", C, ENV_C, Status::Ok).check(|f, o| {
            let mut vars: Vec<String> = stdout(o).lines().map(str::to_string).collect();
            vars.sort();
            let expected = [
                "HOME=/tmp".to_string(),
                "LANG=C.UTF-8".to_string(),
                "PATH=/usr/local/bin:/usr/bin:/bin".to_string(),
                format!("ULTICODE_CASE={}", f.marker),
            ];
            if vars == expected {
                Ok(())
            } else {
                Err(format!("environment {vars:?}"))
            }
        }),
        Case::new(
            "hostname_is_private_python",
            Python,
            HOSTNAME_PY,
            Status::Ok,
        )
        .check(|_, o| expect_stdout(o, "ulticode")),
        Case::new(
            "no_capability_in_any_set_python",
            Python,
            PRIVILEGES_PY,
            Status::Ok,
        )
        .check(|_, o| {
            let zero = "0000000000000000";
            expect_stdout(
                o,
                &format!(
                    "CapInh={zero} CapPrm={zero} CapEff={zero} CapBnd={zero} CapAmb={zero} NoNewPrivs=1 Seccomp=2"
                ),
            )
        }),
        // Input.
        Case::new("stdin_bytes_reach_eof_c", C, COUNT_STDIN_C, Status::Ok)
            .stdin(vec![b'x'; 1 << 20])
            .check(|_, o| expect_stdout(o, "1048576")),
        Case::new(
            "unread_stdin_does_not_block_c",
            C,
            IGNORE_STDIN_C,
            Status::Ok,
        )
        .stdin(vec![b'x'; 4 << 20])
        .check(|_, o| within("wall_time_ms", o.wall_time_ms, 0, 1_000)),
        // Measurements.
        Case::new(
            "cpu_time_of_500ms_burn_is_measured",
            C,
            CPU_BURN_500_C,
            Status::Ok,
        )
        .limits(|l| l.cpu_time_ms = 2_000)
        .check(|_, o| within("cpu_time_ms", o.cpu_time_ms, 400, 650)),
        Case::new(
            "peak_memory_of_100mib_is_measured",
            C,
            TOUCH_100_MIB_C,
            Status::Ok,
        )
        .limits(|l| l.memory_bytes = 256 << 20)
        .check(|_, o| within("memory MiB", o.memory_kib / 1024, 100, 140)),
        Case::new(
            "100mib_under_a_64mib_limit",
            C,
            TOUCH_100_MIB_C,
            Status::MemoryLimit,
        )
        .limits(|l| l.memory_bytes = 64 << 20),
        Case::new("node_hello_with_default_limits", Node, HELLO_JS, Status::Ok)
            .default_limits()
            .check(|_, o| expect_stdout(o, "hello from node")),
        Case::new(
            "java_hello_with_default_limits",
            Prebuilt("/usr/bin/java"),
            "",
            Status::Ok,
        )
        .default_limits()
        .profile(Profile::Jvm)
        .args(&["-cp", "/job", "Hello"])
        .setup(compile_java_hello)
        .check(|_, o| expect_stdout(o, "hello from java")),
    ]
}

fn compile_java_hello(fixture: &mut Fixture) {
    let source = fixture.job.join("Hello.java");
    std::fs::write(
        &source,
        "public class Hello { public static void main(String[] a) { System.out.println(\"hello from java\"); } }\n",
    )
    .unwrap();
    super::compile_with(
        fixture,
        Profile::Jvm,
        "/usr/bin/javac",
        &["-d", "/job", "/job/Hello.java"],
    )
    .expect("javac in the sandbox");
}

fn signal_is(outcome: &RunOutcome, signal: i32) -> Result<(), String> {
    if outcome.signal == Some(signal) {
        Ok(())
    } else {
        Err(format!("signal {:?}, expected {signal}", outcome.signal))
    }
}

fn within(what: &str, value: u64, low: u64, high: u64) -> Result<(), String> {
    if (low..=high).contains(&value) {
        Ok(())
    } else {
        Err(format!("{what} = {value}, expected {low}..={high}"))
    }
}

fn output_capped(len: usize, outcome: &RunOutcome) -> Result<(), String> {
    if len == 1 << 20 && outcome.output_truncated {
        Ok(())
    } else {
        Err(format!(
            "kept {len} bytes, truncated = {}",
            outcome.output_truncated
        ))
    }
}

fn absent(path: &std::path::Path) -> Result<(), String> {
    if path.exists() {
        Err(format!("{} exists on the host", path.display()))
    } else {
        Ok(())
    }
}
