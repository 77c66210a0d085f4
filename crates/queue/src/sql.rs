//! The SQL stream: the same port and semantics as Redis Streams, on tables — for the embedded
//! shape (SQLite) and for PostgreSQL deployments without Redis. Several named streams share
//! the tables (the judge queue, one stream per event consumer); each has one consumer group.
//!
//! `stream_entries` holds unacknowledged entries; an entry with `consumer IS NULL` was never
//! delivered, otherwise it is pending for that consumer since `delivered_at`. Dedup keys live
//! in `stream_dedup` and are written in the same transaction as the entry.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use platform::db::Row;
use platform::{Db, Migration};
use tokio::sync::Notify;

use crate::{
    DeadLetter, Delivery, Enqueued, JudgeQueue, PendingEntry, QueueConfig, QueueError, QueueStats,
    Reclaimed,
};

pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 1,
    name: "sql_stream",
    postgres: "
        CREATE TABLE stream_entries (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            payload TEXT NOT NULL,
            dedup_key TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            consumer TEXT,
            deliveries BIGINT NOT NULL DEFAULT 0,
            delivered_at BIGINT
        );
        CREATE INDEX stream_entries_undelivered ON stream_entries (id) WHERE consumer IS NULL;
        CREATE TABLE stream_dedup (key TEXT PRIMARY KEY, expires_at BIGINT NOT NULL);
        CREATE TABLE stream_dead (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            payload TEXT NOT NULL,
            reason TEXT NOT NULL,
            deliveries BIGINT NOT NULL,
            dead_at BIGINT NOT NULL
        )",
    sqlite: "
        CREATE TABLE stream_entries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            payload TEXT NOT NULL,
            dedup_key TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            consumer TEXT,
            deliveries INTEGER NOT NULL DEFAULT 0,
            delivered_at INTEGER
        );
        CREATE INDEX stream_entries_undelivered ON stream_entries (consumer, id);
        CREATE TABLE stream_dedup (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
        CREATE TABLE stream_dead (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            payload TEXT NOT NULL,
            reason TEXT NOT NULL,
            deliveries INTEGER NOT NULL,
            dead_at INTEGER NOT NULL
        )",
}, Migration {
    version: 2,
    name: "named streams",
    postgres: "
        ALTER TABLE stream_entries ADD COLUMN stream TEXT NOT NULL DEFAULT 'judge';
        ALTER TABLE stream_dead ADD COLUMN stream TEXT NOT NULL DEFAULT 'judge';
        DROP INDEX stream_entries_undelivered;
        CREATE INDEX stream_entries_undelivered ON stream_entries (stream, id) WHERE consumer IS NULL;
        CREATE INDEX stream_entries_pending ON stream_entries (stream, id) WHERE consumer IS NOT NULL;
        CREATE INDEX stream_dead_by_stream ON stream_dead (stream, id)",
    sqlite: "
        ALTER TABLE stream_entries ADD COLUMN stream TEXT NOT NULL DEFAULT 'judge';
        ALTER TABLE stream_dead ADD COLUMN stream TEXT NOT NULL DEFAULT 'judge';
        DROP INDEX stream_entries_undelivered;
        CREATE INDEX stream_entries_undelivered ON stream_entries (stream, consumer, id);
        CREATE INDEX stream_dead_by_stream ON stream_dead (stream, id)",
}];

/// The judge queue's stream name.
const JUDGE_STREAM: &str = "judge";

/// A judge queue in SQL tables.
#[derive(Clone)]
pub struct SqlQueue {
    db: Db,
    stream: String,
    config: QueueConfig,
    /// What this handle knows of the stream's new entries.
    news: Arc<News>,
}

/// Enqueues through one handle, as its receivers see them.
#[derive(Default)]
struct News {
    /// Wakes waiting receivers when something is enqueued.
    added: Notify,
    /// Entries made undelivered through this handle, ever (the count is what matters).
    enqueued: AtomicU64,
    /// `(enqueued, when)` of the last look that found every undelivered entry (it took fewer
    /// than it asked for). Until `enqueued` moves or the poll interval passes, another look
    /// would find nothing: without it, every receive after a delivery asked the database
    /// once more for nothing.
    drained: Mutex<Option<(u64, tokio::time::Instant)>>,
}

impl News {
    fn added(&self) {
        self.enqueued.fetch_add(1, Ordering::AcqRel);
        self.added.notify_waiters();
    }
}

fn ms(duration: Duration) -> i64 {
    duration.as_millis().min(i64::MAX as u128) as i64
}

impl SqlQueue {
    /// The judge queue in `db` (migrating it).
    pub async fn new(db: Db, config: QueueConfig) -> Result<Self, QueueError> {
        Self::named(db, JUDGE_STREAM, config).await
    }

    /// The stream `name` in `db` (migrating it). Receivers are woken at once by enqueues made
    /// through the same handle (clone it to share), and within the configured poll interval
    /// otherwise.
    pub async fn named(db: Db, name: &str, config: QueueConfig) -> Result<Self, QueueError> {
        db.migrate(MIGRATIONS).await?;
        Ok(Self {
            db,
            stream: name.to_string(),
            config,
            news: Arc::default(),
        })
    }

    /// Hands every entry delivered but not acknowledged, on every stream in `db`, back to
    /// its stream as undelivered (its delivery count kept), so the next receive takes it at
    /// once instead of after the visibility timeout. Only for a caller that knows no consumer
    /// of these streams is alive: the embedded shape's process at start, holding its data
    /// directory's lock.
    pub async fn redeliver_all_pending(db: &Db) -> Result<u64, QueueError> {
        db.migrate(MIGRATIONS).await?;
        Ok(db
            .query("UPDATE stream_entries SET consumer = NULL, delivered_at = NULL WHERE consumer IS NOT NULL")
            .execute(db.pool())
            .await?
            .rows_affected())
    }

    /// Takes up to `max` undelivered entries in one statement (oldest first). On PostgreSQL
    /// the inner select skips rows another consumer is taking; SQLite has one writer.
    async fn take_new(&self, consumer: &str, max: usize) -> Result<Vec<Delivery>, QueueError> {
        let rows = self
            .db
            .query(
                "UPDATE stream_entries SET consumer = $2, deliveries = deliveries + 1, delivered_at = {now} \
                 WHERE id IN (SELECT id FROM stream_entries WHERE stream = $3 AND consumer IS NULL \
                              ORDER BY id LIMIT $1 {skip_locked}) \
                 RETURNING id, payload, deliveries, delivered_at - created_at",
            )
            .bind(max as i64)
            .bind(consumer.to_string())
            .bind(self.stream.clone())
            .fetch_all(self.db.pool())
            .await?;
        let mut out = rows
            .iter()
            .map(|row| {
                let id: i64 = row.try_get(0)?;
                let delivery = Delivery {
                    id: id.to_string(),
                    payload: row.try_get(1)?,
                    deliveries: row.try_get::<i64, _>(2)? as u64,
                    queue_delay_ms: row.try_get::<i64, _>(3)?.max(0) as u64,
                };
                Ok((id, delivery))
            })
            .collect::<Result<Vec<_>, QueueError>>()?;
        // RETURNING promises no order; deliveries go out oldest first.
        out.sort_unstable_by_key(|(id, _)| *id);
        Ok(out.into_iter().map(|(_, delivery)| delivery).collect())
    }

    fn entry_id(id: &str) -> Result<i64, QueueError> {
        id.parse()
            .map_err(|_| QueueError::Protocol(format!("not a SQL stream id: {id:?}")))
    }

    async fn bury(
        &self,
        tx: &mut platform::db::Transaction<'static, platform::db::Any>,
        id: i64,
        reason: &str,
    ) -> Result<bool, QueueError> {
        let moved = self
            .db
            .query(
                "INSERT INTO stream_dead (stream, payload, reason, deliveries, dead_at) \
                 SELECT stream, payload, $2, deliveries, {now} FROM stream_entries WHERE id = $1 AND stream = $3",
            )
            .bind(id)
            .bind(reason.to_string())
            .bind(self.stream.clone())
            .execute(&mut **tx)
            .await?
            .rows_affected();
        self.db
            .query("DELETE FROM stream_entries WHERE id = $1 AND stream = $2")
            .bind(id)
            .bind(self.stream.clone())
            .execute(&mut **tx)
            .await?;
        Ok(moved == 1)
    }
}

impl SqlQueue {
    /// Enqueues each stream's items in one transaction (all or none), for streams that share
    /// one database (the first's): the relay publishing a pass to every consumer's stream
    /// commits once, not once per stream.
    pub(crate) async fn enqueue_together(
        batches: &[(&SqlQueue, &[(String, String)])],
    ) -> Result<Vec<Vec<Enqueued>>, QueueError> {
        let Some((first, _)) = batches.first() else {
            return Ok(Vec::new());
        };
        let mut tx = first.db.begin().await?;
        let mut out = Vec::with_capacity(batches.len());
        for (queue, items) in batches {
            let mut added = Vec::with_capacity(items.len());
            for (key, payload) in *items {
                added.push(queue.add(&mut tx, key, payload).await?);
            }
            out.push(added);
        }
        tx.commit().await?;
        for ((queue, _), added) in batches.iter().zip(&out) {
            if added.iter().any(|e| matches!(e, Enqueued::Added(_))) {
                queue.news.added();
            }
        }
        Ok(out)
    }

    /// The dedup check, the key and the entry, in the caller's transaction. Keys are
    /// namespaced by stream, so one key may be used on every stream.
    async fn add(
        &self,
        tx: &mut platform::db::Transaction<'static, platform::db::Any>,
        dedup_key: &str,
        payload: &str,
    ) -> Result<Enqueued, QueueError> {
        let dedup_key = format!("{}:{dedup_key}", self.stream);
        // One upsert: a new key is inserted, an expired one renewed, a live one left alone
        // (no row affected: a duplicate).
        let fresh = self
            .db
            .query(
                "INSERT INTO stream_dedup (key, expires_at) VALUES ($1, {now} + $2) \
                 ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at \
                 WHERE stream_dedup.expires_at <= {now}",
            )
            .bind(dedup_key.to_string())
            .bind(ms(self.config.dedup_window))
            .execute(&mut **tx)
            .await?
            .rows_affected();
        if fresh == 0 {
            return Ok(Enqueued::Duplicate);
        }
        let id: i64 = self
            .db
            .query("INSERT INTO stream_entries (stream, payload, dedup_key, created_at) VALUES ($3, $1, $2, {now}) RETURNING id")
            .bind(payload.to_string())
            .bind(dedup_key)
            .bind(self.stream.clone())
            .fetch_one(&mut **tx)
            .await?
            .try_get(0)?;
        Ok(Enqueued::Added(id.to_string()))
    }
}

#[async_trait]
impl JudgeQueue for SqlQueue {
    async fn enqueue(&self, dedup_key: &str, payload: &str) -> Result<Enqueued, QueueError> {
        let mut tx = self.db.begin().await?;
        let added = self.add(&mut tx, dedup_key, payload).await?;
        tx.commit().await?;
        if matches!(added, Enqueued::Added(_)) {
            self.news.added();
        }
        Ok(added)
    }

    async fn enqueue_batch(&self, items: &[(String, String)]) -> Result<Vec<Enqueued>, QueueError> {
        let mut added = Self::enqueue_together(&[(self, items)]).await?;
        Ok(added.pop().unwrap_or_default())
    }

    async fn receive(
        &self,
        consumer: &str,
        max: usize,
        block: Duration,
    ) -> Result<Vec<Delivery>, QueueError> {
        let deadline = tokio::time::Instant::now() + block;
        let max = max.max(1);
        loop {
            let added = self.news.added.notified();
            let enqueued = self.news.enqueued.load(Ordering::Acquire);
            let now = tokio::time::Instant::now();
            let drained = *self.news.drained.lock().expect("drained lock");
            let next_look = match drained {
                Some((seen, at)) if seen == enqueued && now < at + self.config.poll_interval => {
                    at + self.config.poll_interval
                }
                _ => {
                    let got = self.take_new(consumer, max).await?;
                    let now = tokio::time::Instant::now();
                    if got.len() < max {
                        *self.news.drained.lock().expect("drained lock") = Some((enqueued, now));
                    }
                    if !got.is_empty() {
                        return Ok(got);
                    }
                    now + self.config.poll_interval
                }
            };
            if tokio::time::Instant::now() >= deadline {
                return Ok(Vec::new());
            }
            // Another process may enqueue: poll as well as listen.
            let _ = tokio::time::timeout_at(deadline.min(next_look), added).await;
        }
    }

    async fn ack(&self, id: &str) -> Result<(), QueueError> {
        self.db
            .query("DELETE FROM stream_entries WHERE id = $1 AND stream = $2")
            .bind(Self::entry_id(id)?)
            .bind(self.stream.clone())
            .execute(self.db.pool())
            .await?;
        Ok(())
    }

    async fn nack(&self, _id: &str) -> Result<(), QueueError> {
        Ok(())
    }

    async fn touch(&self, consumer: &str, id: &str) -> Result<(), QueueError> {
        self.db
            .query("UPDATE stream_entries SET delivered_at = {now} WHERE id = $1 AND consumer = $2 AND stream = $3")
            .bind(Self::entry_id(id)?)
            .bind(consumer.to_string())
            .bind(self.stream.clone())
            .execute(self.db.pool())
            .await?;
        Ok(())
    }

    async fn reclaim(&self, consumer: &str, max: usize) -> Result<Reclaimed, QueueError> {
        let mut tx = self.db.begin().await?;
        let idle: Vec<(i64, i64)> = self
            .db
            .query(
                "SELECT id, deliveries FROM stream_entries WHERE stream = $3 AND consumer IS NOT NULL AND delivered_at <= {now} - $1 \
                 ORDER BY id LIMIT $2 {skip_locked}",
            )
            .bind(ms(self.config.visibility_timeout))
            .bind(max.max(1) as i64)
            .bind(self.stream.clone())
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
            .collect::<Result<_, sqlx::Error>>()?;
        let mut reclaimed = Reclaimed::default();
        for (id, deliveries) in idle {
            if deliveries as u64 >= self.config.max_deliveries {
                let reason = format!("delivered {deliveries} times without being acknowledged");
                self.bury(&mut tx, id, &reason).await?;
                reclaimed.dead_lettered.push(id.to_string());
                continue;
            }
            let row = self
                .db
                .query(
                    "UPDATE stream_entries SET consumer = $2, deliveries = deliveries + 1, delivered_at = {now} \
                     WHERE id = $1 RETURNING payload, deliveries, delivered_at - created_at",
                )
                .bind(id)
                .bind(consumer.to_string())
                .fetch_one(&mut *tx)
                .await?;
            reclaimed.deliveries.push(Delivery {
                id: id.to_string(),
                payload: row.try_get(0)?,
                deliveries: row.try_get::<i64, _>(1)? as u64,
                queue_delay_ms: row.try_get::<i64, _>(2)?.max(0) as u64,
            });
        }
        tx.commit().await?;
        Ok(reclaimed)
    }

    async fn dead_letter(&self, id: &str, reason: &str) -> Result<(), QueueError> {
        let mut tx = self.db.begin().await?;
        self.bury(&mut tx, Self::entry_id(id)?, reason).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn stats(&self) -> Result<QueueStats, QueueError> {
        let row = self
            .db
            .query(
                "SELECT COUNT(*), \
                        COALESCE(SUM(CASE WHEN consumer IS NOT NULL THEN 1 ELSE 0 END), 0), \
                        COALESCE({now} - MIN(CASE WHEN consumer IS NOT NULL THEN created_at END), 0), \
                        COALESCE({now} - MIN(CASE WHEN consumer IS NULL THEN created_at END), 0), \
                        (SELECT COUNT(*) FROM stream_dead WHERE stream = $1) \
                 FROM stream_entries WHERE stream = $1",
            )
            .bind(self.stream.clone())
            .fetch_one(self.db.pool())
            .await?;
        let get =
            |i: usize| -> Result<u64, QueueError> { Ok(row.try_get::<i64, _>(i)?.max(0) as u64) };
        Ok(QueueStats {
            length: get(0)?,
            pending: get(1)?,
            oldest_pending_age_ms: get(2)?,
            queue_delay_ms: get(3)?,
            dead_letters: get(4)?,
        })
    }

    async fn pending_entries(&self, limit: usize) -> Result<Vec<PendingEntry>, QueueError> {
        let rows = self
            .db
            .query(
                "SELECT id, consumer, {now} - delivered_at, deliveries FROM stream_entries \
                 WHERE stream = $2 AND consumer IS NOT NULL ORDER BY id LIMIT $1",
            )
            .bind(limit.max(1) as i64)
            .bind(self.stream.clone())
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|row| {
                Ok(PendingEntry {
                    id: row.try_get::<i64, _>(0)?.to_string(),
                    consumer: row.try_get(1)?,
                    idle_ms: row.try_get::<i64, _>(2)?.max(0) as u64,
                    deliveries: row.try_get::<i64, _>(3)?.max(0) as u64,
                })
            })
            .collect()
    }

    async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>, QueueError> {
        let rows = self
            .db
            .query("SELECT id, payload, reason, deliveries FROM stream_dead WHERE stream = $2 ORDER BY id LIMIT $1")
            .bind(limit.max(1) as i64)
            .bind(self.stream.clone())
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|row| {
                Ok(DeadLetter {
                    id: row.try_get::<i64, _>(0)?.to_string(),
                    payload: row.try_get(1)?,
                    reason: row.try_get(2)?,
                    deliveries: row.try_get::<i64, _>(3)? as u64,
                })
            })
            .collect()
    }

    async fn replay(&self, dead_letter_id: &str) -> Result<bool, QueueError> {
        let id = Self::entry_id(dead_letter_id)?;
        let mut tx = self.db.begin().await?;
        let moved = self
            .db
            .query(
                "INSERT INTO stream_entries (stream, payload, dedup_key, created_at) \
                 SELECT stream, payload, 'replay:' || CAST(id AS TEXT), {now} FROM stream_dead WHERE id = $1 AND stream = $2",
            )
            .bind(id)
            .bind(self.stream.clone())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        self.db
            .query("DELETE FROM stream_dead WHERE id = $1 AND stream = $2")
            .bind(id)
            .bind(self.stream.clone())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        if moved == 1 {
            self.news.added();
        }
        Ok(moved == 1)
    }
}
