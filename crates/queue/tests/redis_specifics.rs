//! Redis Streams behaviour beyond the shared port semantics: the hash-tagged keys, the group
//! from `0-0`, a lost group recreated, and the atomicity of the dedup key with the add.

use std::time::Duration;

use queue::{Enqueued, JudgeQueue, QueueConfig, RedisQueue, GROUP};

fn url() -> String {
    std::env::var("ULTICODE_TEST_REDIS").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

struct Keys(Vec<String>);

impl Drop for Keys {
    fn drop(&mut self) {
        let mut conn = redis::Client::open(url())
            .unwrap()
            .get_connection()
            .unwrap();
        let mut all = self.0.clone();
        let seen: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}*", self.0[2]))
            .query(&mut conn)
            .unwrap_or_default();
        all.extend(seen);
        let _: Result<i64, _> = redis::cmd("DEL").arg(all).query(&mut conn);
    }
}

async fn queue() -> (RedisQueue, Keys, redis::Connection) {
    let prefix = format!("ut-{}", uuid::Uuid::new_v4().simple());
    let q = RedisQueue::connect(&url(), &prefix, QueueConfig::default())
        .await
        .unwrap();
    let (stream, dlq, seen) = q.keys();
    let keys = Keys(vec![stream.into(), dlq.into(), seen.into()]);
    let conn = redis::Client::open(url())
        .unwrap()
        .get_connection()
        .unwrap();
    (q, keys, conn)
}

#[tokio::test]
async fn keys_share_one_hash_tag() {
    let (q, _keys, _) = queue().await;
    let (stream, dlq, seen) = q.keys();
    let tag = |key: &str| key[..=key.find('}').unwrap()].to_string();
    assert!(stream.starts_with('{'));
    assert_eq!(tag(stream), tag(dlq));
    assert_eq!(tag(stream), tag(seen));
    assert!(seen.ends_with(":dispatch:seen:"), "{seen}");
}

#[tokio::test]
async fn entries_added_before_the_group_existed_are_consumed() {
    let (q, keys, mut conn) = queue().await;
    // The group vanished (e.g. Redis restarted) while producers kept adding entries.
    let _: () = redis::cmd("XGROUP")
        .arg("DESTROY")
        .arg(&keys.0[0])
        .arg(GROUP)
        .query(&mut conn)
        .unwrap();
    let _: String = redis::cmd("XADD")
        .arg(&keys.0[0])
        .arg("*")
        .arg("payload")
        .arg("early")
        .query(&mut conn)
        .unwrap();
    let got = q.receive("w", 5, Duration::from_millis(100)).await.unwrap();
    assert_eq!(got.len(), 1, "the group is recreated from 0-0");
    assert_eq!(got[0].payload, "early");
}

#[tokio::test]
async fn a_lost_stream_is_recreated_on_the_next_read() {
    let (q, keys, mut conn) = queue().await;
    let _: i64 = redis::cmd("DEL").arg(&keys.0[0]).query(&mut conn).unwrap();
    assert!(q
        .receive("w", 1, Duration::from_millis(50))
        .await
        .unwrap()
        .is_empty());
    q.enqueue("9:1", "after").await.unwrap();
    assert_eq!(
        q.receive("w", 1, Duration::from_millis(100)).await.unwrap()[0].payload,
        "after"
    );
    let stats = q.stats().await.unwrap();
    assert_eq!(stats.pending, 1);
}

#[tokio::test]
async fn a_failed_add_leaves_no_dedup_key_behind() {
    let (q, keys, mut conn) = queue().await;
    // Make XADD fail: the stream key holds a string.
    let _: i64 = redis::cmd("DEL").arg(&keys.0[0]).query(&mut conn).unwrap();
    let _: () = redis::cmd("SET")
        .arg(&keys.0[0])
        .arg("not a stream")
        .query(&mut conn)
        .unwrap();
    assert!(q.enqueue("5:1", "x").await.is_err());
    let seen: i64 = redis::cmd("EXISTS")
        .arg(format!("{}5:1", keys.0[2]))
        .query(&mut conn)
        .unwrap();
    assert_eq!(seen, 0, "no dedup key without its entry");
    let _: i64 = redis::cmd("DEL").arg(&keys.0[0]).query(&mut conn).unwrap();
    assert!(matches!(
        q.enqueue("5:1", "x").await.unwrap(),
        Enqueued::Added(_)
    ));
    let ttl: i64 = redis::cmd("TTL")
        .arg(format!("{}5:1", keys.0[2]))
        .query(&mut conn)
        .unwrap();
    assert!(ttl > 0, "dedup keys expire ({ttl})");
}

#[tokio::test]
async fn a_reaper_pass_after_redis_lost_the_group_recreates_it() {
    let (q, keys, mut conn) = queue().await;
    let _: i64 = redis::cmd("DEL").arg(&keys.0[0]).query(&mut conn).unwrap();
    let reclaimed = q.reclaim("reaper", 10).await.unwrap();
    assert!(reclaimed.deliveries.is_empty() && reclaimed.dead_lettered.is_empty());
    q.enqueue("8:1", "after").await.unwrap();
    assert_eq!(
        q.receive("w", 1, Duration::from_millis(100)).await.unwrap()[0].payload,
        "after"
    );
}
