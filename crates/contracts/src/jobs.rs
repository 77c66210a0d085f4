//! Execution jobs: programs run (not judged) on request, durably — queued, run under a lease,
//! their results kept until deleted or expired. The Submission owner keeps them; edges that
//! speak other programs' execution APIs (Judge0) reach them through [`ExecutionJobs`]; the
//! [`crate::execution::CodeRunner`] runs them.
//!
//! The request says what to run in neutral terms (limits in their units, options as
//! arguments); it is stored as given, so an edge can show its fields back.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::judging::PortError;

/// Bytes as a string in JSON: base64 (they may be any bytes).
pub mod base64_bytes {
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(serde::de::Error::custom)
    }

    /// The same for an optional field.
    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};

        pub fn serialize<S: Serializer>(bytes: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
            match bytes {
                Some(bytes) => super::serialize(bytes, s),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
            #[derive(Deserialize)]
            struct Wrapped(#[serde(with = "super")] Vec<u8>);
            Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
        }
    }
}

/// Limits of each run of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionLimits {
    /// CPU time the program may use; more is a time limit exceeded.
    pub cpu_time_ms: u64,
    /// CPU time past the limit before the program is killed (it still exceeded the limit).
    pub cpu_extra_ms: u64,
    pub wall_time_ms: u64,
    pub memory_kib: u64,
    pub stack_kib: u64,
    /// Processes and threads alive at once.
    pub processes: u32,
    /// Largest file the program may write (its output too).
    pub file_size_kib: u64,
}

/// A program to run, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionRequest {
    /// One of our language ids, or `multi` for a program given as `compile`/`run` scripts
    /// in `additional_files`.
    pub language: String,
    #[serde(with = "base64_bytes")]
    pub source: Vec<u8>,
    #[serde(with = "base64_bytes")]
    pub stdin: Vec<u8>,
    pub limits: ExecutionLimits,
    /// Words added to the compile command (before the sources).
    #[serde(default)]
    pub compiler_options: Vec<String>,
    /// Words added to the run command.
    #[serde(default)]
    pub arguments: Vec<String>,
    /// A zip archive unpacked into the program's directory before it is built.
    #[serde(default, with = "base64_bytes::option")]
    pub additional_files: Option<Vec<u8>>,
    #[serde(default)]
    pub redirect_stderr_to_stdout: bool,
    /// Runs of the program (time and memory are averaged); runs stop at the first that does
    /// not end cleanly or whose output differs from `expected_output`.
    pub runs: u32,
    #[serde(default, with = "base64_bytes::option")]
    pub expected_output: Option<Vec<u8>>,
}

/// One run of a job's program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionRun {
    /// The sandbox's outcome category (`ok`, `nonzero_exit`, `signaled`, `time_limit_cpu`,
    /// `time_limit_wall`, `memory_limit`, `output_limit`, `fork_limit`,
    /// `disallowed_syscall`, `launch_failure`, `config_error`, `cancelled`).
    pub status: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub cpu_time_us: u64,
    pub wall_time_us: u64,
    pub memory_kib: u64,
    /// Whether the output matched `expected_output` (lines compared without their trailing
    /// whitespace, trailing blank lines ignored); `None` without one, or when the run did not
    /// end cleanly.
    pub output_matches: Option<bool>,
    /// Why the sandbox failed (`launch_failure`, `config_error`), or what it stopped.
    #[serde(default)]
    pub message: Option<String>,
}

/// What a job gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionResult {
    /// The compiler's output (also when it succeeded).
    #[serde(with = "base64_bytes")]
    pub compile_output: Vec<u8>,
    /// The build failed: the program never ran. `compile_timed_out` when it was killed at
    /// the compile limit.
    pub compile_failed: bool,
    #[serde(default)]
    pub compile_timed_out: bool,
    /// The runs done, in order (the last one's output is kept).
    pub runs: Vec<ExecutionRun>,
    #[serde(with = "base64_bytes")]
    pub stdout: Vec<u8>,
    #[serde(with = "base64_bytes")]
    pub stderr: Vec<u8>,
}

impl ExecutionResult {
    /// How the job ended, in one word: `compile_error`; for the last run `wrong_output`,
    /// `time_limit_cpu` (also for a clean run past the CPU limit, inside the extra time),
    /// `signaled_N` (N the signal), or the sandbox's status (`ok`, `nonzero_exit`, ...).
    pub fn outcome(&self, limits: &ExecutionLimits) -> String {
        if self.compile_failed {
            return "compile_error".into();
        }
        let Some(run) = self.runs.last() else {
            return "no_run".into();
        };
        match run.status.as_str() {
            "ok" if run.cpu_time_us > limits.cpu_time_ms * 1_000 => "time_limit_cpu".into(),
            "ok" if run.output_matches == Some(false) => "wrong_output".into(),
            "signaled" => format!("signaled_{}", run.signal.unwrap_or(0)),
            status => status.to_string(),
        }
    }
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Done,
    /// The job could not be carried out (the sandbox or the machine failed); see `error`.
    Failed,
}

impl JobState {
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            JobState::Queued,
            JobState::Running,
            JobState::Done,
            JobState::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    pub fn is_final(self) -> bool {
        matches!(self, JobState::Done | JobState::Failed)
    }
}

/// A job as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobView {
    pub token: String,
    pub state: JobState,
    pub request: ExecutionRequest,
    /// The client's own view of the request (an edge's fields, shown back as given).
    pub echo: serde_json::Value,
    pub result: Option<ExecutionResult>,
    pub error: Option<String>,
    pub callback_url: Option<String>,
    pub created_at_ms: i64,
    pub finished_at_ms: Option<i64>,
}

/// A new job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewJob {
    pub request: ExecutionRequest,
    pub echo: serde_json::Value,
    /// Where the finished job is announced (the edge that renders it delivers).
    pub callback_url: Option<String>,
}

/// Why jobs were not taken or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// More jobs are waiting than the queue's bound: nothing was taken.
    #[error("the queue is full")]
    QueueFull,
    #[error("no job {0}")]
    NotFound(String),
    /// Queued or running jobs cannot be deleted.
    #[error("job {0} is not finished")]
    NotFinished(String),
    #[error(transparent)]
    Port(#[from] PortError),
}

/// A page of jobs, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPage {
    pub jobs: Vec<JobView>,
    pub total: u64,
}

/// The Submission owner's execution jobs.
#[async_trait]
pub trait ExecutionJobs: Send + Sync {
    /// Queues every job or none (the queue's bound counts them together); their tokens in
    /// order.
    async fn submit(&self, jobs: Vec<NewJob>) -> Result<Vec<String>, JobError>;

    async fn get(&self, token: &str) -> Result<Option<JobView>, JobError>;

    /// Jobs by token, in order; `None` for an unknown token.
    async fn get_many(&self, tokens: &[String]) -> Result<Vec<Option<JobView>>, JobError>;

    /// Waits until the job is finished (or `timeout` passes) and returns it as it stands.
    async fn wait(
        &self,
        token: &str,
        timeout: std::time::Duration,
    ) -> Result<Option<JobView>, JobError>;

    /// Page `page` (from 1) of `per_page` jobs, newest first.
    async fn list(&self, page: u64, per_page: u64) -> Result<JobPage, JobError>;

    /// Removes a finished job; returns it as it was.
    async fn delete(&self, token: &str) -> Result<JobView, JobError>;

    /// Finished jobs whose callback is due (at most `limit`), oldest first.
    async fn due_callbacks(&self, limit: u32) -> Result<Vec<JobView>, JobError>;

    /// Records a callback attempt: `delivered`, else it is tried again later (at most
    /// `max_tries` attempts in all).
    async fn callback_attempted(
        &self,
        token: &str,
        delivered: bool,
        max_tries: u32,
    ) -> Result<(), JobError>;

    /// Jobs queued and running now, and the queue's bound.
    async fn queue(&self) -> Result<QueueSize, JobError>;

    /// Counts of the jobs kept, for a dashboard.
    async fn statistics(&self, since_ms: i64) -> Result<JobStatistics, JobError>;
}

/// The queue now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSize {
    pub queued: u64,
    pub running: u64,
    /// Jobs queued or running beyond which new ones are refused.
    pub bound: u64,
}

/// Counts of the jobs kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStatistics {
    pub total: u64,
    /// Jobs created per UTC day (days since the epoch) from `since_ms`.
    pub by_day: Vec<(i64, u64)>,
    /// Jobs per language (ours).
    pub by_language: Vec<(String, u64)>,
    /// Jobs per state and, for finished ones, outcome ([`ExecutionResult::outcome`]).
    pub by_outcome: Vec<(JobState, Option<String>, u64)>,
}
