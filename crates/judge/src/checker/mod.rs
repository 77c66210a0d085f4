//! Deciding whether an output is right.
//!
//! - [`default`]: the ICPC default validator, in process (it is our own code, not the package's).
//! - Custom validators are the package's programs and run in the sandbox; this module turns
//!   what they report into verdicts, for both conventions:
//!   - ICPC: `validator input answer feedback_dir [flags] < output`; exit 42 accepts, 43
//!     rejects; `judgemessage.txt` and `score.txt` in the feedback directory.
//!   - testlib: `checker input output answer`; exit 0 ok, 1 wrong answer, 2 presentation
//!     error, 3 checker failure, 7 partial points (`points X` in its message).
//!
//! A validator that ends any other way is a judging failure (`SE`), never the user's fault.

pub mod default;

use sandbox::{RunOutcome, Status};

pub use default::{Checked, DefaultFlags};

use crate::verdict::Verdict;

/// The exit code an ICPC validator uses to accept.
pub const ICPC_ACCEPT: i32 = 42;
/// The exit code an ICPC validator uses to reject.
pub const ICPC_REJECT: i32 = 43;

/// A validator's decision, with a score when it reported one.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    pub message: String,
    pub score: Option<f64>,
    /// A system error caused by the package (its validator misbehaved: timed out, crashed,
    /// answered nonsense): final, reported to the setter, never retried.
    pub package_fault: bool,
}

impl Decision {
    /// A verdict without a score, as the run or the judge decided it.
    pub(crate) fn verdict(verdict: Verdict, message: String) -> Self {
        Self {
            verdict,
            message,
            score: None,
            package_fault: false,
        }
    }

    /// The judge could not check (the sandbox failed): worth another attempt.
    pub(crate) fn system_error(message: String) -> Self {
        Self::verdict(Verdict::SE, message)
    }

    fn package_fault(message: String) -> Self {
        Self {
            package_fault: true,
            ..Self::system_error(message)
        }
    }
}

/// Reads an ICPC validator's outcome and feedback files.
pub fn icpc_decision(outcome: &RunOutcome, judge_message: &str, score: Option<&str>) -> Decision {
    let message = judge_message.trim().to_string();
    if outcome.status.fault() == sandbox::Fault::Infrastructure {
        return Decision::system_error(format!(
            "validator could not run: {}",
            outcome
                .message
                .as_deref()
                .unwrap_or(outcome.status.as_str())
        ));
    }
    let verdict = match (outcome.status, outcome.exit_code) {
        (Status::NonzeroExit, Some(ICPC_ACCEPT)) => Verdict::AC,
        (Status::NonzeroExit, Some(ICPC_REJECT)) => Verdict::WA,
        _ => {
            return Decision::package_fault(format!(
                "validator ended as {} (exit code {:?}); expected exit code 42 or 43",
                outcome.status, outcome.exit_code
            ))
        }
    };
    let score = match score.map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(text) => match text.parse::<f64>() {
            Ok(value) if value.is_finite() => Some(value),
            _ => {
                return Decision::package_fault(format!(
                    "validator wrote an invalid score.txt: {text:?}"
                ))
            }
        },
    };
    Decision {
        verdict,
        message,
        score,
        package_fault: false,
    }
}

/// Reads a testlib checker's outcome (its message is on stderr).
pub fn testlib_decision(outcome: &RunOutcome) -> Decision {
    let message = String::from_utf8_lossy(&outcome.stderr).trim().to_string();
    if outcome.status.fault() == sandbox::Fault::Infrastructure {
        return Decision::system_error(format!(
            "checker could not run: {}",
            outcome
                .message
                .as_deref()
                .unwrap_or(outcome.status.as_str())
        ));
    }
    let code = match outcome.status {
        Status::Ok => 0,
        Status::NonzeroExit => outcome.exit_code.unwrap_or(-1),
        other => return Decision::package_fault(format!("checker ended as {other}: {message}")),
    };
    let (verdict, score) = match code {
        0 => (Verdict::AC, None),
        1 => (Verdict::WA, None),
        2 => (Verdict::PE, None),
        7 => {
            let points = message
                .strip_prefix("points")
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|p| p.parse::<f64>().ok());
            match points {
                Some(points) => (Verdict::AC, Some(points)),
                None => {
                    return Decision::package_fault(format!(
                        "checker reported points without a number: {message}"
                    ))
                }
            }
        }
        3 => return Decision::package_fault(format!("checker failed: {message}")),
        other => {
            return Decision::package_fault(format!("checker exited with code {other}: {message}"))
        }
    };
    Decision {
        verdict,
        message,
        score,
        package_fault: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misbehaving_validator_is_the_packages_fault_a_failing_sandbox_is_not() {
        let ended = |status: Status, exit_code: Option<i32>| RunOutcome {
            exit_code,
            fault: status.fault(),
            status,
            ..RunOutcome::infrastructure(Status::LaunchFailure, "x")
        };
        for outcome in [
            ended(Status::TimeLimitCpu, None),
            ended(Status::Signaled, None),
            ended(Status::NonzeroExit, Some(1)),
        ] {
            let icpc = icpc_decision(&outcome, "", None);
            assert_eq!(
                (icpc.verdict, icpc.package_fault),
                (Verdict::SE, true),
                "{outcome:?}"
            );
        }
        // For testlib, exit 1 is a wrong answer; a crash or timeout is the checker's fault.
        for outcome in [
            ended(Status::TimeLimitCpu, None),
            ended(Status::NonzeroExit, Some(3)),
        ] {
            let testlib = testlib_decision(&outcome);
            assert_eq!(
                (testlib.verdict, testlib.package_fault),
                (Verdict::SE, true)
            );
        }
        let broken = RunOutcome::infrastructure(Status::LaunchFailure, "no supervisor");
        assert!(!icpc_decision(&broken, "", None).package_fault);
        assert!(!testlib_decision(&broken).package_fault);
    }

    fn exited(code: i32, stderr: &str) -> RunOutcome {
        let mut outcome = RunOutcome::infrastructure(Status::LaunchFailure, "");
        outcome.status = if code == 0 {
            Status::Ok
        } else {
            Status::NonzeroExit
        };
        outcome.fault = outcome.status.fault();
        outcome.exit_code = Some(code);
        outcome.message = None;
        outcome.stderr = stderr.as_bytes().to_vec();
        outcome
    }

    #[test]
    fn icpc_exit_codes_and_feedback() {
        let cases = [
            (exited(42, ""), "", None, Verdict::AC, None),
            (exited(43, ""), "wrong at line 3\n", None, Verdict::WA, None),
            (exited(42, ""), "", Some("17.5\n"), Verdict::AC, Some(17.5)),
            (exited(0, ""), "", None, Verdict::SE, None),
            (exited(1, ""), "", None, Verdict::SE, None),
            (exited(42, ""), "", Some("lots"), Verdict::SE, None),
        ];
        for (outcome, message, score, verdict, expected_score) in cases {
            let got = icpc_decision(&outcome, message, score);
            assert_eq!(got.verdict, verdict, "{outcome:?} {score:?}");
            assert_eq!(got.score, expected_score);
        }
        assert_eq!(
            icpc_decision(&exited(43, ""), "wrong at line 3\n", None).message,
            "wrong at line 3"
        );
        let crashed = RunOutcome::infrastructure(Status::ConfigError, "bind failed");
        assert_eq!(icpc_decision(&crashed, "", None).verdict, Verdict::SE);
    }

    #[test]
    fn testlib_exit_codes() {
        let cases = [
            (exited(0, "ok 3 numbers"), Verdict::AC, None),
            (
                exited(1, "wrong answer 1st numbers differ"),
                Verdict::WA,
                None,
            ),
            (exited(2, "wrong output format"), Verdict::PE, None),
            (exited(3, "FAIL answer file broken"), Verdict::SE, None),
            (exited(7, "points 42.5 good"), Verdict::AC, Some(42.5)),
            (exited(7, "points"), Verdict::SE, None),
            (exited(5, ""), Verdict::SE, None),
        ];
        for (outcome, verdict, score) in cases {
            let got = testlib_decision(&outcome);
            assert_eq!(
                got.verdict,
                verdict,
                "{:?}",
                String::from_utf8_lossy(&outcome.stderr)
            );
            assert_eq!(got.score, score);
        }
    }
}
