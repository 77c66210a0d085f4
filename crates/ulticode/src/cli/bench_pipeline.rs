//! `ulticode bench pipeline`: what the delivery path costs.
//!
//! (a) Outbox relay throughput: `--rows` intents written through intake, then dispatcher
//!     passes move them onto the queue (Redis on PostgreSQL, the SQL stream on SQLite);
//!     rows per second from the first pass to the last.
//! (b) Submit-to-verdict latency for a trivial accepted program at a steady rate, through
//!     intake, the dispatcher (woken by NOTIFY or the in-process signal), the queue, a worker,
//!     the fenced verdict write — and the pipeline's own share: total minus the time the
//!     worker spent judging (between holding the lease and writing the verdict).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use async_trait::async_trait;
use clap::{Args, ValueEnum};
use contracts::{
    Acquired, AttemptId, Generation, JudgeProgress, JudgeResult, JudgingPort, PortError, ProblemId,
    SubmissionFactsSnapshot, SubmissionId, UserId, FACTS_SCHEMA_VERSION,
};
use futures::StreamExt;
use judge::{default_languages, Languages};
use judge_worker::{JudgeWorker, LocalPackages, WorkerConfig};
use platform::testing::TestPostgres;
use platform::{Db, Metrics, Shutdown};
use queue::{JudgeQueue, QueueConfig, RedisQueue, SqlQueue};
use serde::Serialize;
use submission::{Dispatcher, DispatcherConfig, SubmissionConfig, SubmissionStore, SubmitRequest};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Postgres,
    Sqlite,
}

#[derive(Debug, Args)]
pub struct PipelineArgs {
    #[arg(long, value_enum, default_value = "postgres")]
    backend: Backend,
    /// Intents relayed in the throughput measurement.
    #[arg(long, default_value_t = 20_000)]
    rows: usize,
    /// Rows per dispatcher pass.
    #[arg(long, default_value_t = 500)]
    batch: i64,
    /// Submissions in the latency measurement.
    #[arg(long, default_value_t = 100)]
    submissions: usize,
    /// Submissions per second in the latency measurement.
    #[arg(long, default_value_t = 5.0)]
    rate: f64,
    /// Redis for the PostgreSQL backend.
    #[arg(
        long,
        env = "ULTICODE_REDIS_URL",
        default_value = "redis://127.0.0.1:6379"
    )]
    redis_url: String,
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
pub(super) struct Percentiles {
    pub(super) p50_ms: f64,
    pub(super) p99_ms: f64,
}

#[derive(Debug, Serialize)]
struct PipelineBench {
    backend: Backend,
    relay_rows: usize,
    relay_rows_per_second: f64,
    latency_submissions: usize,
    submit_to_verdict: Percentiles,
    pipeline_share: Percentiles,
    judging: Percentiles,
}

pub(super) fn percentiles(mut ms: Vec<f64>) -> Percentiles {
    ms.sort_by(|a, b| a.total_cmp(b));
    let at = |q: f64| {
        ms.get(((ms.len().max(1) - 1) as f64 * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Percentiles {
        p50_ms: at(0.5),
        p99_ms: at(0.99),
    }
}

/// Storage and queue of one measurement, cleaned up on drop.
struct Stack {
    store: SubmissionStore,
    queue: Arc<dyn JudgeQueue>,
    _pg: Option<TestPostgres>,
    _dir: tempfile::TempDir,
    redis_keys: Option<(String, Vec<String>)>,
}

impl Drop for Stack {
    fn drop(&mut self) {
        if let Some((url, keys)) = &self.redis_keys {
            if let Ok(mut conn) = redis::Client::open(url.as_str()).and_then(|c| c.get_connection())
            {
                let seen: Vec<String> = redis::cmd("KEYS")
                    .arg(format!("{}*", keys[2]))
                    .query(&mut conn)
                    .unwrap_or_default();
                let _: Result<i64, _> = redis::cmd("DEL").arg(&keys[..2]).query(&mut conn);
                for chunk in seen.chunks(1000) {
                    let _: Result<i64, _> = redis::cmd("DEL").arg(chunk).query(&mut conn);
                }
            }
        }
    }
}

async fn stack(args: &PipelineArgs) -> anyhow::Result<Stack> {
    let dir = tempfile::tempdir()?;
    let config = SubmissionConfig::default();
    Ok(match args.backend {
        Backend::Postgres => {
            let pg = TestPostgres::new()
                .await
                .context("create a benchmark database")?;
            let store = SubmissionStore::open(pg.owner("submission").await?, config).await?;
            let prefix = format!("bench-{}", uuid::Uuid::new_v4().simple());
            let redis = RedisQueue::connect(&args.redis_url, &prefix, QueueConfig::default())
                .await
                .context("connect to Redis")?;
            let (stream, dlq, seen) = redis.keys();
            let keys = vec![stream.to_string(), dlq.to_string(), seen.to_string()];
            Stack {
                store,
                queue: Arc::new(redis),
                _pg: Some(pg),
                _dir: dir,
                redis_keys: Some((args.redis_url.clone(), keys)),
            }
        }
        Backend::Sqlite => {
            let store =
                SubmissionStore::open(Db::sqlite_owner(dir.path(), "submission").await?, config)
                    .await?;
            let queue = SqlQueue::new(
                Db::sqlite_owner(dir.path(), "queue").await?,
                QueueConfig::default(),
            )
            .await?;
            Stack {
                store,
                queue: Arc::new(queue),
                _pg: None,
                _dir: dir,
                redis_keys: None,
            }
        }
    })
}

fn facts(hash: &str) -> SubmissionFactsSnapshot {
    SubmissionFactsSnapshot {
        schema_version: FACTS_SCHEMA_VERSION,
        user_id: UserId(1),
        user_exists: true,
        problem_id: ProblemId(1),
        problem_title: "A plus B".into(),
        problem_slug: "aplusb".into(),
        time_limit_ms: 1000,
        memory_mib: 256,
        starter_code: None,
        package_hash: hash.into(),
        contest_id: None,
        contest: None,
        captured_at_ms: 0,
    }
}

const SUM_C: &str = "#include <stdio.h>\nint main(void){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);return 0;}\n";

async fn relay(args: &PipelineArgs) -> anyhow::Result<f64> {
    let stack = stack(args).await?;
    let facts = facts("0123abcd");
    let submitted = futures::stream::iter(0..args.rows)
        .map(|i| {
            let (store, facts) = (stack.store.clone(), facts.clone());
            async move {
                let request = SubmitRequest {
                    user_id: UserId(1),
                    problem_id: ProblemId(1),
                    language: "c".into(),
                    source: format!("/* {i} */ int main(){{}}"),
                    idempotency_key: None,
                };
                store.submit(&facts, &request).await
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    for result in submitted {
        result?;
    }
    let dispatcher = Dispatcher::new(
        stack.store.clone(),
        Some(stack.queue.clone()),
        DispatcherConfig {
            batch: args.batch,
            ..Default::default()
        },
        Metrics::new(),
    );
    let started = Instant::now();
    let mut sent = 0;
    loop {
        let report = dispatcher.pass().await?;
        if report.retried > 0 || report.dead > 0 {
            bail!("dispatch failed: {report:?}");
        }
        if report.sent == 0 {
            break;
        }
        sent += report.sent;
    }
    let elapsed = started.elapsed();
    if sent != args.rows {
        bail!("relayed {sent} of {} rows", args.rows);
    }
    Ok(sent as f64 / elapsed.as_secs_f64())
}

/// The judging port with timestamps: when the lease was taken and the verdict handed over.
struct Timed {
    inner: SubmissionStore,
    marks: Mutex<HashMap<SubmissionId, (Instant, Instant, Instant)>>,
}

#[async_trait]
impl JudgingPort for Timed {
    async fn acquire(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
    ) -> Result<Acquired, PortError> {
        let acquired = JudgingPort::acquire(&self.inner, id, generation, attempt).await;
        let now = Instant::now();
        self.marks.lock().unwrap().insert(id, (now, now, now));
        acquired
    }

    async fn renew(&self, id: SubmissionId, attempt: &AttemptId) -> Result<bool, PortError> {
        JudgingPort::renew(&self.inner, id, attempt).await
    }

    async fn progress(
        &self,
        id: SubmissionId,
        attempt: &AttemptId,
        progress: JudgeProgress,
    ) -> Result<bool, PortError> {
        JudgingPort::progress(&self.inner, id, attempt, progress).await
    }

    async fn complete(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        result: &JudgeResult,
    ) -> Result<bool, PortError> {
        let called = Instant::now();
        let written = JudgingPort::complete(&self.inner, id, generation, attempt, result).await;
        let done = Instant::now();
        if let Some(marks) = self.marks.lock().unwrap().get_mut(&id) {
            marks.1 = called;
            marks.2 = done;
        }
        written
    }

    async fn infrastructure_failure(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        reason: &str,
    ) -> Result<bool, PortError> {
        JudgingPort::infrastructure_failure(&self.inner, id, generation, attempt, reason).await
    }
}

async fn latency(
    args: &PipelineArgs,
    sandbox: Arc<sandbox::NativeSandbox>,
    languages: Arc<Languages>,
) -> anyhow::Result<(Percentiles, Percentiles, Percentiles)> {
    let stack = stack(args).await?;
    let packages_dir = tempfile::tempdir()?;
    let packages = LocalPackages::new(packages_dir.path());
    let aplusb =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/problems/aplusb");
    let hash = packages.register(&aplusb)?;
    let shutdown = Shutdown::new();
    let dispatcher = Dispatcher::new(
        stack.store.clone(),
        Some(stack.queue.clone()),
        DispatcherConfig::default(),
        Metrics::new(),
    );
    let dispatching = tokio::spawn(dispatcher.run(shutdown.clone()));
    let port = Arc::new(Timed {
        inner: stack.store.clone(),
        marks: Mutex::new(HashMap::new()),
    });
    let worker = Arc::new(JudgeWorker::new(
        stack.queue.clone(),
        port.clone(),
        Arc::new(packages),
        sandbox,
        languages,
        Metrics::new(),
        WorkerConfig {
            concurrency: 2,
            ..WorkerConfig::new("bench")
        },
    ));
    let working = tokio::spawn(worker.run(shutdown.clone(), Duration::from_secs(10)));
    // Let the dispatcher's LISTEN and the worker's first receive settle.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let facts = facts(&hash);
    let mut submitted = HashMap::new();
    let period = Duration::from_secs_f64(1.0 / args.rate.max(0.1));
    let mut next = tokio::time::Instant::now();
    for i in 0..args.submissions {
        tokio::time::sleep_until(next).await;
        next += period;
        let request = SubmitRequest {
            user_id: UserId(1),
            problem_id: ProblemId(1),
            language: "c".into(),
            source: format!("{SUM_C}/* {i} */\n"),
            idempotency_key: None,
        };
        let started = Instant::now();
        let id = stack.store.submit(&facts, &request).await?.id;
        submitted.insert(id, started);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let done = port
            .marks
            .lock()
            .unwrap()
            .values()
            .filter(|m| m.2 > m.0)
            .count();
        if done >= submitted.len() || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    shutdown.trigger();
    let _ = dispatching.await;
    let _ = working.await;
    let marks = port.marks.lock().unwrap().clone();
    let (mut total, mut share, mut judging) = (Vec::new(), Vec::new(), Vec::new());
    for (id, started) in submitted {
        let Some((acquired, called, written)) = marks.get(&id).copied() else {
            bail!("submission {id} was never judged")
        };
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        total.push(ms(written - started));
        judging.push(ms(called - acquired));
        share.push(ms(written - started) - ms(called - acquired));
    }
    Ok((percentiles(total), percentiles(share), percentiles(judging)))
}

pub fn run(args: PipelineArgs) -> anyhow::Result<std::process::ExitCode> {
    let sandbox = Arc::new(super::native_sandbox()?);
    let configs = default_languages()
        .into_iter()
        .filter(|c| c.id == "c")
        .collect();
    let languages = Arc::new(Languages::detect(sandbox.as_ref(), configs));
    if let Some(missing) = languages.unavailable.first() {
        bail!("{} is unavailable: {}", missing.name, missing.reason);
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let bench = runtime.block_on(async {
        let relay_rows_per_second = relay(&args).await?;
        let (total, share, judging) = latency(&args, sandbox, languages).await?;
        anyhow::Ok(PipelineBench {
            backend: args.backend,
            relay_rows: args.rows,
            relay_rows_per_second,
            latency_submissions: args.submissions,
            submit_to_verdict: total,
            pipeline_share: share,
            judging,
        })
    })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&bench)?);
    } else {
        println!("backend: {:?}", bench.backend);
        println!(
            "outbox relay: {} rows at {:.0} rows/s",
            bench.relay_rows, bench.relay_rows_per_second
        );
        println!(
            "submit to verdict ({} submissions at {}/s): p50 {:.1} ms, p99 {:.1} ms",
            bench.latency_submissions,
            args.rate,
            bench.submit_to_verdict.p50_ms,
            bench.submit_to_verdict.p99_ms
        );
        println!(
            "  pipeline share: p50 {:.1} ms, p99 {:.1} ms",
            bench.pipeline_share.p50_ms, bench.pipeline_share.p99_ms
        );
        println!(
            "  judging (compile + 8 tests): p50 {:.1} ms, p99 {:.1} ms",
            bench.judging.p50_ms, bench.judging.p99_ms
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}
