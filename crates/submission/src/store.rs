//! The Submission aggregate and its state machine, on either backend.
//!
//! States: `pending → judging → done`. Every transition is one conditional `UPDATE` whose
//! affected-row count is the answer, timed by the database clock:
//!
//! ```text
//! acquire lease : id + state = pending + generation = g        → judging, attempt = a, lease = now + ttl
//! renew lease   : id + current_attempt_id = a                  → lease = now + ttl
//! write verdict : id + generation = g + current_attempt_id = a → done, attempt and lease cleared
//! rejudge/reap  : id + generation = expected                   → generation + 1, pending, new outbox row
//! ```
//!
//! A verdict, its per-test results and its `SubmissionJudged` event commit in one
//! transaction; a new generation and its judge-outbox row commit in one transaction.

use std::sync::Arc;
use std::time::Duration;

use crate::changes::{Change, ChangeFeed};
use contracts::contest::{JudgedPayload, RunBrief, SubmittedPayload};
use contracts::events::types;
use contracts::{
    Acquired, AttemptId, FactsRejection, Generation, JudgeJob, JudgeMessage, JudgeProgress,
    JudgeResult, ProblemId, StaleReason, SubmissionFactsSnapshot, SubmissionId, UserId, Verdict,
};
use platform::db::{nullable_float, Any, Row, Transaction};
use platform::events::{NewEvent, Outbox};
use platform::{Backend, Db, DbError, Lease};
use serde::Serialize;
use tokio::sync::Notify;

/// Tunables of the owner's state machine.
#[derive(Debug, Clone, Copy)]
pub struct SubmissionConfig {
    /// How long an acquired or renewed lease lasts.
    pub lease_ttl: Duration,
    /// Recoveries (expired leases, lost deliveries, infrastructure failures) after which a
    /// submission ends in System Error instead of looping.
    pub max_recoveries: i64,
}

impl Default for SubmissionConfig {
    fn default() -> Self {
        Self {
            lease_ttl: Duration::from_secs(60),
            max_recoveries: 5,
        }
    }
}

/// A submission as the user sends it (validated at the edge).
#[derive(Debug, Clone, PartialEq)]
pub struct SubmitRequest {
    pub user_id: UserId,
    pub problem_id: ProblemId,
    pub language: String,
    pub source: String,
    /// A client key: the same key and payload return the same submission.
    pub idempotency_key: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Submitted {
    pub id: SubmissionId,
    /// False when an earlier submission with the same idempotency key was returned.
    pub created: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error("the submission is not admitted: {0}")]
    Rejected(#[from] FactsRejection),
    #[error("idempotency key {0:?} was used for a different submission")]
    IdempotencyConflict(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for SubmitError {
    fn from(e: sqlx::Error) -> Self {
        SubmitError::Db(e.into())
    }
}

/// Lifecycle states.
pub mod state {
    pub const PENDING: &str = "pending";
    pub const JUDGING: &str = "judging";
    pub const DONE: &str = "done";
}

/// A stored per-test result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredTest {
    pub name: String,
    pub group: String,
    pub verdict: Verdict,
    pub time_ms: i64,
    pub wall_time_ms: i64,
    pub memory_kib: i64,
    pub message: String,
    pub score: Option<f64>,
    pub output: Option<String>,
    /// Function problems: the case's values, exception and prints.
    pub detail: Option<contracts::CaseDetail>,
}

/// A submission as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubmissionRecord {
    pub id: SubmissionId,
    pub user_id: UserId,
    pub problem_id: ProblemId,
    pub language: String,
    pub source: String,
    pub facts: SubmissionFactsSnapshot,
    pub state: String,
    pub generation: Generation,
    pub current_attempt_id: Option<String>,
    pub lease_expires_at_ms: Option<i64>,
    pub recoveries: i64,
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    pub max_score: Option<f64>,
    pub time_ms: Option<i64>,
    pub memory_kib: Option<i64>,
    pub compile_output: Option<String>,
    pub message: Option<String>,
    pub judged_generation: Option<Generation>,
    pub judged_attempt_id: Option<String>,
    pub created_at_ms: i64,
    pub judged_at_ms: Option<i64>,
    /// Live progress of the current attempt (meaningful while `judging`).
    pub progress: Option<JudgeProgress>,
    pub tests: Vec<StoredTest>,
    /// The verdict of each judged generation, oldest first.
    pub history: Vec<JudgedGeneration>,
}

/// How one generation of a submission ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgedGeneration {
    pub generation: Generation,
    pub verdict: Verdict,
    pub score: Option<f64>,
    pub judged_at_ms: i64,
}

/// A submission in a listing (no source, no per-test results).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubmissionSummary {
    pub id: SubmissionId,
    pub user_id: UserId,
    pub problem_id: ProblemId,
    pub problem_slug: String,
    pub language: String,
    pub state: String,
    pub generation: Generation,
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    pub time_ms: Option<i64>,
    pub memory_kib: Option<i64>,
    pub created_at_ms: i64,
}

/// One user's record (see [`SubmissionStore::user_stats`]).
#[derive(Debug, Clone, PartialEq)]
pub struct UserStats {
    pub solved: Vec<(ProblemId, String)>,
    pub attempted: Vec<(ProblemId, String)>,
    pub verdicts: Vec<(Verdict, i64)>,
    /// Submissions per day (days since the Unix epoch, UTC).
    pub days: Vec<(i64, i64)>,
}

/// Whose submissions a listing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    ByUser(UserId),
    ByProblem(ProblemId),
}

/// What a recovery did to a submission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// A new generation, with its outbox row.
    Redriven(Generation),
    /// The recovery budget is spent: System Error, with the reason.
    GaveUp,
    /// The submission moved on meanwhile (the condition did not hold): nothing done.
    Lost,
}

/// The owner's storage. Cheap to clone.
#[derive(Clone)]
pub struct SubmissionStore {
    db: Db,
    config: SubmissionConfig,
    /// The owner's integration events (written in the transactions of the changes).
    events: Outbox,
    /// Wakes an in-process dispatcher when an outbox row is written (SQLite); PostgreSQL
    /// dispatchers are woken by `NOTIFY judge_outbox` in the same transaction.
    outbox_written: Arc<Notify>,
    /// Announces submissions whose state or progress changed (live status).
    changes: ChangeFeed,
}

/// The channel PostgreSQL dispatchers listen on.
pub const OUTBOX_CHANNEL: &str = "judge_outbox";

fn ms(d: Duration) -> i64 {
    d.as_millis().min(i64::MAX as u128) as i64
}

fn fingerprint(request: &SubmitRequest) -> String {
    platform::digest::fingerprint(&[
        &request.user_id.0.to_le_bytes(),
        &request.problem_id.0.to_le_bytes(),
        request.language.as_bytes(),
        request.source.as_bytes(),
    ])
}

fn verdict_of(text: Option<String>) -> Option<Verdict> {
    text.and_then(|t| t.parse().ok())
}

impl SubmissionStore {
    /// Opens the store on `db`, migrating it.
    pub async fn open(db: Db, config: SubmissionConfig) -> Result<Self, DbError> {
        db.migrate(crate::schema::MIGRATIONS).await?;
        Ok(Self {
            events: Outbox::new(db.clone(), "submission"),
            changes: ChangeFeed::open(db.clone()),
            db,
            config,
            outbox_written: Arc::new(Notify::new()),
        })
    }

    /// Submissions changed from now on, by this process and (on PostgreSQL) every other.
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<Change> {
        self.changes.subscribe()
    }

    /// How long a watcher waits for a change before re-reading anyway.
    pub fn recheck_period(&self) -> Duration {
        self.changes.recheck_period()
    }

    pub(crate) async fn announce_change(&self, id: SubmissionId) {
        self.changes.announce(id).await;
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The owner's events outbox (for its relay).
    pub fn events(&self) -> &Outbox {
        &self.events
    }

    pub fn config(&self) -> SubmissionConfig {
        self.config
    }

    /// Notified whenever a judge-outbox row is written by this process.
    pub fn outbox_signal(&self) -> Arc<Notify> {
        self.outbox_written.clone()
    }

    async fn announce(&self, tx: &mut Transaction<'static, Any>) -> Result<(), DbError> {
        if self.db.backend() == Backend::Postgres {
            self.db
                .query("SELECT pg_notify($1, '')")
                .bind(OUTBOX_CHANNEL)
                .execute(&mut **tx)
                .await?;
        }
        Ok(())
    }

    /// Intake: checks the facts, then stores the submission (`pending`, generation 1) and its
    /// judge intent (`PENDING`) in one transaction. Idempotent on the request's key.
    pub async fn submit(
        &self,
        facts: &SubmissionFactsSnapshot,
        request: &SubmitRequest,
    ) -> Result<Submitted, SubmitError> {
        facts.admits(request.user_id, request.problem_id)?;
        let fingerprint = fingerprint(request);
        if let Some(key) = &request.idempotency_key {
            if let Some(existing) = self.find_by_key(request.user_id, key, &fingerprint).await? {
                return Ok(existing);
            }
        }
        let facts_json = serde_json::to_string(facts).expect("facts serialise");
        let mut tx = self.db.begin().await?;
        let inserted = self
            .db
            .query(
                "INSERT INTO submissions (user_id, problem_id, language, source, facts, idempotency_key, fingerprint, state, generation, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 1, {now}, {now}) RETURNING id",
            )
            .bind(request.user_id.0)
            .bind(request.problem_id.0)
            .bind(request.language.clone())
            .bind(request.source.clone())
            .bind(facts_json)
            .bind(request.idempotency_key.clone())
            .bind(fingerprint.clone())
            .fetch_one(&mut *tx)
            .await;
        let id = match inserted {
            Ok(row) => SubmissionId(row.try_get(0)?),
            Err(e) => {
                let e = DbError::from(e);
                // A concurrent request with the same key won the race.
                if let (true, Some(key)) = (e.is_unique_violation(), &request.idempotency_key) {
                    drop(tx);
                    return match self.find_by_key(request.user_id, key, &fingerprint).await? {
                        Some(existing) => Ok(existing),
                        None => Err(e.into()),
                    };
                }
                return Err(e.into());
            }
        };
        let message = JudgeMessage {
            submission_id: id,
            generation: Generation(1),
            user_id: request.user_id,
            problem_id: request.problem_id,
            language: request.language.clone(),
            source: request.source.clone(),
            package_hash: facts.package_hash.clone(),
        };
        self.insert_outbox(&mut tx, &message).await?;
        self.submitted_event(&mut tx, id, facts, request).await?;
        tx.commit().await?;
        self.outbox_written.notify_waiters();
        Ok(Submitted { id, created: true })
    }

    /// Records `submission.submitted` (with the facts' contest entry) in `tx`.
    async fn submitted_event(
        &self,
        tx: &mut Transaction<'static, Any>,
        id: SubmissionId,
        facts: &SubmissionFactsSnapshot,
        request: &SubmitRequest,
    ) -> Result<(), DbError> {
        let payload = SubmittedPayload {
            submission_id: id,
            problem_id: request.problem_id,
            language: request.language.clone(),
            user_id: Some(request.user_id),
            submitted_at_ms: Some(facts.captured_at_ms),
            contest: facts.contest.clone(),
        };
        self.events
            .record(
                tx,
                NewEvent::new(
                    types::SUBMITTED,
                    "submission",
                    id.0,
                    serde_json::to_value(payload).unwrap_or_default(),
                )
                .version(1)
                .by(Some(request.user_id)),
            )
            .await?;
        Ok(())
    }

    /// Stores a submission that was judged elsewhere (a contest package's submission and
    /// judgement): `done` at generation 1 with `result`, its submitted and judged events, no
    /// judge intent. Idempotent on the request's key.
    pub async fn import_judged(
        &self,
        facts: &SubmissionFactsSnapshot,
        request: &SubmitRequest,
        result: &JudgeResult,
    ) -> Result<Submitted, SubmitError> {
        facts.admits(request.user_id, request.problem_id)?;
        let fingerprint = fingerprint(request);
        if let Some(key) = &request.idempotency_key {
            if let Some(existing) = self.find_by_key(request.user_id, key, &fingerprint).await? {
                return Ok(existing);
            }
        }
        let facts_json = serde_json::to_string(facts).expect("facts serialise");
        let mut tx = self.db.begin().await?;
        let row = self
            .db
            .query(
                "INSERT INTO submissions (user_id, problem_id, language, source, facts, idempotency_key, fingerprint, state, generation,                  verdict, score, max_score, time_ms, memory_kib, compile_output, judged_generation, created_at, updated_at, judged_at)                  VALUES ($1, $2, $3, $4, $5, $6, $7, 'done', 1, $8, CAST($9 AS DOUBLE PRECISION), CAST($10 AS DOUBLE PRECISION), $11, $12, $13, 1, {now}, {now}, {now}) RETURNING id",
            )
            .bind(request.user_id.0)
            .bind(request.problem_id.0)
            .bind(request.language.clone())
            .bind(request.source.clone())
            .bind(facts_json)
            .bind(request.idempotency_key.clone())
            .bind(fingerprint)
            .bind(result.verdict.as_str())
            .bind(nullable_float(result.score))
            .bind(nullable_float(result.max_score))
            .bind(result.time_ms as i64)
            .bind(result.memory_kib as i64)
            .bind(result.compile_output.clone())
            .fetch_one(&mut *tx)
            .await?;
        let id = SubmissionId(row.try_get(0)?);
        self.submitted_event(&mut tx, id, facts, request).await?;
        self.judged_event(
            &mut tx,
            id,
            Generation(1),
            None,
            result.verdict,
            Some(result),
        )
        .await?;
        tx.commit().await?;
        Ok(Submitted { id, created: true })
    }

    async fn find_by_key(
        &self,
        user: UserId,
        key: &str,
        fingerprint: &str,
    ) -> Result<Option<Submitted>, SubmitError> {
        let row = self
            .db
            .query("SELECT id, fingerprint FROM submissions WHERE user_id = $1 AND idempotency_key = $2")
            .bind(user.0)
            .bind(key.to_string())
            .fetch_optional(self.db.pool())
            .await?;
        match row {
            None => Ok(None),
            Some(row) => {
                let stored: String = row.try_get(1)?;
                if stored == fingerprint {
                    Ok(Some(Submitted {
                        id: SubmissionId(row.try_get(0)?),
                        created: false,
                    }))
                } else {
                    Err(SubmitError::IdempotencyConflict(key.to_string()))
                }
            }
        }
    }

    async fn insert_outbox(
        &self,
        tx: &mut Transaction<'static, Any>,
        message: &JudgeMessage,
    ) -> Result<(), DbError> {
        self.db
            .query(
                "INSERT INTO judge_outbox (submission_id, generation, payload, state, attempts, next_retry_at, created_at) \
                 VALUES ($1, $2, $3, 'PENDING', 0, {now}, {now})",
            )
            .bind(message.submission_id.0)
            .bind(message.generation.0)
            .bind(serde_json::to_string(message).expect("messages serialise"))
            .execute(&mut **tx)
            .await?;
        self.announce(tx).await
    }

    /// The judge intent of a submission's current generation, rebuilt from the row.
    async fn intent(
        &self,
        tx: &mut Transaction<'static, Any>,
        id: SubmissionId,
    ) -> Result<JudgeMessage, DbError> {
        let row = self
            .db
            .query("SELECT generation, user_id, problem_id, language, source, facts FROM submissions WHERE id = $1")
            .bind(id.0)
            .fetch_one(&mut **tx)
            .await?;
        let facts: String = row.try_get(5)?;
        let facts: SubmissionFactsSnapshot = serde_json::from_str(&facts)
            .map_err(|e| DbError::Sql(sqlx::Error::Decode(Box::new(e))))?;
        Ok(JudgeMessage {
            submission_id: id,
            generation: Generation(row.try_get(0)?),
            user_id: UserId(row.try_get(1)?),
            problem_id: ProblemId(row.try_get(2)?),
            language: row.try_get(3)?,
            source: row.try_get(4)?,
            package_hash: facts.package_hash,
        })
    }

    /// Loads a submission with the per-test results of its judged generation.
    /// [`Self::get`], answered from memory when no change of the submission was announced
    /// since it was last read (and that read is younger than [`Self::recheck_period`]): what
    /// status pollers and live streams read.
    pub async fn get_recent(&self, id: SubmissionId) -> Result<Option<SubmissionRecord>, DbError> {
        let recent = self.changes.recent();
        if let Some(record) = recent.get(&id, self.recheck_period()) {
            return Ok(Some(record));
        }
        let ticket = recent.ticket(&id);
        let record = self.get(id).await?;
        if let Some(record) = &record {
            recent.store(ticket, id, record.clone());
        }
        Ok(record)
    }

    /// The submission as stored now.
    pub async fn get(&self, id: SubmissionId) -> Result<Option<SubmissionRecord>, DbError> {
        let row = self
            .db
            .query(
                "SELECT id, user_id, problem_id, language, source, facts, state, generation, current_attempt_id, \
                        judging_lease_expires_at, recoveries, verdict, score, max_score, time_ms, memory_kib, \
                        compile_output, message, judged_generation, judged_attempt_id, created_at, judged_at, progress \
                 FROM submissions WHERE id = $1",
            )
            .bind(id.0)
            .fetch_optional(self.db.readers())
            .await?;
        let Some(row) = row else { return Ok(None) };
        let facts: String = row.try_get(5)?;
        let judged_generation: Option<i64> = row.try_get(18)?;
        let mut record = SubmissionRecord {
            id: SubmissionId(row.try_get(0)?),
            user_id: UserId(row.try_get(1)?),
            problem_id: ProblemId(row.try_get(2)?),
            language: row.try_get(3)?,
            source: row.try_get(4)?,
            facts: serde_json::from_str(&facts)
                .map_err(|e| DbError::Sql(sqlx::Error::Decode(Box::new(e))))?,
            state: row.try_get(6)?,
            generation: Generation(row.try_get(7)?),
            current_attempt_id: row.try_get(8)?,
            lease_expires_at_ms: row.try_get(9)?,
            recoveries: row.try_get(10)?,
            verdict: verdict_of(row.try_get(11)?),
            score: row.try_get(12)?,
            max_score: row.try_get(13)?,
            time_ms: row.try_get(14)?,
            memory_kib: row.try_get(15)?,
            compile_output: row.try_get(16)?,
            message: row.try_get(17)?,
            judged_generation: judged_generation.map(Generation),
            judged_attempt_id: row.try_get(19)?,
            created_at_ms: row.try_get(20)?,
            judged_at_ms: row.try_get(21)?,
            progress: row
                .try_get::<Option<String>, _>(22)?
                .and_then(|p| serde_json::from_str(&p).ok()),
            tests: Vec::new(),
            history: Vec::new(),
        };
        let rows = self
            .db
            .query(
                "SELECT generation, verdict, score, judged_at FROM submission_verdicts \
                 WHERE submission_id = $1 ORDER BY generation",
            )
            .bind(id.0)
            .fetch_all(self.db.readers())
            .await?;
        for row in rows {
            record.history.push(JudgedGeneration {
                generation: Generation(row.try_get(0)?),
                verdict: verdict_of(row.try_get(1)?).unwrap_or(Verdict::SE),
                score: row.try_get(2)?,
                judged_at_ms: row.try_get(3)?,
            });
        }
        if let Some(generation) = judged_generation {
            let rows = self
                .db
                .query(
                    "SELECT name, test_group, verdict, time_ms, wall_time_ms, memory_kib, message, score, output, detail \
                     FROM submission_tests WHERE submission_id = $1 AND generation = $2 ORDER BY position",
                )
                .bind(id.0)
                .bind(generation)
                .fetch_all(self.db.readers())
                .await?;
            for row in rows {
                record.tests.push(StoredTest {
                    name: row.try_get(0)?,
                    group: row.try_get(1)?,
                    verdict: verdict_of(row.try_get(2)?).unwrap_or(Verdict::SE),
                    time_ms: row.try_get(3)?,
                    wall_time_ms: row.try_get(4)?,
                    memory_kib: row.try_get(5)?,
                    message: row.try_get(6)?,
                    score: row.try_get(7)?,
                    output: row.try_get(8)?,
                    detail: row
                        .try_get::<Option<String>, _>(9)?
                        .and_then(|text| serde_json::from_str(&text).ok()),
                });
            }
        }
        Ok(Some(record))
    }

    /// Acquire: `pending` + generation `g` → `judging` under attempt `a` until now + ttl.
    pub async fn acquire(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
    ) -> Result<Acquired, DbError> {
        let row = self
            .db
            .query(
                "UPDATE submissions SET state = 'judging', current_attempt_id = $3, judging_lease_expires_at = {now} + $4, progress = NULL, updated_at = {now} \
                 WHERE id = $1 AND state = 'pending' AND generation = $2 \
                 RETURNING language, source, facts, judging_lease_expires_at",
            )
            .bind(id.0)
            .bind(generation.0)
            .bind(attempt.0.clone())
            .bind(ms(self.config.lease_ttl))
            .fetch_optional(self.db.pool())
            .await?;
        if let Some(row) = row {
            self.announce_change(id).await;
            let facts: String = row.try_get(2)?;
            return Ok(Acquired::Job(Box::new(JudgeJob {
                submission_id: id,
                generation,
                attempt_id: attempt.clone(),
                language: row.try_get(0)?,
                source: row.try_get(1)?,
                facts: serde_json::from_str(&facts)
                    .map_err(|e| DbError::Sql(sqlx::Error::Decode(Box::new(e))))?,
                lease_expires_at_ms: row.try_get(3)?,
            })));
        }
        let current = self
            .db
            .query("SELECT generation FROM submissions WHERE id = $1")
            .bind(id.0)
            .fetch_optional(self.db.pool())
            .await?;
        let reason = match current {
            None => StaleReason::UnknownSubmission,
            Some(row) if row.try_get::<i64, _>(0)? != generation.0 => StaleReason::GenerationMoved,
            Some(_) => StaleReason::NotPending,
        };
        Ok(Acquired::Stale { reason })
    }

    /// Renew: while attempt `a` holds the lease, extend it to now + ttl.
    pub async fn renew(&self, id: SubmissionId, attempt: &AttemptId) -> Result<bool, DbError> {
        let done = self
            .db
            .query(
                "UPDATE submissions SET judging_lease_expires_at = {now} + $3 \
                 WHERE id = $1 AND current_attempt_id = $2 AND state = 'judging'",
            )
            .bind(id.0)
            .bind(attempt.0.clone())
            .bind(ms(self.config.lease_ttl))
            .execute(self.db.pool())
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Write verdict: only for generation `g` under attempt `a`; the results and the event
    /// commit with it. `false`: the attempt lost its claim and nothing was written.
    pub async fn complete(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        result: &JudgeResult,
    ) -> Result<bool, DbError> {
        let mut tx = self.db.begin().await?;
        let written = self
            .db
            .query(
                "UPDATE submissions SET state = 'done', verdict = $4, score = CAST($5 AS DOUBLE PRECISION), \
                 max_score = CAST($6 AS DOUBLE PRECISION), time_ms = $7, memory_kib = $8, \
                 compile_output = $9, message = NULL, judged_generation = generation, judged_attempt_id = current_attempt_id, \
                 current_attempt_id = NULL, judging_lease_expires_at = NULL, judged_at = {now}, updated_at = {now} \
                 WHERE id = $1 AND generation = $2 AND current_attempt_id = $3 AND state = 'judging'",
            )
            .bind(id.0)
            .bind(generation.0)
            .bind(attempt.0.clone())
            .bind(result.verdict.as_str())
            .bind(nullable_float(result.score))
            .bind(nullable_float(result.max_score))
            .bind(result.time_ms as i64)
            .bind(result.memory_kib as i64)
            .bind(result.compile_output.clone())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if written != 1 {
            return Ok(false);
        }
        // Several rows per statement (each statement is a round trip to the database): in
        // chunks of 16, 8, 4, 2 and 1 rows, so no more than five statements are ever prepared.
        let mut rows = result.tests.iter().enumerate().peekable();
        while rows.peek().is_some() {
            let chunk = [16, 8, 4, 2, 1]
                .into_iter()
                .find(|&n| n <= rows.len())
                .expect("a row is left");
            let values: Vec<String> = (0..chunk)
                .map(|row| {
                    let p = |column: usize| format!("${}", row * 13 + column);
                    format!(
                        "({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, CAST({} AS DOUBLE PRECISION), {}, {})",
                        p(1), p(2), p(3), p(4), p(5), p(6), p(7), p(8), p(9), p(10), p(11), p(12), p(13)
                    )
                })
                .collect();
            let mut insert = self.db.query(&format!(
                "INSERT INTO submission_tests (submission_id, generation, position, name, test_group, verdict, time_ms, wall_time_ms, memory_kib, message, score, output, detail) \
                 VALUES {}",
                values.join(", ")
            ));
            for (position, test) in rows.by_ref().take(chunk) {
                insert = insert
                    .bind(id.0)
                    .bind(generation.0)
                    .bind(position as i64)
                    .bind(test.name.clone())
                    .bind(test.group.clone())
                    .bind(test.verdict.as_str())
                    .bind(test.time_ms as i64)
                    .bind(test.wall_time_ms as i64)
                    .bind(test.memory_kib as i64)
                    .bind(test.message.clone())
                    .bind(nullable_float(test.score))
                    .bind(test.output.clone())
                    .bind(
                        test.detail
                            .as_ref()
                            .map(|d| serde_json::to_string(d).expect("details serialise")),
                    );
            }
            insert.execute(&mut *tx).await?;
        }
        self.judged_event(
            &mut tx,
            id,
            generation,
            Some(attempt),
            result.verdict,
            Some(result),
        )
        .await?;
        tx.commit().await?;
        self.announce_change(id).await;
        Ok(true)
    }

    /// Records live progress of attempt `a`; `false` when the attempt no longer holds the lease.
    pub async fn report_progress(
        &self,
        id: SubmissionId,
        attempt: &AttemptId,
        progress: JudgeProgress,
    ) -> Result<bool, DbError> {
        let done = self
            .db
            .query(
                "UPDATE submissions SET progress = $3 \
                 WHERE id = $1 AND current_attempt_id = $2 AND state = 'judging'",
            )
            .bind(id.0)
            .bind(attempt.0.clone())
            .bind(serde_json::to_string(&progress).expect("progress serialises"))
            .execute(self.db.pool())
            .await?;
        let held = done.rows_affected() == 1;
        if held {
            self.announce_change(id).await;
        }
        Ok(held)
    }

    /// A page of submissions, newest first; `before` is the last id of the previous page.
    pub async fn list(
        &self,
        listing: Listing,
        before: Option<SubmissionId>,
        limit: i64,
    ) -> Result<Vec<SubmissionSummary>, DbError> {
        let (column, value) = match listing {
            Listing::ByUser(user) => ("user_id", user.0),
            Listing::ByProblem(problem) => ("problem_id", problem.0),
        };
        let rows = self
            .db
            .query(&format!(
                "SELECT id, user_id, problem_id, facts, language, state, generation, verdict, score, time_ms, memory_kib, created_at \
                 FROM submissions WHERE {column} = $1 AND id < $2 ORDER BY id DESC LIMIT $3"
            ))
            .bind(value)
            .bind(before.map_or(i64::MAX, |b| b.0))
            .bind(limit)
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|row| {
                let facts: String = row.try_get(3)?;
                let slug = serde_json::from_str::<SubmissionFactsSnapshot>(&facts)
                    .map(|f| f.problem_slug)
                    .unwrap_or_default();
                Ok(SubmissionSummary {
                    id: SubmissionId(row.try_get(0)?),
                    user_id: UserId(row.try_get(1)?),
                    problem_id: ProblemId(row.try_get(2)?),
                    problem_slug: slug,
                    language: row.try_get(4)?,
                    state: row.try_get(5)?,
                    generation: Generation(row.try_get(6)?),
                    verdict: verdict_of(row.try_get(7)?),
                    score: row.try_get(8)?,
                    time_ms: row.try_get(9)?,
                    memory_kib: row.try_get(10)?,
                    created_at_ms: row.try_get(11)?,
                })
            })
            .collect()
    }

    /// One user's record: the problems they solved and attempted, how their judged
    /// submissions ended, and how many they made on each day since `since_ms`.
    pub async fn user_stats(&self, user: UserId, since_ms: i64) -> Result<UserStats, DbError> {
        let pool = self.db.pool();
        let slug = |facts: String| {
            serde_json::from_str::<SubmissionFactsSnapshot>(&facts)
                .map(|f| f.problem_slug)
                .unwrap_or_default()
        };
        let problems = |accepted_only: bool| {
            let filter = if accepted_only {
                " AND verdict = 'AC'"
            } else {
                ""
            };
            format!(
                "SELECT problem_id, MAX(facts) FROM submissions WHERE user_id = $1{filter} \
                 GROUP BY problem_id ORDER BY problem_id"
            )
        };
        let mut solved = Vec::new();
        for row in self
            .db
            .query(&problems(true))
            .bind(user.0)
            .fetch_all(pool)
            .await?
        {
            solved.push((ProblemId(row.try_get(0)?), slug(row.try_get(1)?)));
        }
        let mut attempted = Vec::new();
        for row in self
            .db
            .query(&problems(false))
            .bind(user.0)
            .fetch_all(pool)
            .await?
        {
            attempted.push((ProblemId(row.try_get(0)?), slug(row.try_get(1)?)));
        }
        let mut verdicts = Vec::new();
        let rows = self
            .db
            .query(
                "SELECT verdict, COUNT(*) FROM submissions WHERE user_id = $1 AND state = 'done' \
                 AND verdict IS NOT NULL GROUP BY verdict ORDER BY verdict",
            )
            .bind(user.0)
            .fetch_all(pool)
            .await?;
        for row in rows {
            if let Some(verdict) = verdict_of(row.try_get(0)?) {
                verdicts.push((verdict, row.try_get::<i64, _>(1)?));
            }
        }
        let mut days: std::collections::BTreeMap<i64, i64> = Default::default();
        let rows = self
            .db
            .query("SELECT created_at FROM submissions WHERE user_id = $1 AND created_at >= $2")
            .bind(user.0)
            .bind(since_ms)
            .fetch_all(pool)
            .await?;
        for row in rows {
            let at: i64 = row.try_get(0)?;
            *days.entry(at.div_euclid(86_400_000)).or_default() += 1;
        }
        Ok(UserStats {
            solved,
            attempted,
            verdicts,
            days: days.into_iter().collect(),
        })
    }

    /// Records `SubmissionJudged` in the events outbox, with what a contest's board needs
    /// (the facts' contest entry, subtasks, times).
    async fn judged_event(
        &self,
        tx: &mut Transaction<'static, Any>,
        id: SubmissionId,
        generation: Generation,
        attempt: Option<&AttemptId>,
        verdict: Verdict,
        result: Option<&JudgeResult>,
    ) -> Result<(), DbError> {
        let row = self
            .db
            .query("SELECT user_id, problem_id, language, facts, created_at, {now} FROM submissions WHERE id = $1")
            .bind(id.0)
            .fetch_one(&mut **tx)
            .await?;
        let facts: Option<SubmissionFactsSnapshot> =
            serde_json::from_str(&row.try_get::<String, _>(3)?).ok();
        let score = result.and_then(|r| r.score);
        let payload = serde_json::to_value(JudgedPayload {
            submission_id: id,
            generation,
            attempt_id: attempt.map(|a| a.0.clone()),
            user_id: UserId(row.try_get(0)?),
            problem_id: ProblemId(row.try_get(1)?),
            verdict,
            score,
            max_score: result.and_then(|r| r.max_score),
            subtasks: result.map(|r| r.subtasks.clone()).unwrap_or_default(),
            runs: result
                .map(|r| {
                    r.tests
                        .iter()
                        .map(|t| RunBrief {
                            verdict: t.verdict,
                            time_ms: t.time_ms,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            time_ms: result.map(|r| r.time_ms),
            language: Some(row.try_get(2)?),
            submitted_at_ms: Some(row.try_get(4)?),
            judged_at_ms: Some(row.try_get(5)?),
            contest: facts.and_then(|f| f.contest),
        })
        .unwrap_or_default();
        // Every generation's verdict stays readable after a rejudge (the submission's row
        // holds only the latest).
        self.db
            .query(
                "INSERT INTO submission_verdicts (submission_id, generation, verdict, score, judged_at) \
                 VALUES ($1, $2, $3, CAST($4 AS DOUBLE PRECISION), {now})",
            )
            .bind(id.0)
            .bind(generation.0)
            .bind(verdict.as_str())
            .bind(nullable_float(score))
            .execute(&mut **tx)
            .await?;
        self.events
            .record(
                tx,
                NewEvent::new(types::SUBMISSION_JUDGED, "submission", id.0, payload)
                    .version(generation.0),
            )
            .await?;
        Ok(())
    }

    /// Records that a generation ended without being judged (its intent could not be
    /// dispatched, or its recoveries ran out).
    async fn dead_lettered_event(
        &self,
        tx: &mut Transaction<'static, Any>,
        id: SubmissionId,
        generation: Generation,
        reason: &str,
    ) -> Result<(), DbError> {
        self.events
            .record(
                tx,
                NewEvent::new(
                    types::DEAD_LETTERED,
                    "submission",
                    id.0,
                    serde_json::json!({ "generation": generation, "reason": reason }),
                )
                .version(generation.0),
            )
            .await?;
        Ok(())
    }

    /// A judge intent that can never be dispatched (malformed): the submission ends in
    /// System Error with the reason and its event, in the caller's transaction.
    pub(crate) async fn fail_undispatchable(
        &self,
        tx: &mut Transaction<'static, Any>,
        id: SubmissionId,
        generation: Generation,
        reason: &str,
    ) -> Result<(), DbError> {
        let failed = self
            .db
            .query(
                "UPDATE submissions SET state = 'done', verdict = 'SE', message = $3, judged_generation = generation, \
                 judged_attempt_id = NULL, current_attempt_id = NULL, judging_lease_expires_at = NULL, \
                 judged_at = {now}, updated_at = {now} \
                 WHERE id = $1 AND generation = $2",
            )
            .bind(id.0)
            .bind(generation.0)
            .bind(format!("the judge intent could not be dispatched: {reason}"))
            .execute(&mut **tx)
            .await?
            .rows_affected();
        if failed == 1 {
            self.judged_event(tx, id, generation, None, Verdict::SE, None)
                .await?;
            self.dead_lettered_event(tx, id, generation, reason).await?;
        }
        Ok(())
    }

    /// Moves a submission whose `condition` holds (with `$1` = id, `$2` = generation and any
    /// further parameters bound by `bind_more`) to a new generation with a fresh judge intent,
    /// or to System Error once the recovery budget is spent.
    async fn recover(
        &self,
        tx: &mut Transaction<'static, Any>,
        id: SubmissionId,
        generation: Generation,
        rule: &RecoveryRule,
    ) -> Result<Recovery, DbError> {
        let RecoveryRule {
            condition,
            params: extra,
            reason,
        } = rule;
        let budget = self.config.max_recoveries;
        let next = extra.len() + 3;
        let sql = format!(
            "UPDATE submissions SET generation = generation + 1, state = 'pending', current_attempt_id = NULL, \
             judging_lease_expires_at = NULL, recoveries = recoveries + ${inc}, last_recovery_reason = ${reason}, updated_at = {{now}} \
             WHERE id = $1 AND generation = $2 AND {condition} AND recoveries + ${inc} <= ${budget} RETURNING generation",
            inc = next,
            reason = next + 1,
            budget = next + 2,
        );
        let mut query = self.db.query(&sql).bind(id.0).bind(generation.0);
        for param in extra {
            query = param.bind(query);
        }
        let row = query
            .bind(1i64)
            .bind(reason.to_string())
            .bind(budget)
            .fetch_optional(&mut **tx)
            .await?;
        if let Some(row) = row {
            let new = Generation(row.try_get(0)?);
            let message = self.intent(tx, id).await?;
            debug_assert_eq!(message.generation, new);
            self.insert_outbox(tx, &message).await?;
            return Ok(Recovery::Redriven(new));
        }
        // Over budget (if the condition still holds): end in System Error with the reason.
        let sql = format!(
            "UPDATE submissions SET state = 'done', verdict = 'SE', message = ${msg}, judged_generation = generation, \
             judged_attempt_id = current_attempt_id, current_attempt_id = NULL, judging_lease_expires_at = NULL, \
             judged_at = {{now}}, updated_at = {{now}} \
             WHERE id = $1 AND generation = $2 AND {condition}",
            msg = next,
        );
        let mut query = self.db.query(&sql).bind(id.0).bind(generation.0);
        for param in extra {
            query = param.bind(query);
        }
        let gave_up = query
            .bind(format!(
                "gave up after {} recoveries; last: {reason}",
                self.config.max_recoveries
            ))
            .execute(&mut **tx)
            .await?
            .rows_affected();
        if gave_up == 1 {
            self.judged_event(tx, id, generation, None, Verdict::SE, None)
                .await?;
            self.dead_lettered_event(tx, id, generation, reason).await?;
            Ok(Recovery::GaveUp)
        } else {
            Ok(Recovery::Lost)
        }
    }

    /// The judging infrastructure failed under attempt `a` of generation `g`: retry with a new
    /// generation (never blame the user), or System Error once the budget is spent.
    pub async fn infrastructure_failure(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        reason: &str,
    ) -> Result<Recovery, DbError> {
        let mut tx = self.db.begin().await?;
        let outcome = self
            .recover(
                &mut tx,
                id,
                generation,
                &RecoveryRule {
                    condition: "current_attempt_id = $3 AND state = 'judging'".to_string(),
                    params: vec![ExtraParam::Text(attempt.0.clone())],
                    reason: format!("infrastructure failure: {reason}"),
                },
            )
            .await?;
        tx.commit().await?;
        if matches!(outcome, Recovery::Redriven(_)) {
            self.outbox_written.notify_waiters();
        }
        self.announce_change(id).await;
        Ok(outcome)
    }

    /// Rejudge: compare-and-set to generation + 1 with a new outbox row, for terminal and
    /// in-flight submissions alike. `expected` is the generation the caller saw; `None` takes
    /// the current one. Returns the new generation, or `None` when `expected` is stale.
    pub async fn rejudge(
        &self,
        id: SubmissionId,
        expected: Option<Generation>,
    ) -> Result<Option<Generation>, DbError> {
        self.rejudge_by(id, expected, None).await
    }

    /// [`SubmissionStore::rejudge`] on behalf of `actor` (recorded in its event).
    pub async fn rejudge_by(
        &self,
        id: SubmissionId,
        expected: Option<Generation>,
        actor: Option<UserId>,
    ) -> Result<Option<Generation>, DbError> {
        let expected = match expected {
            Some(g) => g,
            None => match self.get(id).await? {
                Some(record) => record.generation,
                None => return Ok(None),
            },
        };
        let mut tx = self.db.begin().await?;
        let row = self
            .db
            .query(
                "UPDATE submissions SET generation = generation + 1, state = 'pending', current_attempt_id = NULL, \
                 judging_lease_expires_at = NULL, recoveries = 0, last_recovery_reason = NULL, updated_at = {now} \
                 WHERE id = $1 AND generation = $2 RETURNING generation",
            )
            .bind(id.0)
            .bind(expected.0)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else { return Ok(None) };
        let generation = Generation(row.try_get(0)?);
        let message = self.intent(&mut tx, id).await?;
        self.insert_outbox(&mut tx, &message).await?;
        self.events
            .record(
                &mut tx,
                NewEvent::new(
                    types::REJUDGED,
                    "submission",
                    id.0,
                    serde_json::json!({ "generation": generation, "previous_generation": expected }),
                )
                .version(generation.0)
                .by(actor),
            )
            .await?;
        tx.commit().await?;
        self.outbox_written.notify_waiters();
        self.announce_change(id).await;
        Ok(Some(generation))
    }

    /// The lease reaper: expired `judging` leases get a new generation (or System Error over
    /// budget). Every write is conditioned on still holding the reaper's singleton lease.
    pub async fn reap_expired_leases(
        &self,
        lease: &Lease,
        batch: i64,
    ) -> Result<Vec<(SubmissionId, Recovery)>, DbError> {
        self.recover_judging(
            lease,
            batch,
            "state = 'judging' AND judging_lease_expires_at < {now}",
            "judging_lease_expires_at",
            "judging lease expired",
        )
        .await
    }

    /// Every submission in `judging`, whatever its lease says, re-driven like an expired one:
    /// for a process that knows no judge of these submissions is alive (the embedded shape at
    /// start, whose judges died with its previous process).
    pub async fn recover_interrupted(
        &self,
        lease: &Lease,
        batch: i64,
    ) -> Result<Vec<(SubmissionId, Recovery)>, DbError> {
        self.recover_judging(
            lease,
            batch,
            "state = 'judging'",
            "id",
            "the process judging it stopped",
        )
        .await
    }

    /// Up to `batch` submissions where `condition` holds (in `order`), each recovered under
    /// `lease` with `reason`.
    async fn recover_judging(
        &self,
        lease: &Lease,
        batch: i64,
        condition: &str,
        order: &str,
        reason: &str,
    ) -> Result<Vec<(SubmissionId, Recovery)>, DbError> {
        let mut tx = self.db.begin().await?;
        let candidates = self
            .db
            .query(&format!(
                "SELECT id, generation FROM submissions WHERE {condition} \
                 ORDER BY {order} LIMIT $1 {{skip_locked}}"
            ))
            .bind(batch)
            .fetch_all(&mut *tx)
            .await?;
        self.recover_guarded(tx, candidates, lease, condition, reason)
            .await
    }

    /// The lost-delivery sweeper: `pending` submissions whose current intent was sent more
    /// than `older_than` ago and never picked up (e.g. Redis lost it) are re-driven with a new
    /// generation, conditioned on the sweeper's lease.
    pub async fn sweep_lost_deliveries(
        &self,
        lease: &Lease,
        older_than: Duration,
        batch: i64,
    ) -> Result<Vec<(SubmissionId, Recovery)>, DbError> {
        let mut tx = self.db.begin().await?;
        let candidates = self
            .db
            .query(
                "SELECT s.id, s.generation FROM submissions s JOIN judge_outbox o \
                   ON o.submission_id = s.id AND o.generation = s.generation \
                 WHERE s.state = 'pending' AND o.state = 'SENT' AND o.sent_at < {now} - $1 \
                 ORDER BY s.id LIMIT $2",
            )
            .bind(ms(older_than))
            .bind(batch)
            .fetch_all(&mut *tx)
            .await?;
        self.recover_guarded(
            tx,
            candidates,
            lease,
            "state = 'pending'",
            "judge intent sent but never picked up",
        )
        .await
    }

    /// Recovers each candidate row (`id, generation`) that still satisfies `condition`, every write
    /// conditioned on `lease` still being current, and commits.
    async fn recover_guarded(
        &self,
        mut tx: Transaction<'static, Any>,
        candidates: Vec<platform::db::AnyRow>,
        lease: &Lease,
        condition: &str,
        reason: &str,
    ) -> Result<Vec<(SubmissionId, Recovery)>, DbError> {
        let (name, owner, token) = lease.guard_params();
        let rule = RecoveryRule {
            condition: format!("{condition} AND {}", Lease::guard(3)),
            params: vec![
                ExtraParam::Text(name),
                ExtraParam::Text(owner),
                ExtraParam::Int(token),
            ],
            reason: reason.to_string(),
        };
        let mut done = Vec::new();
        for row in candidates {
            let (id, generation): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
            let outcome = self
                .recover(&mut tx, SubmissionId(id), Generation(generation), &rule)
                .await?;
            done.push((SubmissionId(id), outcome));
        }
        tx.commit().await?;
        if done.iter().any(|(_, o)| matches!(o, Recovery::Redriven(_))) {
            self.outbox_written.notify_waiters();
        }
        for (id, outcome) in &done {
            if !matches!(outcome, Recovery::Lost) {
                self.announce_change(*id).await;
            }
        }
        Ok(done)
    }

    /// Outbox rows by state.
    pub async fn outbox_counts(&self) -> Result<Vec<(String, i64)>, DbError> {
        let rows = self
            .db
            .query("SELECT state, COUNT(*) FROM judge_outbox GROUP BY state ORDER BY state")
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }

    /// Submissions waiting for or under judging.
    pub async fn unjudged(&self) -> Result<i64, DbError> {
        Ok(self
            .db
            .query("SELECT COUNT(*) FROM submissions WHERE state IN ('pending', 'judging')")
            .fetch_one(self.db.readers())
            .await?
            .try_get(0)?)
    }

    /// Submissions by state.
    pub async fn state_counts(&self) -> Result<Vec<(String, i64)>, DbError> {
        let rows = self
            .db
            .query("SELECT state, COUNT(*) FROM submissions GROUP BY state ORDER BY state")
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }
}

/// When and why a recovery applies: `condition` (with `$1` = id, `$2` = generation, then
/// `params`) must hold, and `reason` is recorded.
struct RecoveryRule {
    condition: String,
    params: Vec<ExtraParam>,
    reason: String,
}

/// A further parameter of a recovery condition.
#[derive(Debug, Clone)]
enum ExtraParam {
    Text(String),
    Int(i64),
}

impl ExtraParam {
    fn bind(
        &self,
        query: sqlx::query::Query<'static, Any, sqlx::any::AnyArguments>,
    ) -> sqlx::query::Query<'static, Any, sqlx::any::AnyArguments> {
        match self {
            ExtraParam::Text(s) => query.bind(s.clone()),
            ExtraParam::Int(i) => query.bind(*i),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_cover_every_field() {
        let base = SubmitRequest {
            user_id: UserId(1),
            problem_id: ProblemId(2),
            language: "c".into(),
            source: "int main(){}".into(),
            idempotency_key: Some("k".into()),
        };
        let variants = [
            SubmitRequest {
                user_id: UserId(9),
                ..base.clone()
            },
            SubmitRequest {
                problem_id: ProblemId(9),
                ..base.clone()
            },
            SubmitRequest {
                language: "cpp17".into(),
                ..base.clone()
            },
            SubmitRequest {
                source: "int main(){return 0;}".into(),
                ..base.clone()
            },
        ];
        for other in variants {
            assert_ne!(fingerprint(&base), fingerprint(&other));
        }
        // The key itself is not part of the payload.
        assert_eq!(
            fingerprint(&base),
            fingerprint(&SubmitRequest {
                idempotency_key: None,
                ..base.clone()
            })
        );
    }
}
