//! The judge queue: a delivery channel for judging intents, never a record of them (the
//! Submission owner's database is the record; this only carries messages).
//!
//! One port, [`JudgeQueue`], with the semantics of a Redis Streams consumer group:
//! - enqueue is deduplicated by key (`<submissionId>:<generation>`), atomically with the add;
//! - a received entry stays pending (in the pending-entries list, PEL) until acknowledged;
//!   a negative acknowledgement leaves it pending;
//! - pending entries idle longer than the visibility timeout can be reclaimed by any consumer,
//!   and an entry delivered more often than the budget moves to the dead letters instead;
//! - a consumer working on an entry for long keeps it fresh with `touch`.
//!
//! Adapters: [`RedisQueue`] (distributed shape) and [`SqlQueue`] (embedded shape, or
//! PostgreSQL without Redis). The conformance suite in `tests/` runs against all of them.
//!
//! Beside it, [`RedisRates`]: the rate-limit buckets every API replica shares (Redis is here
//! already; the port, `platform::rate::RateStore`, is the platform's).

pub mod events;
mod redis_rates;
mod redis_streams;
mod sql;

use std::time::Duration;

use async_trait::async_trait;

pub use redis_rates::RedisRates;
pub use redis_streams::RedisQueue;
pub use sql::SqlQueue;

/// Behaviour shared by every adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// A pending entry idle this long may be reclaimed (seed default: 30 minutes).
    pub visibility_timeout: Duration,
    /// Deliveries after which an entry goes to the dead letters instead of being reclaimed.
    pub max_deliveries: u64,
    /// How long a dedup key blocks a second enqueue of the same key.
    pub dedup_window: Duration,
    /// SQL streams: how often a waiting receive looks for entries that another process (or
    /// another handle) added; enqueues through the same handle wake it at once. Redis blocks
    /// on the server instead.
    pub poll_interval: Duration,
}

/// [`QueueConfig::poll_interval`] by default: other processes may write the stream.
pub const SHARED_POLL_INTERVAL: Duration = Duration::from_millis(50);

/// [`QueueConfig::poll_interval`] for a process that alone writes its streams through one
/// handle each (the embedded shape holds its data directory's lock): a safety net, as every
/// enqueue wakes the receivers. Polling empty streams every 50 ms was a third of the embedded
/// server's SQLite transactions during a contest burst.
pub const EXCLUSIVE_POLL_INTERVAL: Duration = Duration::from_secs(1);

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            visibility_timeout: Duration::from_secs(30 * 60),
            max_deliveries: 5,
            dedup_window: Duration::from_secs(24 * 3600),
            poll_interval: SHARED_POLL_INTERVAL,
        }
    }
}

/// The consumer group every judge worker reads in.
pub const GROUP: &str = "judge-workers";

/// The consumer group of an event stream (each consumer of events has a stream of its own).
pub const EVENT_GROUP: &str = "consumers";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enqueued {
    /// Added with this entry id.
    Added(String),
    /// The key was enqueued before (within the dedup window): nothing added.
    Duplicate,
}

/// One delivery of an entry to a consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub id: String,
    pub payload: String,
    /// How many times the entry has been delivered, this delivery included.
    pub deliveries: u64,
    /// Milliseconds between the enqueue and this delivery.
    pub queue_delay_ms: u64,
}

/// What a reclaim pass did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Reclaimed {
    /// Entries now delivered to the reclaiming consumer.
    pub deliveries: Vec<Delivery>,
    /// Ids of entries moved to the dead letters (over the delivery budget).
    pub dead_lettered: Vec<String>,
}

/// A point-in-time view for dashboards and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueStats {
    /// Entries not yet acknowledged (pending or never delivered).
    pub length: u64,
    /// Entries delivered and not yet acknowledged.
    pub pending: u64,
    /// Age of the oldest pending entry, in milliseconds.
    pub oldest_pending_age_ms: u64,
    /// Age of the oldest entry never delivered: how long work waits for a worker.
    pub queue_delay_ms: u64,
    pub dead_letters: u64,
}

/// An entry that will not be delivered again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    pub id: String,
    pub payload: String,
    pub reason: String,
    pub deliveries: u64,
}

/// An entry delivered to a consumer and not yet acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingEntry {
    pub id: String,
    pub consumer: String,
    pub idle_ms: u64,
    pub deliveries: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("database: {0}")]
    Db(#[from] platform::DbError),
    #[error("malformed reply from the queue: {0}")]
    Protocol(String),
}

impl From<sqlx::Error> for QueueError {
    fn from(e: sqlx::Error) -> Self {
        QueueError::Db(e.into())
    }
}

/// The judge queue port.
#[async_trait]
pub trait JudgeQueue: Send + Sync {
    /// Adds `payload` unless `dedup_key` was enqueued within the dedup window; the check, the
    /// add and the key are one atomic step.
    async fn enqueue(&self, dedup_key: &str, payload: &str) -> Result<Enqueued, QueueError>;

    /// [`JudgeQueue::enqueue`] for many `(dedup_key, payload)` items, answered in order;
    /// adapters batch the round trips.
    async fn enqueue_batch(&self, items: &[(String, String)]) -> Result<Vec<Enqueued>, QueueError> {
        let mut out = Vec::with_capacity(items.len());
        for (key, payload) in items {
            out.push(self.enqueue(key, payload).await?);
        }
        Ok(out)
    }

    /// Up to `max` entries never delivered before, waiting up to `block` for one.
    async fn receive(
        &self,
        consumer: &str,
        max: usize,
        block: Duration,
    ) -> Result<Vec<Delivery>, QueueError>;

    /// Done with an entry: it leaves the pending list (and the queue).
    async fn ack(&self, id: &str) -> Result<(), QueueError>;

    /// Gives an entry up without finishing it: it stays pending and is reclaimed (redelivered)
    /// after the visibility timeout.
    async fn nack(&self, id: &str) -> Result<(), QueueError>;

    /// Resets an entry's idle time so a long judging is not reclaimed under its worker.
    async fn touch(&self, consumer: &str, id: &str) -> Result<(), QueueError>;

    /// Takes over up to `max` entries idle longer than the visibility timeout for `consumer`,
    /// moving those over the delivery budget to the dead letters.
    async fn reclaim(&self, consumer: &str, max: usize) -> Result<Reclaimed, QueueError>;

    /// Moves an entry that can never be processed (undecodable) to the dead letters.
    async fn dead_letter(&self, id: &str, reason: &str) -> Result<(), QueueError>;

    async fn stats(&self) -> Result<QueueStats, QueueError>;

    async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>, QueueError>;

    /// Up to `limit` entries delivered and not yet acknowledged, oldest first: who holds
    /// each, how long it has been idle (since its delivery or last touch), how often it was
    /// delivered.
    async fn pending_entries(&self, limit: usize) -> Result<Vec<PendingEntry>, QueueError>;

    /// Puts a dead letter back on the queue (as a new entry); `false` if it does not exist.
    async fn replay(&self, dead_letter_id: &str) -> Result<bool, QueueError>;
}
