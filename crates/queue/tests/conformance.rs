//! One conformance suite for every queue adapter: Redis Streams, the SQL stream on SQLite and
//! the SQL stream on PostgreSQL. Each behaviour is a function; the macro at the bottom runs
//! it against each adapter.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use platform::testing::TestPostgres;
use platform::Db;
use queue::{Enqueued, JudgeQueue, QueueConfig, RedisQueue, SqlQueue};

const VT: Duration = Duration::from_millis(400);

fn config() -> QueueConfig {
    QueueConfig {
        visibility_timeout: VT,
        max_deliveries: 3,
        dedup_window: Duration::from_secs(60),
        ..QueueConfig::default()
    }
}

/// Keeps whatever backs a queue alive for the test, and cleans it up afterwards.
enum Backing {
    Redis(String, Vec<String>),
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres(#[allow(dead_code)] TestPostgres),
}

impl Drop for Backing {
    fn drop(&mut self) {
        if let Backing::Redis(url, keys) = self {
            if let Ok(client) = redis::Client::open(url.as_str()) {
                if let Ok(mut conn) = client.get_connection() {
                    let _: Result<i64, _> = redis::cmd("DEL").arg(keys.as_slice()).query(&mut conn);
                    let pattern = format!("{}*", keys[2]);
                    let seen: Vec<String> = redis::cmd("KEYS")
                        .arg(pattern)
                        .query(&mut conn)
                        .unwrap_or_default();
                    if !seen.is_empty() {
                        let _: Result<i64, _> = redis::cmd("DEL").arg(seen).query(&mut conn);
                    }
                }
            }
        }
    }
}

fn redis_url() -> String {
    std::env::var("ULTICODE_TEST_REDIS").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

async fn redis(config: QueueConfig) -> (Arc<dyn JudgeQueue>, Backing) {
    let prefix = format!("ut-{}", uuid::Uuid::new_v4().simple());
    let queue = RedisQueue::connect(&redis_url(), &prefix, config)
        .await
        .unwrap();
    let (stream, dlq, seen) = queue.keys();
    let keys = vec![stream.to_string(), dlq.to_string(), seen.to_string()];
    (Arc::new(queue), Backing::Redis(redis_url(), keys))
}

async fn sqlite(config: QueueConfig) -> (Arc<dyn JudgeQueue>, Backing) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite_owner(dir.path(), "queue").await.unwrap();
    (
        Arc::new(SqlQueue::new(db, config).await.unwrap()),
        Backing::Sqlite(dir),
    )
}

async fn postgres(config: QueueConfig) -> (Arc<dyn JudgeQueue>, Backing) {
    let pg = TestPostgres::new().await.unwrap();
    let db = pg.owner("queue").await.unwrap();
    (
        Arc::new(SqlQueue::new(db, config).await.unwrap()),
        Backing::Postgres(pg),
    )
}

async fn enqueue_deduplicates_by_key(q: Arc<dyn JudgeQueue>) {
    assert!(matches!(
        q.enqueue("7:1", "a").await.unwrap(),
        Enqueued::Added(_)
    ));
    assert_eq!(
        q.enqueue("7:1", "a again").await.unwrap(),
        Enqueued::Duplicate
    );
    assert!(matches!(
        q.enqueue("7:2", "b").await.unwrap(),
        Enqueued::Added(_)
    ));
    let stats = q.stats().await.unwrap();
    assert_eq!((stats.length, stats.pending), (2, 0));
}

async fn each_entry_goes_to_one_consumer(q: Arc<dyn JudgeQueue>) {
    for i in 0..20 {
        q.enqueue(&format!("{i}:1"), &format!("payload {i}"))
            .await
            .unwrap();
    }
    let (a, b) = tokio::join!(
        q.receive("a", 20, Duration::from_millis(100)),
        q.receive("b", 20, Duration::from_millis(100))
    );
    let mut seen = HashSet::new();
    let (a, b) = (a.unwrap(), b.unwrap());
    for d in a.iter().chain(&b) {
        assert!(
            seen.insert(d.payload.clone()),
            "{} delivered twice",
            d.payload
        );
        assert_eq!(d.deliveries, 1);
    }
    assert_eq!(seen.len(), 20);
    // Nothing new is left to deliver.
    assert!(q
        .receive("c", 5, Duration::from_millis(50))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(q.stats().await.unwrap().pending, 20);
}

async fn ack_removes_and_nack_keeps_pending(q: Arc<dyn JudgeQueue>) {
    q.enqueue("1:1", "x").await.unwrap();
    let got = q.receive("a", 1, Duration::from_millis(100)).await.unwrap();
    assert_eq!(got.len(), 1);
    q.nack(&got[0].id).await.unwrap();
    let stats = q.stats().await.unwrap();
    assert_eq!((stats.length, stats.pending), (1, 1));
    q.ack(&got[0].id).await.unwrap();
    let stats = q.stats().await.unwrap();
    assert_eq!((stats.length, stats.pending), (0, 0));
}

async fn idle_entries_are_reclaimed_after_the_visibility_timeout(q: Arc<dyn JudgeQueue>) {
    q.enqueue("1:1", "work").await.unwrap();
    let first = q.receive("a", 1, Duration::from_millis(100)).await.unwrap();
    assert_eq!(first.len(), 1);
    assert!(
        q.reclaim("b", 10).await.unwrap().deliveries.is_empty(),
        "not idle yet"
    );
    tokio::time::sleep(VT + Duration::from_millis(100)).await;
    let reclaimed = q.reclaim("b", 10).await.unwrap();
    assert_eq!(reclaimed.deliveries.len(), 1);
    assert_eq!(reclaimed.deliveries[0].payload, "work");
    assert_eq!(reclaimed.deliveries[0].deliveries, 2);
    assert!(
        q.reclaim("c", 10).await.unwrap().deliveries.is_empty(),
        "b holds it now"
    );
    q.ack(&reclaimed.deliveries[0].id).await.unwrap();
    assert_eq!(q.stats().await.unwrap().length, 0);
}

async fn touch_keeps_a_long_judging_from_being_reclaimed(q: Arc<dyn JudgeQueue>) {
    q.enqueue("1:1", "long").await.unwrap();
    let got = q.receive("a", 1, Duration::from_millis(100)).await.unwrap();
    for _ in 0..3 {
        tokio::time::sleep(VT * 2 / 3).await;
        q.touch("a", &got[0].id).await.unwrap();
        assert!(q.reclaim("b", 10).await.unwrap().deliveries.is_empty());
    }
    tokio::time::sleep(VT + Duration::from_millis(100)).await;
    assert_eq!(q.reclaim("b", 10).await.unwrap().deliveries.len(), 1);
}

async fn entries_over_the_delivery_budget_become_dead_letters(q: Arc<dyn JudgeQueue>) {
    q.enqueue("1:1", "cursed").await.unwrap();
    q.receive("a", 1, Duration::from_millis(100)).await.unwrap();
    for expected in [2, 3] {
        tokio::time::sleep(VT + Duration::from_millis(100)).await;
        let reclaimed = q.reclaim("a", 10).await.unwrap();
        assert_eq!(reclaimed.deliveries.len(), 1);
        assert_eq!(reclaimed.deliveries[0].deliveries, expected);
    }
    tokio::time::sleep(VT + Duration::from_millis(100)).await;
    let reclaimed = q.reclaim("a", 10).await.unwrap();
    assert!(reclaimed.deliveries.is_empty());
    assert_eq!(reclaimed.dead_lettered.len(), 1);
    let stats = q.stats().await.unwrap();
    assert_eq!((stats.length, stats.dead_letters), (0, 1));
    let letters = q.dead_letters(10).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].payload, "cursed");
    assert_eq!(letters[0].deliveries, 3);
    assert!(
        letters[0].reason.contains("3 times"),
        "{}",
        letters[0].reason
    );
    // An operator can replay it.
    assert!(q.replay(&letters[0].id).await.unwrap());
    assert!(!q.replay(&letters[0].id).await.unwrap(), "replayed once");
    let again = q.receive("a", 1, Duration::from_millis(100)).await.unwrap();
    assert_eq!(again[0].payload, "cursed");
    assert_eq!(q.stats().await.unwrap().dead_letters, 0);
}

async fn poison_is_dead_lettered_on_request(q: Arc<dyn JudgeQueue>) {
    q.enqueue("1:1", "{not json").await.unwrap();
    let got = q.receive("a", 1, Duration::from_millis(100)).await.unwrap();
    q.dead_letter(&got[0].id, "undecodable payload")
        .await
        .unwrap();
    let stats = q.stats().await.unwrap();
    assert_eq!((stats.length, stats.pending, stats.dead_letters), (0, 0, 1));
    assert_eq!(
        q.dead_letters(10).await.unwrap()[0].reason,
        "undecodable payload"
    );
}

async fn receive_waits_for_an_entry(q: Arc<dyn JudgeQueue>) {
    let reader = {
        let q = q.clone();
        tokio::spawn(async move {
            let started = Instant::now();
            let got = q.receive("a", 1, Duration::from_secs(3)).await.unwrap();
            (got, started.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(150)).await;
    q.enqueue("1:1", "late").await.unwrap();
    let (got, waited) = reader.await.unwrap();
    assert_eq!(got.len(), 1, "waited {waited:?}");
    assert!(waited < Duration::from_secs(2), "{waited:?}");
    let empty = Instant::now();
    assert!(q
        .receive("a", 1, Duration::from_millis(200))
        .await
        .unwrap()
        .is_empty());
    assert!(empty.elapsed() >= Duration::from_millis(150));
}

async fn stats_report_delay_and_pending_age(q: Arc<dyn JudgeQueue>) {
    q.enqueue("1:1", "first").await.unwrap();
    q.enqueue("2:1", "second").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stats = q.stats().await.unwrap();
    assert!(stats.queue_delay_ms >= 150, "{stats:?}");
    assert_eq!(stats.oldest_pending_age_ms, 0, "{stats:?}");
    let got = q.receive("a", 1, Duration::from_millis(100)).await.unwrap();
    assert!(got[0].queue_delay_ms >= 150, "{:?}", got[0]);
    let stats = q.stats().await.unwrap();
    assert_eq!(stats.pending, 1);
    assert!(stats.oldest_pending_age_ms >= 150, "{stats:?}");
}

async fn pending_entries_name_their_consumer_idle_time_and_deliveries(q: Arc<dyn JudgeQueue>) {
    assert!(q.pending_entries(10).await.unwrap().is_empty());
    q.enqueue("1:1", "first").await.unwrap();
    q.enqueue("2:1", "second").await.unwrap();
    q.enqueue("3:1", "third").await.unwrap();
    let a = q.receive("a", 1, Duration::from_millis(100)).await.unwrap();
    let b = q.receive("b", 1, Duration::from_millis(100)).await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let pending = q.pending_entries(10).await.unwrap();
    assert_eq!(
        pending.len(),
        2,
        "the undelivered one is not pending: {pending:?}"
    );
    assert_eq!(
        (pending[0].id.as_str(), pending[0].consumer.as_str()),
        (a[0].id.as_str(), "a")
    );
    assert_eq!(
        (pending[1].id.as_str(), pending[1].consumer.as_str()),
        (b[0].id.as_str(), "b")
    );
    assert!(
        pending
            .iter()
            .all(|p| p.idle_ms >= 100 && p.deliveries == 1),
        "{pending:?}"
    );
    assert_eq!(
        q.pending_entries(1).await.unwrap().len(),
        1,
        "the limit holds"
    );
    q.ack(&a[0].id).await.unwrap();
    let pending = q.pending_entries(10).await.unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].consumer, "b");
}

async fn batches_enqueue_in_order_with_dedup(q: Arc<dyn JudgeQueue>) {
    assert!(matches!(
        q.enqueue("b", "early b").await.unwrap(),
        Enqueued::Added(_)
    ));
    let items: Vec<(String, String)> = ["a", "b", "c", "a"]
        .iter()
        .map(|k| (k.to_string(), format!("payload {k}")))
        .collect();
    let got = q.enqueue_batch(&items).await.unwrap();
    let added: Vec<bool> = got
        .iter()
        .map(|e| matches!(e, Enqueued::Added(_)))
        .collect();
    assert_eq!(added, [true, false, true, false]);
    let payloads: Vec<String> = q
        .receive("w", 10, Duration::from_millis(100))
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.payload)
        .collect();
    assert_eq!(payloads, ["early b", "payload a", "payload c"]);
    assert!(q.enqueue_batch(&[]).await.unwrap().is_empty());
}

macro_rules! conformance {
    ($($behaviour:ident),* $(,)?) => {
        mod redis_streams {
            $(#[tokio::test] async fn $behaviour() { let (q, _b) = super::redis(super::config()).await; super::$behaviour(q).await; })*
        }
        mod sql_on_sqlite {
            $(#[tokio::test] async fn $behaviour() { let (q, _b) = super::sqlite(super::config()).await; super::$behaviour(q).await; })*
        }
        mod sql_on_postgres {
            $(#[tokio::test] async fn $behaviour() { let (q, _b) = super::postgres(super::config()).await; super::$behaviour(q).await; })*
        }
    };
}

/// A key blocks its duplicates for the dedup window and no longer: once the window has
/// passed, the same key is taken again (and blocks again).
async fn a_dedup_key_blocks_for_its_window_only(
    backend: impl std::future::Future<Output = (Arc<dyn JudgeQueue>, Backing)>,
) {
    let (q, _backing) = backend.await;
    let added = |e: Enqueued| matches!(e, Enqueued::Added(_));
    assert!(added(q.enqueue("9:1", "first").await.unwrap()));
    assert!(!added(q.enqueue("9:1", "within").await.unwrap()));
    tokio::time::sleep(SHORT_WINDOW + Duration::from_millis(200)).await;
    assert!(added(q.enqueue("9:1", "after").await.unwrap()));
    assert!(!added(q.enqueue("9:1", "within again").await.unwrap()));
    let stats = q.stats().await.unwrap();
    assert_eq!(stats.length, 2);
}

const SHORT_WINDOW: Duration = Duration::from_secs(1);

fn short_window() -> QueueConfig {
    QueueConfig {
        dedup_window: SHORT_WINDOW,
        ..config()
    }
}

#[tokio::test]
async fn a_dedup_key_blocks_for_its_window_only_on_redis() {
    a_dedup_key_blocks_for_its_window_only(redis(short_window())).await;
}

#[tokio::test]
async fn a_dedup_key_blocks_for_its_window_only_on_sqlite() {
    a_dedup_key_blocks_for_its_window_only(sqlite(short_window())).await;
}

#[tokio::test]
async fn a_dedup_key_blocks_for_its_window_only_on_postgres() {
    a_dedup_key_blocks_for_its_window_only(postgres(short_window())).await;
}

conformance!(
    enqueue_deduplicates_by_key,
    each_entry_goes_to_one_consumer,
    ack_removes_and_nack_keeps_pending,
    idle_entries_are_reclaimed_after_the_visibility_timeout,
    touch_keeps_a_long_judging_from_being_reclaimed,
    entries_over_the_delivery_budget_become_dead_letters,
    poison_is_dead_lettered_on_request,
    receive_waits_for_an_entry,
    stats_report_delay_and_pending_age,
    pending_entries_name_their_consumer_idle_time_and_deliveries,
    batches_enqueue_in_order_with_dedup,
);

/// The embedded shape's restart: what the dead process had received but not acknowledged is
/// taken again at once by the next receive, its delivery count kept; acknowledged entries
/// stay gone.
#[tokio::test]
async fn a_restart_hands_unacknowledged_entries_back_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite_owner(dir.path(), "queue").await.unwrap();
    let before = SqlQueue::new(db.clone(), config()).await.unwrap();
    before.enqueue("1:1", "in flight").await.unwrap();
    before.enqueue("2:1", "done").await.unwrap();
    let taken = before
        .receive("dead", 2, Duration::from_millis(100))
        .await
        .unwrap();
    assert_eq!(taken.len(), 2);
    before.ack(&taken[1].id).await.unwrap();

    assert_eq!(SqlQueue::redeliver_all_pending(&db).await.unwrap(), 1);
    let after = SqlQueue::new(db, config()).await.unwrap();
    let again = after
        .receive("alive", 10, Duration::from_millis(100))
        .await
        .unwrap();
    let seen: Vec<_> = again
        .iter()
        .map(|d| (d.payload.as_str(), d.deliveries))
        .collect();
    assert_eq!(
        seen,
        [("in flight", 2)],
        "taken at once, well before the visibility timeout"
    );
}

/// SQL streams: a handle that found the stream drained looks again at once when something is
/// added through it, and within the poll interval when another handle (another process) adds
/// something.
#[tokio::test]
async fn a_drained_stream_sees_what_any_handle_adds() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite_owner(dir.path(), "queue").await.unwrap();
    let config = QueueConfig {
        poll_interval: Duration::from_millis(300),
        ..config()
    };
    let reader = SqlQueue::new(db.clone(), config).await.unwrap();
    let other = SqlQueue::new(db, config).await.unwrap();
    let now = Duration::ZERO;
    assert!(reader.receive("a", 10, now).await.unwrap().is_empty());
    reader.enqueue("1:1", "own").await.unwrap();
    let own = reader.receive("a", 10, now).await.unwrap();
    assert_eq!(own.len(), 1, "what the handle added, without waiting");
    assert!(reader.receive("a", 10, now).await.unwrap().is_empty());
    other.enqueue("2:1", "another's").await.unwrap();
    let theirs = reader
        .receive("a", 10, Duration::from_secs(10))
        .await
        .unwrap();
    let payloads: Vec<_> = theirs.iter().map(|d| d.payload.as_str()).collect();
    assert_eq!(payloads, ["another's"]);
}
