//! How a run ended, decided from kernel evidence rather than guessed from an exit code.

use serde::{Deserialize, Serialize};

/// The exact way a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The main process exited with code 0.
    Ok,
    /// The main process exited with a non-zero code.
    NonzeroExit,
    /// The main process was killed by a signal (other than the sandbox's own enforcement).
    Signaled,
    /// The tree's CPU time (cgroup accounting) exceeded the limit.
    TimeLimitCpu,
    /// The wall-clock limit passed before the main process exited.
    TimeLimitWall,
    /// The cgroup's OOM killer fired.
    MemoryLimit,
    /// stdout or stderr exceeded its cap, or a file exceeded `RLIMIT_FSIZE`.
    OutputLimit,
    /// The pids limit refused a fork or thread and the run did not succeed.
    ForkLimit,
    /// The program made a call its seccomp profile does not allow (or used a foreign syscall
    /// ABI); reported by the run's init from the filter's listener, never inferred from a signal.
    DisallowedSyscall,
    /// The program could not be started (supervisor, clone or exec failure).
    LaunchFailure,
    /// The sandbox configuration could not be applied (cgroups, mounts, seccomp profile).
    ConfigError,
}

/// Who is responsible for a status: the submitted program, or the judging infrastructure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// Nothing went wrong.
    None,
    /// The program's own behaviour; a verdict may be based on it.
    User,
    /// The sandbox or the machine failed; retry, never blame the user.
    Infrastructure,
}

impl Status {
    pub const ALL: [Status; 11] = [
        Status::Ok,
        Status::NonzeroExit,
        Status::Signaled,
        Status::TimeLimitCpu,
        Status::TimeLimitWall,
        Status::MemoryLimit,
        Status::OutputLimit,
        Status::ForkLimit,
        Status::DisallowedSyscall,
        Status::LaunchFailure,
        Status::ConfigError,
    ];

    pub fn fault(self) -> Fault {
        match self {
            Status::Ok => Fault::None,
            Status::LaunchFailure | Status::ConfigError => Fault::Infrastructure,
            _ => Fault::User,
        }
    }

    /// The snake_case name used in JSON and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::NonzeroExit => "nonzero_exit",
            Status::Signaled => "signaled",
            Status::TimeLimitCpu => "time_limit_cpu",
            Status::TimeLimitWall => "time_limit_wall",
            Status::MemoryLimit => "memory_limit",
            Status::OutputLimit => "output_limit",
            Status::ForkLimit => "fork_limit",
            Status::DisallowedSyscall => "disallowed_syscall",
            Status::LaunchFailure => "launch_failure",
            Status::ConfigError => "config_error",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    pub status: Status,
    pub fault: Fault,
    /// Exit code of the main process, when it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal of the main process, when it was killed.
    pub signal: Option<i32>,
    pub cpu_time_ms: u64,
    pub wall_time_ms: u64,
    /// Peak memory of the whole tree.
    pub memory_kib: u64,
    #[serde(with = "exact_bytes")]
    pub stdout: Vec<u8>,
    #[serde(with = "exact_bytes")]
    pub stderr: Vec<u8>,
    /// Some output was dropped because a stream exceeded its cap.
    pub output_truncated: bool,
    /// The caller ended the run early (see `Run::canceller`).
    #[serde(default)]
    pub cancelled: bool,
    /// Why an infrastructure status happened (never user data).
    pub message: Option<String>,
    /// The report channel's records, stamped as they arrived ([`crate::Records`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub records: Vec<crate::spec::Record>,
}

impl RunOutcome {
    /// An outcome for a run that never got to start its program.
    pub fn infrastructure(status: Status, message: impl Into<String>) -> Self {
        debug_assert_eq!(status.fault(), Fault::Infrastructure);
        Self {
            status,
            fault: status.fault(),
            exit_code: None,
            signal: None,
            cpu_time_ms: 0,
            wall_time_ms: 0,
            memory_kib: 0,
            stdout: Vec::new(),
            stderr: Vec::new(),
            output_truncated: false,
            cancelled: false,
            message: Some(message.into()),
            records: Vec::new(),
        }
    }
}

/// Output bytes in JSON, exactly: a string when they are UTF-8, else `{"base64": "..."}`
/// (so a program's invalid bytes and a literal U+FFFD never become the same text).
pub(crate) mod exact_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Encoded {
        Text(String),
        Binary { base64: String },
    }

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        match std::str::from_utf8(bytes) {
            Ok(text) => serializer.serialize_str(text),
            Err(_) => Encoded::Binary {
                base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            }
            .serialize(serializer),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        match Encoded::deserialize(deserializer)? {
            Encoded::Text(text) => Ok(text.into_bytes()),
            Encoded::Binary { base64 } => base64::engine::general_purpose::STANDARD
                .decode(base64)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// How the main process ended, as the kernel reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    Exited(i32),
    Signaled(i32),
}

/// Why the supervisor itself ended a run early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnforcedKill {
    CpuTime,
    WallTime,
    Output,
    /// The caller cancelled the run, and that (not the program itself) ended it.
    Cancelled,
}

/// Everything the supervisor observed about a run that got past setup.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence {
    /// `None` when the supervisor killed the tree before the main process's status was reported.
    pub termination: Option<Termination>,
    /// The seccomp listener received a call the profile does not allow.
    pub violation: bool,
    pub enforced: Option<EnforcedKill>,
    pub cpu_time_us: u64,
    pub cpu_limit_us: u64,
    /// OOM kills recorded by the run's memory cgroup.
    pub oom_kills: u64,
    /// The tree's memory reached its limit (it ran there, reclaiming).
    pub memory_limit_reached: bool,
    /// Forks refused by the run's pids cgroup.
    pub fork_refusals: u64,
    /// A stream produced more than its cap.
    pub output_exceeded: bool,
}

/// Decides the status from the evidence. The order is the documented precedence: the first
/// rule that matches explains the run.
///
/// 1. a seccomp violation → `disallowed_syscall` (the listener's report is the only source; a
///    `SIGSYS` death is an ordinary signal).
/// 2. an OOM kill, unless the main process still exited 0 → `memory_limit`.
/// 3. an output cap exceeded, or `SIGXFSZ` → `output_limit`.
/// 4. a refused fork, unless the main process exited 0 → `fork_limit`.
/// 5. a time limit reached after memory reached its limit → `memory_limit`:
///    the time went to reclaiming at the limit (the kernel thrashes before it OOM-kills, more
///    so on a busy machine), so the memory limit is what the program ran into.
/// 6. CPU time over the limit → `time_limit_cpu`.
/// 7. killed at the wall-clock limit → `time_limit_wall`.
/// 8. any other signal → `signaled`; a non-zero exit → `nonzero_exit`; else `ok`.
pub fn classify(evidence: &Evidence) -> Status {
    let succeeded = evidence.termination == Some(Termination::Exited(0));
    let signal = match evidence.termination {
        Some(Termination::Signaled(sig)) => Some(sig),
        _ => None,
    };
    if evidence.violation {
        return Status::DisallowedSyscall;
    }
    if evidence.oom_kills > 0 && !succeeded {
        return Status::MemoryLimit;
    }
    if evidence.output_exceeded
        || evidence.enforced == Some(EnforcedKill::Output)
        || signal == Some(libc::SIGXFSZ)
    {
        return Status::OutputLimit;
    }
    if evidence.fork_refusals > 0 && !succeeded {
        return Status::ForkLimit;
    }
    let cpu_exceeded = evidence.cpu_time_us > evidence.cpu_limit_us
        || evidence.enforced == Some(EnforcedKill::CpuTime);
    let wall_exceeded = evidence.enforced == Some(EnforcedKill::WallTime);
    if (cpu_exceeded || wall_exceeded) && evidence.memory_limit_reached {
        return Status::MemoryLimit;
    }
    if cpu_exceeded {
        return Status::TimeLimitCpu;
    }
    if wall_exceeded {
        return Status::TimeLimitWall;
    }
    match evidence.termination {
        Some(Termination::Exited(0)) => Status::Ok,
        Some(Termination::Exited(_)) => Status::NonzeroExit,
        Some(Termination::Signaled(_)) | None => Status::Signaled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Evidence {
        Evidence {
            termination: Some(Termination::Exited(0)),
            violation: false,
            enforced: None,
            cpu_time_us: 1_000,
            cpu_limit_us: 1_000_000,
            oom_kills: 0,
            memory_limit_reached: false,
            fork_refusals: 0,
            output_exceeded: false,
        }
    }

    #[test]
    fn output_bytes_survive_json_exactly() {
        let mut outcome = RunOutcome::infrastructure(Status::LaunchFailure, "x");
        for bytes in [
            b"plain text\n".to_vec(),
            vec![0xff, 0xfe, b'a'],
            "\u{fffd}".as_bytes().to_vec(),
        ] {
            outcome.stdout = bytes.clone();
            let json = serde_json::to_string(&outcome).unwrap();
            let back: RunOutcome = serde_json::from_str(&json).unwrap();
            assert_eq!(back.stdout, bytes, "{json}");
        }
        outcome.stdout = vec![0xff];
        let json = serde_json::to_value(&outcome).unwrap();
        assert_eq!(json["stdout"], serde_json::json!({"base64": "/w=="}));
    }

    #[test]
    fn classification_follows_the_documented_precedence() {
        let killed = Some(Termination::Signaled(libc::SIGKILL));
        let cases: Vec<(&str, Evidence, Status)> = vec![
            ("clean exit", base(), Status::Ok),
            (
                "exit 3",
                Evidence {
                    termination: Some(Termination::Exited(3)),
                    ..base()
                },
                Status::NonzeroExit,
            ),
            (
                "segfault",
                Evidence {
                    termination: Some(Termination::Signaled(libc::SIGSEGV)),
                    ..base()
                },
                Status::Signaled,
            ),
            (
                "a seccomp violation beats everything",
                Evidence {
                    termination: killed,
                    violation: true,
                    oom_kills: 1,
                    fork_refusals: 4,
                    cpu_time_us: 9_000_000,
                    ..base()
                },
                Status::DisallowedSyscall,
            ),
            (
                "a SIGSYS from anywhere else is only a signal",
                Evidence {
                    termination: Some(Termination::Signaled(libc::SIGSYS)),
                    ..base()
                },
                Status::Signaled,
            ),
            (
                "a SIGSYS does not hide a memory limit",
                Evidence {
                    termination: Some(Termination::Signaled(libc::SIGSYS)),
                    oom_kills: 1,
                    ..base()
                },
                Status::MemoryLimit,
            ),
            (
                "oom kill",
                Evidence {
                    termination: killed,
                    oom_kills: 1,
                    ..base()
                },
                Status::MemoryLimit,
            ),
            (
                "cpu limit reached while thrashing at the memory limit",
                Evidence {
                    termination: None,
                    enforced: Some(EnforcedKill::CpuTime),
                    cpu_time_us: 1_016_000,
                    memory_limit_reached: true,
                    ..base()
                },
                Status::MemoryLimit,
            ),
            (
                "wall limit reached while thrashing at the memory limit",
                Evidence {
                    termination: None,
                    enforced: Some(EnforcedKill::WallTime),
                    memory_limit_reached: true,
                    ..base()
                },
                Status::MemoryLimit,
            ),
            (
                "a clean exit after touching the memory limit",
                Evidence {
                    memory_limit_reached: true,
                    ..base()
                },
                Status::Ok,
            ),
            (
                "oom of a child while the main process succeeded",
                Evidence {
                    oom_kills: 1,
                    ..base()
                },
                Status::Ok,
            ),
            (
                "output cap",
                Evidence {
                    termination: None,
                    enforced: Some(EnforcedKill::Output),
                    output_exceeded: true,
                    ..base()
                },
                Status::OutputLimit,
            ),
            (
                "output cap noticed after a clean exit",
                Evidence {
                    output_exceeded: true,
                    ..base()
                },
                Status::OutputLimit,
            ),
            (
                "file size limit",
                Evidence {
                    termination: Some(Termination::Signaled(libc::SIGXFSZ)),
                    ..base()
                },
                Status::OutputLimit,
            ),
            (
                "fork bomb killed at the cpu limit",
                Evidence {
                    termination: None,
                    enforced: Some(EnforcedKill::CpuTime),
                    fork_refusals: 100,
                    cpu_time_us: 1_200_000,
                    ..base()
                },
                Status::ForkLimit,
            ),
            (
                "refused fork handled gracefully",
                Evidence {
                    fork_refusals: 1,
                    ..base()
                },
                Status::Ok,
            ),
            (
                "cpu limit enforced",
                Evidence {
                    termination: None,
                    enforced: Some(EnforcedKill::CpuTime),
                    cpu_time_us: 1_000_500,
                    ..base()
                },
                Status::TimeLimitCpu,
            ),
            (
                "cpu over the limit even though it exited",
                Evidence {
                    cpu_time_us: 1_300_000,
                    ..base()
                },
                Status::TimeLimitCpu,
            ),
            (
                "rlimit backstop SIGXCPU",
                Evidence {
                    termination: Some(Termination::Signaled(libc::SIGXCPU)),
                    cpu_time_us: 2_000_000,
                    ..base()
                },
                Status::TimeLimitCpu,
            ),
            (
                "wall limit",
                Evidence {
                    termination: None,
                    enforced: Some(EnforcedKill::WallTime),
                    cpu_time_us: 10,
                    ..base()
                },
                Status::TimeLimitWall,
            ),
        ];
        for (name, evidence, expected) in cases {
            assert_eq!(classify(&evidence), expected, "{name}");
        }
    }

    #[test]
    fn only_launch_and_config_failures_are_infrastructure() {
        for status in Status::ALL {
            let expected = match status {
                Status::Ok => Fault::None,
                Status::LaunchFailure | Status::ConfigError => Fault::Infrastructure,
                _ => Fault::User,
            };
            assert_eq!(status.fault(), expected, "{status}");
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
        }
    }
}
