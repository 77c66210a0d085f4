//! What a contest submission carries between owners: App decides at intake where the
//! submission stands in its contest (the facts snapshot), Submission repeats it in its
//! `submission.submitted` and `SubmissionJudged` events, and App's scoreboard consumes them.

use serde::{Deserialize, Serialize};

use crate::ids::{Generation, ProblemId, SubmissionId, UserId};
use crate::Verdict;

/// How a contest submission counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContestPhase {
    /// Inside the contest's window: counts on the board.
    Contest,
    /// Inside a virtual participant's personal window: shown, never ranked.
    Virtual,
    /// After the end: shown beside the contest score, never in it.
    Upsolving,
}

/// The contest part of a submission's facts snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ContestEntry {
    pub contest_id: i64,
    /// The problem's label in the contest (`A`, `B`, …).
    pub label: String,
    /// The team (an individual participant is a team of one).
    pub team_id: i64,
    pub phase: ContestPhase,
    /// Milliseconds since the participant's start (the contest's, or the virtual window's).
    pub contest_time_ms: i64,
}

/// The score one subtask (a test group directly below `secret`) got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SubtaskScore {
    pub name: String,
    pub score: f64,
    pub max_score: f64,
}

/// One test's run as a contest's runs list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RunBrief {
    pub verdict: Verdict,
    pub time_ms: u64,
}

/// Payload of `submission.submitted`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubmittedPayload {
    pub submission_id: SubmissionId,
    pub problem_id: ProblemId,
    pub language: String,
    #[serde(default)]
    pub user_id: Option<UserId>,
    #[serde(default)]
    pub submitted_at_ms: Option<i64>,
    #[serde(default)]
    pub contest: Option<ContestEntry>,
}

/// Payload of `SubmissionJudged`: one generation's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgedPayload {
    pub submission_id: SubmissionId,
    pub generation: Generation,
    #[serde(default)]
    pub attempt_id: Option<String>,
    pub user_id: UserId,
    pub problem_id: ProblemId,
    pub verdict: Verdict,
    #[serde(default)]
    pub score: Option<f64>,
    #[serde(default)]
    pub max_score: Option<f64>,
    #[serde(default)]
    pub subtasks: Vec<SubtaskScore>,
    /// The tests in judging order.
    #[serde(default)]
    pub runs: Vec<RunBrief>,
    /// The slowest test's CPU time.
    #[serde(default)]
    pub time_ms: Option<u64>,
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default)]
    pub submitted_at_ms: Option<i64>,
    #[serde(default)]
    pub judged_at_ms: Option<i64>,
    #[serde(default)]
    pub contest: Option<ContestEntry>,
}

/// Submission's port for App's contests: rejudgings and the sources the contest API and
/// contest packages hand out.
#[async_trait::async_trait]
pub trait ContestSubmissions: Send + Sync {
    /// Starts a new generation of `submission` (the fencing rules of any rejudge).
    async fn rejudge(
        &self,
        actor: UserId,
        submission: SubmissionId,
    ) -> Result<crate::admin::RejudgeOutcome, crate::PortError>;

    /// The submission's source text, or `None` when there is no such submission.
    async fn source(&self, submission: SubmissionId) -> Result<Option<String>, crate::PortError>;

    /// A contest package's submission: judged with `result` as given (`Some`), or judged
    /// afresh (`None`). Idempotent on `key`.
    async fn import(
        &self,
        facts: &crate::SubmissionFactsSnapshot,
        language: &str,
        source: &str,
        result: Option<&crate::JudgeResult>,
        key: &str,
    ) -> Result<SubmissionId, crate::PortError>;
}
