//! The Redis Streams adapter.
//!
//! Keys share one hash tag, so a cluster keeps them in one slot and scripts may touch them
//! all: `{<prefix>}:judge` (the stream), `{<prefix>}:judge:dlq` (dead letters) and
//! `{<prefix>}:dispatch:seen:<key>` (dedup keys). The consumer group is created from `0-0`,
//! so entries added before it existed are consumed too, and recreated when Redis lost it
//! (restart without persistence, `FLUSHALL`). Acknowledged entries are deleted at once, so
//! the stream only ever holds unfinished work and never needs trimming that could drop
//! pending entries.

use std::time::Duration;

use async_trait::async_trait;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Script, Value};

use crate::{
    DeadLetter, Delivery, Enqueued, JudgeQueue, PendingEntry, QueueConfig, QueueError, QueueStats,
    Reclaimed, EVENT_GROUP, GROUP,
};

/// Dedup check, add, and dedup key in one atomic step; the key is set only after the add
/// succeeded, so a failed add never leaves a key that would block the retry.
const ENQUEUE: &str = r#"
if redis.call('EXISTS', KEYS[2]) == 1 then
  return false
end
local id = redis.call('XADD', KEYS[1], '*', 'payload', ARGV[1], 'key', ARGV[3])
redis.call('SET', KEYS[2], id, 'EX', ARGV[2])
return id
"#;

/// Moves one pending entry to the dead letters, acknowledging and deleting it atomically.
const DEAD_LETTER: &str = r#"
local entry = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
if #entry == 0 then
  redis.call('XACK', KEYS[1], ARGV[4], ARGV[1])
  return 0
end
local fields = entry[1][2]
local payload = ''
for i = 1, #fields, 2 do
  if fields[i] == 'payload' then payload = fields[i + 1] end
end
redis.call('XADD', KEYS[2], '*', 'payload', payload, 'reason', ARGV[2], 'deliveries', ARGV[3], 'original', ARGV[1])
redis.call('XACK', KEYS[1], ARGV[4], ARGV[1])
redis.call('XDEL', KEYS[1], ARGV[1])
return 1
"#;

/// The reaper: claims entries idle past the visibility timeout with `XAUTOCLAIM` (which counts
/// the delivery) and, in the same atomic step, moves those now over the delivery budget to the
/// dead letters (add, acknowledge, delete). Returns `[id, "claimed" | "dead", deliveries,
/// payload]` per entry; for dead letters `deliveries` is the count before this claim.
const RECLAIM: &str = r#"
local claimed = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], '0-0', 'COUNT', ARGV[4])
local out = {}
for _, entry in ipairs(claimed[2]) do
  local id = entry[1]
  local payload = ''
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'payload' then payload = fields[i + 1] end
  end
  local deliveries = tonumber(redis.call('XPENDING', KEYS[1], ARGV[1], id, id, 1)[1][4])
  if deliveries > tonumber(ARGV[5]) then
    local before = deliveries - 1
    redis.call('XADD', KEYS[2], '*', 'payload', payload,
      'reason', 'delivered ' .. before .. ' times without being acknowledged',
      'deliveries', before, 'original', id)
    redis.call('XACK', KEYS[1], ARGV[1], id)
    redis.call('XDEL', KEYS[1], id)
    table.insert(out, {id, 'dead', tostring(before), ''})
  else
    table.insert(out, {id, 'claimed', tostring(deliveries), payload})
  end
end
return out
"#;

/// Moves a dead letter back onto the stream as a new entry.
const REPLAY: &str = r#"
local entry = redis.call('XRANGE', KEYS[2], ARGV[1], ARGV[1])
if #entry == 0 then return 0 end
local fields = entry[1][2]
local payload = ''
for i = 1, #fields, 2 do
  if fields[i] == 'payload' then payload = fields[i + 1] end
end
redis.call('XADD', KEYS[1], '*', 'payload', payload, 'key', 'replay:' .. ARGV[1])
redis.call('XDEL', KEYS[2], ARGV[1])
return 1
"#;

/// A judge queue on Redis Streams.
#[derive(Clone)]
pub struct RedisQueue {
    commands: ConnectionManager,
    /// Blocking reads get a connection of their own: a `BLOCK` would stall every command
    /// multiplexed behind it.
    reads: ConnectionManager,
    stream: String,
    dlq: String,
    seen_prefix: String,
    group: String,
    config: QueueConfig,
}

fn protocol(what: impl Into<String>) -> QueueError {
    QueueError::Protocol(what.into())
}

fn text(value: &Value) -> Result<String, QueueError> {
    match value {
        Value::BulkString(bytes) => Ok(String::from_utf8_lossy(bytes).into_owned()),
        Value::SimpleString(s) => Ok(s.clone()),
        Value::Int(i) => Ok(i.to_string()),
        Value::VerbatimString { text, .. } => Ok(text.clone()),
        other => Err(protocol(format!("expected a string, got {other:?}"))),
    }
}

fn int(value: &Value) -> Result<i64, QueueError> {
    match value {
        Value::Int(i) => Ok(*i),
        other => text(other)?
            .parse()
            .map_err(|_| protocol(format!("expected an integer, got {other:?}"))),
    }
}

fn array(value: &Value) -> Result<&[Value], QueueError> {
    match value {
        Value::Array(items) | Value::Set(items) => Ok(items),
        Value::Nil => Ok(&[]),
        other => Err(protocol(format!("expected an array, got {other:?}"))),
    }
}

/// The millisecond part of a stream id.
fn id_ms(id: &str) -> u64 {
    id.split('-')
        .next()
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(0)
}

/// `[[id, [field, value, ...]], ...]` → (id, payload).
fn entries(value: &Value) -> Result<Vec<(String, String)>, QueueError> {
    let mut out = Vec::new();
    for entry in array(value)? {
        let parts = array(entry)?;
        let [id, fields] = parts else {
            return Err(protocol("stream entry without id and fields"));
        };
        let fields = array(fields)?;
        let mut payload = None;
        for pair in fields.chunks(2) {
            if let [name, value] = pair {
                if text(name)? == "payload" {
                    payload = Some(text(value)?);
                }
            }
        }
        out.push((text(id)?, payload.unwrap_or_default()));
    }
    Ok(out)
}

fn is_nogroup(e: &redis::RedisError) -> bool {
    e.code() == Some("NOGROUP")
}

impl RedisQueue {
    /// Connects to the judge queue at `url`; every key starts with the hash tag `{prefix}`.
    pub async fn connect(url: &str, prefix: &str, config: QueueConfig) -> Result<Self, QueueError> {
        let tag = format!("{{{prefix}}}");
        Self::open(
            url,
            format!("{tag}:judge"),
            format!("{tag}:dispatch:seen:"),
            GROUP,
            config,
        )
        .await
    }

    /// Connects to the stream `name` (an event stream: one consumer group, [`EVENT_GROUP`]),
    /// keys `{prefix}:<name>`, `{prefix}:<name>:dlq`, `{prefix}:<name>:seen:<key>`.
    pub async fn connect_stream(
        url: &str,
        prefix: &str,
        name: &str,
        config: QueueConfig,
    ) -> Result<Self, QueueError> {
        let stream = format!("{{{prefix}}}:{name}");
        let seen = format!("{stream}:seen:");
        Self::open(url, stream, seen, EVENT_GROUP, config).await
    }

    async fn open(
        url: &str,
        stream: String,
        seen_prefix: String,
        group: &str,
        config: QueueConfig,
    ) -> Result<Self, QueueError> {
        let client = redis::Client::open(url)?;
        let base = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_secs(1));
        let commands = client
            .get_connection_manager_with_config(
                base.clone()
                    .set_response_timeout(Some(Duration::from_secs(5))),
            )
            .await?;
        let reads = client
            .get_connection_manager_with_config(
                base.set_response_timeout(Some(Duration::from_secs(35))),
            )
            .await?;
        let queue = Self {
            commands,
            reads,
            dlq: format!("{stream}:dlq"),
            stream,
            seen_prefix,
            group: group.to_string(),
            config,
        };
        queue.ensure_group().await?;
        Ok(queue)
    }

    /// The keys this queue uses (for cleanup and inspection).
    pub fn keys(&self) -> (&str, &str, &str) {
        (&self.stream, &self.dlq, &self.seen_prefix)
    }

    async fn ensure_group(&self) -> Result<(), QueueError> {
        let mut conn = self.commands.clone();
        let created: Result<Value, _> = redis::cmd("XGROUP")
            .arg("CREATE")
            .arg(&self.stream)
            .arg(&self.group)
            .arg("0-0")
            .arg("MKSTREAM")
            .query_async(&mut conn)
            .await;
        match created {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    async fn now_ms(&self) -> Result<u64, QueueError> {
        let mut conn = self.commands.clone();
        let time: Value = redis::cmd("TIME").query_async(&mut conn).await?;
        let parts = array(&time)?;
        let [seconds, micros] = parts else {
            return Err(protocol("TIME without two parts"));
        };
        Ok(int(seconds)? as u64 * 1000 + int(micros)? as u64 / 1000)
    }

    /// `[id, consumer, idle, deliveries]` for pending entries idle at least `idle`.
    async fn pending(&self, idle: Duration, max: usize) -> Result<Vec<(String, u64)>, QueueError> {
        let mut conn = self.commands.clone();
        let reply: Result<Value, _> = redis::cmd("XPENDING")
            .arg(&self.stream)
            .arg(&self.group)
            .arg("IDLE")
            .arg(idle.as_millis() as u64)
            .arg("-")
            .arg("+")
            .arg(max)
            .query_async(&mut conn)
            .await;
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) if is_nogroup(&e) => {
                self.ensure_group().await?;
                return Ok(Vec::new());
            }
            Err(e) => return Err(e.into()),
        };
        array(&reply)?
            .iter()
            .map(|item| {
                let parts = array(item)?;
                let [id, _consumer, _idle, deliveries] = parts else {
                    return Err(protocol("XPENDING entry without four parts"));
                };
                Ok((text(id)?, int(deliveries)? as u64))
            })
            .collect()
    }

    async fn move_to_dead_letters(
        &self,
        id: &str,
        reason: &str,
        deliveries: u64,
    ) -> Result<(), QueueError> {
        let mut conn = self.commands.clone();
        let _: i64 = Script::new(DEAD_LETTER)
            .key(&self.stream)
            .key(&self.dlq)
            .arg(id)
            .arg(reason)
            .arg(deliveries)
            .arg(&self.group)
            .invoke_async(&mut conn)
            .await?;
        Ok(())
    }
}

#[async_trait]
impl JudgeQueue for RedisQueue {
    async fn enqueue(&self, dedup_key: &str, payload: &str) -> Result<Enqueued, QueueError> {
        let mut conn = self.commands.clone();
        let result: Value = Script::new(ENQUEUE)
            .key(&self.stream)
            .key(format!("{}{dedup_key}", self.seen_prefix))
            .arg(payload)
            .arg(self.config.dedup_window.as_secs().max(1))
            .arg(dedup_key)
            .invoke_async(&mut conn)
            .await?;
        Ok(match result {
            Value::Nil | Value::Boolean(false) => Enqueued::Duplicate,
            other => Enqueued::Added(text(&other)?),
        })
    }

    async fn enqueue_batch(&self, items: &[(String, String)]) -> Result<Vec<Enqueued>, QueueError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        // One round trip: the script is loaded, then invoked once per item.
        let script = Script::new(ENQUEUE);
        let invocations: Vec<_> = items
            .iter()
            .map(|(key, payload)| {
                let mut invocation = script.key(&self.stream);
                invocation
                    .key(format!("{}{key}", self.seen_prefix))
                    .arg(payload)
                    .arg(self.config.dedup_window.as_secs().max(1))
                    .arg(key);
                invocation
            })
            .collect();
        let mut pipe = redis::pipe();
        pipe.load_script(&script).ignore();
        for invocation in &invocations {
            pipe.invoke_script(invocation);
        }
        let mut conn = self.commands.clone();
        let results: Vec<Value> = pipe.query_async(&mut conn).await?;
        results
            .iter()
            .map(|result| {
                Ok(match result {
                    Value::Nil | Value::Boolean(false) => Enqueued::Duplicate,
                    other => Enqueued::Added(text(other)?),
                })
            })
            .collect()
    }

    async fn receive(
        &self,
        consumer: &str,
        max: usize,
        block: Duration,
    ) -> Result<Vec<Delivery>, QueueError> {
        let mut conn = self.reads.clone();
        let read = |conn: &mut ConnectionManager| {
            let mut cmd = redis::cmd("XREADGROUP");
            cmd.arg("GROUP")
                .arg(&self.group)
                .arg(consumer)
                .arg("COUNT")
                .arg(max.max(1))
                .arg("BLOCK")
                .arg(block.as_millis().max(1) as u64)
                .arg("STREAMS")
                .arg(&self.stream)
                .arg(">");
            let mut conn = conn.clone();
            async move { cmd.query_async::<Value>(&mut conn).await }
        };
        let reply = match read(&mut conn).await {
            Ok(reply) => reply,
            Err(e) if is_nogroup(&e) => {
                self.ensure_group().await?;
                read(&mut conn).await?
            }
            Err(e) => return Err(e.into()),
        };
        // [[stream, [[id, fields], ...]]] (RESP2) or {stream: [...]} (RESP3)
        let streams: Vec<&Value> = match &reply {
            Value::Nil => return Ok(Vec::new()),
            Value::Map(pairs) => pairs.iter().map(|(_, v)| v).collect(),
            other => array(other)?
                .iter()
                .map(|s| {
                    array(s).and_then(|parts| {
                        parts
                            .get(1)
                            .ok_or_else(|| protocol("stream reply without entries"))
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let now = self.now_ms().await?;
        let mut out = Vec::new();
        for stream in streams {
            for (id, payload) in entries(stream)? {
                out.push(Delivery {
                    queue_delay_ms: now.saturating_sub(id_ms(&id)),
                    id,
                    payload,
                    deliveries: 1,
                });
            }
        }
        Ok(out)
    }

    async fn ack(&self, id: &str) -> Result<(), QueueError> {
        let mut conn = self.commands.clone();
        let _: Value = redis::pipe()
            .atomic()
            .cmd("XACK")
            .arg(&self.stream)
            .arg(&self.group)
            .arg(id)
            .cmd("XDEL")
            .arg(&self.stream)
            .arg(id)
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    async fn nack(&self, _id: &str) -> Result<(), QueueError> {
        // Nothing to do: the entry stays in the PEL until reclaimed.
        Ok(())
    }

    async fn touch(&self, consumer: &str, id: &str) -> Result<(), QueueError> {
        let mut conn = self.commands.clone();
        let _: Value = redis::cmd("XCLAIM")
            .arg(&self.stream)
            .arg(&self.group)
            .arg(consumer)
            .arg(0)
            .arg(id)
            .arg("JUSTID")
            .query_async(&mut conn)
            .await?;
        Ok(())
    }

    async fn reclaim(&self, consumer: &str, max: usize) -> Result<Reclaimed, QueueError> {
        let now = self.now_ms().await?;
        let mut conn = self.commands.clone();
        let reply: Result<Value, _> = Script::new(RECLAIM)
            .key(&self.stream)
            .key(&self.dlq)
            .arg(&self.group)
            .arg(consumer)
            .arg(self.config.visibility_timeout.as_millis() as u64)
            .arg(max.max(1))
            .arg(self.config.max_deliveries)
            .invoke_async(&mut conn)
            .await;
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) if is_nogroup(&e) => {
                self.ensure_group().await?;
                return Ok(Reclaimed::default());
            }
            Err(e) => return Err(e.into()),
        };
        let mut reclaimed = Reclaimed::default();
        for item in array(&reply)? {
            let [id, outcome, deliveries, payload] = array(item)? else {
                return Err(protocol("reclaim entry without four parts"));
            };
            let id = text(id)?;
            if text(outcome)? == "dead" {
                reclaimed.dead_lettered.push(id);
            } else {
                reclaimed.deliveries.push(Delivery {
                    queue_delay_ms: now.saturating_sub(id_ms(&id)),
                    payload: text(payload)?,
                    deliveries: int(deliveries)? as u64,
                    id,
                });
            }
        }
        Ok(reclaimed)
    }

    async fn dead_letter(&self, id: &str, reason: &str) -> Result<(), QueueError> {
        let deliveries = self
            .pending(Duration::ZERO, 10_000)
            .await?
            .into_iter()
            .find(|(pending, _)| pending == id)
            .map_or(1, |(_, d)| d);
        self.move_to_dead_letters(id, reason, deliveries).await
    }

    async fn pending_entries(&self, limit: usize) -> Result<Vec<PendingEntry>, QueueError> {
        let mut conn = self.commands.clone();
        let reply: Result<Value, _> = redis::cmd("XPENDING")
            .arg(&self.stream)
            .arg(&self.group)
            .arg("-")
            .arg("+")
            .arg(limit.max(1))
            .query_async(&mut conn)
            .await;
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) if is_nogroup(&e) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        };
        array(&reply)?
            .iter()
            .map(|entry| match array(entry)? {
                [id, consumer, idle, deliveries] => Ok(PendingEntry {
                    id: text(id)?,
                    consumer: text(consumer)?,
                    idle_ms: int(idle)?.max(0) as u64,
                    deliveries: int(deliveries)?.max(0) as u64,
                }),
                _ => Err(protocol("XPENDING entry without four parts")),
            })
            .collect()
    }

    async fn stats(&self) -> Result<QueueStats, QueueError> {
        let mut conn = self.commands.clone();
        let now = self.now_ms().await?;
        let length: i64 = redis::cmd("XLEN")
            .arg(&self.stream)
            .query_async(&mut conn)
            .await?;
        let dead_letters: i64 = redis::cmd("XLEN")
            .arg(&self.dlq)
            .query_async(&mut conn)
            .await?;
        let summary: Result<Value, _> = redis::cmd("XPENDING")
            .arg(&self.stream)
            .arg(&self.group)
            .query_async(&mut conn)
            .await;
        let (pending, oldest_pending) = match summary {
            Ok(summary) => {
                let parts = array(&summary)?;
                let count = parts.first().map(int).transpose()?.unwrap_or(0);
                let oldest = match parts.get(1) {
                    Some(Value::Nil) | None => None,
                    Some(id) => Some(id_ms(&text(id)?)),
                };
                (count as u64, oldest)
            }
            Err(e) if is_nogroup(&e) => (0, None),
            Err(e) => return Err(e.into()),
        };
        // The oldest entry never delivered: the first one after the group's last delivered id.
        let groups: Value = redis::cmd("XINFO")
            .arg("GROUPS")
            .arg(&self.stream)
            .query_async(&mut conn)
            .await
            .unwrap_or(Value::Nil);
        let mut last_delivered = "0-0".to_string();
        for group in array(&groups).unwrap_or(&[]) {
            let fields: Vec<(String, &Value)> = match group {
                Value::Map(pairs) => pairs
                    .iter()
                    .filter_map(|(k, v)| text(k).ok().map(|k| (k, v)))
                    .collect(),
                other => array(other)?
                    .chunks(2)
                    .filter_map(|pair| match pair {
                        [k, v] => text(k).ok().map(|k| (k, v)),
                        _ => None,
                    })
                    .collect(),
            };
            if fields
                .iter()
                .any(|(k, v)| k == "name" && text(v).ok().as_deref() == Some(self.group.as_str()))
            {
                if let Some((_, v)) = fields.iter().find(|(k, _)| k == "last-delivered-id") {
                    last_delivered = text(v)?;
                }
            }
        }
        let next: Value = redis::cmd("XRANGE")
            .arg(&self.stream)
            .arg(format!("({last_delivered}"))
            .arg("+")
            .arg("COUNT")
            .arg(1)
            .query_async(&mut conn)
            .await?;
        let queue_delay_ms = entries(&next)?
            .first()
            .map_or(0, |(id, _)| now.saturating_sub(id_ms(id)));
        Ok(QueueStats {
            length: length as u64,
            pending,
            oldest_pending_age_ms: oldest_pending.map_or(0, |ms| now.saturating_sub(ms)),
            queue_delay_ms,
            dead_letters: dead_letters as u64,
        })
    }

    async fn dead_letters(&self, limit: usize) -> Result<Vec<DeadLetter>, QueueError> {
        let mut conn = self.commands.clone();
        let reply: Value = redis::cmd("XRANGE")
            .arg(&self.dlq)
            .arg("-")
            .arg("+")
            .arg("COUNT")
            .arg(limit.max(1))
            .query_async(&mut conn)
            .await?;
        let mut out = Vec::new();
        for entry in array(&reply)? {
            let parts = array(entry)?;
            let [id, fields] = parts else {
                return Err(protocol("dead letter without id and fields"));
            };
            let mut letter = DeadLetter {
                id: text(id)?,
                payload: String::new(),
                reason: String::new(),
                deliveries: 0,
            };
            for pair in array(fields)?.chunks(2) {
                if let [name, value] = pair {
                    match text(name)?.as_str() {
                        "payload" => letter.payload = text(value)?,
                        "reason" => letter.reason = text(value)?,
                        "deliveries" => letter.deliveries = int(value)? as u64,
                        _ => {}
                    }
                }
            }
            out.push(letter);
        }
        Ok(out)
    }

    async fn replay(&self, dead_letter_id: &str) -> Result<bool, QueueError> {
        let mut conn = self.commands.clone();
        let moved: i64 = Script::new(REPLAY)
            .key(&self.stream)
            .key(&self.dlq)
            .arg(dead_letter_id)
            .invoke_async(&mut conn)
            .await?;
        Ok(moved == 1)
    }
}
