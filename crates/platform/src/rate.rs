//! Rate limits: keyed token buckets, kept in this process or in a store every API replica
//! shares (the distributed shape passes its Redis one), so a client cannot multiply its
//! allowance by spreading requests over replicas.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::http::ApiError;

/// A bucket's shape: `burst` tokens at most, refilled at `per_second`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    pub burst: u32,
    pub per_second: f64,
}

/// A shared store could not be asked.
#[derive(Debug, thiserror::Error)]
#[error("rate-limit store unavailable: {0}")]
pub struct RateStoreError(pub String);

/// Where buckets live.
#[async_trait]
pub trait RateStore: Send + Sync {
    /// Takes one token from the bucket `key`: `None` when taken, else how long until one is.
    async fn take(&self, key: &str, bucket: Bucket) -> Result<Option<Duration>, RateStoreError>;
}

/// Buckets in this process's memory.
#[derive(Default)]
pub struct LocalRates {
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl LocalRates {
    fn take_at(&self, key: &str, bucket: Bucket, now: Instant) -> Option<Duration> {
        let burst = f64::from(bucket.burst.max(1));
        let rate = bucket.per_second.max(f64::MIN_POSITIVE);
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > 100_000 {
            // Forget full buckets so the map stays bounded under many distinct keys.
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.duration_since(*at).as_secs_f64() * rate < burst
            });
        }
        let (tokens, at) = buckets.entry(key.to_string()).or_insert((burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * rate).min(burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            None
        } else {
            Some(Duration::from_secs_f64((1.0 - *tokens) / rate))
        }
    }
}

#[async_trait]
impl RateStore for LocalRates {
    async fn take(&self, key: &str, bucket: Bucket) -> Result<Option<Duration>, RateStoreError> {
        Ok(self.take_at(key, bucket, Instant::now()))
    }
}

/// One named limit: its buckets are keyed `name:key` in its store. When a shared store
/// cannot be asked, this process's own buckets decide (the limit degrades to per replica
/// rather than refusing everyone or letting everyone through).
#[derive(Clone)]
pub struct RateLimit {
    name: &'static str,
    bucket: Bucket,
    shared: Option<Arc<dyn RateStore>>,
    local: Arc<LocalRates>,
}

impl RateLimit {
    pub fn new(name: &'static str, burst: u32, per_second: f64) -> Self {
        Self {
            name,
            bucket: Bucket { burst, per_second },
            shared: None,
            local: Arc::default(),
        }
    }

    /// The same limit with its buckets in `store` (`None`: this process's).
    pub fn in_store(mut self, store: Option<Arc<dyn RateStore>>) -> Self {
        self.shared = store;
        self
    }

    /// Takes one token for `key`, or says how long until one is available.
    pub async fn check(&self, key: &str) -> Result<(), ApiError> {
        let key = format!("{}:{key}", self.name);
        let wait = match &self.shared {
            Some(store) => match store.take(&key, self.bucket).await {
                Ok(wait) => wait,
                Err(e) => {
                    tracing::warn!(error = %e, limit = self.name, "limiting in this process");
                    self.local.take_at(&key, self.bucket, Instant::now())
                }
            },
            None => self.local.take_at(&key, self.bucket, Instant::now()),
        };
        match wait {
            None => Ok(()),
            Some(wait) => Err(ApiError::rate_limited(wait)),
        }
    }
}

/// The behaviour every [`RateStore`] shows; its tests call this with each store.
pub mod conformance {
    use super::*;

    /// A burst is taken, the next is refused with a wait of at most a token's refill, other
    /// keys are independent, and a refill lets one more through.
    pub async fn bursts_then_refills(store: &dyn RateStore, prefix: &str) {
        let bucket = Bucket {
            burst: 3,
            per_second: 5.0,
        };
        let key = format!("{prefix}:client");
        for n in 0..3 {
            let taken = store.take(&key, bucket).await.expect("store answers");
            assert_eq!(taken, None, "token {n} of the burst");
        }
        let wait = store
            .take(&key, bucket)
            .await
            .expect("store answers")
            .expect("the bucket is empty");
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_millis(200),
            "{wait:?}"
        );
        let other = format!("{prefix}:other");
        assert_eq!(
            store.take(&other, bucket).await.expect("store answers"),
            None
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert_eq!(store.take(&key, bucket).await.expect("store answers"), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_allows_a_burst_then_refills() {
        let rates = LocalRates::default();
        let bucket = Bucket {
            burst: 3,
            per_second: 1.0,
        };
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(rates.take_at("ip", bucket, t0), None);
        }
        let wait = rates.take_at("ip", bucket, t0).unwrap();
        assert!(wait <= Duration::from_secs(1));
        assert_eq!(rates.take_at("other", bucket, t0), None);
        assert_eq!(
            rates.take_at("ip", bucket, t0 + Duration::from_millis(1001)),
            None
        );
    }

    #[tokio::test]
    async fn local_buckets_conform() {
        conformance::bursts_then_refills(&LocalRates::default(), "local").await;
    }

    struct Down;

    #[async_trait]
    impl RateStore for Down {
        async fn take(&self, _: &str, _: Bucket) -> Result<Option<Duration>, RateStoreError> {
            Err(RateStoreError("connection refused".into()))
        }
    }

    #[tokio::test]
    async fn an_unreachable_shared_store_leaves_the_limit_to_this_process() {
        let limit = RateLimit::new("login", 2, 0.001).in_store(Some(Arc::new(Down)));
        limit.check("ip").await.unwrap();
        limit.check("ip").await.unwrap();
        let refused = limit.check("ip").await.unwrap_err();
        assert_eq!(refused.status, axum::http::StatusCode::TOO_MANY_REQUESTS);
    }

    #[tokio::test]
    async fn limits_with_different_names_never_share_a_bucket() {
        let store: Arc<dyn RateStore> = Arc::new(LocalRates::default());
        let login = RateLimit::new("login", 1, 0.001).in_store(Some(store.clone()));
        let mail = RateLimit::new("mail", 1, 0.001).in_store(Some(store));
        login.check("ip").await.unwrap();
        mail.check("ip").await.unwrap();
        assert!(login.check("ip").await.is_err());
    }
}
