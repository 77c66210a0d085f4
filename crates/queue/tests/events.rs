//! The event backbone on every pairing of an owner's database and a stream adapter: SQLite
//! with the SQL stream (the embedded shape), PostgreSQL with Redis Streams (the distributed
//! one) and PostgreSQL with the SQL stream. An owner's outbox, its relay, and a consumer
//! applying events through its inbox.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use contracts::events::{consumers, types, EventEnvelope};
use platform::db::{Any, Row, Transaction};
use platform::events::{
    EventHandler, HandlerError, NewEvent, Outbox, INBOX_MIGRATION, OUTBOX_MIGRATION,
};
use platform::testing::TestPostgres;
use platform::{Db, Metrics, Shutdown};
use queue::events::{run_consumer, ConsumerConfig, EventStreams, Relay, RelayConfig};
use queue::QueueConfig;

fn config() -> QueueConfig {
    QueueConfig {
        visibility_timeout: Duration::from_millis(500),
        max_deliveries: 3,
        dedup_window: Duration::from_secs(60),
        ..QueueConfig::default()
    }
}

/// An owner's database (outbox), a consumer's database (inbox and effects) and the streams.
struct Rig {
    outbox: Outbox,
    consumer_db: Db,
    streams: EventStreams,
    _backing: Vec<Box<dyn std::any::Any + Send>>,
    redis_prefix: Option<String>,
}

impl Drop for Rig {
    fn drop(&mut self) {
        if let Some(prefix) = &self.redis_prefix {
            if let Ok(client) = redis::Client::open("redis://127.0.0.1:6379") {
                if let Ok(mut conn) = client.get_connection() {
                    let keys: Vec<String> = redis::cmd("KEYS")
                        .arg(format!("{{{prefix}}}*"))
                        .query(&mut conn)
                        .unwrap_or_default();
                    if !keys.is_empty() {
                        let _: Result<i64, _> = redis::cmd("DEL").arg(keys).query(&mut conn);
                    }
                }
            }
        }
    }
}

const MIGRATIONS: &[platform::Migration] = &[
    OUTBOX_MIGRATION,
    INBOX_MIGRATION,
    platform::leases::MIGRATION,
    platform::Migration {
        version: 1,
        name: "effects",
        postgres: "CREATE TABLE effects (event_id TEXT NOT NULL, event_type TEXT NOT NULL)",
        sqlite: "CREATE TABLE effects (event_id TEXT NOT NULL, event_type TEXT NOT NULL)",
    },
];

async fn rig(owner: Db, consumer: Db, streams: EventStreams) -> (Outbox, Db, EventStreams) {
    owner.migrate(MIGRATIONS).await.unwrap();
    consumer.migrate(MIGRATIONS).await.unwrap();
    (Outbox::new(owner, "auth"), consumer, streams)
}

async fn sqlite() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let streams_db = Db::sqlite_owner(dir.path(), "queue").await.unwrap();
    let (outbox, consumer_db, streams) = rig(
        Db::sqlite_owner(dir.path(), "auth").await.unwrap(),
        Db::sqlite_owner(dir.path(), "admin").await.unwrap(),
        EventStreams::sql(streams_db, config()).await.unwrap(),
    )
    .await;
    Rig {
        outbox,
        consumer_db,
        streams,
        _backing: vec![Box::new(dir)],
        redis_prefix: None,
    }
}

async fn postgres_redis() -> Rig {
    let pg = TestPostgres::new().await.unwrap();
    let prefix = format!("ev-{}", uuid::Uuid::new_v4().simple());
    let (outbox, consumer_db, streams) = rig(
        pg.owner("auth").await.unwrap(),
        pg.owner("admin").await.unwrap(),
        EventStreams::redis("redis://127.0.0.1:6379", &prefix, config())
            .await
            .unwrap(),
    )
    .await;
    Rig {
        outbox,
        consumer_db,
        streams,
        _backing: vec![Box::new(pg)],
        redis_prefix: Some(prefix),
    }
}

async fn postgres_sql() -> Rig {
    let pg = TestPostgres::new().await.unwrap();
    let (outbox, consumer_db, streams) = rig(
        pg.owner("auth").await.unwrap(),
        pg.owner("admin").await.unwrap(),
        EventStreams::sql(pg.owner("queue").await.unwrap(), config())
            .await
            .unwrap(),
    )
    .await;
    Rig {
        outbox,
        consumer_db,
        streams,
        _backing: vec![Box::new(pg)],
        redis_prefix: None,
    }
}

/// A consumer (named like the audit log, so it receives what the audit log receives) that
/// writes one effect row per event, refuses events while `refuse` is set, and fails the
/// first `fail_first` applications transiently.
struct Effects {
    db: Db,
    refuse: AtomicBool,
    fail_first: AtomicUsize,
}

#[async_trait]
impl EventHandler for Effects {
    fn name(&self) -> &'static str {
        consumers::AUDIT
    }
    fn db(&self) -> &Db {
        &self.db
    }
    async fn apply(
        &self,
        tx: &mut Transaction<'static, Any>,
        event: &EventEnvelope,
    ) -> Result<(), HandlerError> {
        if self.refuse.load(Ordering::SeqCst) {
            return Err(HandlerError::Poison("refused".into()));
        }
        self.db
            .query("INSERT INTO effects (event_id, event_type) VALUES ($1, $2)")
            .bind(event.event_id.clone())
            .bind(event.event_type.clone())
            .execute(&mut **tx)
            .await?;
        if self.fail_first.load(Ordering::SeqCst) > 0 {
            self.fail_first.fetch_sub(1, Ordering::SeqCst);
            // The effect above is rolled back with the inbox row.
            return Err(HandlerError::Transient("not yet".into()));
        }
        Ok(())
    }
}

fn effects(rig: &Rig) -> Arc<Effects> {
    Arc::new(Effects {
        db: rig.consumer_db.clone(),
        refuse: AtomicBool::new(false),
        fail_first: AtomicUsize::new(0),
    })
}

async fn effect_types(db: &Db) -> Vec<String> {
    db.query("SELECT event_type FROM effects ORDER BY event_type")
        .fetch_all(db.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| r.try_get(0).unwrap())
        .collect()
}

fn relay(rig: &Rig, holder: &str) -> Relay {
    Relay::new(
        rig.outbox.clone(),
        rig.streams.clone(),
        RelayConfig::new(holder),
        Metrics::new(),
    )
}

async fn record(rig: &Rig, event_type: &'static str, commit: bool) -> String {
    let mut tx = rig.outbox.db().begin().await.unwrap();
    let id = rig
        .outbox
        .record(
            &mut tx,
            NewEvent::new(event_type, "account", 7, serde_json::json!({ "n": 1 })),
        )
        .await
        .unwrap();
    if commit {
        tx.commit().await.unwrap();
    } else {
        tx.rollback().await.unwrap();
    }
    id
}

/// Runs the consumer until `done` holds (at most 20 s), then shuts it down.
async fn consume_until(
    rig: &Rig,
    handler: Arc<Effects>,
    done: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let shutdown = Shutdown::new();
    let stream = rig.streams.stream(consumers::AUDIT).unwrap();
    let mut config = ConsumerConfig::new("test");
    config.block = Duration::from_millis(100);
    config.reclaim_interval = Duration::from_millis(200);
    let task = tokio::spawn(run_consumer(
        stream,
        handler,
        config,
        Metrics::new(),
        shutdown.clone(),
    ));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut seen = effect_types(&rig.consumer_db).await;
    while !done(&seen) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        seen = effect_types(&rig.consumer_db).await;
    }
    shutdown.trigger();
    task.await.unwrap();
    seen
}

async fn only_committed_events_reach_the_consumers_of_their_type(rig: Rig) {
    record(&rig, types::LOGIN_FAILED, true).await;
    record(&rig, types::LOGIN_SUCCEEDED, false).await;
    record(&rig, types::SEARCH_DOCUMENT_CHANGED, true).await;
    record(&rig, types::SUBMISSION_JUDGED, true).await;
    let report = relay(&rig, "a").pass().await.unwrap();
    assert_eq!((report.sent, report.retried, report.dead), (3, 0, 0));
    assert_eq!(
        relay(&rig, "a").pass().await.unwrap().sent,
        0,
        "nothing left"
    );
    let length = |consumer: &str| {
        let stream = rig.streams.stream(consumer).unwrap();
        async move { stream.stats().await.unwrap().length }
    };
    assert_eq!(length(consumers::AUDIT).await, 2);
    assert_eq!(length(consumers::NOTIFICATION).await, 1);
    assert_eq!(length(consumers::SEARCH).await, 1);
    let seen = consume_until(&rig, effects(&rig), |s| s.len() >= 2).await;
    assert_eq!(seen, [types::SUBMISSION_JUDGED, types::LOGIN_FAILED]);
    assert_eq!(length(consumers::AUDIT).await, 0, "acknowledged");
}

async fn a_redelivered_event_changes_nothing(rig: Rig) {
    record(&rig, types::LOGIN_FAILED, true).await;
    relay(&rig, "a").pass().await.unwrap();
    // The same envelope delivered again (a second publication under another key).
    let stream = rig.streams.stream(consumers::AUDIT).unwrap();
    let delivery = stream
        .receive("peek", 1, Duration::from_millis(200))
        .await
        .unwrap()
        .remove(0);
    stream.enqueue("again", &delivery.payload).await.unwrap();
    stream.nack(&delivery.id).await.unwrap();
    let probe = stream.clone();
    // Done when both copies are acknowledged (the nacked one after its reclaim).
    let seen = consume_until(&rig, effects(&rig), move |_| {
        futures_lite_block(probe.stats()).is_ok_and(|stats| stats.length == 0)
    })
    .await;
    assert_eq!(seen, [types::LOGIN_FAILED], "applied once");
    let inbox: i64 = rig
        .consumer_db
        .query("SELECT COUNT(*) FROM inbox")
        .fetch_one(rig.consumer_db.pool())
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(inbox, 1);
    assert_eq!(
        stream.stats().await.unwrap().length,
        0,
        "both copies acknowledged"
    );
}

async fn one_relay_at_a_time_and_a_repeated_pass_publishes_nothing_twice(rig: Rig) {
    record(&rig, types::LOGIN_FAILED, true).await;
    assert_eq!(relay(&rig, "a").pass().await.unwrap().sent, 1);
    assert!(
        relay(&rig, "b").pass().await.unwrap().idle,
        "a holds the lease"
    );
    // A relay that published and died before marking its rows: the next pass publishes again.
    let db = rig.outbox.db();
    db.query("UPDATE events_outbox SET state = 'PENDING'")
        .execute(db.pool())
        .await
        .unwrap();
    assert_eq!(relay(&rig, "a").pass().await.unwrap().sent, 1);
    let stream = rig.streams.stream(consumers::AUDIT).unwrap();
    assert_eq!(
        stream.stats().await.unwrap().length,
        1,
        "deduplicated by event id"
    );
}

async fn poison_is_dead_lettered_and_replayable(rig: Rig) {
    record(&rig, types::LOGIN_FAILED, true).await;
    relay(&rig, "a").pass().await.unwrap();
    let handler = effects(&rig);
    handler.refuse.store(true, Ordering::SeqCst);
    let stream = rig.streams.stream(consumers::AUDIT).unwrap();
    let probe = stream.clone();
    let _ = consume_until(&rig, handler.clone(), move |_| {
        futures_lite_block(probe.dead_letters(10)).is_ok_and(|d| !d.is_empty())
    })
    .await;
    let dead = stream.dead_letters(10).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert!(dead[0].reason.contains("refused"), "{}", dead[0].reason);
    handler.refuse.store(false, Ordering::SeqCst);
    assert!(stream.replay(&dead[0].id).await.unwrap());
    let seen = consume_until(&rig, handler, |s| !s.is_empty()).await;
    assert_eq!(seen, [types::LOGIN_FAILED]);
}

async fn transient_failures_are_retried_in_place(rig: Rig) {
    record(&rig, types::LOGIN_FAILED, true).await;
    relay(&rig, "a").pass().await.unwrap();
    let handler = effects(&rig);
    handler.fail_first.store(2, Ordering::SeqCst);
    let seen = consume_until(&rig, handler.clone(), |s| !s.is_empty()).await;
    assert_eq!(
        seen,
        [types::LOGIN_FAILED],
        "one effect: the failed ones rolled back"
    );
    assert_eq!(handler.fail_first.load(Ordering::SeqCst), 0);
}

/// Polls a future to completion from synchronous code inside the test runtime.
fn futures_lite_block<F: std::future::Future>(future: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(future))
}

async fn publish_failures_are_retried_later(rig: Rig) {
    record(&rig, types::LOGIN_FAILED, true).await;
    // Streams whose database is gone: every publication fails.
    let dir = tempfile::tempdir().unwrap();
    let broken_db = Db::sqlite_owner(dir.path(), "broken").await.unwrap();
    let broken = EventStreams::sql(broken_db.clone(), config())
        .await
        .unwrap();
    broken_db.close().await;
    let failing = Relay::new(
        rig.outbox.clone(),
        broken,
        RelayConfig::new("a"),
        Metrics::new(),
    );
    let report = failing.pass().await.unwrap();
    assert_eq!((report.sent, report.retried), (0, 1));
    let db = rig.outbox.db();
    let row = db
        .query("SELECT state, attempts, next_retry_at - {now}, last_error FROM events_outbox")
        .fetch_one(db.pool())
        .await
        .unwrap();
    assert_eq!(row.try_get::<String, _>(0).unwrap(), "PENDING");
    assert_eq!(row.try_get::<i64, _>(1).unwrap(), 1);
    let wait: i64 = row.try_get(2).unwrap();
    assert!((1_000..=2_100).contains(&wait), "backoff {wait} ms");
    assert!(row.try_get::<Option<String>, _>(3).unwrap().is_some());
    // Not due yet: the healthy relay leaves it for now.
    assert_eq!(relay(&rig, "a").pass().await.unwrap().sent, 0);
}

macro_rules! backbone {
    ($($behaviour:ident),* $(,)?) => {
        mod sqlite_with_sql_stream {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $behaviour() { super::$behaviour(super::sqlite().await).await; })*
        }
        mod postgres_with_redis {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $behaviour() { super::$behaviour(super::postgres_redis().await).await; })*
        }
        mod postgres_with_sql_stream {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 2)] async fn $behaviour() { super::$behaviour(super::postgres_sql().await).await; })*
        }
    };
}

backbone!(
    only_committed_events_reach_the_consumers_of_their_type,
    a_redelivered_event_changes_nothing,
    one_relay_at_a_time_and_a_repeated_pass_publishes_nothing_twice,
    poison_is_dead_lettered_and_replayable,
    transient_failures_are_retried_in_place,
    publish_failures_are_retried_later,
);

/// Redis lost its streams (flushed, or restarted without persistence): the relay notices by
/// its marker and publishes recent events again; the consumer's inbox drops what it had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_lost_with_redis_are_published_again() {
    let rig = postgres_redis().await;
    record(&rig, types::LOGIN_FAILED, true).await;
    let first = relay(&rig, "a").pass().await.unwrap();
    assert_eq!((first.sent, first.redriven), (1, 0), "nothing sent before");
    let seen = consume_until(&rig, effects(&rig), |s| !s.is_empty()).await;
    assert_eq!(seen.len(), 1);
    record(&rig, types::LOGIN_SUCCEEDED, true).await;
    relay(&rig, "a").pass().await.unwrap();
    // Everything under the prefix goes, as with FLUSHALL.
    let prefix = rig.redis_prefix.clone().unwrap();
    let client = redis::Client::open("redis://127.0.0.1:6379").unwrap();
    let mut conn = client.get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{{{prefix}}}*"))
        .query(&mut conn)
        .unwrap();
    let _: i64 = redis::cmd("DEL").arg(keys).query(&mut conn).unwrap();
    let again = relay(&rig, "a").pass().await.unwrap();
    assert_eq!((again.redriven, again.sent), (2, 2));
    assert_eq!(relay(&rig, "a").pass().await.unwrap().redriven, 0, "once");
    let seen = consume_until(&rig, effects(&rig), |s| s.len() >= 2).await;
    assert_eq!(
        seen,
        [types::LOGIN_FAILED, types::LOGIN_SUCCEEDED],
        "each applied once"
    );
}
