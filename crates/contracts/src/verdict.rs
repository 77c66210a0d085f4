//! Verdicts of tests and submissions.

use serde::{Deserialize, Serialize};

/// The verdict of one test or of a whole submission.
///
/// Severity, most severe first (a submission takes its most severe test verdict):
/// `SE` > `CE` > `RE` > `MLE` > `OLE` > `TLE` > `WA` > `PE` > `AC`.
/// A system error dominates because it means the judging itself is not trustworthy and must be
/// retried; a compile error means no test ran; among test failures, a crash or a resource
/// violation says more about the program than a wrong output that followed from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
pub enum Verdict {
    AC,
    WA,
    PE,
    TLE,
    MLE,
    OLE,
    RE,
    CE,
    SE,
}

impl Verdict {
    pub const ALL: [Verdict; 9] = [
        Verdict::AC,
        Verdict::WA,
        Verdict::PE,
        Verdict::TLE,
        Verdict::MLE,
        Verdict::OLE,
        Verdict::RE,
        Verdict::CE,
        Verdict::SE,
    ];

    /// Higher is more severe.
    pub fn severity(self) -> u8 {
        match self {
            Verdict::AC => 0,
            Verdict::PE => 1,
            Verdict::WA => 2,
            Verdict::TLE => 3,
            Verdict::OLE => 4,
            Verdict::MLE => 5,
            Verdict::RE => 6,
            Verdict::CE => 7,
            Verdict::SE => 8,
        }
    }

    /// The more severe of two verdicts.
    pub fn worst(self, other: Verdict) -> Verdict {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::AC => "AC",
            Verdict::WA => "WA",
            Verdict::PE => "PE",
            Verdict::TLE => "TLE",
            Verdict::MLE => "MLE",
            Verdict::OLE => "OLE",
            Verdict::RE => "RE",
            Verdict::CE => "CE",
            Verdict::SE => "SE",
        }
    }

    pub fn long_name(self) -> &'static str {
        match self {
            Verdict::AC => "Accepted",
            Verdict::WA => "Wrong Answer",
            Verdict::PE => "Presentation Error",
            Verdict::TLE => "Time Limit Exceeded",
            Verdict::MLE => "Memory Limit Exceeded",
            Verdict::OLE => "Output Limit Exceeded",
            Verdict::RE => "Runtime Error",
            Verdict::CE => "Compile Error",
            Verdict::SE => "System Error",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Verdict::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| format!("unknown verdict {text:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_is_a_total_order_with_se_on_top() {
        let mut sorted = Verdict::ALL;
        sorted.sort_by_key(|v| v.severity());
        assert_eq!(
            sorted,
            [
                Verdict::AC,
                Verdict::PE,
                Verdict::WA,
                Verdict::TLE,
                Verdict::OLE,
                Verdict::MLE,
                Verdict::RE,
                Verdict::CE,
                Verdict::SE
            ]
        );
        for a in Verdict::ALL {
            for b in Verdict::ALL {
                assert_eq!(a.worst(b), b.worst(a));
                assert!(a.worst(b).severity() >= a.severity());
            }
        }
    }

    #[test]
    fn verdicts_parse_from_their_short_names() {
        for verdict in Verdict::ALL {
            assert_eq!(verdict.as_str().parse::<Verdict>(), Ok(verdict));
        }
        assert!("XX".parse::<Verdict>().is_err());
    }
}
