//! `ulticode bench events` and `ulticode bench search`: the event backbone's and the search
//! index's figures. Events: relay throughput from a PostgreSQL outbox to Redis streams, and
//! change-to-audit-visible latency (a committed change until its audit record is readable).
//! Search: reindex time and query latency over generated problems.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use clap::Args;
use contracts::events::{types, SearchContent, SearchDocument};
use contracts::search::{SearchQuery, SearchSource};
use contracts::PortError;
use platform::db::Row;
use platform::events::{NewEvent, Outbox, OUTBOX_MIGRATION};
use platform::{Metrics, Shutdown};
use queue::events::{run_consumer, ConsumerConfig, EventStreams, Relay, RelayConfig};
use serde::Serialize;

use super::bench_pipeline::{percentiles, Percentiles};
use super::chaos::Rng;

#[derive(Debug, Args)]
pub struct EventsArgs {
    /// Events the relay publishes in the throughput run.
    #[arg(long, default_value_t = 20_000)]
    events: usize,
    /// Changes whose audit records are waited for, one after another.
    #[arg(long, default_value_t = 300)]
    changes: usize,
    #[arg(long, default_value = "redis://127.0.0.1:6379")]
    redis_url: String,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct EventsBench {
    relay_events: usize,
    relay_events_per_second: f64,
    audit_changes: usize,
    change_to_audit_visible: Percentiles,
}

pub fn events(args: EventsArgs) -> anyhow::Result<std::process::ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    let bench = runtime.block_on(measure_events(&args))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&bench)?);
    } else {
        println!(
            "event relay (PostgreSQL outbox → Redis streams): {} events at {:.0} events/s",
            bench.relay_events, bench.relay_events_per_second
        );
        println!(
            "change to audit visible ({} changes, one at a time): p50 {:.1} ms, p99 {:.1} ms",
            bench.audit_changes,
            bench.change_to_audit_visible.p50_ms,
            bench.change_to_audit_visible.p99_ms
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

async fn measure_events(args: &EventsArgs) -> anyhow::Result<EventsBench> {
    let postgres = platform::testing::TestPostgres::new().await?;
    let owner_db = postgres.owner("auth").await?;
    owner_db
        .migrate(&[OUTBOX_MIGRATION, platform::leases::MIGRATION])
        .await?;
    let outbox = Outbox::new(owner_db.clone(), "auth");
    let prefix = format!("bench-{}", uuid::Uuid::new_v4().simple());
    let streams =
        EventStreams::redis(&args.redis_url, &prefix, queue::events::stream_config()).await?;
    let metrics = Metrics::new();

    // Throughput: a backlog of search documents (a stream nobody reads here), relayed flat out.
    for chunk in (0..args.events).collect::<Vec<_>>().chunks(1_000) {
        let mut tx = owner_db.begin().await?;
        for n in chunk {
            let event = NewEvent::new(
                types::SEARCH_DOCUMENT_CHANGED,
                "problem",
                *n as i64,
                serde_json::json!({ "kind": "problem", "id": n, "version": 1, "content": null }),
            );
            outbox.record(&mut tx, event).await?;
        }
        tx.commit().await?;
    }
    let mut config = RelayConfig::new("bench");
    config.batch = 2_000;
    let relay = Relay::new(outbox.clone(), streams.clone(), config, metrics.clone());
    let started = Instant::now();
    let mut sent = 0;
    while sent < args.events {
        sent += relay.pass().await?.sent;
    }
    let relay_seconds = started.elapsed().as_secs_f64();

    // Latency: the relay and the audit consumer running as in `serve`.
    let audit_db = postgres.owner("admin").await?;
    let audit = admin::AuditConsumer::open(audit_db.clone()).await?;
    let shutdown = Shutdown::new();
    let relay_task = tokio::spawn(
        Relay::new(
            outbox.clone(),
            streams.clone(),
            RelayConfig::new("bench"),
            metrics.clone(),
        )
        .run(shutdown.clone()),
    );
    let stream = streams
        .stream(contracts::events::consumers::AUDIT)
        .expect("an audit stream");
    let consumer_task = tokio::spawn(run_consumer(
        stream,
        Arc::new(audit),
        ConsumerConfig::new("bench"),
        metrics.clone(),
        shutdown.clone(),
    ));
    let mut latencies = Vec::with_capacity(args.changes);
    for n in 0..args.changes {
        let began = Instant::now();
        let mut tx = owner_db.begin().await?;
        let id = outbox
            .record(
                &mut tx,
                NewEvent::new(
                    types::LOGIN_FAILED,
                    "account",
                    n as i64,
                    serde_json::json!({}),
                ),
            )
            .await?;
        tx.commit().await?;
        loop {
            let found: i64 = audit_db
                .query("SELECT COUNT(*) FROM audit_log WHERE event_id = $1")
                .bind(id.clone())
                .fetch_one(audit_db.pool())
                .await?
                .try_get(0)?;
            if found == 1 {
                break;
            }
            anyhow::ensure!(
                began.elapsed() < Duration::from_secs(30),
                "no audit record for {id}"
            );
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
        latencies.push(began.elapsed().as_secs_f64() * 1_000.0);
    }
    shutdown.trigger();
    let _ = relay_task.await;
    let _ = consumer_task.await;
    cleanup(&args.redis_url, &prefix).await;
    Ok(EventsBench {
        relay_events: args.events,
        relay_events_per_second: args.events as f64 / relay_seconds,
        audit_changes: args.changes,
        change_to_audit_visible: percentiles(latencies),
    })
}

async fn cleanup(url: &str, prefix: &str) {
    if let Ok(client) = redis::Client::open(url) {
        if let Ok(mut conn) = client.get_multiplexed_async_connection().await {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(format!("{{{prefix}}}*"))
                .query_async(&mut conn)
                .await
                .unwrap_or_default();
            if !keys.is_empty() {
                let _: Result<i64, _> = redis::cmd("DEL").arg(keys).query_async(&mut conn).await;
            }
        }
    }
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Generated problems in the index.
    #[arg(long, default_value_t = 10_000)]
    problems: usize,
    /// Queries timed.
    #[arg(long, default_value_t = 2_000)]
    queries: usize,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct SearchBench {
    problems: usize,
    reindex_seconds: f64,
    queries: usize,
    query: Percentiles,
}

struct Generated(Vec<SearchDocument>);

#[async_trait]
impl SearchSource for Generated {
    async fn documents(&self, after: i64, limit: u32) -> Result<Vec<SearchDocument>, PortError> {
        let start = self.0.partition_point(|d| d.id <= after);
        Ok(self.0[start..]
            .iter()
            .take(limit as usize)
            .cloned()
            .collect())
    }
}

const WORDS: &[&str] = &[
    "array",
    "graph",
    "tree",
    "shortest",
    "path",
    "binary",
    "search",
    "dynamic",
    "programming",
    "string",
    "matching",
    "sum",
    "pairs",
    "interval",
    "query",
    "segment",
    "flow",
    "matrix",
    "prime",
    "modulo",
    "greedy",
    "sort",
    "stack",
    "queue",
    "heap",
    "bitmask",
    "geometry",
    "配列",
    "探索",
    "最短路径",
    "動的計画法",
    "文字列",
    "区間",
];

fn text(rng: &mut Rng, words: usize) -> String {
    (0..words)
        .map(|_| WORDS[rng.below(WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn search(args: SearchArgs) -> anyhow::Result<std::process::ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    let bench = runtime.block_on(async {
        let mut rng = Rng::new(7);
        let documents = (1..=args.problems as i64)
            .map(|id| SearchDocument {
                kind: "problem".into(),
                id,
                version: 1,
                content: Some(SearchContent {
                    slug: format!("p{id}"),
                    title: format!("{} {id}", text(&mut rng, 3)),
                    body: text(&mut rng, 120),
                    tags: vec![WORDS[rng.below(8)].to_string()],
                }),
            })
            .collect();
        let dir = tempfile::tempdir()?;
        let index = search::SearchIndex::open(dir.path())?;
        let started = Instant::now();
        index.rebuild(&Generated(documents)).await?;
        let reindex_seconds = started.elapsed().as_secs_f64();
        let mut latencies = Vec::with_capacity(args.queries);
        for _ in 0..args.queries {
            let words = 1 + rng.below(2);
            let query = SearchQuery {
                q: text(&mut rng, words),
                kind: None,
                tag: None,
                limit: None,
            };
            let began = Instant::now();
            index.query(&query)?;
            latencies.push(began.elapsed().as_secs_f64() * 1_000.0);
        }
        anyhow::Ok(SearchBench {
            problems: args.problems,
            reindex_seconds,
            queries: args.queries,
            query: percentiles(latencies),
        })
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&bench)?);
    } else {
        println!(
            "search over {} problems: reindex {:.2} s; {} queries p50 {:.2} ms, p99 {:.2} ms",
            bench.problems,
            bench.reindex_seconds,
            bench.queries,
            bench.query.p50_ms,
            bench.query.p99_ms
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}
