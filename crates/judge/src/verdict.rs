//! How a sandbox outcome becomes a verdict. The verdict type itself is a contract.

pub use contracts::Verdict;
use sandbox::{RunOutcome, Status};

/// What a submission's run says before any output is checked: `None` when it ran cleanly and
/// its output decides; otherwise the verdict and a message for the user.
pub fn run_verdict(outcome: &RunOutcome) -> Option<(Verdict, String)> {
    let verdict = match outcome.status {
        Status::Ok => return None,
        Status::NonzeroExit => {
            return Some((
                Verdict::RE,
                format!("exited with code {}", outcome.exit_code.unwrap_or(-1)),
            ))
        }
        Status::Signaled => {
            return Some((
                Verdict::RE,
                format!("killed by signal {}", outcome.signal.unwrap_or(0)),
            ))
        }
        Status::DisallowedSyscall => {
            return Some((Verdict::RE, "used a forbidden system call".into()))
        }
        Status::ForkLimit => {
            return Some((Verdict::RE, "created too many processes or threads".into()))
        }
        Status::TimeLimitCpu => Verdict::TLE,
        Status::TimeLimitWall => {
            return Some((
                Verdict::TLE,
                "wall-clock limit exceeded (idle or blocked)".into(),
            ))
        }
        Status::MemoryLimit => Verdict::MLE,
        Status::OutputLimit => Verdict::OLE,
        Status::LaunchFailure | Status::ConfigError => {
            return Some((
                Verdict::SE,
                format!(
                    "sandbox {}: {}",
                    outcome.status,
                    outcome.message.as_deref().unwrap_or("no detail")
                ),
            ))
        }
    };
    Some((verdict, String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sandbox_status_maps_to_a_verdict() {
        let expected = [
            (Status::Ok, None),
            (Status::NonzeroExit, Some(Verdict::RE)),
            (Status::Signaled, Some(Verdict::RE)),
            (Status::TimeLimitCpu, Some(Verdict::TLE)),
            (Status::TimeLimitWall, Some(Verdict::TLE)),
            (Status::MemoryLimit, Some(Verdict::MLE)),
            (Status::OutputLimit, Some(Verdict::OLE)),
            (Status::ForkLimit, Some(Verdict::RE)),
            (Status::DisallowedSyscall, Some(Verdict::RE)),
            (Status::LaunchFailure, Some(Verdict::SE)),
            (Status::ConfigError, Some(Verdict::SE)),
        ];
        assert_eq!(expected.len(), Status::ALL.len());
        for (status, verdict) in expected {
            let mut outcome = RunOutcome::infrastructure(Status::LaunchFailure, "x");
            outcome.status = status;
            assert_eq!(run_verdict(&outcome).map(|(v, _)| v), verdict, "{status}");
        }
    }
}
