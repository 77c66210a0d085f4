//! The judge-outbox dispatcher: moves durable judging intents onto the queue.
//!
//! Outbox rows are a state machine: `PENDING → SENT` or `PENDING → DEAD`. Each pass claims due
//! rows (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so several dispatchers never claim the same
//! row; SQLite's single connection serialises passes), and for each:
//! - a payload missing problem, user, language, code or package → `DEAD`, and the submission
//!   becomes System Error in the same transaction — never "sent";
//! - no queue configured → the intent is kept and retried;
//! - enqueue error (a pass's batch fails as a whole) → `attempts + 1`,
//!   `next_retry_at = now + 2 s × 2^min(attempts, 5)` capped at 60 s (attempts counted before
//!   this failure), `last_error`;
//! - enqueued (or already enqueued: the dedup key matched) → `SENT`.
//!
//! Shadow rows (`is_shadow`, written during migrations) and rows created before the cutover
//! watermark are never dispatched for real. Passes run every `interval`, and immediately when
//! an intent is written (PostgreSQL `NOTIFY`, or an in-process signal for SQLite), so latency
//! is not bounded by the interval.

use std::sync::Arc;
use std::time::Duration;

use contracts::{Generation, JudgeMessage, SubmissionId};
use platform::db::Row;
use platform::{Backend, DbError, Metrics, Shutdown};
use queue::JudgeQueue;

use crate::store::{SubmissionStore, OUTBOX_CHANNEL};

#[derive(Debug, Clone, Copy)]
pub struct DispatcherConfig {
    /// Rows per pass (seed default 50).
    pub batch: i64,
    /// Time between passes when nothing wakes the dispatcher (seed default 2 s).
    pub interval: Duration,
    /// Rows created before this database time (epoch ms) are not dispatched (migration
    /// cutover); 0 dispatches everything.
    pub cutover_watermark_ms: i64,
    /// Submissions of one user on the queue or being judged at once; the user's further
    /// intents wait in the outbox, so a user's backlog delays only that user (0: no limit).
    pub max_in_flight_per_user: i64,
}

impl Default for DispatcherConfig {
    fn default() -> Self {
        Self {
            batch: 50,
            interval: Duration::from_secs(2),
            cutover_watermark_ms: 0,
            max_in_flight_per_user: 0,
        }
    }
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassReport {
    pub sent: usize,
    pub retried: usize,
    pub dead: usize,
}

pub use platform::events::backoff;

pub struct Dispatcher {
    store: SubmissionStore,
    queue: Option<Arc<dyn JudgeQueue>>,
    config: DispatcherConfig,
    metrics: Metrics,
}

impl Dispatcher {
    pub fn new(
        store: SubmissionStore,
        queue: Option<Arc<dyn JudgeQueue>>,
        config: DispatcherConfig,
        metrics: Metrics,
    ) -> Self {
        Self {
            store,
            queue,
            config,
            metrics,
        }
    }

    /// One pass over the due rows: malformed rows die, the rest are enqueued as one batch and
    /// marked in one statement per outcome.
    pub async fn pass(&self) -> Result<PassReport, DbError> {
        let db = self.store.db();
        let mut tx = db.begin().await?;
        // With a per-user limit, intents of users already at it are not even looked at (so a
        // heavy user's backlog never fills the batch); `in_flight` counts the user's
        // unfinished submissions that are not waiting here. The candidates are then locked in
        // a second statement. Without a limit, one locking select does it all.
        let rows = if self.config.max_in_flight_per_user > 0 {
            let candidates = db
                .query(
                    "SELECT id, submission_id, generation, payload, attempts, owner, in_flight FROM ( \
                       SELECT o.id, o.submission_id, o.generation, o.payload, o.attempts, s.user_id AS owner, ( \
                         SELECT COUNT(*) FROM submissions s2 \
                         WHERE s2.user_id = s.user_id AND s2.state <> 'done' \
                           AND NOT EXISTS (SELECT 1 FROM judge_outbox o2 \
                                           WHERE o2.submission_id = s2.id AND o2.state = 'PENDING') \
                       ) AS in_flight \
                       FROM judge_outbox o JOIN submissions s ON s.id = o.submission_id \
                       WHERE o.state = 'PENDING' AND o.next_retry_at <= {now} AND o.is_shadow = 0 \
                         AND o.created_at >= $2 \
                     ) due WHERE in_flight < $3 \
                     ORDER BY id LIMIT $1",
                )
                .bind(self.config.batch)
                .bind(self.config.cutover_watermark_ms)
                .bind(self.config.max_in_flight_per_user)
                .fetch_all(&mut *tx)
                .await?;
            self.lock_rows(&mut tx, candidates).await?
        } else {
            db.query(
                "SELECT id, submission_id, generation, payload, attempts, 0 AS owner, 0 AS in_flight \
                 FROM judge_outbox \
                 WHERE state = 'PENDING' AND next_retry_at <= {now} AND is_shadow = 0 AND created_at >= $2 \
                 ORDER BY id LIMIT $1 {skip_locked}",
            )
            .bind(self.config.batch)
            .bind(self.config.cutover_watermark_ms)
            .fetch_all(&mut *tx)
            .await?
        };
        let mut report = PassReport::default();
        let mut buried = Vec::new();
        let mut valid = Vec::with_capacity(rows.len());
        let mut taken: std::collections::HashMap<i64, i64> = std::collections::HashMap::new();
        for row in rows {
            let id: i64 = row.try_get(0)?;
            let submission_id: i64 = row.try_get(1)?;
            let generation: i64 = row.try_get(2)?;
            let payload: String = row.try_get(3)?;
            let attempts: i64 = row.try_get(4)?;
            let owner: i64 = row.try_get(5)?;
            let in_flight: i64 = row.try_get(6)?;
            if self.config.max_in_flight_per_user > 0 {
                let this_pass = taken.entry(owner).or_insert(0);
                if in_flight + *this_pass >= self.config.max_in_flight_per_user {
                    continue;
                }
                *this_pass += 1;
            }
            let malformed = match serde_json::from_str::<JudgeMessage>(&payload) {
                Ok(message) => {
                    let missing = message.missing_fields();
                    (!missing.is_empty()).then(|| format!("payload missing {}", missing.join(", ")))
                }
                Err(e) => Some(format!("payload is not a judge intent: {e}")),
            };
            match malformed {
                Some(reason) => {
                    self.bury(&mut tx, id, submission_id, generation, &reason)
                        .await?;
                    buried.push(SubmissionId(submission_id));
                    report.dead += 1;
                }
                None => valid.push((
                    id,
                    format!("{submission_id}:{generation}"),
                    payload,
                    attempts,
                )),
            }
        }
        let results: Vec<Result<(), String>> = match &self.queue {
            None => valid
                .iter()
                .map(|_| Err("no queue provider is configured".to_string()))
                .collect(),
            // One batch per pass: the adapter makes it one transaction (SQL) or one pipeline
            // (Redis). Answered per item; if the batch fails, every row of it is retried.
            Some(queue) if !valid.is_empty() => {
                let items: Vec<(String, String)> = valid
                    .iter()
                    .map(|(_, key, payload, _)| (key.clone(), payload.clone()))
                    .collect();
                match queue.enqueue_batch(&items).await {
                    // Added or already enqueued under its key: either way the intent is on
                    // the queue.
                    Ok(_) => valid.iter().map(|_| Ok(())).collect(),
                    Err(e) => valid.iter().map(|_| Err(e.to_string())).collect(),
                }
            }
            Some(_) => Vec::new(),
        };
        let mut sent = Vec::new();
        for ((id, _, _, attempts), result) in valid.iter().zip(results) {
            match result {
                Ok(()) => sent.push(*id),
                Err(error) => {
                    db.query("UPDATE judge_outbox SET attempts = attempts + 1, last_error = $2, next_retry_at = {now} + $3 WHERE id = $1")
                        .bind(*id)
                        .bind(error)
                        .bind(backoff(*attempts).as_millis() as i64)
                        .execute(&mut *tx)
                        .await?;
                    self.metrics.inc(
                        "outbox_dispatch_retries_total",
                        "Failed dispatch attempts, retried later.",
                        &[],
                        1,
                    );
                    report.retried += 1;
                }
            }
        }
        for chunk in sent.chunks(500) {
            let list: Vec<String> = (1..=chunk.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "UPDATE judge_outbox SET state = 'SENT', sent_at = {{now}}, last_error = NULL WHERE id IN ({})",
                list.join(", ")
            );
            let mut query = db.query(&sql);
            for id in chunk {
                query = query.bind(*id);
            }
            query.execute(&mut *tx).await?;
        }
        report.sent = sent.len();
        tx.commit().await?;
        for id in buried {
            self.store.announce_change(id).await;
        }
        Ok(report)
    }

    /// Locks the candidate rows still pending, skipping those another dispatcher holds; returns
    /// only the rows this pass now owns.
    async fn lock_rows(
        &self,
        tx: &mut platform::db::Transaction<'static, platform::db::Any>,
        rows: Vec<platform::db::AnyRow>,
    ) -> Result<Vec<platform::db::AnyRow>, DbError> {
        if rows.is_empty() {
            return Ok(rows);
        }
        let ids: Vec<i64> = rows
            .iter()
            .map(|row| row.try_get::<i64, _>(0))
            .collect::<Result<_, _>>()?;
        let list: Vec<String> = (1..=ids.len()).map(|i| format!("${i}")).collect();
        let sql = format!(
            "SELECT id FROM judge_outbox WHERE id IN ({}) AND state = 'PENDING' {{skip_locked}}",
            list.join(", ")
        );
        let mut query = self.store.db().query(&sql);
        for id in &ids {
            query = query.bind(*id);
        }
        let locked: std::collections::HashSet<i64> = query
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|row| row.try_get::<i64, _>(0))
            .collect::<Result<_, _>>()?;
        Ok(rows
            .into_iter()
            .zip(ids)
            .filter(|(_, id)| locked.contains(id))
            .map(|(row, _)| row)
            .collect())
    }

    /// Marks a malformed intent `DEAD` and its submission System Error, in the pass's
    /// transaction: never "sent".
    async fn bury(
        &self,
        tx: &mut platform::db::Transaction<'static, platform::db::Any>,
        id: i64,
        submission_id: i64,
        generation: i64,
        reason: &str,
    ) -> Result<(), DbError> {
        let db = self.store.db();
        db.query("UPDATE judge_outbox SET state = 'DEAD', last_error = $2 WHERE id = $1")
            .bind(id)
            .bind(reason.to_string())
            .execute(&mut **tx)
            .await?;
        self.store
            .fail_undispatchable(
                tx,
                SubmissionId(submission_id),
                Generation(generation),
                reason,
            )
            .await?;
        self.metrics
            .inc("outbox_dead_total", "Judge intents marked DEAD.", &[], 1);
        Ok(())
    }

    /// Publishes outbox gauges.
    pub async fn observe(&self) -> Result<(), DbError> {
        for state in ["PENDING", "SENT", "DEAD"] {
            self.metrics.set(
                "outbox_rows",
                "Judge-outbox rows by state.",
                &[("state", state)],
                0.0,
            );
        }
        for (state, count) in self.store.outbox_counts().await? {
            self.metrics.set(
                "outbox_rows",
                "Judge-outbox rows by state.",
                &[("state", &state)],
                count as f64,
            );
        }
        Ok(())
    }

    /// Runs passes until shutdown: after every wake-up, and at least every interval.
    pub async fn run(self, shutdown: Shutdown) {
        let signal = self.store.outbox_signal();
        let mut listener = match self.store.db().backend() {
            Backend::Postgres => {
                platform::events::listen(self.store.db().url(), OUTBOX_CHANNEL).await
            }
            Backend::Sqlite => None,
        };
        let mut last_observed = tokio::time::Instant::now() - Duration::from_secs(60);
        while !shutdown.is_triggered() {
            let woken = signal.notified();
            match self.pass().await {
                Ok(report) if report.sent + report.dead == self.config.batch as usize => continue,
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "dispatch pass failed"),
            }
            if last_observed.elapsed() >= Duration::from_secs(1) {
                let _ = self.observe().await;
                last_observed = tokio::time::Instant::now();
            }
            let notified = async {
                match &mut listener {
                    Some(listener) => {
                        if listener.recv().await.is_err() {
                            tokio::time::sleep(self.config.interval).await;
                        }
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = woken => {}
                _ = notified => {}
                _ = tokio::time::sleep(self.config.interval) => {}
                _ = shutdown.triggered() => {}
            }
        }
    }
}

/// Rows of the outbox for inspection: (id, submission, generation, state, attempts, last error).
pub async fn outbox_rows(
    store: &SubmissionStore,
) -> Result<Vec<(i64, i64, i64, String, i64, Option<String>)>, DbError> {
    let db = store.db();
    let rows = db
        .query("SELECT id, submission_id, generation, state, attempts, last_error FROM judge_outbox ORDER BY id")
        .fetch_all(db.pool())
        .await?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get(0)?,
                r.try_get(1)?,
                r.try_get(2)?,
                r.try_get(3)?,
                r.try_get(4)?,
                r.try_get(5)?,
            ))
        })
        .collect()
}
