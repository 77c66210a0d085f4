//! The parts of the API's answers the pages show. The console is a client of the API: these
//! mirror the documented response schemas (unknown fields are ignored), never the owners' types.

use contracts::{Role, Verdict};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct Account {
    pub id: i64,
    pub username: String,
    pub role: Role,
    #[serde(default)]
    pub created_at_ms: i64,
    /// The interface language the account chose (only on `/auth/me`).
    #[serde(default)]
    pub locale: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Sample {
    pub input: String,
    pub output: String,
    #[serde(default)]
    pub interaction: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Problem {
    pub id: i64,
    pub slug: String,
    pub title: String,
    #[serde(default)]
    pub statement: String,
    pub time_limit_ms: i64,
    pub memory_mib: i64,
    #[serde(default)]
    pub tags: Vec<String>,
    pub difficulty: Option<i64>,
    pub visibility: String,
    pub has_test_data: bool,
    #[serde(default)]
    pub samples: Vec<Sample>,
    /// Function-signature problems only.
    #[serde(default)]
    pub function: Option<FunctionInfo>,
}

/// What a function-signature problem asks for.
#[derive(Debug, Clone, Deserialize)]
pub struct FunctionInfo {
    pub signature: serde_json::Value,
    pub starters: std::collections::BTreeMap<String, String>,
}

impl FunctionInfo {
    fn names(params: &serde_json::Value) -> Vec<&str> {
        params
            .as_array()
            .map(|params| params.iter().filter_map(|p| p["name"].as_str()).collect())
            .unwrap_or_default()
    }

    /// What the user writes, as a call: `twoSum(nums, target)`, `LRUCache(capacity): get, put`.
    pub fn call(&self) -> String {
        let s = &self.signature;
        match s["classname"].as_str() {
            Some(class) => {
                let methods: Vec<&str> = s["methods"]
                    .as_array()
                    .map(|m| m.iter().filter_map(|m| m["name"].as_str()).collect())
                    .unwrap_or_default();
                format!(
                    "{class}({}): {}",
                    Self::names(&s["constructor"]["params"]).join(", "),
                    methods.join(", ")
                )
            }
            None => format!(
                "{}({})",
                s["name"].as_str().unwrap_or_default(),
                Self::names(&s["params"]).join(", ")
            ),
        }
    }

    /// What each case's lines hold: the parameters, or a design class's two lines.
    pub fn parameters(&self) -> String {
        if self.signature["classname"].is_string() {
            "operations, arguments".into()
        } else {
            Self::names(&self.signature["params"]).join(", ")
        }
    }
}

/// A function-problem case's detail: the arguments, values, exception and prints the API
/// gave (a test's, or a run's case's).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CaseDetail {
    #[serde(default)]
    pub input: Option<String>,
    #[serde(default)]
    pub expected: Option<String>,
    #[serde(default)]
    pub actual: Option<String>,
    #[serde(default)]
    pub error: Option<CaseError>,
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
}

impl CaseDetail {
    pub fn shows_something(&self) -> bool {
        self.input.is_some()
            || self.actual.is_some()
            || self.error.is_some()
            || !self.stdout.is_empty()
            || !self.stderr.is_empty()
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct CaseError {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub frames: Vec<CaseFrame>,
    #[serde(default)]
    pub call: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CaseFrame {
    pub line: u32,
    #[serde(default)]
    pub function: String,
}

/// One case of a function problem's run.
#[derive(Debug, Clone, Deserialize)]
pub struct RunCase {
    pub verdict: Verdict,
    pub input: String,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub expected: Option<String>,
    #[serde(default)]
    pub error: Option<CaseError>,
    #[serde(default)]
    pub message: String,
    pub time_ms: u64,
    pub memory_kib: u64,
    #[serde(default)]
    pub stdout: String,
    #[serde(default)]
    pub stderr: String,
}

impl RunCase {
    pub fn detail(&self) -> CaseDetail {
        CaseDetail {
            input: Some(self.input.clone()),
            expected: self.expected.clone(),
            actual: self.value.clone(),
            error: self.error.clone(),
            stdout: self.stdout.clone(),
            stderr: self.stderr.clone(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct ProblemPage {
    pub items: Vec<Problem>,
    pub next_after: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Language {
    pub id: String,
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct LiveStatus {
    pub state: String,
    #[serde(default)]
    pub generation: i64,
    pub test: Option<u32>,
    pub total: Option<u32>,
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    pub time_ms: Option<i64>,
    pub memory_kib: Option<i64>,
    /// While running: the tests that have ended, in judging order.
    #[serde(default)]
    pub finished: Vec<FinishedTest>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct FinishedTest {
    pub name: String,
    pub verdict: Verdict,
    pub time_ms: u64,
    pub memory_kib: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TestResult {
    pub name: String,
    pub verdict: Verdict,
    pub time_ms: i64,
    pub memory_kib: i64,
    #[serde(default)]
    pub message: String,
    pub score: Option<f64>,
    pub output: Option<String>,
    #[serde(default)]
    pub detail: Option<CaseDetail>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Submission {
    pub id: i64,
    pub problem_slug: String,
    pub problem_title: String,
    pub language: String,
    pub source: Option<String>,
    pub status: LiveStatus,
    pub compile_output: Option<String>,
    pub message: Option<String>,
    pub max_score: Option<f64>,
    #[serde(default)]
    pub tests: Vec<TestResult>,
    pub created_at_ms: i64,
    #[serde(default)]
    pub history: Vec<JudgedGeneration>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct JudgedGeneration {
    pub generation: i64,
    pub verdict: Verdict,
    pub score: Option<f64>,
    pub judged_at_ms: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionSummary {
    pub id: i64,
    pub problem_slug: String,
    pub language: String,
    pub state: String,
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    pub time_ms: Option<i64>,
    pub memory_kib: Option<i64>,
    pub created_at_ms: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionPage {
    pub items: Vec<SubmissionSummary>,
    pub next_before: Option<i64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SolvedProblem {
    pub problem_id: i64,
    pub problem_slug: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct VerdictCount {
    pub verdict: Verdict,
    pub count: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DayCount {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    pub count: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionStats {
    pub solved: Vec<SolvedProblem>,
    pub attempted: Vec<SolvedProblem>,
    pub verdicts: Vec<VerdictCount>,
    pub days: Vec<DayCount>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RunReport {
    pub verdict: Verdict,
    pub exit_code: Option<i32>,
    pub time_ms: u64,
    pub memory_kib: u64,
    pub stdout: String,
    pub stderr: String,
    pub output_truncated: bool,
    pub compile_output: String,
    /// A function problem's run: each case.
    #[serde(default)]
    pub cases: Vec<RunCase>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RunStatus {
    pub state: String,
    pub result: Option<RunReport>,
    #[serde(default)]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StateCount {
    pub state: String,
    pub count: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ActiveLease {
    pub submission_id: i64,
    pub generation: i64,
    pub attempt_id: String,
    pub expires_at_ms: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SingletonLease {
    pub name: String,
    pub fence_token: i64,
    pub holder: String,
    pub expires_at_ms: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SubmissionPipeline {
    pub submissions_by_state: Vec<StateCount>,
    pub outbox_by_state: Vec<StateCount>,
    pub judging_leases: Vec<ActiveLease>,
    pub singleton_leases: Vec<SingletonLease>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct QueueView {
    pub length: u64,
    pub pending: u64,
    pub oldest_pending_age_ms: u64,
    pub queue_delay_ms: u64,
    pub dead_letters: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StaleCount {
    pub call: String,
    pub count: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Pipeline {
    pub submission: SubmissionPipeline,
    pub queue: QueueView,
    pub stale_results_dropped: Vec<StaleCount>,
    #[serde(default)]
    pub pending_entries: Vec<PendingEntry>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PendingEntry {
    pub id: String,
    pub consumer: String,
    pub idle_ms: u64,
    pub deliveries: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DeadLetter {
    pub id: String,
    pub payload: String,
    pub reason: String,
    pub deliveries: u64,
}

/// One event consumer's stream (Admin's `EventStreamView`).
#[derive(Debug, Clone, Deserialize)]
pub struct EventStream {
    pub consumer: String,
    pub stream: QueueView,
    #[serde(default)]
    pub dead_letters: Vec<DeadLetter>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RejudgeResult {
    pub submission_id: i64,
    pub outcome: serde_json::Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct AuditEntry {
    pub id: i64,
    pub actor_id: i64,
    pub action: String,
    pub target: String,
    pub detail: String,
    pub created_at_ms: i64,
}

/// One sample of the pipeline's counts (Admin keeps the last hour).
#[derive(Debug, Clone, Deserialize)]
pub struct PipelineSample {
    pub at_ms: i64,
    pub queue_length: u64,
    pub pending: u64,
    pub queue_delay_ms: u64,
    pub dead_letters: u64,
    pub outbox_pending: i64,
    pub judging: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct UnavailableLanguage {
    pub id: String,
    pub name: String,
    pub reason: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DoctorCheck {
    pub name: String,
    pub ok: bool,
    pub detail: String,
}

/// A finished backup (the API's `BackupRecord`).
#[derive(Debug, Clone, Deserialize)]
pub struct Backup {
    pub taken_at_ms: i64,
    pub shape: String,
    pub location: String,
    pub bytes: i64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DoctorReport {
    pub ok: bool,
    pub checks: Vec<DoctorCheck>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SystemView {
    pub languages: Vec<Language>,
    pub unavailable: Vec<UnavailableLanguage>,
    pub sandbox: DoctorReport,
}

/// A contest (the API's `ContestView`).
#[derive(Debug, Clone, Deserialize)]
pub struct Contest {
    pub slug: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    /// `icpc`, `ioi` or `atcoder`.
    pub format: String,
    pub start_ms: i64,
    pub duration_ms: i64,
    pub end_ms: i64,
    /// Contest time from which the public board hides results.
    pub freeze_ms: Option<i64>,
    pub unfrozen_at_ms: Option<i64>,
    pub finalized_at_ms: Option<i64>,
    pub penalty_minutes: i64,
    /// `public`, `invite` or `private`.
    pub visibility: String,
    #[serde(default)]
    pub invite_code: Option<String>,
    pub upsolving: bool,
    /// `upcoming`, `running` or `ended`.
    pub status: String,
    pub frozen: bool,
    #[serde(default)]
    pub problems: Vec<ContestProblem>,
    pub viewer: ContestStanding,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ContestProblem {
    pub label: String,
    pub slug: String,
    pub title: String,
    pub time_limit_ms: i64,
}

/// What the viewer is in a contest.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ContestStanding {
    /// `participant`, `jury` or `admin`; `None` for a non-member.
    pub role: Option<String>,
    pub team_id: Option<i64>,
    pub virtual_start_ms: Option<i64>,
    pub staff: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Scoreboard {
    pub format: String,
    /// `public`, `live` or `virtual`.
    pub view: String,
    pub frozen: bool,
    pub freeze_ms: Option<i64>,
    pub problems: Vec<BoardProblem>,
    pub rows: Vec<BoardRow>,
    #[serde(default)]
    pub awards: Vec<Award>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct BoardProblem {
    pub label: String,
    pub title: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct BoardRow {
    pub rank: Option<u32>,
    pub team_id: i64,
    pub team_name: String,
    pub is_virtual: bool,
    pub solved: u32,
    /// ICPC: minutes; AtCoder: milliseconds.
    pub penalty: i64,
    pub score: Option<f64>,
    /// `gold`, `silver` or `bronze`.
    pub medal: Option<String>,
    pub cells: Vec<BoardCell>,
    #[serde(default)]
    pub upsolved: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct BoardCell {
    pub num_judged: u32,
    pub num_pending: u32,
    pub solved: bool,
    /// ICPC: minutes; AtCoder and IOI: milliseconds.
    pub time: Option<i64>,
    pub score: Option<f64>,
    pub first_to_solve: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Award {
    pub citation: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Clarification {
    pub id: i64,
    /// `None`: from the jury.
    pub from_team_id: Option<i64>,
    /// `None`: to everyone (from the jury) or to the jury (from a team).
    pub to_team_id: Option<i64>,
    pub problem: Option<String>,
    pub reply_to: Option<i64>,
    pub text: String,
    pub contest_time_ms: i64,
    pub answered: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ContestSubmission {
    pub submission_id: i64,
    pub team_id: i64,
    pub label: String,
    /// `contest`, `virtual` or `upsolving`.
    pub phase: String,
    pub contest_time_ms: i64,
    pub language: String,
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Team {
    pub id: i64,
    pub name: String,
    #[serde(default)]
    pub affiliation: String,
    pub is_virtual: bool,
    #[serde(default)]
    pub members: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Balloon {
    pub submission_id: i64,
    pub team_name: String,
    pub label: String,
    #[serde(default)]
    pub color: String,
    pub contest_time_ms: i64,
    pub first_to_solve: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Rejudging {
    pub id: i64,
    /// `open`, `applied` or `cancelled`.
    pub state: String,
    pub created_at_ms: i64,
    pub submissions: usize,
    pub judged: usize,
    #[serde(default)]
    pub not_started: Vec<i64>,
    #[serde(default)]
    pub matrix: Vec<MatrixCell>,
}

/// Submissions whose old verdict is `old` and new one `new` (`None`: not judged again yet).
#[derive(Debug, Clone, Deserialize)]
pub struct MatrixCell {
    pub old: Verdict,
    pub new: Option<Verdict>,
    pub submissions: Vec<i64>,
}
