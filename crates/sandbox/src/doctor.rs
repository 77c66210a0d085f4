//! `ulticode sandbox doctor`: can this machine run the native sandbox, and what is missing?
//!
//! The host checks explain *why* something fails; the end-to-end probes prove the sandbox
//! really works (a run, the identity drop, the seccomp kill), because a machine can pass every
//! static check and still refuse a mount.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::cgroup::CgroupHierarchy;
use crate::outcome::Status;
use crate::spec::RunSpec;
use crate::Sandbox;

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Toolchain {
    pub name: &'static str,
    pub command: &'static str,
    /// Where the command resolves on the host, if anywhere.
    pub path: Option<PathBuf>,
    /// Visible inside the sandbox without an extra bind (it lives under `/usr`).
    pub inside_default_root: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    pub ok: bool,
    pub checks: Vec<Check>,
    pub toolchains: Vec<Toolchain>,
}

const TOOLCHAINS: &[(&str, &str)] = &[
    ("C (gcc)", "gcc"),
    ("C++ (g++)", "g++"),
    ("Python 3", "python3"),
    ("PyPy 3", "pypy3"),
    ("Java", "java"),
    ("Java compiler", "javac"),
    ("JavaScript (Node)", "node"),
    ("Rust", "rustc"),
    ("Go", "go"),
];

fn check(name: &'static str, result: Result<String, String>) -> Check {
    match result {
        Ok(detail) => Check {
            name,
            ok: true,
            detail,
        },
        Err(detail) => Check {
            name,
            ok: false,
            detail,
        },
    }
}

/// Runs every check and probe.
pub fn diagnose(sandbox: &dyn Sandbox) -> DoctorReport {
    let mut checks = vec![
        check("namespaces", namespaces()),
        check("cgroups", cgroups()),
        check("seccomp", seccomp()),
        check("rootfs", rootfs()),
        check("core_dumps", core_dumps()),
    ];
    checks.push(check(
        "run",
        probe(sandbox, RunSpec::new("/bin/true"), |o| {
            (o.status == Status::Ok).then(|| format!("/bin/true ran in {} ms wall", o.wall_time_ms))
        }),
    ));
    checks.push(check(
        "identity",
        probe(sandbox, RunSpec::new("/usr/bin/id").args(["-u"]), |o| {
            let uid = String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<u32>()
                .ok();
            let range = crate::IdentityRange::from_env().ok()?;
            let uid = uid.filter(|u| (range.first()..range.first() + range.len()).contains(u))?;
            (o.status == Status::Ok).then(|| {
                format!(
                    "programs run as uid {uid}, one of the run slot range {}-{}",
                    range.first(),
                    range.first() + range.len() - 1
                )
            })
        }),
    ));
    checks.push(check(
        "seccomp_enforced",
        probe(
            sandbox,
            RunSpec::new("/usr/bin/unshare").args(["--user", "true"]),
            |o| {
                (o.status == Status::DisallowedSyscall)
                    .then(|| "unshare(2) inside the sandbox is killed by the filter".to_string())
            },
        ),
    ));
    let toolchains = TOOLCHAINS
        .iter()
        .map(|&(name, command)| {
            let path = which(command);
            let inside_default_root = path
                .as_ref()
                .and_then(|p| p.canonicalize().ok())
                .is_some_and(|p| p.starts_with("/usr"));
            Toolchain {
                name,
                command,
                path,
                inside_default_root,
            }
        })
        .collect();
    DoctorReport {
        ok: checks.iter().all(|c| c.ok),
        checks,
        toolchains,
    }
}

fn probe(
    sandbox: &dyn Sandbox,
    spec: RunSpec,
    accept: impl Fn(&crate::RunOutcome) -> Option<String>,
) -> Result<String, String> {
    let outcome = sandbox.run(&spec).map_err(|e| e.to_string())?;
    accept(&outcome).ok_or_else(|| {
        format!(
            "{} {} ended as {}{}; stderr: {}",
            spec.program,
            spec.args.join(" "),
            outcome.status,
            outcome
                .message
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default(),
            String::from_utf8_lossy(&outcome.stderr).trim()
        )
    })
}

fn namespaces() -> Result<String, String> {
    let kinds = ["pid", "mnt", "ipc", "uts", "net", "cgroup"];
    let missing: Vec<_> = kinds
        .iter()
        .filter(|k| !Path::new("/proc/self/ns").join(k).exists())
        .collect();
    if missing.is_empty() {
        Ok(format!("{} namespaces available", kinds.join(", ")))
    } else {
        Err(format!("kernel lacks namespaces: {missing:?}"))
    }
}

fn cgroups() -> Result<String, String> {
    let hierarchy = CgroupHierarchy::detect().map_err(|e| e.to_string())?;
    // An unprivileged client of the sandbox daemon cannot (and need not) make the base
    // cgroups: the daemon's supervisors do, and the `run` probe shows whether they could.
    // SAFETY: a plain getter.
    if unsafe { libc::geteuid() } == 0 {
        hierarchy.prepare().map_err(|e| e.to_string())?;
    }
    let cpus = crate::native::allowed_cpus();
    let pinning = format!("run slots pinned to CPUs {cpus:?} in turn");
    Ok(match &hierarchy {
        CgroupHierarchy::V1 {
            memory,
            pids,
            cpuacct,
            cpu,
            ..
        } => format!(
            "cgroup v1: memory {}, pids {}, cpuacct {}, cpu {}; {pinning}",
            memory.display(),
            pids.display(),
            cpuacct.display(),
            cpu.as_deref()
                .map_or("(with cpuacct)".into(), |p| p.display().to_string()),
        ),
        CgroupHierarchy::V2 { base } => format!("cgroup v2: {}; {pinning}", base.display()),
    })
}

fn seccomp() -> Result<String, String> {
    let actions = std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail")
        .map_err(|e| format!("seccomp unavailable: {e}"))?;
    for needed in ["kill_process", "errno", "user_notif"] {
        if !actions.split_whitespace().any(|a| a == needed) {
            return Err(format!(
                "seccomp lacks the {needed} action (has: {})",
                actions.trim()
            ));
        }
    }
    Ok(format!("seccomp filter actions: {}", actions.trim()))
}

fn rootfs() -> Result<String, String> {
    let needed = ["/usr", "/etc/ld.so.cache", "/dev/null", "/dev/urandom"];
    let missing: Vec<_> = needed.iter().filter(|p| !Path::new(p).exists()).collect();
    if missing.is_empty() {
        Ok(format!("read-only binds available: {}", needed.join(", ")))
    } else {
        Err(format!(
            "missing host paths for the sandbox root: {missing:?}"
        ))
    }
}

/// Core files are suppressed by `RLIMIT_CORE` 0, which the kernel honours for file patterns.
/// A piped pattern hands crashes of sandboxed programs to a host helper regardless; that is
/// reported, not failed, because the helper belongs to the host's configuration.
fn core_dumps() -> Result<String, String> {
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern")
        .map_err(|e| format!("cannot read core_pattern: {e}"))?;
    let pattern = pattern.trim();
    Ok(if pattern.starts_with('|') {
        format!("core_pattern pipes to a host helper ({pattern}); RLIMIT_CORE 0 does not stop it")
    } else {
        format!("core_pattern {pattern:?}: RLIMIT_CORE 0 suppresses core files")
    })
}

fn which(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|candidate| candidate.is_file())
}
