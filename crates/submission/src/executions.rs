//! Execution jobs (`contracts::jobs`): programs run without judging, kept durably. Another
//! program's execution API (Judge0's, through the `judge0` edge) queues them here; the node
//! that took a job runs it.
//!
//! ```text
//! submit ─▶ queued ─claim (node, attempt a)─▶ running(a) ─complete(a)─▶ done | failed
//!              ▲                                  │ the runner failed: attempts left → queued
//!              └──── the node restarted ──────────┘ (every running job of the node: its
//!                                                   attempt is dead, the job runs again)
//! done/failed with a callback URL ─▶ callback due ─▶ delivered | tried again | failed
//! ```
//!
//! Each step is one conditional `UPDATE`: a claim only takes a queued job, a completion only
//! lands while the attempt that ran it still holds the job. Programs have no effect outside
//! their run, so running a job again after a crash is safe.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use contracts::execution::CodeRunner;
use contracts::jobs::{
    ExecutionJobs, ExecutionRequest, ExecutionResult, JobError, JobPage, JobState, JobStatistics,
    JobView, NewJob, QueueSize,
};
use contracts::PortError;
use platform::db::{AnyRow, Row};
use platform::{Db, DbError, Shutdown};
use tokio::sync::{Notify, Semaphore};

/// How the node keeps and runs jobs.
#[derive(Debug, Clone)]
pub struct ExecutionsConfig {
    /// This node's name: the jobs it takes are its to run.
    pub node: String,
    /// Jobs waiting or running (all nodes) beyond which new ones are refused.
    pub max_queue: u64,
    /// Jobs this node runs at once.
    pub concurrency: usize,
    /// Attempts of a job whose runner failed before it ends failed.
    pub max_attempts: u32,
    /// Finished jobs older than this are deleted.
    pub retention: Duration,
}

impl ExecutionsConfig {
    pub fn new(node: impl Into<String>) -> Self {
        Self {
            node: node.into(),
            max_queue: 1_000,
            concurrency: std::thread::available_parallelism().map_or(1, |n| n.get()),
            max_attempts: 3,
            retention: Duration::from_secs(7 * 24 * 3600),
        }
    }
}

/// The execution jobs on the Submission owner's database. Cheap to clone.
#[derive(Clone)]
pub struct Executions {
    db: Db,
    runner: Arc<dyn CodeRunner>,
    config: Arc<ExecutionsConfig>,
    /// Woken when a job is queued (the worker claims it).
    queued: Arc<Notify>,
    /// Woken when a job finishes (waiters look again).
    finished: Arc<Notify>,
}

const COLUMNS: &str =
    "token, state, request, echo, result, error, callback_url, created_at, finished_at";

fn view_of(row: &AnyRow) -> Result<JobView, JobError> {
    let unavailable = |e: String| JobError::Port(PortError::Unavailable(e));
    let get = |e: sqlx::Error| unavailable(e.to_string());
    let state: String = row.try_get("state").map_err(get)?;
    let request: String = row.try_get("request").map_err(get)?;
    let echo: String = row.try_get("echo").map_err(get)?;
    let result: Option<String> = row.try_get("result").map_err(get)?;
    Ok(JobView {
        token: row.try_get("token").map_err(get)?,
        state: JobState::parse(&state).ok_or_else(|| unavailable(format!("state {state:?}")))?,
        request: serde_json::from_str(&request).map_err(|e| unavailable(e.to_string()))?,
        echo: serde_json::from_str(&echo).map_err(|e| unavailable(e.to_string()))?,
        result: result
            .map(|r| serde_json::from_str(&r))
            .transpose()
            .map_err(|e| unavailable(e.to_string()))?,
        error: row.try_get("error").map_err(get)?,
        callback_url: row.try_get("callback_url").map_err(get)?,
        created_at_ms: row.try_get("created_at").map_err(get)?,
        finished_at_ms: row.try_get("finished_at").map_err(get)?,
    })
}

fn db_error(e: impl Into<DbError>) -> JobError {
    JobError::Port(PortError::Unavailable(e.into().to_string()))
}

impl Executions {
    /// The jobs on the Submission owner's database (already migrated). The jobs this node was
    /// running when it stopped are queued again: their attempts died with it.
    pub async fn open(
        db: Db,
        runner: Arc<dyn CodeRunner>,
        config: ExecutionsConfig,
    ) -> Result<Self, DbError> {
        db.query(
            "UPDATE execution_jobs SET state = 'queued', attempt = NULL, updated_at = {now} \
             WHERE node = $1 AND state = 'running'",
        )
        .bind(config.node.clone())
        .execute(db.pool())
        .await?;
        Ok(Self {
            db,
            runner,
            config: Arc::new(config),
            queued: Arc::default(),
            finished: Arc::default(),
        })
    }

    /// Runs this node's queued jobs, `concurrency` at a time, until shutdown; deletes
    /// finished jobs past their retention now and then.
    pub async fn run(self, shutdown: Shutdown) {
        let slots = Arc::new(Semaphore::new(self.config.concurrency.max(1)));
        let mut last_sweep = std::time::Instant::now();
        loop {
            let permit = tokio::select! {
                _ = shutdown.triggered() => return,
                permit = slots.clone().acquire_owned() => permit.expect("never closed"),
            };
            match self.claim().await {
                Ok(Some((token, attempt, request))) => {
                    let jobs = self.clone();
                    tokio::spawn(async move {
                        jobs.execute(&token, &attempt, &request).await;
                        drop(permit);
                    });
                }
                Ok(None) => {
                    drop(permit);
                    if last_sweep.elapsed() > Duration::from_secs(60) {
                        last_sweep = std::time::Instant::now();
                        if let Err(e) = self.delete_expired().await {
                            tracing::warn!(error = %e, "expired execution jobs not deleted");
                        }
                    }
                    tokio::select! {
                        _ = shutdown.triggered() => return,
                        _ = self.queued.notified() => {}
                        // Jobs queued by another process of this node's name, or re-queued.
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
                Err(e) => {
                    drop(permit);
                    tracing::warn!(error = %e, "claiming an execution job failed");
                    tokio::select! {
                        _ = shutdown.triggered() => return,
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            }
        }
    }

    /// The oldest queued job of this node, now running under a new attempt.
    async fn claim(&self) -> Result<Option<(String, String, ExecutionRequest)>, DbError> {
        let attempt = uuid::Uuid::new_v4().to_string();
        let row = self
            .db
            .query(
                "UPDATE execution_jobs SET state = 'running', attempt = $2, attempts = attempts + 1, \
                 updated_at = {now} \
                 WHERE token = (SELECT token FROM execution_jobs WHERE node = $1 AND state = 'queued' \
                                ORDER BY created_at, token LIMIT 1) \
                   AND state = 'queued' \
                 RETURNING token, request",
            )
            .bind(self.config.node.clone())
            .bind(attempt.clone())
            .fetch_optional(self.db.pool())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let token: String = row.try_get(0)?;
        let request: String = row.try_get(1)?;
        match serde_json::from_str(&request) {
            Ok(request) => Ok(Some((token, attempt, request))),
            Err(e) => {
                self.finish(
                    &token,
                    &attempt,
                    JobState::Failed,
                    None,
                    Some(&format!("unreadable request: {e}")),
                )
                .await?;
                Ok(None)
            }
        }
    }

    async fn execute(&self, token: &str, attempt: &str, request: &ExecutionRequest) {
        let outcome = self.runner.execute(request).await;
        let written = match outcome {
            Ok(result) => {
                let outcome = result.outcome(&request.limits);
                self.finish(
                    token,
                    attempt,
                    JobState::Done,
                    Some((&result, &outcome)),
                    None,
                )
                .await
            }
            Err(e) => self.failed_attempt(token, attempt, &e.to_string()).await,
        };
        match written {
            Ok(true) => {}
            Ok(false) => tracing::info!(
                job = token,
                "execution job result dropped: the attempt lost the job"
            ),
            Err(e) => tracing::error!(error = %e, job = token, "execution job result not recorded"),
        }
        self.finished.notify_waiters();
    }

    /// running(attempt) → `state`; false when the attempt no longer holds the job.
    async fn finish(
        &self,
        token: &str,
        attempt: &str,
        state: JobState,
        result: Option<(&ExecutionResult, &str)>,
        error: Option<&str>,
    ) -> Result<bool, DbError> {
        let written = self
            .db
            .query(
                "UPDATE execution_jobs SET state = $3, result = $4, error = $5, outcome = $6, \
                 finished_at = {now}, \
                 updated_at = {now}, \
                 callback_state = CASE WHEN callback_url IS NULL THEN 'none' ELSE 'due' END, \
                 callback_next_at = {now} \
                 WHERE token = $1 AND attempt = $2 AND state = 'running'",
            )
            .bind(token.to_string())
            .bind(attempt.to_string())
            .bind(state.as_str())
            .bind(result.map(|(r, _)| serde_json::to_string(r).expect("results serialise")))
            .bind(error.map(str::to_string))
            .bind(result.map(|(_, outcome)| outcome.to_string()))
            .execute(self.db.pool())
            .await?
            .rows_affected();
        Ok(written == 1)
    }

    /// The runner failed: the job runs again while attempts are left, else it failed.
    async fn failed_attempt(
        &self,
        token: &str,
        attempt: &str,
        error: &str,
    ) -> Result<bool, DbError> {
        let requeued = self
            .db
            .query(
                "UPDATE execution_jobs SET state = 'queued', attempt = NULL, error = $3, updated_at = {now} \
                 WHERE token = $1 AND attempt = $2 AND state = 'running' AND attempts < $4",
            )
            .bind(token.to_string())
            .bind(attempt.to_string())
            .bind(error.to_string())
            .bind(i64::from(self.config.max_attempts))
            .execute(self.db.pool())
            .await?
            .rows_affected();
        if requeued == 1 {
            self.queued.notify_one();
            return Ok(true);
        }
        self.finish(token, attempt, JobState::Failed, None, Some(error))
            .await
    }

    async fn delete_expired(&self) -> Result<u64, DbError> {
        Ok(self
            .db
            .query(
                "DELETE FROM execution_jobs WHERE state IN ('done', 'failed') AND finished_at < {now} - $1",
            )
            .bind(self.config.retention.as_millis() as i64)
            .execute(self.db.pool())
            .await?
            .rows_affected())
    }

    async fn waiting(&self) -> Result<u64, DbError> {
        let count: i64 = self
            .db
            .query("SELECT COUNT(*) FROM execution_jobs WHERE state IN ('queued', 'running')")
            .fetch_one(self.db.pool())
            .await?
            .try_get(0)?;
        Ok(count.max(0) as u64)
    }

    /// `(key, count)` rows of a grouping query.
    async fn counted(&self, sql: &str, since_ms: i64) -> Result<Vec<(String, u64)>, DbError> {
        let rows = self
            .db
            .query(sql)
            .bind(since_ms)
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|row| {
                let key: String = row.try_get(0)?;
                let count: i64 = row.try_get(1)?;
                Ok((key, count.max(0) as u64))
            })
            .collect()
    }
}

#[async_trait]
impl ExecutionJobs for Executions {
    async fn submit(&self, jobs: Vec<NewJob>) -> Result<Vec<String>, JobError> {
        if self.waiting().await.map_err(db_error)? + jobs.len() as u64 > self.config.max_queue {
            return Err(JobError::QueueFull);
        }
        let mut tx = self.db.begin().await.map_err(db_error)?;
        let mut tokens = Vec::with_capacity(jobs.len());
        for job in jobs {
            let token = uuid::Uuid::new_v4().to_string();
            self.db
                .query(
                    "INSERT INTO execution_jobs (token, state, language, request, echo, node, \
                     callback_url, callback_state, created_at, updated_at) \
                     VALUES ($1, 'queued', $6, $2, $3, $4, $5, 'none', {now}, {now})",
                )
                .bind(token.clone())
                .bind(serde_json::to_string(&job.request).expect("requests serialise"))
                .bind(job.echo.to_string())
                .bind(self.config.node.clone())
                .bind(job.callback_url)
                .bind(job.request.language.clone())
                .execute(&mut *tx)
                .await
                .map_err(db_error)?;
            tokens.push(token);
        }
        tx.commit().await.map_err(db_error)?;
        self.queued.notify_one();
        Ok(tokens)
    }

    async fn get(&self, token: &str) -> Result<Option<JobView>, JobError> {
        self.db
            .query(&format!(
                "SELECT {COLUMNS} FROM execution_jobs WHERE token = $1"
            ))
            .bind(token.to_string())
            .fetch_optional(self.db.pool())
            .await
            .map_err(db_error)?
            .map(|row| view_of(&row))
            .transpose()
    }

    async fn get_many(&self, tokens: &[String]) -> Result<Vec<Option<JobView>>, JobError> {
        let mut out = Vec::with_capacity(tokens.len());
        for token in tokens {
            out.push(self.get(token).await?);
        }
        Ok(out)
    }

    async fn wait(&self, token: &str, timeout: Duration) -> Result<Option<JobView>, JobError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            // Registered before looking, so a completion in between is not missed.
            let finished = self.finished.notified();
            let job = self.get(token).await?;
            match &job {
                Some(view) if !view.state.is_final() && tokio::time::Instant::now() < deadline => {}
                _ => return Ok(job),
            }
            // Another process may finish it: look again at least every 100 ms.
            let _ = tokio::time::timeout_at(
                deadline.min(tokio::time::Instant::now() + Duration::from_millis(100)),
                finished,
            )
            .await;
        }
    }

    async fn list(&self, page: u64, per_page: u64) -> Result<JobPage, JobError> {
        let total: i64 = self
            .db
            .query("SELECT COUNT(*) FROM execution_jobs")
            .fetch_one(self.db.pool())
            .await
            .map_err(db_error)?
            .try_get(0)
            .map_err(db_error)?;
        let rows = self
            .db
            .query(&format!(
                "SELECT {COLUMNS} FROM execution_jobs ORDER BY created_at DESC, token LIMIT $1 OFFSET $2"
            ))
            .bind(per_page.min(i64::MAX as u64) as i64)
            .bind((page.saturating_sub(1).saturating_mul(per_page)).min(i64::MAX as u64) as i64)
            .fetch_all(self.db.pool())
            .await
            .map_err(db_error)?;
        Ok(JobPage {
            jobs: rows.iter().map(view_of).collect::<Result<_, _>>()?,
            total: total.max(0) as u64,
        })
    }

    async fn delete(&self, token: &str) -> Result<JobView, JobError> {
        let job = self
            .get(token)
            .await?
            .ok_or_else(|| JobError::NotFound(token.into()))?;
        if !job.state.is_final() {
            return Err(JobError::NotFinished(token.into()));
        }
        self.db
            .query("DELETE FROM execution_jobs WHERE token = $1 AND state IN ('done', 'failed')")
            .bind(token.to_string())
            .execute(self.db.pool())
            .await
            .map_err(db_error)?;
        Ok(job)
    }

    async fn due_callbacks(&self, limit: u32) -> Result<Vec<JobView>, JobError> {
        let rows = self
            .db
            .query(&format!(
                "SELECT {COLUMNS} FROM execution_jobs WHERE callback_state = 'due' AND callback_next_at <= {{now}} \
                 ORDER BY callback_next_at, token LIMIT $1"
            ))
            .bind(i64::from(limit))
            .fetch_all(self.db.pool())
            .await
            .map_err(db_error)?;
        rows.iter().map(view_of).collect()
    }

    async fn callback_attempted(
        &self,
        token: &str,
        delivered: bool,
        max_tries: u32,
    ) -> Result<(), JobError> {
        let query = if delivered {
            self.db
                .query(
                    "UPDATE execution_jobs SET callback_state = 'delivered', callback_tries = callback_tries + 1 \
                     WHERE token = $1 AND callback_state = 'due'",
                )
                .bind(token.to_string())
        } else {
            // Tried again after 1 s, 2 s, ... until `max_tries` attempts were made.
            self.db
                .query(
                    "UPDATE execution_jobs SET callback_tries = callback_tries + 1, \
                     callback_state = CASE WHEN callback_tries + 1 >= $2 THEN 'failed' ELSE 'due' END, \
                     callback_next_at = {now} + 1000 * (callback_tries + 1) \
                     WHERE token = $1 AND callback_state = 'due'",
                )
                .bind(token.to_string())
                .bind(i64::from(max_tries))
        };
        query.execute(self.db.pool()).await.map_err(db_error)?;
        Ok(())
    }

    async fn queue(&self) -> Result<QueueSize, JobError> {
        let by_state = self
            .counted(
                "SELECT state, COUNT(*) FROM execution_jobs \
                 WHERE state IN ('queued', 'running') AND created_at >= $1 GROUP BY state",
                0,
            )
            .await
            .map_err(db_error)?;
        let of = |state: &str| {
            by_state
                .iter()
                .find(|(s, _)| s == state)
                .map_or(0, |(_, n)| *n)
        };
        Ok(QueueSize {
            queued: of("queued"),
            running: of("running"),
            bound: self.config.max_queue,
        })
    }

    async fn statistics(&self, since_ms: i64) -> Result<JobStatistics, JobError> {
        let total = self
            .counted(
                "SELECT 'all', COUNT(*) FROM execution_jobs WHERE created_at >= $1",
                0,
            )
            .await
            .map_err(db_error)?;
        let by_day = self
            .db
            .query(
                "SELECT created_at / 86400000 AS day, COUNT(*) FROM execution_jobs \
                 WHERE created_at >= $1 GROUP BY day ORDER BY day",
            )
            .bind(since_ms)
            .fetch_all(self.db.pool())
            .await
            .map_err(db_error)?
            .iter()
            .map(|row| {
                let day: i64 = row.try_get(0)?;
                let count: i64 = row.try_get(1)?;
                Ok((day, count.max(0) as u64))
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(db_error)?;
        let by_language = self
            .counted(
                "SELECT language, COUNT(*) FROM execution_jobs WHERE created_at >= $1 \
                 GROUP BY language ORDER BY COUNT(*) DESC, language",
                0,
            )
            .await
            .map_err(db_error)?;
        let by_outcome = self
            .counted(
                "SELECT state || ':' || COALESCE(outcome, ''), COUNT(*) FROM execution_jobs \
                 WHERE created_at >= $1 GROUP BY state, outcome ORDER BY COUNT(*) DESC",
                0,
            )
            .await
            .map_err(db_error)?
            .into_iter()
            .filter_map(|(key, count)| {
                let (state, outcome) = key.split_once(':')?;
                let outcome = (!outcome.is_empty()).then(|| outcome.to_string());
                Some((JobState::parse(state)?, outcome, count))
            })
            .collect();
        Ok(JobStatistics {
            total: total.first().map_or(0, |(_, n)| *n),
            by_day,
            by_language,
            by_outcome,
        })
    }
}
