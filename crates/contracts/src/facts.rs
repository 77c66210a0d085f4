//! The facts App captures before Submission's intake transaction, so intake never queries
//! another owner inside its write transaction and a verdict can always be explained by the
//! facts it was judged against.

use serde::{Deserialize, Serialize};

use crate::ids::{ProblemId, UserId};

/// The schema version this build writes and accepts.
pub const FACTS_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SubmissionFactsSnapshot {
    pub schema_version: u32,
    pub user_id: UserId,
    pub user_exists: bool,
    pub problem_id: ProblemId,
    pub problem_title: String,
    pub problem_slug: String,
    pub time_limit_ms: u64,
    pub memory_mib: u64,
    #[serde(default)]
    pub starter_code: Option<String>,
    /// Content hash of the problem's test-data package.
    pub package_hash: String,
    #[serde(default)]
    pub contest_id: Option<i64>,
    /// Where the submission stands in its contest (`contest_id` is its id).
    #[serde(default)]
    pub contest: Option<crate::contest::ContestEntry>,
    pub captured_at_ms: i64,
}

/// Why a snapshot does not admit a submission.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactsRejection {
    #[error("facts schema version {found} is not {expected}")]
    SchemaVersion { found: u32, expected: u32 },
    #[error("user {0} does not exist")]
    UnknownUser(UserId),
    #[error("facts are about user {facts}, the submission is by user {requested}")]
    UserMismatch { facts: UserId, requested: UserId },
    #[error("facts are about problem {facts}, the submission is for problem {requested}")]
    ProblemMismatch {
        facts: ProblemId,
        requested: ProblemId,
    },
    #[error("the problem has no test data")]
    NoPackage,
}

impl SubmissionFactsSnapshot {
    /// Whether these facts allow `user` to submit to `problem`.
    pub fn admits(&self, user: UserId, problem: ProblemId) -> Result<(), FactsRejection> {
        if self.schema_version != FACTS_SCHEMA_VERSION {
            return Err(FactsRejection::SchemaVersion {
                found: self.schema_version,
                expected: FACTS_SCHEMA_VERSION,
            });
        }
        if !self.user_exists {
            return Err(FactsRejection::UnknownUser(self.user_id));
        }
        if self.user_id != user {
            return Err(FactsRejection::UserMismatch {
                facts: self.user_id,
                requested: user,
            });
        }
        if self.problem_id != problem {
            return Err(FactsRejection::ProblemMismatch {
                facts: self.problem_id,
                requested: problem,
            });
        }
        if self.package_hash.is_empty() {
            return Err(FactsRejection::NoPackage);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> SubmissionFactsSnapshot {
        SubmissionFactsSnapshot {
            schema_version: FACTS_SCHEMA_VERSION,
            user_id: UserId(7),
            user_exists: true,
            problem_id: ProblemId(3),
            problem_title: "A+B".into(),
            problem_slug: "aplusb".into(),
            time_limit_ms: 1000,
            memory_mib: 256,
            starter_code: None,
            package_hash: "abc".into(),
            contest_id: None,
            contest: None,
            captured_at_ms: 0,
        }
    }

    #[test]
    fn admits_only_the_user_and_problem_it_describes() {
        assert_eq!(facts().admits(UserId(7), ProblemId(3)), Ok(()));
        let cases = [
            (
                SubmissionFactsSnapshot {
                    schema_version: 0,
                    ..facts()
                },
                FactsRejection::SchemaVersion {
                    found: 0,
                    expected: 1,
                },
            ),
            (
                SubmissionFactsSnapshot {
                    user_exists: false,
                    ..facts()
                },
                FactsRejection::UnknownUser(UserId(7)),
            ),
            (
                SubmissionFactsSnapshot {
                    package_hash: String::new(),
                    ..facts()
                },
                FactsRejection::NoPackage,
            ),
        ];
        for (snapshot, rejection) in cases {
            assert_eq!(snapshot.admits(UserId(7), ProblemId(3)), Err(rejection));
        }
        assert_eq!(
            facts().admits(UserId(8), ProblemId(3)),
            Err(FactsRejection::UserMismatch {
                facts: UserId(7),
                requested: UserId(8)
            })
        );
        assert_eq!(
            facts().admits(UserId(7), ProblemId(4)),
            Err(FactsRejection::ProblemMismatch {
                facts: ProblemId(3),
                requested: ProblemId(4)
            })
        );
    }
}

/// Why App could not capture facts for a submission.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FactsError {
    /// No such problem, or one the caller may not see (the two are not told apart).
    #[error("problem {0:?} not found")]
    ProblemNotFound(String),
    #[error("problem {0:?} has no test data yet")]
    NoTestData(String),
    /// The contest does not take this submission now (not registered, not started, over).
    #[error("{0}")]
    ContestClosed(String),
    #[error(transparent)]
    Port(#[from] crate::judging::PortError),
}

/// App's facts port: the snapshot Submission's intake checks and stores.
#[async_trait::async_trait]
pub trait ProblemFacts: Send + Sync {
    /// Facts for `user` submitting to the problem with this slug, or, within `contest` (a
    /// contest's slug), to the problem with this label or slug.
    async fn capture(
        &self,
        user: &crate::identity::Principal,
        problem: &str,
        contest: Option<&str>,
    ) -> Result<SubmissionFactsSnapshot, FactsError>;

    /// Whether `viewer` may see the problem (hidden problems exist only for setters and
    /// admins), so Submission can hide submissions to problems the viewer cannot see.
    async fn visible(
        &self,
        viewer: &crate::identity::Principal,
        problem: ProblemId,
    ) -> Result<bool, crate::judging::PortError>;
}
