//! What one run leaves for the next run of the same supervisor: nothing. A supervisor's runs
//! share its network namespace and start from copies of one prepared mount namespace (both
//! made once, for speed); these runs try to leave things behind for their successor: sockets,
//! a daemon holding a file open, a file in `/tmp`, mounts, SysV IPC, memory and CPU time on the
//! books, and their own limits.

use libtest_mimic::{Failed, Trial};
use sandbox::{
    Limits, NativeSandbox, Profile, RunOutcome, RunSpec, Sandbox, Status, SupervisorCommand,
};

use super::compiled;

pub fn all() -> Vec<Trial> {
    vec![
        Trial::test(
            "sockets_a_run_leaves_are_gone_for_the_next_run_of_its_supervisor",
            sockets_are_gone_for_the_next_run,
        ),
        Trial::test(
            "daemons_files_mounts_and_accounting_of_a_run_are_gone_for_the_next_run",
            traces_are_gone_for_the_next_run,
        ),
        Trial::test(
            "sysv_ipc_objects_cannot_be_left_for_the_next_run",
            sysv_ipc_cannot_be_left,
        ),
        Trial::test(
            "each_run_of_a_supervisor_has_its_own_limits",
            limits_are_each_runs_own,
        ),
    ]
}

/// `leave`: writes 8 MiB into `/tmp/leftover`, starts a daemon (its own session) that holds the file open
/// and 16 MiB of memory, uses 64 MiB and ~0.2 s of CPU itself, and exits. `probe`: reports
/// what it finds (and its IPC namespace). `shm`: creates a SysV shared memory segment. `alloc`: touches 64 MiB. Every
/// mode first prints the mount points it sees.
const TRACES_C: &str = r#"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>
static void touch(size_t bytes) {
    volatile char *p = malloc(bytes);
    if (!p) { puts("malloc failed"); exit(1); }
    for (size_t i = 0; i < bytes; i += 4096) p[i] = 1;
}
int main(int argc, char **argv) {
    FILE *mounts = fopen("/proc/self/mountinfo", "r");
    if (!mounts) { perror("mountinfo"); return 1; }
    char line[4096], point[4096];
    printf("mounts:");
    while (fgets(line, sizeof line, mounts))
        if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1) printf(" %s", point);
    printf("\n");
    if (strcmp(argv[1], "leave") == 0) {
        FILE *f = fopen("/tmp/leftover", "w");
        static char block[1 << 20];
        memset(block, 'x', sizeof block);
        for (int i = 0; f && i < 8; i++) fwrite(block, 1, sizeof block, f);
        if (!f || fclose(f)) { perror("/tmp/leftover"); return 1; }
        if (fork() == 0) {
            setsid();
            int held = open("/tmp/leftover", O_RDONLY);
            touch(16 << 20);
            for (;;) pause();
            return held;
        }
        touch(64 << 20);
        volatile unsigned long sum = 0;
        for (unsigned long i = 0; i < 200000000UL; i++) sum += i;
        puts("left");
        return 0;
    }
    if (strcmp(argv[1], "shm") == 0) {
        int id = shmget(0x554c54, 4096, IPC_CREAT | 0666);
        printf("shm:%s\n", id >= 0 ? "created" : strerror(errno));
        return 0;
    }
    if (strcmp(argv[1], "alloc") == 0) {
        touch(64 << 20);
        puts("allocated");
        return 0;
    }
    printf("tmp:%s\n", access("/tmp/leftover", F_OK) == 0 ? "present" : strerror(errno));
    int others = 0;
    DIR *proc = opendir("/proc");
    struct dirent *entry;
    while (proc && (entry = readdir(proc)))
        if (atoi(entry->d_name) > 0 && atoi(entry->d_name) != getpid()) others++;
    printf("processes:%d\n", others);
    char ipc[64] = {0};
    if (readlink("/proc/self/ns/ipc", ipc, sizeof ipc - 1) < 0) { perror("readlink"); return 1; }
    printf("ipc:%s\n", ipc);
    return 0;
}
"#;

fn traces_sandbox() -> Result<(tempfile::TempDir, NativeSandbox), Failed> {
    // A sandbox of its own, used one run at a time: all runs go to its one supervisor.
    let sandbox = NativeSandbox::new(SupervisorCommand::current_exe()?);
    Ok((compiled("traces", TRACES_C), sandbox))
}

fn traces_run(
    sandbox: &NativeSandbox,
    dir: &tempfile::TempDir,
    mode: &str,
    limits: Limits,
) -> Result<(RunOutcome, String), Failed> {
    let spec = RunSpec::new("/job/traces")
        .args([mode])
        .job_dir(dir.path(), false)
        .limits(limits);
    let outcome = sandbox.run(&spec)?;
    let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
    Ok((outcome, stdout))
}

fn expect_ok(mode: &str, outcome: &RunOutcome, stdout: &str) -> Result<(), Failed> {
    if outcome.status != Status::Ok {
        return Err(format!(
            "{mode} ended as {} ({:?}); stdout {stdout:?}, stderr {:?}",
            outcome.status,
            outcome.message,
            String::from_utf8_lossy(&outcome.stderr)
        )
        .into());
    }
    Ok(())
}

fn traces_are_gone_for_the_next_run() -> Result<(), Failed> {
    let (dir, sandbox) = traces_sandbox()?;
    let (left, left_out) = traces_run(&sandbox, &dir, "leave", Limits::default())?;
    expect_ok("leave", &left, &left_out)?;
    let (probed, probed_out) = traces_run(&sandbox, &dir, "probe", Limits::default())?;
    expect_ok("probe", &probed, &probed_out)?;
    let mounts = |out: &str| out.lines().next().unwrap_or_default().to_string();
    // The same tree each time, and nothing of the host's in it.
    if mounts(&left_out) != mounts(&probed_out) {
        return Err(format!(
            "the runs saw different mounts:\n{}\n{}",
            mounts(&left_out),
            mounts(&probed_out)
        )
        .into());
    }
    let top_level = [
        "/", "/proc", "/tmp", "/job", "/usr", "/dev", "/bin", "/sbin", "/lib",
    ];
    let allowed = |point: &str| {
        top_level.contains(&point)
            || ["/dev/", "/etc/", "/usr/", "/lib"]
                .iter()
                .any(|prefix| point.starts_with(prefix))
    };
    let line = mounts(&left_out);
    let points: Vec<&str> = line
        .trim_start_matches("mounts:")
        .split_whitespace()
        .collect();
    if let Some(point) = points.iter().find(|p| !allowed(p)) {
        return Err(format!("a run sees the mount point {point}: {points:?}").into());
    }
    let rest: Vec<&str> = probed_out.lines().skip(1).collect();
    if rest[..rest.len().min(2)] != ["tmp:No such file or directory", "processes:0"] {
        return Err(format!("after {left_out:?} the next run found {rest:?}").into());
    }
    // The IPC namespace the runs share is not the host's.
    let host_ipc = std::fs::read_link("/proc/self/ns/ipc")?;
    if rest.get(2) == Some(&format!("ipc:{}", host_ipc.display()).as_str()) || rest.len() != 3 {
        return Err(format!("the run's IPC namespace: {rest:?}, the host's {host_ipc:?}").into());
    }
    // The first run's 64 MiB and CPU time are its own, not the second's.
    if left.memory_kib < 64 << 10 || left.cpu_time_ms < 20 {
        return Err(format!(
            "the first run was not accounted: {} KiB, {} ms",
            left.memory_kib, left.cpu_time_ms
        )
        .into());
    }
    // Nor is its `/tmp`, charged until its mount namespace is gone: subtracted as if it were
    // still there, it would leave the second run with nothing of its own.
    if probed.memory_kib >= 16 << 10
        || probed.memory_kib < 64
        || probed.cpu_time_ms >= left.cpu_time_ms / 2
    {
        return Err(format!(
            "the second run carries the first's accounting: {} KiB and {} ms after {} KiB and \
             {} ms",
            probed.memory_kib, probed.cpu_time_ms, left.memory_kib, left.cpu_time_ms
        )
        .into());
    }
    Ok(())
}

/// SysV IPC outlives processes in its namespace, so no profile lets a run create any (each
/// run has a fresh IPC namespace besides).
fn sysv_ipc_cannot_be_left() -> Result<(), Failed> {
    let (dir, sandbox) = traces_sandbox()?;
    let (outcome, stdout) = traces_run(&sandbox, &dir, "shm", Limits::default())?;
    if outcome.status != Status::DisallowedSyscall {
        return Err(format!(
            "shmget ended as {} ({stdout:?}), not disallowed_syscall",
            outcome.status
        )
        .into());
    }
    Ok(())
}

/// Limits are set for each run: a tight one before or after a loose one changes nothing.
fn limits_are_each_runs_own() -> Result<(), Failed> {
    let (dir, sandbox) = traces_sandbox()?;
    let memory = |mib: u64| Limits {
        memory_bytes: mib << 20,
        ..Limits::default()
    };
    for (mib, expected) in [
        (32, Status::MemoryLimit),
        (256, Status::Ok),
        (32, Status::MemoryLimit),
        (256, Status::Ok),
    ] {
        let (outcome, stdout) = traces_run(&sandbox, &dir, "alloc", memory(mib))?;
        if outcome.status != expected {
            return Err(format!(
                "64 MiB under a {mib} MiB limit ended as {} ({stdout:?}), not {expected}",
                outcome.status
            )
            .into());
        }
    }
    Ok(())
}

/// `leave`: binds an abstract Unix socket and a TCP port, and leaves a process holding both;
/// `probe`: connects to that socket and binds that port. Each prints its network namespace.
const LEAVE_OR_PROBE_C: &str = r#"
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char ns[64] = {0};
    if (readlink("/proc/self/ns/net", ns, sizeof ns - 1) < 0) { perror("readlink"); return 1; }
    struct sockaddr_un u = { .sun_family = AF_UNIX };
    const char *name = "ulticode-leftover";
    memcpy(u.sun_path + 1, name, strlen(name));
    socklen_t ulen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
    struct sockaddr_in t = { .sin_family = AF_INET, .sin_port = htons(47123) };
    int us = socket(AF_UNIX, SOCK_STREAM, 0), ts = socket(AF_INET, SOCK_STREAM, 0);
    if (us < 0 || ts < 0) { perror("socket"); return 1; }
    if (strcmp(argv[1], "leave") == 0) {
        if (bind(us, (void *)&u, ulen) || listen(us, 1)) { perror("unix"); return 1; }
        if (bind(ts, (void *)&t, sizeof t) || listen(ts, 1)) { perror("tcp"); return 1; }
        if (fork() == 0) { setsid(); sleep(60); _exit(0); }
        printf("%s left\n", ns);
        return 0;
    }
    int connected = connect(us, (void *)&u, ulen);
    printf("%s unix:%s ", ns, connected == 0 ? "connected" : strerror(errno));
    int bound = bind(ts, (void *)&t, sizeof t);
    printf("tcp:%s\n", bound == 0 ? "bound" : strerror(errno));
    return 0;
}
"#;

fn sockets_are_gone_for_the_next_run() -> Result<(), Failed> {
    let dir = compiled("leftover", LEAVE_OR_PROBE_C);
    // A sandbox of its own, used one run at a time: both runs go to its one supervisor.
    let sandbox = NativeSandbox::new(SupervisorCommand::current_exe()?);
    let run = |mode: &str| -> Result<String, Failed> {
        let spec = RunSpec::new("/job/leftover")
            .args([mode])
            .job_dir(dir.path(), false)
            .profile(Profile::Node);
        let outcome = sandbox.run(&spec)?;
        let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
        expect_ok(mode, &outcome, &stdout)?;
        Ok(stdout)
    };
    let left = run("leave")?;
    let probed = run("probe")?;
    let namespace = left.trim_end().trim_end_matches(" left");
    let expected = format!("{namespace} unix:Connection refused tcp:bound\n");
    if probed != expected {
        return Err(format!("after {left:?} the next run saw {probed:?}, not {expected:?}").into());
    }
    Ok(())
}
