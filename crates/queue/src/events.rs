//! The stream half of the event backbone: one stream per consumer (the judge queue's port,
//! so both adapters and their semantics — dedup, pending list, reclaim, dead letters,
//! replay — are the judge queue's), the relay that moves an owner's outbox onto them, and
//! the loop that feeds a consumer's handler.
//!
//! Relay: one per owner at a time (singleton lease `events-relay`, every write guarded by
//! its fence token); each pass takes the due `PENDING` rows in order, publishes each to the
//! stream of every consumer of its type (dedup key = event id, so a pass repeated after a
//! crash adds nothing; SQL streams in one transaction), and marks them `SENT`; a publish
//! error is retried with the judge outbox's backoff; a row that is not an event is `DEAD`.
//! Woken by the outbox's signal and PostgreSQL `NOTIFY`; the interval is only the fallback.
//!
//! Consumer: receives, applies through the consumer (an inbox: `platform::events::handle_once`),
//! acknowledges only after the commit; a poison event becomes a dead letter at once; a
//! transient failure is retried in place with backoff (the entry stays pending); entries a
//! crashed consumer left pending are reclaimed after the visibility timeout.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use contracts::events::{consumers, consumers_of, EventEnvelope};
use platform::db::Row;
use platform::events::{
    backoff, envelope_from_row, Consume, Handled, HandlerError, Outbox, ENVELOPE_COLUMNS,
};
use platform::{Backend, Db, DbError, Lease, Leases, Metrics, Shutdown};

use crate::{JudgeQueue, QueueConfig, QueueError, RedisQueue, SqlQueue};

/// Queue settings of event streams: a consumer that crashed mid-event has its entries
/// reclaimed after 30 s; an entry delivered 5 times without an acknowledgement is dead.
pub fn stream_config() -> QueueConfig {
    QueueConfig {
        visibility_timeout: Duration::from_secs(30),
        ..QueueConfig::default()
    }
}

/// The stream of every consumer.
#[derive(Clone)]
pub struct EventStreams {
    streams: HashMap<&'static str, Arc<dyn JudgeQueue>>,
    /// The same streams where they are SQL tables of one database: a relay pass publishes to
    /// all of them in one transaction.
    sql: Option<HashMap<&'static str, SqlQueue>>,
    /// Redis's connection and key prefix: streams there can be lost (a flush, a restart
    /// without persistence), which [`EventStreams::lost_for`] detects.
    volatile: Option<(redis::aio::ConnectionManager, String)>,
}

impl EventStreams {
    /// Redis streams `{prefix}:events:<consumer>`.
    pub async fn redis(url: &str, prefix: &str, config: QueueConfig) -> Result<Self, QueueError> {
        let mut streams: HashMap<&'static str, Arc<dyn JudgeQueue>> = HashMap::new();
        for consumer in consumers::ALL {
            let name = format!("events:{consumer}");
            streams.insert(
                consumer,
                Arc::new(RedisQueue::connect_stream(url, prefix, &name, config).await?),
            );
        }
        let marker = redis::Client::open(url)?.get_connection_manager().await?;
        Ok(Self {
            streams,
            sql: None,
            volatile: Some((marker, prefix.to_string())),
        })
    }

    /// SQL streams `events:<consumer>` in `db`.
    pub async fn sql(db: Db, config: QueueConfig) -> Result<Self, QueueError> {
        let mut streams: HashMap<&'static str, Arc<dyn JudgeQueue>> = HashMap::new();
        let mut sql = HashMap::new();
        for consumer in consumers::ALL {
            let name = format!("events:{consumer}");
            let stream = SqlQueue::named(db.clone(), &name, config).await?;
            // Clones share what wakes their receivers.
            streams.insert(consumer, Arc::new(stream.clone()));
            sql.insert(consumer, stream);
        }
        Ok(Self {
            streams,
            sql: Some(sql),
            volatile: None,
        })
    }

    /// Publishes each consumer's `(dedup key, payload)` items to its stream, and says per
    /// consumer how many it took or why it failed. SQL streams take everything in one
    /// transaction (one commit per pass, not one per consumer; all fail together); other
    /// streams each take their batch, at once.
    pub async fn publish(
        &self,
        batches: &[(&'static str, Vec<(String, String)>)],
    ) -> Vec<Result<usize, String>> {
        let missing = |consumer: &str| Err(format!("no stream for consumer {consumer}"));
        if let Some(sql) = &self.sql {
            let mut together = Vec::new();
            let mut results: Vec<Result<usize, String>> = Vec::with_capacity(batches.len());
            for (consumer, items) in batches {
                match sql.get(consumer) {
                    Some(stream) => {
                        together.push((stream, items.as_slice()));
                        results.push(Ok(items.len()));
                    }
                    None => results.push(missing(consumer)),
                }
            }
            if let Err(e) = SqlQueue::enqueue_together(&together).await {
                let error = e.to_string();
                for result in results.iter_mut().filter(|r| r.is_ok()) {
                    *result = Err(error.clone());
                }
            }
            return results;
        }
        let publishes = batches.iter().map(|(consumer, items)| async move {
            match self.streams.get(consumer) {
                None => missing(consumer),
                Some(stream) => stream
                    .enqueue_batch(items)
                    .await
                    .map(|added| added.len())
                    .map_err(|e| e.to_string()),
            }
        });
        futures::future::join_all(publishes).await
    }

    /// Whether the streams may have lost what `owner`'s relay published before (Redis was
    /// flushed or restarted empty, or this is the first publication there): a marker key
    /// per owner, set here, is missing. SQL streams lose nothing.
    pub async fn lost_for(&self, owner: &str) -> Result<bool, QueueError> {
        let Some((conn, prefix)) = &self.volatile else {
            return Ok(false);
        };
        let mut conn = conn.clone();
        let set: Option<String> = redis::cmd("SET")
            .arg(format!("{{{prefix}}}:events:alive:{owner}"))
            .arg(1)
            .arg("NX")
            .query_async(&mut conn)
            .await?;
        Ok(set.is_some())
    }

    /// The stream of `consumer`.
    pub fn stream(&self, consumer: &str) -> Option<Arc<dyn JudgeQueue>> {
        self.streams.get(consumer).cloned()
    }

    /// Every (consumer, stream), by name.
    pub fn all(&self) -> Vec<(&'static str, Arc<dyn JudgeQueue>)> {
        let mut all: Vec<_> = self
            .streams
            .iter()
            .map(|(name, stream)| (*name, stream.clone()))
            .collect();
        all.sort_by_key(|(name, _)| *name);
        all
    }
}

#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// Rows per pass.
    pub batch: i64,
    /// Time between passes when nothing wakes the relay.
    pub interval: Duration,
    /// The singleton lease's time to live (renewed by a pass once a third of it has gone).
    pub lease_ttl: Duration,
    /// This process's name on the lease.
    pub holder: String,
    /// When the streams lost their contents, events sent this recently are published again
    /// (consumers' inboxes drop what they already applied).
    pub redrive_window: Duration,
}

impl RelayConfig {
    pub fn new(holder: impl Into<String>) -> Self {
        Self {
            batch: 500,
            interval: Duration::from_secs(1),
            lease_ttl: Duration::from_secs(15),
            holder: holder.into(),
            redrive_window: Duration::from_secs(24 * 3600),
        }
    }
}

/// What one relay pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayReport {
    pub sent: usize,
    pub retried: usize,
    pub dead: usize,
    /// Sent events made pending again because the streams lost them.
    pub redriven: usize,
    /// Another process holds the relay's lease: nothing was done.
    pub idle: bool,
}

/// The relay of one owner's outbox.
pub struct Relay {
    outbox: Outbox,
    streams: EventStreams,
    leases: Leases,
    /// The lease as last taken or renewed, and when that was asked.
    held: std::sync::Mutex<Option<(Lease, tokio::time::Instant)>>,
    config: RelayConfig,
    metrics: Metrics,
}

const RELAY_LEASE: &str = "events-relay";

/// An outbox row routed to a consumer: (row id, dedup key, payload).
type Routed = (i64, String, String);

fn id_list(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Relay {
    pub fn new(
        outbox: Outbox,
        streams: EventStreams,
        config: RelayConfig,
        metrics: Metrics,
    ) -> Self {
        let leases = Leases::new(outbox.db().clone());
        Self {
            outbox,
            streams,
            leases,
            held: std::sync::Mutex::new(None),
            config,
            metrics,
        }
    }

    fn db(&self) -> &Db {
        self.outbox.db()
    }

    /// The relay's lease: the one held while it was taken or renewed less than a third of its
    /// time to live ago, else taken or renewed now. Every write of a pass is guarded by the
    /// lease, so one lost meanwhile only makes those writes change nothing; renewing at every
    /// pass was a committed write per pass.
    async fn lease(&self) -> Result<Option<Lease>, DbError> {
        if let Some((lease, asked)) = &*self.held.lock().expect("lease lock") {
            if asked.elapsed() < self.config.lease_ttl / 3 {
                return Ok(Some(lease.clone()));
            }
        }
        let asked = tokio::time::Instant::now();
        let lease = self
            .leases
            .acquire(RELAY_LEASE, &self.config.holder, self.config.lease_ttl)
            .await?;
        *self.held.lock().expect("lease lock") = lease.clone().map(|lease| (lease, asked));
        Ok(lease)
    }

    /// One pass over the due rows, if this process holds (or takes) the relay's lease.
    pub async fn pass(&self) -> Result<RelayReport, DbError> {
        let Some(lease) = self.lease().await? else {
            return Ok(RelayReport {
                idle: true,
                ..RelayReport::default()
            });
        };
        let db = self.db();
        let mut report = RelayReport::default();
        let lost = self
            .streams
            .lost_for(self.outbox.owner())
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(owner = self.outbox.owner(), error = %e, "stream check failed");
                false
            });
        if lost {
            let (name, owner, token) = lease.guard_params();
            report.redriven = db
                .query(&format!(
                    "UPDATE events_outbox SET state = 'PENDING', next_retry_at = {{now}} \
                     WHERE state = 'SENT' AND sent_at > {{now}} - $1 AND {}",
                    Lease::guard(2)
                ))
                .bind(self.config.redrive_window.as_millis() as i64)
                .bind(name)
                .bind(owner)
                .bind(token)
                .execute(db.pool())
                .await?
                .rows_affected() as usize;
            if report.redriven > 0 {
                tracing::info!(
                    owner = self.outbox.owner(),
                    events = report.redriven,
                    "event streams were lost; publishing recent events again"
                );
            }
        }
        let rows = db
            .query(&format!(
                "SELECT id, attempts, {ENVELOPE_COLUMNS} FROM events_outbox \
                 WHERE state = 'PENDING' AND next_retry_at <= {{now}} ORDER BY id LIMIT $1"
            ))
            .bind(self.config.batch)
            .fetch_all(db.pool())
            .await?;
        let mut batches: HashMap<&'static str, Vec<Routed>> = HashMap::new();
        let mut attempts: HashMap<i64, i64> = HashMap::new();
        let mut dead = Vec::new();
        for row in &rows {
            let id: i64 = row.try_get(0)?;
            attempts.insert(id, row.try_get(1)?);
            match envelope_from_row(row, 2) {
                Ok(envelope) => {
                    let text = serde_json::to_string(&envelope).unwrap_or_default();
                    for consumer in consumers_of(&envelope.event_type) {
                        batches.entry(consumer).or_default().push((
                            id,
                            envelope.event_id.clone(),
                            text.clone(),
                        ));
                    }
                }
                Err(reason) => dead.push((id, reason)),
            }
        }
        // A row is sent when every stream it goes to took it.
        let batches: Vec<(&'static str, Vec<Routed>)> = batches.into_iter().collect();
        let items: Vec<(&'static str, Vec<(String, String)>)> = batches
            .iter()
            .map(|(consumer, items)| {
                let pairs = items
                    .iter()
                    .map(|(_, key, payload)| (key.clone(), payload.clone()))
                    .collect();
                (*consumer, pairs)
            })
            .collect();
        let mut failed: HashMap<i64, String> = HashMap::new();
        for ((_, items), result) in batches.iter().zip(self.streams.publish(&items).await) {
            if let Err(error) = result {
                for (id, _, _) in items {
                    failed.insert(*id, error.clone());
                }
            }
        }
        let (name, owner, token) = lease.guard_params();
        let mut tx = db.begin().await?;
        for (id, reason) in &dead {
            db.query(&format!(
                "UPDATE events_outbox SET state = 'DEAD', last_error = $2 WHERE id = $1 AND {}",
                Lease::guard(3)
            ))
            .bind(*id)
            .bind(reason.clone())
            .bind(name.clone())
            .bind(owner.clone())
            .bind(token)
            .execute(&mut *tx)
            .await?;
            report.dead += 1;
        }
        for (id, error) in &failed {
            db.query(&format!(
                "UPDATE events_outbox SET attempts = attempts + 1, last_error = $2, next_retry_at = {{now}} + $3 \
                 WHERE id = $1 AND {}",
                Lease::guard(4)
            ))
            .bind(*id)
            .bind(error.clone())
            .bind(backoff(attempts.get(id).copied().unwrap_or(0)).as_millis() as i64)
            .bind(name.clone())
            .bind(owner.clone())
            .bind(token)
            .execute(&mut *tx)
            .await?;
            report.retried += 1;
        }
        let dead_ids: std::collections::HashSet<i64> = dead.iter().map(|(id, _)| *id).collect();
        let sent: Vec<i64> = attempts
            .keys()
            .copied()
            .filter(|id| !failed.contains_key(id) && !dead_ids.contains(id))
            .collect();
        for chunk in sent.chunks(500) {
            let sql = format!(
                "UPDATE events_outbox SET state = 'SENT', sent_at = {{now}}, last_error = NULL \
                 WHERE id IN ({}) AND {}",
                id_list(4, chunk.len()),
                Lease::guard(1)
            );
            let mut query = db
                .query(&sql)
                .bind(name.clone())
                .bind(owner.clone())
                .bind(token);
            for id in chunk {
                query = query.bind(*id);
            }
            let marked = query.execute(&mut *tx).await?.rows_affected();
            report.sent += marked as usize;
        }
        tx.commit().await?;
        let labels = [("owner", self.outbox.owner())];
        self.metrics.inc(
            "events_relayed_total",
            "Integration events published to their consumers' streams.",
            &labels,
            report.sent as u64,
        );
        self.metrics.inc(
            "events_relay_retries_total",
            "Failed event publications, retried later.",
            &labels,
            report.retried as u64,
        );
        self.metrics.inc(
            "events_dead_total",
            "Outbox rows that are not events, marked DEAD.",
            &labels,
            report.dead as u64,
        );
        Ok(report)
    }

    /// Publishes outbox gauges.
    pub async fn observe(&self) -> Result<(), DbError> {
        let owner = self.outbox.owner();
        for state in ["PENDING", "SENT", "DEAD"] {
            self.metrics.set(
                "events_outbox_rows",
                "Event-outbox rows by owner and state.",
                &[("owner", owner), ("state", state)],
                0.0,
            );
        }
        for (state, count) in self.outbox.counts().await? {
            self.metrics.set(
                "events_outbox_rows",
                "Event-outbox rows by owner and state.",
                &[("owner", owner), ("state", &state)],
                count as f64,
            );
        }
        Ok(())
    }

    /// Runs passes until shutdown: after every wake-up, and at least every interval.
    pub async fn run(self, shutdown: Shutdown) {
        let signal = self.outbox.signal();
        let mut listener = match self.db().backend() {
            Backend::Postgres => {
                platform::events::listen(self.db().url(), &self.outbox.channel()).await
            }
            Backend::Sqlite => None,
        };
        let mut last_observed = tokio::time::Instant::now() - Duration::from_secs(60);
        while !shutdown.is_triggered() {
            let woken = signal.notified();
            match self.pass().await {
                Ok(report) if report.sent + report.dead == self.config.batch as usize => continue,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(owner = self.outbox.owner(), error = %e, "event relay pass failed")
                }
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

#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    /// This process's consumer name in the stream's group.
    pub instance: String,
    /// Entries per receive.
    pub batch: usize,
    /// How long a receive waits for an entry.
    pub block: Duration,
    /// Time between reclaim passes over entries a crashed consumer left pending.
    pub reclaim_interval: Duration,
}

impl ConsumerConfig {
    pub fn new(instance: impl Into<String>) -> Self {
        Self {
            instance: instance.into(),
            batch: 128,
            block: Duration::from_secs(1),
            reclaim_interval: Duration::from_secs(5),
        }
    }
}

/// Feeds `handler` from `stream` until shutdown; the event in hand is finished (or left
/// pending, to be reclaimed) before it returns.
pub async fn run_consumer(
    stream: Arc<dyn JudgeQueue>,
    handler: Arc<dyn Consume>,
    config: ConsumerConfig,
    metrics: Metrics,
    shutdown: Shutdown,
) {
    let mut last_reclaim = tokio::time::Instant::now() - config.reclaim_interval;
    while !shutdown.is_triggered() {
        let mut deliveries = Vec::new();
        if last_reclaim.elapsed() >= config.reclaim_interval {
            last_reclaim = tokio::time::Instant::now();
            match stream.reclaim(&config.instance, config.batch).await {
                Ok(reclaimed) => {
                    metrics.inc(
                        "events_consumer_dead_lettered_total",
                        "Events moved to a consumer's dead letters.",
                        &[("consumer", handler.name())],
                        reclaimed.dead_lettered.len() as u64,
                    );
                    deliveries.extend(reclaimed.deliveries);
                }
                Err(e) => tracing::warn!(consumer = handler.name(), error = %e, "reclaim failed"),
            }
        }
        if deliveries.is_empty() {
            let received = tokio::select! {
                received = stream.receive(&config.instance, config.batch, config.block) => received,
                _ = shutdown.triggered() => return,
            };
            match received {
                Ok(got) => deliveries = got,
                Err(e) => {
                    tracing::warn!(consumer = handler.name(), error = %e, "receive failed");
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        _ = shutdown.triggered() => return,
                    }
                    continue;
                }
            }
        }
        for delivery in deliveries {
            if shutdown.is_triggered() {
                // Left pending: reclaimed by the next consumer after the visibility timeout.
                return;
            }
            consume_one(&*stream, &*handler, &config, &metrics, &shutdown, delivery).await;
        }
    }
}

async fn consume_one(
    stream: &dyn JudgeQueue,
    handler: &dyn Consume,
    config: &ConsumerConfig,
    metrics: &Metrics,
    shutdown: &Shutdown,
    delivery: crate::Delivery,
) {
    let count = |outcome: &str| {
        metrics.inc(
            "events_consumed_total",
            "Events a consumer finished, by outcome.",
            &[("consumer", handler.name()), ("outcome", outcome)],
            1,
        )
    };
    let envelope = match serde_json::from_str::<EventEnvelope>(&delivery.payload) {
        Ok(envelope) => envelope,
        Err(e) => {
            let reason = format!("not an event envelope: {e}");
            if let Err(e) = stream.dead_letter(&delivery.id, &reason).await {
                tracing::warn!(consumer = handler.name(), error = %e, "dead letter failed");
            }
            count("poison");
            return;
        }
    };
    let mut failures = 0;
    loop {
        match handler.consume(&envelope).await {
            Ok(handled) => {
                if let Err(e) = stream.ack(&delivery.id).await {
                    // Redelivered later, and then recognised by the inbox.
                    tracing::warn!(consumer = handler.name(), error = %e, "ack failed");
                }
                count(match handled {
                    Handled::Applied => "applied",
                    Handled::Duplicate => "duplicate",
                });
                return;
            }
            Err(HandlerError::Poison(reason)) => {
                tracing::warn!(consumer = handler.name(), event = %envelope.event_id, %reason, "poison event");
                if let Err(e) = stream.dead_letter(&delivery.id, &reason).await {
                    tracing::warn!(consumer = handler.name(), error = %e, "dead letter failed");
                }
                count("poison");
                return;
            }
            Err(HandlerError::Transient(error)) => {
                tracing::warn!(consumer = handler.name(), event = %envelope.event_id, %error, "event not applied; retrying");
                count("retried");
                let _ = stream.touch(&config.instance, &delivery.id).await;
                let wait = backoff(failures).min(Duration::from_secs(10));
                failures += 1;
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = shutdown.triggered() => return,
                }
            }
        }
    }
}
