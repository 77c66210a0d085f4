//! Running code without judging it (SYSTEM.md §8): the synchronous preview and the
//! asynchronous execution API share these request, status and result types, and the port
//! that runs code in the sandbox.

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::judging::PortError;
use crate::verdict::Verdict;

/// Code and input to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// A language id from `GET /api/v1/languages`.
    pub language: String,
    /// Not only spaces; at most 64 KiB.
    #[schema(pattern = r"\S", max_length = 65536)]
    pub source: String,
    /// Standard input (text).
    #[serde(default)]
    pub stdin: String,
    /// Groups runs of one client action; with `test_case_id` it forms the default idempotency
    /// key `runId:testCaseId`.
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub test_case_id: Option<String>,
    /// A function-signature problem (its slug) whose harness runs `source`: `stdin` then
    /// holds the arguments, one JSON value per line per parameter, cases one after another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Queued,
    Running,
    Done,
    Cancelled,
    /// The run could not be carried out (infrastructure, restart, timeout); see `error`.
    Failed,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Queued => "queued",
            RunState::Running => "running",
            RunState::Done => "done",
            RunState::Cancelled => "cancelled",
            RunState::Failed => "failed",
        }
    }

    pub fn is_final(self) -> bool {
        !matches!(self, RunState::Queued | RunState::Running)
    }
}

impl std::str::FromStr for RunState {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            RunState::Queued,
            RunState::Running,
            RunState::Done,
            RunState::Cancelled,
            RunState::Failed,
        ]
        .into_iter()
        .find(|state| state.as_str() == s)
        .ok_or_else(|| format!("unknown run state {s:?}"))
    }
}

/// Limits of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RunLimits {
    pub time_limit_ms: u64,
    pub memory_mib: u64,
    pub output_bytes: u64,
}

/// What a finished run produced. Output is not judged: `verdict` says how it ended (`AC` for
/// a clean exit, `CE` when it did not compile, `RE`/`TLE`/`MLE`/`OLE`, `SE` for the sandbox).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RunReport {
    pub verdict: Verdict,
    /// The sandbox's outcome category, when the program ran.
    pub status: Option<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub time_ms: u64,
    pub wall_time_ms: u64,
    pub memory_kib: u64,
    pub stdout: String,
    pub stderr: String,
    pub output_truncated: bool,
    pub compile_output: String,
    /// A function problem's run: each case's result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<RunCase>,
}

/// One case of a function problem's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RunCase {
    /// `AC` when the call returned (and matched the answer, where the arguments are a
    /// sample's); otherwise how it ended (`WA`, `RE`, `TLE`, `MLE`, ...).
    pub verdict: Verdict,
    /// The arguments, one JSON value per line.
    pub input: String,
    /// The returned value as canonical JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The answer, when the arguments are a sample case's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::judging::CaseError>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    pub time_ms: u64,
    pub memory_kib: u64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
}

/// What a run executes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunTarget {
    /// The program, on its stdin.
    Program,
    /// The harness of the function problem whose package has this hash, on the arguments
    /// in stdin.
    Function { package_hash: String },
}

/// Cancels a run (idempotent).
pub type Canceller = Arc<dyn Fn() + Send + Sync>;

/// A run in progress.
#[async_trait]
pub trait StartedRun: Send {
    /// Cancels the run (idempotent); callable from anywhere while `finish` is awaited.
    fn canceller(&self) -> Canceller;

    async fn finish(self: Box<Self>) -> Result<RunReport, PortError>;
}

/// Runs code in the sandbox.
#[async_trait]
pub trait CodeRunner: Send + Sync {
    /// Checks what only the runner can: a function problem's arguments against its
    /// signature. `Rejected` carries the reason.
    async fn check(&self, request: &RunRequest, target: &RunTarget) -> Result<(), PortError>;

    fn start(
        &self,
        request: &RunRequest,
        limits: RunLimits,
        target: RunTarget,
    ) -> Box<dyn StartedRun>;

    /// Runs an execution job to its end. `Err` is the runner's failure (the job may be tried
    /// again); everything the program did is in the result.
    async fn execute(
        &self,
        request: &crate::jobs::ExecutionRequest,
    ) -> Result<crate::jobs::ExecutionResult, PortError>;
}
