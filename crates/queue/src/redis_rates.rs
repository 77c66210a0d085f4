//! Rate-limit buckets in Redis, shared by every API replica of a deployment. One script takes
//! a token atomically on Redis's own clock, so replicas with skewed clocks agree; a bucket's
//! key expires once it would be full again, so idle clients cost nothing.

use std::time::Duration;

use async_trait::async_trait;
use platform::rate::{Bucket, RateStore, RateStoreError};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::Script;

/// KEYS[1] the bucket; ARGV burst, tokens per second. Returns the wait in microseconds (0: taken).
const TAKE: &str = r"
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1]) or burst
local at = tonumber(held[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate * 1000000)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return wait
";

/// Buckets under `{prefix}:rate:`.
#[derive(Clone)]
pub struct RedisRates {
    conn: ConnectionManager,
    prefix: String,
    script: Script,
}

impl RedisRates {
    pub async fn connect(url: &str, prefix: &str) -> Result<Self, redis::RedisError> {
        let client = redis::Client::open(url)?;
        let conn = client
            .get_connection_manager_with_config(
                ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(Duration::from_secs(2)))
                    .set_response_timeout(Some(Duration::from_secs(1)))
                    .set_number_of_retries(1),
            )
            .await?;
        Ok(Self {
            conn,
            prefix: format!("{{{prefix}}}:rate:"),
            script: Script::new(TAKE),
        })
    }

    /// The prefix of every bucket's key (for cleanup and inspection).
    pub fn key_prefix(&self) -> &str {
        &self.prefix
    }
}

#[async_trait]
impl RateStore for RedisRates {
    async fn take(&self, key: &str, bucket: Bucket) -> Result<Option<Duration>, RateStoreError> {
        let mut conn = self.conn.clone();
        let wait_us: u64 = self
            .script
            .key(format!("{}{key}", self.prefix))
            .arg(bucket.burst.max(1))
            .arg(bucket.per_second.max(f64::MIN_POSITIVE))
            .invoke_async(&mut conn)
            .await
            .map_err(|e| RateStoreError(e.to_string()))?;
        Ok((wait_us > 0).then(|| Duration::from_micros(wait_us)))
    }
}
