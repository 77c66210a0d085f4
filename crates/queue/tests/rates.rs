//! The Redis rate store: the platform's bucket conformance, and one bucket seen alike by two
//! replicas (two connections, as two API processes would hold).

use std::sync::Arc;
use std::time::Duration;

use platform::rate::{conformance, Bucket, RateLimit, RateStore};
use queue::RedisRates;

fn url() -> String {
    std::env::var("ULTICODE_TEST_REDIS").unwrap_or_else(|_| "redis://127.0.0.1:6379".into())
}

/// A store under a fresh prefix whose keys are deleted afterwards.
struct Scoped(RedisRates);

impl Drop for Scoped {
    fn drop(&mut self) {
        let mut conn = redis::Client::open(url())
            .unwrap()
            .get_connection()
            .unwrap();
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}*", self.0.key_prefix()))
            .query(&mut conn)
            .unwrap_or_default();
        if !keys.is_empty() {
            let _: Result<i64, _> = redis::cmd("DEL").arg(keys).query(&mut conn);
        }
    }
}

async fn store(prefix: &str) -> Scoped {
    Scoped(
        RedisRates::connect(&url(), prefix)
            .await
            .expect("Redis is up"),
    )
}

fn fresh_prefix() -> String {
    format!("ut-{}", uuid::Uuid::new_v4().simple())
}

#[tokio::test]
async fn redis_buckets_conform() {
    let rates = store(&fresh_prefix()).await;
    conformance::bursts_then_refills(&rates.0, "client").await;
}

#[tokio::test]
async fn replicas_share_one_bucket() {
    let prefix = fresh_prefix();
    let (a, b) = (store(&prefix).await, store(&prefix).await);
    let bucket = Bucket {
        burst: 4,
        per_second: 0.01,
    };
    for replica in [&a, &b, &a, &b] {
        assert_eq!(replica.0.take("login:ip", bucket).await.unwrap(), None);
    }
    for replica in [&a, &b] {
        let wait = replica.0.take("login:ip", bucket).await.unwrap();
        assert!(
            wait.is_some_and(|w| w > Duration::from_secs(90)),
            "{wait:?}"
        );
    }
    let other = store(&fresh_prefix()).await;
    assert_eq!(
        other.0.take("login:ip", bucket).await.unwrap(),
        None,
        "another deployment's prefix is another bucket"
    );
}

#[tokio::test]
async fn a_limit_in_redis_counts_every_replicas_requests() {
    let prefix = fresh_prefix();
    let (a, b) = (store(&prefix).await, store(&prefix).await);
    let shared = |s: &Scoped| {
        RateLimit::new("submit", 3, 0.01)
            .in_store(Some(Arc::new(s.0.clone()) as Arc<dyn RateStore>))
    };
    let (on_a, on_b) = (shared(&a), shared(&b));
    on_a.check("user-7").await.unwrap();
    on_b.check("user-7").await.unwrap();
    on_a.check("user-7").await.unwrap();
    let refused = on_b.check("user-7").await.unwrap_err();
    assert_eq!(refused.status.as_u16(), 429);
    assert!(refused.retry_after.is_some());
}

#[tokio::test]
async fn an_idle_bucket_expires() {
    let rates = store(&fresh_prefix()).await;
    let bucket = Bucket {
        burst: 2,
        per_second: 1000.0,
    };
    rates.0.take("idle", bucket).await.unwrap();
    let mut conn = redis::Client::open(url())
        .unwrap()
        .get_connection()
        .unwrap();
    let ttl: i64 = redis::cmd("PTTL")
        .arg(format!("{}idle", rates.0.key_prefix()))
        .query(&mut conn)
        .unwrap();
    assert!(
        (0..=1100).contains(&ttl),
        "expires once full again: {ttl} ms"
    );
}
