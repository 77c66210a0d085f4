//! The owner-local half of the event backbone: the outbox an owner writes its integration
//! events to (in the transaction of the change), and the inbox a consumer applies each event
//! through exactly once (in the transaction of its effect). The relay and the consumer loop,
//! which need a stream, live in the `queue` crate.
//!
//! The rule: an event exists if and only if its change committed (same transaction), and a
//! consumer's effect exists if and only if its inbox row does (same transaction), so a
//! redelivered event is recognised and changes nothing.

use std::sync::Arc;

use async_trait::async_trait;
use contracts::events::{EventEnvelope, ENVELOPE_VERSION};
use contracts::UserId;
use tokio::sync::Notify;

use crate::db::{Any, Backend, Db, DbError, Migration, Row, Transaction};

/// The outbox table; every owner that records events includes it in its migrations.
pub const OUTBOX_MIGRATION: Migration = Migration {
    version: 1_001,
    name: "platform_events_outbox",
    postgres: "
        CREATE TABLE IF NOT EXISTS events_outbox (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            event_id TEXT NOT NULL UNIQUE,
            owner TEXT NOT NULL,
            aggregate_type TEXT NOT NULL,
            aggregate_id BIGINT NOT NULL,
            aggregate_version BIGINT NOT NULL,
            causation_id TEXT,
            trace_id TEXT,
            actor_id BIGINT,
            event_type TEXT NOT NULL,
            schema_version BIGINT NOT NULL,
            occurred_at BIGINT NOT NULL,
            payload TEXT NOT NULL,
            confidential TEXT,
            state TEXT NOT NULL DEFAULT 'PENDING',
            attempts BIGINT NOT NULL DEFAULT 0,
            last_error TEXT,
            next_retry_at BIGINT NOT NULL,
            sent_at BIGINT
        );
        CREATE INDEX IF NOT EXISTS events_outbox_due ON events_outbox (state, next_retry_at, id)",
    sqlite: "
        CREATE TABLE IF NOT EXISTS events_outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL UNIQUE,
            owner TEXT NOT NULL,
            aggregate_type TEXT NOT NULL,
            aggregate_id INTEGER NOT NULL,
            aggregate_version INTEGER NOT NULL,
            causation_id TEXT,
            trace_id TEXT,
            actor_id INTEGER,
            event_type TEXT NOT NULL,
            schema_version INTEGER NOT NULL,
            occurred_at INTEGER NOT NULL,
            payload TEXT NOT NULL,
            confidential TEXT,
            state TEXT NOT NULL DEFAULT 'PENDING',
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            next_retry_at INTEGER NOT NULL,
            sent_at INTEGER
        );
        CREATE INDEX IF NOT EXISTS events_outbox_due ON events_outbox (state, next_retry_at, id)",
};

/// The inbox table; every consumer's owner includes it in its migrations.
pub const INBOX_MIGRATION: Migration = Migration {
    version: 1_002,
    name: "platform_inbox",
    postgres: "CREATE TABLE IF NOT EXISTS inbox (consumer TEXT NOT NULL, event_id TEXT NOT NULL, processed_at BIGINT NOT NULL, PRIMARY KEY (consumer, event_id))",
    sqlite: "CREATE TABLE IF NOT EXISTS inbox (consumer TEXT NOT NULL, event_id TEXT NOT NULL, processed_at INTEGER NOT NULL, PRIMARY KEY (consumer, event_id))",
};

tokio::task_local! {
    /// The request id of the request this task serves (set by the HTTP edge).
    static TRACE_ID: String;
}

/// Runs `work` with `trace_id` as the trace id of every event it records.
pub async fn with_trace<F: std::future::Future>(trace_id: String, work: F) -> F::Output {
    TRACE_ID.scope(trace_id, work).await
}

/// The trace id of the current task, if it serves a request.
pub fn current_trace() -> Option<String> {
    TRACE_ID.try_with(Clone::clone).ok()
}

/// An event to record.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub event_type: &'static str,
    pub aggregate_type: &'static str,
    pub aggregate_id: i64,
    pub aggregate_version: i64,
    pub actor: Option<UserId>,
    pub causation_id: Option<String>,
    pub payload: serde_json::Value,
    pub confidential: Option<serde_json::Value>,
}

impl NewEvent {
    /// An event about `aggregate_type` `aggregate_id` at version 0, with no actor.
    pub fn new(
        event_type: &'static str,
        aggregate_type: &'static str,
        aggregate_id: i64,
        payload: serde_json::Value,
    ) -> Self {
        Self {
            event_type,
            aggregate_type,
            aggregate_id,
            aggregate_version: 0,
            actor: None,
            causation_id: None,
            payload,
            confidential: None,
        }
    }

    pub fn by(mut self, actor: Option<UserId>) -> Self {
        self.actor = actor;
        self
    }

    pub fn version(mut self, version: i64) -> Self {
        self.aggregate_version = version;
        self
    }

    pub fn caused_by(mut self, causation_id: impl Into<String>) -> Self {
        self.causation_id = Some(causation_id.into());
        self
    }

    pub fn confidential(mut self, value: serde_json::Value) -> Self {
        self.confidential = Some(value);
        self
    }
}

/// One owner's outbox. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Outbox {
    db: Db,
    owner: &'static str,
    /// Wakes this process's relay when an event is recorded.
    signal: Arc<Notify>,
}

impl Outbox {
    /// The outbox of `owner` in `db` (whose migrations include [`OUTBOX_MIGRATION`]).
    pub fn new(db: Db, owner: &'static str) -> Self {
        Self {
            db,
            owner,
            signal: Arc::new(Notify::new()),
        }
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    pub fn owner(&self) -> &'static str {
        self.owner
    }

    /// The PostgreSQL channel the relay listens on.
    pub fn channel(&self) -> String {
        format!("ulticode_events_{}", self.owner)
    }

    pub fn signal(&self) -> Arc<Notify> {
        self.signal.clone()
    }

    /// Records `event` in the caller's transaction; returns its id. The relay is woken (on
    /// PostgreSQL by a `NOTIFY`, delivered at commit; in this process at once — on SQLite
    /// the relay's read waits for the transaction's connection anyway).
    pub async fn record(
        &self,
        tx: &mut Transaction<'static, Any>,
        event: NewEvent,
    ) -> Result<String, DbError> {
        let event_id = uuid::Uuid::new_v4().to_string();
        self.db
            .query(
                "INSERT INTO events_outbox (event_id, owner, aggregate_type, aggregate_id, aggregate_version, \
                 causation_id, trace_id, actor_id, event_type, schema_version, occurred_at, payload, confidential, \
                 state, next_retry_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, {now}, $11, $12, 'PENDING', {now})",
            )
            .bind(event_id.clone())
            .bind(self.owner)
            .bind(event.aggregate_type)
            .bind(event.aggregate_id)
            .bind(event.aggregate_version)
            .bind(event.causation_id)
            .bind(current_trace())
            .bind(event.actor.map(|u| u.0))
            .bind(event.event_type)
            .bind(ENVELOPE_VERSION)
            .bind(event.payload.to_string())
            .bind(event.confidential.map(|c| c.to_string()))
            .execute(&mut **tx)
            .await?;
        if self.db.backend() == Backend::Postgres {
            self.db
                .query("SELECT pg_notify($1, '')")
                .bind(self.channel())
                .execute(&mut **tx)
                .await?;
        }
        self.signal.notify_one();
        Ok(event_id)
    }

    /// Records `event` in a transaction of its own (for facts that change nothing else, such
    /// as a failed login).
    pub async fn record_alone(&self, event: NewEvent) -> Result<String, DbError> {
        let mut tx = self.db.begin().await?;
        let id = self.record(&mut tx, event).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// Rows by state, for dashboards and metrics.
    pub async fn counts(&self) -> Result<Vec<(String, i64)>, DbError> {
        let rows = self
            .db
            .query("SELECT state, COUNT(*) FROM events_outbox GROUP BY state ORDER BY state")
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?)))
            .collect()
    }
}

/// The envelope of an outbox row whose columns from `first` on are [`ENVELOPE_COLUMNS`].
pub fn envelope_from_row(row: &crate::db::AnyRow, first: usize) -> Result<EventEnvelope, String> {
    let get = |e: sqlx::Error| e.to_string();
    let at = |i: usize| first + i;
    let payload: String = row.try_get(at(11)).map_err(get)?;
    let confidential: Option<String> = row.try_get(at(12)).map_err(get)?;
    Ok(EventEnvelope {
        event_id: row.try_get(at(0)).map_err(get)?,
        owner: row.try_get(at(1)).map_err(get)?,
        aggregate_type: row.try_get(at(2)).map_err(get)?,
        aggregate_id: row.try_get(at(3)).map_err(get)?,
        aggregate_version: row.try_get(at(4)).map_err(get)?,
        causation_id: row.try_get(at(5)).map_err(get)?,
        trace_id: row.try_get(at(6)).map_err(get)?,
        actor_id: row.try_get(at(7)).map_err(get)?,
        event_type: row.try_get(at(8)).map_err(get)?,
        schema_version: row.try_get(at(9)).map_err(get)?,
        occurred_at_ms: row.try_get(at(10)).map_err(get)?,
        payload: serde_json::from_str(&payload).map_err(|e| format!("payload: {e}"))?,
        confidential: confidential
            .map(|c| serde_json::from_str(&c))
            .transpose()
            .map_err(|e| format!("confidential: {e}"))?,
    })
}

/// The columns [`envelope_from_row`] reads, in order.
pub const ENVELOPE_COLUMNS: &str =
    "event_id, owner, aggregate_type, aggregate_id, aggregate_version, causation_id, \
     trace_id, actor_id, event_type, schema_version, occurred_at, payload, confidential";

/// Why a consumer could not apply an event.
#[derive(Debug, thiserror::Error)]
pub enum HandlerError {
    /// The event can never be applied (malformed for its type): it goes to the dead letters.
    #[error("cannot be applied: {0}")]
    Poison(String),
    /// Applying failed for a reason that may pass (the database): it is retried.
    #[error("failed: {0}")]
    Transient(String),
}

impl From<DbError> for HandlerError {
    fn from(e: DbError) -> Self {
        HandlerError::Transient(e.to_string())
    }
}

impl From<sqlx::Error> for HandlerError {
    fn from(e: sqlx::Error) -> Self {
        HandlerError::Transient(e.to_string())
    }
}

/// A consumer of events: its effect, applied in its own database.
#[async_trait]
pub trait EventHandler: Send + Sync {
    /// The consumer's name: its stream and its inbox rows.
    fn name(&self) -> &'static str;

    /// The database its inbox and its effects live in (whose migrations include
    /// [`INBOX_MIGRATION`]).
    fn db(&self) -> &Db;

    /// Applies `event` in `tx`, which already holds the event's inbox row.
    async fn apply(
        &self,
        tx: &mut Transaction<'static, Any>,
        event: &EventEnvelope,
    ) -> Result<(), HandlerError>;

    /// Called after an application committed (to wake live views); never for duplicates.
    fn committed(&self, _event: &EventEnvelope) {}
}

/// Anything that takes events from a stream: an [`EventHandler`] through its inbox (the
/// blanket implementation), or a consumer whose effect is idempotent by construction (the
/// search index's versioned upserts).
#[async_trait]
pub trait Consume: Send + Sync {
    fn name(&self) -> &'static str;
    async fn consume(&self, event: &EventEnvelope) -> Result<Handled, HandlerError>;
}

#[async_trait]
impl<T: EventHandler> Consume for T {
    fn name(&self) -> &'static str {
        EventHandler::name(self)
    }

    async fn consume(&self, event: &EventEnvelope) -> Result<Handled, HandlerError> {
        handle_once(self, event).await
    }
}

/// What [`handle_once`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handled {
    Applied,
    /// The inbox already had the event: nothing changed.
    Duplicate,
}

/// Applies `event` through `handler` unless its inbox already has it; the inbox row and the
/// effect commit together or not at all.
pub async fn handle_once(
    handler: &dyn EventHandler,
    event: &EventEnvelope,
) -> Result<Handled, HandlerError> {
    let db = handler.db();
    let mut tx = db.begin().await?;
    let fresh = db
        .query("INSERT INTO inbox (consumer, event_id, processed_at) VALUES ($1, $2, {now}) ON CONFLICT (consumer, event_id) DO NOTHING")
        .bind(handler.name())
        .bind(event.event_id.clone())
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if fresh == 0 {
        tx.rollback().await?;
        return Ok(Handled::Duplicate);
    }
    handler.apply(&mut tx, event).await?;
    tx.commit().await?;
    handler.committed(event);
    Ok(Handled::Applied)
}

/// A `LISTEN` connection on `channel`, or `None` (polling only) with the reason logged.
pub async fn listen(url: &str, channel: &str) -> Option<sqlx::postgres::PgListener> {
    match sqlx::postgres::PgListener::connect(url).await {
        Ok(mut listener) => match listener.listen(channel).await {
            Ok(()) => Some(listener),
            Err(e) => {
                tracing::warn!(error = %e, channel, "LISTEN failed; polling only");
                None
            }
        },
        Err(e) => {
            tracing::warn!(error = %e, "no LISTEN connection; polling only");
            None
        }
    }
}

/// Backoff before the next attempt, given the attempts that already failed: 2 s doubling,
/// capped at 60 s (the judge outbox's and the event relay's schedule).
pub fn backoff(failed_attempts: i64) -> std::time::Duration {
    let exponent = failed_attempts.clamp(0, 5) as u32;
    std::time::Duration::from_millis((2_000u64 << exponent).min(60_000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_two_seconds_and_caps_at_a_minute() {
        let got: Vec<u64> = (0..8).map(|a| backoff(a).as_secs()).collect();
        assert_eq!(got, [2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(-3).as_secs(), 2);
    }

    #[test]
    fn the_trace_id_is_the_scopes() {
        assert_eq!(current_trace(), None);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let got = rt.block_on(with_trace("req-1".into(), async { current_trace() }));
        assert_eq!(got.as_deref(), Some("req-1"));
    }
}
