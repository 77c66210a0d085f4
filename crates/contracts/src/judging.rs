//! The judging contract: what travels on the judge queue, and the port through which a judge
//! worker (holding no database credentials) acquires, renews and completes a submission.

use std::path::PathBuf;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::facts::SubmissionFactsSnapshot;
use crate::ids::{AttemptId, Generation, ProblemId, SubmissionId, UserId};
use crate::verdict::Verdict;

/// The queue payload: one judging intent for one generation of a submission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct JudgeMessage {
    pub submission_id: SubmissionId,
    pub generation: Generation,
    pub user_id: UserId,
    pub problem_id: ProblemId,
    pub language: String,
    pub source: String,
    pub package_hash: String,
}

impl JudgeMessage {
    /// What a well-formed intent must carry; a message missing any of it is dead on arrival.
    pub fn missing_fields(&self) -> Vec<&'static str> {
        let mut missing = Vec::new();
        if self.problem_id.0 <= 0 {
            missing.push("problem");
        }
        if self.user_id.0 <= 0 {
            missing.push("user");
        }
        if self.language.trim().is_empty() {
            missing.push("language");
        }
        if self.source.is_empty() {
            missing.push("code");
        }
        if self.package_hash.is_empty() {
            missing.push("package");
        }
        missing
    }
}

/// What a worker gets once it holds the lease.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct JudgeJob {
    pub submission_id: SubmissionId,
    pub generation: Generation,
    pub attempt_id: AttemptId,
    pub language: String,
    pub source: String,
    pub facts: SubmissionFactsSnapshot,
    /// Database time the lease runs until, in epoch milliseconds.
    pub lease_expires_at_ms: i64,
}

/// Why an acquire found nothing to do: the message is stale and may be acknowledged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StaleReason {
    UnknownSubmission,
    /// The submission moved to a newer generation (rejudge or recovery).
    GenerationMoved,
    /// Another attempt holds the lease, or the submission is already judged.
    NotPending,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Acquired {
    Job(Box<JudgeJob>),
    Stale { reason: StaleReason },
}

/// One test's result as stored with the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TestOutcome {
    pub name: String,
    pub group: String,
    pub verdict: Verdict,
    pub time_ms: u64,
    pub wall_time_ms: u64,
    pub memory_kib: u64,
    pub message: String,
    #[serde(default)]
    pub score: Option<f64>,
    /// Sample tests only.
    #[serde(default)]
    pub output: Option<String>,
    /// Function problems: what the case showed (see [`CaseDetail`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<CaseDetail>,
}

/// What one test case of a function problem showed. The judge records the arguments and
/// the expected and returned values of sample cases only; the API shows a submission's
/// author the whole detail of sample cases and only the exception's type and frames of the
/// others (their messages and prints could carry hidden data).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CaseDetail {
    /// The arguments, one JSON value per line (sample cases only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The expected value as canonical JSON (sample cases only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The returned value as canonical JSON (sample cases only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// The exception the call raised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CaseError>,
    /// What the user's code printed during the case (capped).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
}

/// An exception raised by the user's code during a case.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CaseError {
    /// `IndexError`, `java.lang.ArrayIndexOutOfBoundsException`, `panic`, ...
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub message: String,
    /// The frames in the user's own file, innermost last as the language prints them.
    #[serde(default)]
    pub frames: Vec<CaseFrame>,
    /// For a design class: the call (index in the operation list) that raised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<u32>,
}

/// A line of the user's code in an exception's stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CaseFrame {
    pub line: u32,
    #[serde(default)]
    pub function: String,
}

/// The result of judging one generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct JudgeResult {
    pub verdict: Verdict,
    pub score: Option<f64>,
    pub max_score: Option<f64>,
    pub time_ms: u64,
    pub memory_kib: u64,
    pub compile_output: String,
    pub tests: Vec<TestOutcome>,
    /// Scoring problems: each subtask's score (the groups directly below `secret`).
    #[serde(default)]
    pub subtasks: Vec<crate::contest::SubtaskScore>,
}

/// How far a judging has got, for live status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case", tag = "stage")]
pub enum JudgeProgress {
    Compiling,
    /// Test `test` (1-based) of `total` is being judged; `finished` are the tests that have
    /// ended so far (in the order they ended; tests may run in parallel).
    Running {
        test: u32,
        total: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        finished: Vec<FinishedTest>,
    },
}

/// A test that has ended while its submission is still being judged: what anyone who may
/// see the problem sees of a test (no message, no output).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FinishedTest {
    /// Position in judging order (0-based).
    pub index: u32,
    /// `secret/group1/03`.
    pub name: String,
    pub verdict: crate::Verdict,
    pub time_ms: u64,
    pub memory_kib: u64,
}

/// A port call that did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PortError {
    /// The owner could not be reached or failed; the call may be retried.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The owner refused the call (authentication, malformed request); retrying will not help.
    #[error("rejected: {0}")]
    Rejected(String),
}

/// Submission's judging port. Every call is one conditional update in the owner's database,
/// timed by the database clock; `false` / `Stale` means the caller lost its claim and must stop.
#[async_trait]
pub trait JudgingPort: Send + Sync {
    /// `id + status = Pending + generation = g → Judging, attempt = a, lease = now + ttl`.
    async fn acquire(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
    ) -> Result<Acquired, PortError>;

    /// `id + current_attempt_id = a → lease = now + ttl`.
    async fn renew(&self, id: SubmissionId, attempt: &AttemptId) -> Result<bool, PortError>;

    /// `id + generation = g + current_attempt_id = a → terminal result`, with the per-test
    /// results and the `SubmissionJudged` event in the same transaction.
    async fn complete(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        result: &JudgeResult,
    ) -> Result<bool, PortError>;

    /// Live progress of attempt `a` (best effort; `false`: the attempt lost its claim).
    async fn progress(
        &self,
        id: SubmissionId,
        attempt: &AttemptId,
        progress: JudgeProgress,
    ) -> Result<bool, PortError>;

    /// The judging infrastructure failed (not the program): give the submission a new
    /// generation to be retried, or a System Error once its recovery budget is spent.
    async fn infrastructure_failure(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        reason: &str,
    ) -> Result<bool, PortError>;
}

/// App's problem-package port: test data by content hash.
#[async_trait]
pub trait ProblemPackagePort: Send + Sync {
    /// A local directory holding the unpacked package with this hash.
    async fn package(&self, hash: &str) -> Result<PathBuf, PortError>;
}

/// What an uploaded package needs that only running programs gives: a Polygon package
/// imported into the Kattis format (its generators and main solution run in the sandbox), a
/// package without a time limit given the one its accepted submissions set. The App owner has
/// no sandbox; this port is implemented where one is.
#[async_trait]
pub trait PackagePreparer: Send + Sync {
    /// The archive to store: the upload itself when it needs nothing, else a new one.
    /// `Rejected`: the package cannot be prepared, for the reason given (for the setter).
    async fn prepare(&self, upload: Vec<u8>) -> Result<Vec<u8>, PortError>;
}

/// The judging port over HTTP: paths and bodies shared by Submission's server and the judge
/// workers' client. Requests carry `Authorization: Bearer <service token>`.
pub mod wire {
    use serde::{Deserialize, Serialize};

    use super::{JudgeProgress, JudgeResult};
    use crate::ids::{AttemptId, Generation, SubmissionId};

    pub const ACQUIRE: &str = "/internal/v1/judging/acquire";
    pub const RENEW: &str = "/internal/v1/judging/renew";
    pub const COMPLETE: &str = "/internal/v1/judging/complete";
    pub const INFRASTRUCTURE_FAILURE: &str = "/internal/v1/judging/infrastructure-failure";
    pub const PROGRESS: &str = "/internal/v1/judging/progress";
    /// App's package archives: `GET {PACKAGES}/{hash}`.
    pub const PACKAGES: &str = "/internal/v1/packages";

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Claim {
        pub submission_id: SubmissionId,
        pub generation: Generation,
        pub attempt_id: AttemptId,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Renew {
        pub submission_id: SubmissionId,
        pub attempt_id: AttemptId,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Complete {
        #[serde(flatten)]
        pub claim: Claim,
        pub result: JudgeResult,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Failure {
        #[serde(flatten)]
        pub claim: Claim,
        pub reason: String,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Progress {
        pub submission_id: SubmissionId,
        pub attempt_id: AttemptId,
        pub progress: JudgeProgress,
    }

    /// The answer of renew, complete and infrastructure-failure: whether the claim held.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
    pub struct Held {
        pub held: bool,
    }
}
