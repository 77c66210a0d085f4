//! The distributed shape's background processes: the dispatcher (the Submission owner's
//! outbox dispatcher, lease reaper, delivery sweeper and internal judging port) and the
//! judge workers (no database credentials: queue + judging port over HTTP).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::Args;
use contracts::ProblemPackagePort;
use judge::{default_languages, Languages};
use judge_worker::{HttpJudgingPort, HttpPackages, JudgeWorker, LocalPackages, WorkerConfig};
use platform::{Db, Metrics, Shutdown};
use queue::{JudgeQueue, QueueConfig, RedisQueue, SqlQueue};
use submission::{
    Dispatcher, DispatcherConfig, MaintenanceConfig, SubmissionConfig, SubmissionStore,
};

/// Where the judge queue lives.
#[derive(Debug, Args, Clone)]
pub struct QueueArgs {
    /// Redis URL; without it the queue is the SQL stream in the submission database.
    #[arg(long, env = "ULTICODE_REDIS_URL")]
    pub redis_url: Option<String>,
    /// Hash-tag prefix of the queue's Redis keys.
    #[arg(long, default_value = "ulticode", env = "ULTICODE_QUEUE_PREFIX")]
    pub queue_prefix: String,
    /// Idle time after which a pending entry is reclaimed, in seconds.
    #[arg(long, default_value_t = 1800)]
    pub visibility_timeout_s: u64,
    /// Deliveries after which an entry becomes a dead letter.
    #[arg(long, default_value_t = 5)]
    pub max_deliveries: u64,
}

impl QueueArgs {
    pub fn config(&self) -> QueueConfig {
        QueueConfig {
            visibility_timeout: Duration::from_secs(self.visibility_timeout_s),
            max_deliveries: self.max_deliveries,
            ..QueueConfig::default()
        }
    }

    /// The Redis queue, or the SQL stream on `sql_url` (the queue's own schema or file).
    pub async fn open(&self, sql_url: Option<&str>) -> anyhow::Result<Arc<dyn JudgeQueue>> {
        match (&self.redis_url, sql_url) {
            (Some(redis), _) => Ok(Arc::new(
                RedisQueue::connect(redis, &self.queue_prefix, self.config())
                    .await
                    .context("connect to Redis")?,
            )),
            (None, Some(url)) => {
                let db = Db::connect(url, Some("queue"), 4)
                    .await
                    .context("connect the SQL stream")?;
                Ok(Arc::new(SqlQueue::new(db, self.config()).await?))
            }
            (None, None) => Err(anyhow!(
                "no queue: pass --redis-url (or run where the SQL stream's database is reachable)"
            )),
        }
    }

    /// The rate-limit buckets on Redis, shared by every replica (keys `{prefix}:rate:…`);
    /// without Redis each process limits on its own.
    pub async fn rate_store(&self) -> anyhow::Result<Option<Arc<dyn platform::rate::RateStore>>> {
        let Some(redis) = &self.redis_url else {
            return Ok(None);
        };
        let rates = queue::RedisRates::connect(redis, &self.queue_prefix)
            .await
            .context("connect the rate limits to Redis")?;
        Ok(Some(Arc::new(rates)))
    }

    /// The event consumers' streams on Redis (keys `{prefix}:events:<consumer>`).
    pub async fn open_events(&self) -> anyhow::Result<queue::events::EventStreams> {
        let redis = self
            .redis_url
            .as_deref()
            .ok_or_else(|| anyhow!("no event streams: pass --redis-url"))?;
        queue::events::EventStreams::redis(
            redis,
            &self.queue_prefix,
            queue::events::stream_config(),
        )
        .await
        .context("connect the event streams to Redis")
    }
}

/// Mail and the links notifications carry.
#[derive(Debug, Args, Clone)]
pub struct MailArgs {
    /// The mail server: `smtp://host:port` (add `?tls=required` for STARTTLS),
    /// `smtps://host:port`, with `user:password@` to authenticate (a secret: never logged).
    /// Without it, mail deliveries are recorded as skipped.
    #[arg(long, env = "ULTICODE_SMTP_URL", hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// The sender of mail.
    #[arg(
        long,
        env = "ULTICODE_MAIL_FROM",
        default_value = "UltiCode <ulticode@localhost.localdomain>"
    )]
    pub mail_from: String,
    /// The console's public address, which links in notifications start with
    /// [default: http://<listen address>].
    #[arg(long, env = "ULTICODE_PUBLIC_URL")]
    pub public_url: Option<String>,
}

impl MailArgs {
    pub fn mailer(&self) -> anyhow::Result<Option<notification::mail::Mailer>> {
        self.smtp_url
            .as_deref()
            .map(|url| notification::mail::Mailer::new(url, &self.mail_from))
            .transpose()
            .context("configure mail")
    }
}

#[derive(Debug, Args)]
pub struct DispatcherArgs {
    /// The Submission owner's database (its role; PostgreSQL or SQLite).
    #[arg(long, env = "ULTICODE_SUBMISSION_DATABASE_URL")]
    database_url: String,
    #[command(flatten)]
    queue: QueueArgs,
    /// Serve the internal judging port for remote judge workers here.
    #[arg(long, default_value = "127.0.0.1:7801")]
    judging_listen: SocketAddr,
    /// Serve Prometheus metrics here.
    #[arg(long, default_value = "127.0.0.1:7802")]
    metrics_listen: SocketAddr,
    /// The token judge workers present (a secret: never logged).
    #[arg(long, env = "ULTICODE_SERVICE_TOKEN", hide_env_values = true)]
    service_token: String,
    /// Judging lease TTL in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    lease_ttl_ms: u64,
    /// Recoveries before a submission ends in System Error.
    #[arg(long, default_value_t = 5)]
    max_recoveries: i64,
    /// Outbox rows per dispatch pass.
    #[arg(long, default_value_t = 50)]
    batch: i64,
    /// Submissions of one user queued or judging at once; the rest wait in the outbox, so
    /// one user's backlog cannot delay everyone else's verdicts (0: no limit).
    #[arg(long, default_value_t = 4)]
    max_in_flight_per_user: i64,
    /// Milliseconds between dispatch passes when nothing wakes the dispatcher.
    #[arg(long, default_value_t = 2_000)]
    interval_ms: u64,
    /// Milliseconds between lease-reaper passes.
    #[arg(long, default_value_t = 10_000)]
    reap_interval_ms: u64,
    /// A pending submission whose intent was sent this many milliseconds ago is re-driven.
    #[arg(long, default_value_t = 300_000)]
    sweep_after_ms: u64,
}

/// Logs to stderr, filtered by `ULTICODE_LOG` (default `info`); `ULTICODE_LOG_FORMAT=json`
/// writes one JSON object per event (with the request span's fields, e.g. `request_id`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("ULTICODE_LOG")
        .unwrap_or_else(|_| "info".into());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if std::env::var("ULTICODE_LOG_FORMAT").is_ok_and(|f| f == "json") {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

async fn serve(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    shutdown: Shutdown,
) -> std::io::Result<()> {
    platform::edge::serve(
        listener,
        app,
        platform::edge::ConnectionPolicy::default(),
        async move { shutdown.triggered().await },
    )
    .await
}

pub fn dispatcher(args: DispatcherArgs) -> anyhow::Result<ExitCode> {
    init_logging();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let shutdown = Shutdown::new();
        shutdown.trigger_on_signals();
        let metrics = Metrics::new();
        let db = Db::connect(&args.database_url, Some("submission"), 16)
            .await
            .context("connect the submission database")?;
        let config = SubmissionConfig {
            lease_ttl: Duration::from_millis(args.lease_ttl_ms),
            max_recoveries: args.max_recoveries,
        };
        let store = SubmissionStore::open(db, config).await?;
        let queue = args.queue.open(Some(&args.database_url)).await?;
        let judging = tokio::net::TcpListener::bind(args.judging_listen).await.context("bind the judging port")?;
        let metrics_listener = tokio::net::TcpListener::bind(args.metrics_listen).await.context("bind the metrics port")?;
        tracing::info!(judging = %judging.local_addr()?, metrics = %metrics_listener.local_addr()?, "dispatcher up");
        let owner = format!("dispatcher-{}-{}", hostname(), std::process::id());
        let dispatch = Dispatcher::new(
            store.clone(),
            Some(queue),
            DispatcherConfig {
                batch: args.batch,
                interval: Duration::from_millis(args.interval_ms),
                cutover_watermark_ms: 0,
                max_in_flight_per_user: args.max_in_flight_per_user,
            },
            metrics.clone(),
        );
        let maintenance = MaintenanceConfig {
            reap_interval: Duration::from_millis(args.reap_interval_ms),
            sweep_interval: Duration::from_millis(args.reap_interval_ms.max(1_000)),
            sweep_after: Duration::from_millis(args.sweep_after_ms),
            ..MaintenanceConfig::default()
        };
        let tasks = vec![
            tokio::spawn(dispatch.run(shutdown.clone())),
            tokio::spawn(submission::maintenance::run(store.clone(), owner, maintenance, metrics.clone(), shutdown.clone())),
            tokio::spawn({
                let app = submission::port::routes(store, platform::http::ServiceToken(args.service_token.into()), metrics.clone()).into();
                let shutdown = shutdown.clone();
                async move {
                    let _ = serve(judging, app, shutdown).await;
                }
            }),
            tokio::spawn({
                let (metrics, shutdown) = (metrics.clone(), shutdown.clone());
                async move {
                    let _ = metrics.serve(metrics_listener, shutdown).await;
                }
            }),
        ];
        shutdown.triggered().await;
        let _ = platform::lifecycle::drain(futures_join(tasks), Duration::from_secs(10)).await;
        Ok(ExitCode::SUCCESS)
    })
}

async fn futures_join(tasks: Vec<tokio::task::JoinHandle<()>>) {
    for task in tasks {
        let _ = task.await;
    }
}

pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map_or_else(|_| "host".into(), |h| h.trim().to_string())
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// The Submission owner's internal judging port.
    #[arg(
        long,
        env = "ULTICODE_JUDGING_URL",
        default_value = "http://127.0.0.1:7801"
    )]
    judging_url: String,
    /// The service token (a secret: never logged).
    #[arg(long, env = "ULTICODE_SERVICE_TOKEN", hide_env_values = true)]
    service_token: String,
    #[command(flatten)]
    queue: QueueArgs,
    /// Directory of problem packages by content hash (instead of `--packages-url`).
    #[arg(long, env = "ULTICODE_PACKAGES", conflicts_with = "packages_url")]
    packages: Option<PathBuf>,
    /// The API serving App's internal package route (`ulticode serve`); packages are fetched
    /// by content hash with the service token and cached in `--package-cache`.
    #[arg(long, env = "ULTICODE_PACKAGES_URL")]
    packages_url: Option<String>,
    /// Where fetched packages are unpacked [default: <temp dir>/ulticode-packages].
    #[arg(long)]
    package_cache: Option<PathBuf>,
    /// Where successful compilations are kept by content (rejudges do not compile again);
    /// without it nothing is kept.
    #[arg(long, env = "ULTICODE_COMPILE_CACHE")]
    compile_cache: Option<PathBuf>,
    /// The compile cache's bound in MiB (least recently used entries go first).
    #[arg(long, default_value_t = 1024)]
    compile_cache_mib: u64,
    /// Submissions judged at once.
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Deliveries leased ahead of a free judging slot, so a finished judging is followed at
    /// once (0: take work only when a slot is free, e.g. many workers sharing a short queue).
    #[arg(long, default_value_t = 1)]
    prefetch: usize,
    /// Lease renewal period in milliseconds (a third of the lease TTL).
    #[arg(long, default_value_t = 20_000)]
    heartbeat_ms: u64,
    /// Milliseconds between reclaim passes over idle pending entries.
    #[arg(long, default_value_t = 10_000)]
    reclaim_interval_ms: u64,
    /// This worker's consumer name [default: hostname-pid].
    #[arg(long)]
    consumer: Option<String>,
    /// Serve Prometheus metrics here.
    #[arg(long, default_value = "127.0.0.1:0")]
    metrics_listen: SocketAddr,
}

pub fn worker(args: WorkerArgs) -> anyhow::Result<ExitCode> {
    init_logging();
    // Languages are probed (in the sandbox) before the runtime starts its threads.
    let sandbox = Arc::new(super::native_sandbox()?);
    let languages = Arc::new(Languages::detect(sandbox.as_ref(), default_languages()));
    for unavailable in &languages.unavailable {
        tracing::info!(language = %unavailable.id, reason = %unavailable.reason, "language unavailable");
    }
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let shutdown = Shutdown::new();
        shutdown.trigger_on_signals();
        let metrics = Metrics::new();
        let queue = args.queue.open(None).await?;
        let consumer = args
            .consumer
            .unwrap_or_else(|| format!("{}-{}", hostname(), std::process::id()));
        let config = WorkerConfig {
            concurrency: args.concurrency,
            prefetch: args.prefetch,
            heartbeat: Duration::from_millis(args.heartbeat_ms),
            reclaim_interval: Duration::from_millis(args.reclaim_interval_ms),
            compile_cache: args
                .compile_cache
                .as_deref()
                .map(|dir| super::open_compile_cache(dir, args.compile_cache_mib))
                .transpose()?,
            ..WorkerConfig::new(consumer.clone())
        };
        let packages: Arc<dyn ProblemPackagePort> = match (args.packages, args.packages_url) {
            (Some(dir), _) => Arc::new(LocalPackages::new(dir)),
            (None, Some(url)) => Arc::new(HttpPackages::new(
                &url,
                &args.service_token,
                args.package_cache
                    .unwrap_or_else(|| std::env::temp_dir().join("ulticode-packages")),
            )),
            (None, None) => {
                return Err(anyhow!(
                    "say where packages come from: --packages DIR or --packages-url URL"
                ))
            }
        };
        let worker = Arc::new(JudgeWorker::new(
            queue,
            Arc::new(HttpJudgingPort::new(&args.judging_url, &args.service_token)),
            packages,
            sandbox,
            languages,
            metrics.clone(),
            config,
        ));
        let metrics_listener = tokio::net::TcpListener::bind(args.metrics_listen).await?;
        tracing::info!(%consumer, metrics = %metrics_listener.local_addr()?, "judge worker up");
        let serving = tokio::spawn({
            let shutdown = shutdown.clone();
            async move {
                let _ = metrics.serve(metrics_listener, shutdown).await;
            }
        });
        worker.run(shutdown, Duration::from_secs(30)).await;
        let _ = serving.await;
        Ok(ExitCode::SUCCESS)
    })
}
