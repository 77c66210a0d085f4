//! `ulticode chaos`: the distributed shape under faults, with its invariants checked.
//!
//! Starts a private Redis (so flushing and restarting it disturbs nobody), a fresh PostgreSQL
//! database with the Submission owner's schema and role, one dispatcher process and several
//! judge-worker processes. It submits A+B solutions with known verdicts (AC, WA, TLE, CE) at a
//! steady pace and, while they are judged, injects every kind of fault on a seeded schedule:
//! SIGKILL of workers and of the dispatcher, SIGSTOP/SIGCONT of a worker past its lease,
//! Redis FLUSHALL and restart, `pg_terminate_backend` of the pipeline's connections, duplicate
//! deliveries, and rejudge storms racing in-flight attempts. Then it checks:
//!
//! - I1 no accepted submission is lost;
//! - I2 every submission is terminal within the bound;
//! - I3 at most one verdict per (submission, generation);
//! - I4 the final verdict belongs to the current generation and its recorded attempt;
//! - I5 fence tokens only increase;
//! - I6 every verdict equals the expected one;
//! - I7 no queue entry is left for a terminal submission, and dead letters are accounted for.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use contracts::{
    JudgeMessage, ProblemId, SubmissionFactsSnapshot, SubmissionId, UserId, Verdict,
    FACTS_SCHEMA_VERSION,
};
use judge_worker::LocalPackages;
use platform::db::Row;
use platform::testing::TestPostgres;
use platform::Db;
use queue::{JudgeQueue, QueueConfig, RedisQueue};
use serde::Serialize;
use submission::{SubmissionConfig, SubmissionStore, SubmitRequest};

#[derive(Debug, Args)]
pub struct ChaosArgs {
    /// Submissions to judge.
    #[arg(long, default_value_t = 200)]
    submissions: usize,
    /// Upper bound on the whole run, in seconds (faults stop, then invariants are checked).
    #[arg(long, default_value_t = 1800)]
    duration: u64,
    /// Seed of the submission mix and the fault schedule.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Judge-worker processes (at least 3).
    #[arg(long, default_value_t = 3)]
    workers: usize,
    /// I2: the bound on each submission's time from submit to terminal, in seconds.
    #[arg(long, default_value_t = 300)]
    bound: u64,
    /// Seconds between faults.
    #[arg(long, default_value_t = 3)]
    fault_interval: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Keep the work directory (logs) afterwards.
    #[arg(long)]
    keep: bool,
}

/// A small deterministic generator (xorshift64*): the run is reproducible from its seed.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
enum Fault {
    KillWorker,
    KillDispatcher,
    StopWorkerPastLease,
    FlushRedis,
    RestartRedis,
    TerminateBackends,
    DuplicateDeliveries,
    RejudgeStorm,
}

const FAULTS: [Fault; 8] = [
    Fault::KillWorker,
    Fault::KillDispatcher,
    Fault::StopWorkerPastLease,
    Fault::FlushRedis,
    Fault::RestartRedis,
    Fault::TerminateBackends,
    Fault::DuplicateDeliveries,
    Fault::RejudgeStorm,
];

const SUM_C: &str = "#include <stdio.h>\nint main(void){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);return 0;}\n";
const DIFFERENCE_PY: &str = "a, b = map(int, input().split())\nprint(a - b)\n";
const SPIN_C: &str = "int main(void){volatile unsigned long x=0;for(;;)x++;}\n";
const BROKEN_C: &str = "int main(void){ return }\n";

/// (expected verdict, language, source), drawn by weight.
fn kind(rng: &mut Rng) -> (Verdict, &'static str, &'static str) {
    match rng.below(20) {
        0..=7 => (Verdict::AC, "c", SUM_C),
        8..=12 => (Verdict::WA, "python3", DIFFERENCE_PY),
        13..=15 => (Verdict::TLE, "c", SPIN_C),
        _ => (Verdict::CE, "c", BROKEN_C),
    }
}

/// Timing of the pipeline under test, short enough for faults to play out in seconds.
const LEASE_TTL_MS: u64 = 3_000;
const VISIBILITY_TIMEOUT_S: u64 = 8;
const SWEEP_AFTER_MS: u64 = 10_000;
/// Submissions in flight at once: the queue never backs up past the sweeper's threshold.
const OUTSTANDING: usize = 12;
/// Users the submissions are spread over.
const USERS: usize = 6;

pub(super) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// A child process of the run, restartable.
pub(super) struct Managed {
    pub(super) name: String,
    pub(super) program: PathBuf,
    pub(super) args: Vec<String>,
    pub(super) env: Vec<(String, String)>,
    pub(super) log: PathBuf,
    pub(super) child: Option<Child>,
}

impl Managed {
    pub(super) fn start(&mut self) -> anyhow::Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let child = Command::new(&self.program)
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .with_context(|| format!("start {}", self.name))?;
        self.child = Some(child);
        Ok(())
    }

    fn pid(&self) -> Option<i32> {
        self.child.as_ref().map(|c| c.id() as i32)
    }

    pub(super) fn signal(&self, signal: i32) {
        if let Some(pid) = self.pid() {
            // SAFETY: signalling our own child, which we have not reaped.
            unsafe { libc::kill(pid, signal) };
        }
    }

    pub(super) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        self.signal(libc::SIGCONT);
        self.kill();
    }
}

#[derive(Debug, Default, Serialize)]
struct Report {
    seed: u64,
    submissions: usize,
    workers: usize,
    elapsed_s: f64,
    faults: BTreeMap<String, usize>,
    verdicts: BTreeMap<String, usize>,
    max_generation: i64,
    rejudges: usize,
    duplicates_enqueued: usize,
    stale_results_dropped: u64,
    recoveries: i64,
    dead_letters: u64,
    latency_p50_ms: u64,
    latency_max_ms: u64,
    violations: Vec<String>,
}

struct Tracked {
    expected: Verdict,
    submitted: Instant,
    terminal: Option<Instant>,
}

pub fn run(args: ChaosArgs) -> anyhow::Result<ExitCode> {
    if args.workers < 3 {
        bail!("--workers must be at least 3");
    }
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(chaos(&args))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_report(report: &Report) {
    println!(
        "chaos run: seed {}, {} submissions, {} workers, {:.1} s",
        report.seed, report.submissions, report.workers, report.elapsed_s
    );
    println!("faults injected:");
    for (fault, count) in &report.faults {
        println!("  {fault:<24} {count}");
    }
    println!("verdicts: {:?}", report.verdicts);
    println!(
        "rejudges {}, duplicate deliveries {}, stale results dropped {}, recoveries {}, dead letters {}, highest generation {}",
        report.rejudges, report.duplicates_enqueued, report.stale_results_dropped, report.recoveries, report.dead_letters, report.max_generation
    );
    println!(
        "submit-to-terminal latency: p50 {} ms, max {} ms",
        report.latency_p50_ms, report.latency_max_ms
    );
    if report.violations.is_empty() {
        println!("invariants I1-I7: all hold");
    } else {
        println!("VIOLATIONS ({}):", report.violations.len());
        for violation in &report.violations {
            println!("  {violation}");
        }
    }
}

async fn chaos(args: &ChaosArgs) -> anyhow::Result<Report> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(args.duration);
    let mut rng = Rng::new(args.seed);
    let work = tempfile::Builder::new()
        .prefix("ulticode-chaos-")
        .tempdir()?;
    let work_path = work.path().to_path_buf();
    let exe = std::env::current_exe()?;

    // A private Redis.
    let (mut redis, redis_url) = private_redis(&work_path).await?;

    // A fresh database with the Submission owner's schema and role.
    let pg = TestPostgres::new()
        .await
        .context("create the chaos database")?;
    let submission_url = pg.owner_url("submission").await?;
    let store = SubmissionStore::open(
        Db::connect(&submission_url, Some("submission"), 4).await?,
        SubmissionConfig {
            lease_ttl: Duration::from_millis(LEASE_TTL_MS),
            max_recoveries: 50,
        },
    )
    .await?;
    let admin = Db::connect(&pg.url(), None, 1).await?;
    let database = pg.url().rsplit('/').next().unwrap_or_default().to_string();

    let packages = work_path.join("packages");
    std::fs::create_dir_all(&packages)?;
    let aplusb = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/problems/aplusb");
    let hash = LocalPackages::new(&packages)
        .register(&aplusb)
        .context("register A+B")?;
    let token = uuid::Uuid::new_v4().simple().to_string();
    let judging_port = free_port()?;
    let common_env = vec![
        ("ULTICODE_SERVICE_TOKEN".to_string(), token.clone()),
        ("ULTICODE_LOG".to_string(), "info".to_string()),
    ];
    let queue_flags = |flags: &mut Vec<String>| {
        flags.extend(
            [
                "--redis-url",
                &redis_url,
                "--queue-prefix",
                "chaos",
                "--visibility-timeout-s",
                &VISIBILITY_TIMEOUT_S.to_string(),
                "--max-deliveries",
                "10",
            ]
            .iter()
            .map(|s| s.to_string()),
        )
    };
    let mut dispatcher_args: Vec<String> = [
        "dispatcher",
        "--database-url",
        &submission_url,
        "--judging-listen",
        &format!("127.0.0.1:{judging_port}"),
        "--metrics-listen",
        "127.0.0.1:0",
        "--lease-ttl-ms",
        &LEASE_TTL_MS.to_string(),
        "--max-recoveries",
        "50",
        "--interval-ms",
        "500",
        "--reap-interval-ms",
        "1000",
        "--sweep-after-ms",
        &SWEEP_AFTER_MS.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    queue_flags(&mut dispatcher_args);
    let mut dispatcher = Managed {
        name: "dispatcher".into(),
        program: exe.clone(),
        args: dispatcher_args,
        env: common_env.clone(),
        log: work_path.join("dispatcher.log"),
        child: None,
    };
    dispatcher.start()?;
    let mut workers: Vec<Managed> = (0..args.workers)
        .map(|i| {
            let mut flags: Vec<String> = [
                "judge-worker",
                "--judging-url",
                &format!("http://127.0.0.1:{judging_port}"),
                "--packages",
                &packages.display().to_string(),
                "--heartbeat-ms",
                &(LEASE_TTL_MS / 3).to_string(),
                "--reclaim-interval-ms",
                "2000",
                "--consumer",
                &format!("chaos-worker-{i}"),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            queue_flags(&mut flags);
            Managed {
                name: format!("worker-{i}"),
                program: exe.clone(),
                args: flags,
                env: common_env.clone(),
                log: work_path.join(format!("worker-{i}.log")),
                child: None,
            }
        })
        .collect();
    for worker in &mut workers {
        worker.start()?;
    }
    let chaos_queue: Arc<dyn JudgeQueue> = Arc::new(
        RedisQueue::connect(&redis_url, "chaos", QueueConfig::default())
            .await
            .context("connect the harness to Redis")?,
    );

    let facts = SubmissionFactsSnapshot {
        schema_version: FACTS_SCHEMA_VERSION,
        user_id: UserId(1),
        user_exists: true,
        problem_id: ProblemId(1),
        problem_title: "A plus B".into(),
        problem_slug: "aplusb".into(),
        time_limit_ms: 500,
        memory_mib: 256,
        starter_code: None,
        package_hash: hash,
        contest_id: None,
        contest: None,
        captured_at_ms: 0,
    };
    let mut tracked: HashMap<SubmissionId, Tracked> = HashMap::new();
    let mut report = Report {
        seed: args.seed,
        submissions: args.submissions,
        workers: args.workers,
        ..Report::default()
    };
    let mut fault_plan: Vec<Fault> = Vec::new();
    let mut next_fault = Instant::now() + Duration::from_secs(2);
    let mut stopped_worker: Option<(usize, Instant)> = None;
    let mut lease_tokens: HashMap<String, i64> = HashMap::new();
    let mut last_token_check = Instant::now();

    loop {
        let now = Instant::now();
        if now >= deadline {
            report.violations.push(format!(
                "the run hit its duration cap of {} s",
                args.duration
            ));
            break;
        }
        // Keep a steady number of submissions in flight.
        let outstanding = tracked.values().filter(|t| t.terminal.is_none()).count();
        if tracked.len() < args.submissions && outstanding < OUTSTANDING {
            let (expected, language, source) = kind(&mut rng);
            // Several users, so the dispatcher's per-user limit is exercised under the faults
            // without capping the run's throughput at one user's share.
            let user = UserId(1 + (tracked.len() % USERS) as i64);
            let facts = SubmissionFactsSnapshot {
                user_id: user,
                ..facts.clone()
            };
            let request = SubmitRequest {
                user_id: user,
                problem_id: ProblemId(1),
                language: language.into(),
                source: source.into(),
                idempotency_key: Some(format!("chaos-{}", tracked.len())),
            };
            // The database may be refusing connections right now (terminated backends).
            for _ in 0..50 {
                match store.submit(&facts, &request).await {
                    Ok(done) => {
                        tracked.insert(
                            done.id,
                            Tracked {
                                expected,
                                submitted: Instant::now(),
                                terminal: None,
                            },
                        );
                        break;
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, "submit retry");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            }
            continue;
        }

        // Faults, every fault kind at least once per round, in a seeded order.
        if now >= next_fault {
            if fault_plan.is_empty() {
                fault_plan = FAULTS.to_vec();
                for i in (1..fault_plan.len()).rev() {
                    fault_plan.swap(i, rng.below(i + 1));
                }
            }
            let fault = fault_plan.pop().expect("refilled above");
            let done = inject(
                fault,
                &mut rng,
                &mut workers,
                &mut dispatcher,
                &mut redis,
                &redis_url,
                &admin,
                &database,
                &store,
                &chaos_queue,
                &tracked,
                &mut stopped_worker,
                &mut report,
            )
            .await;
            match done {
                Ok(()) => *report.faults.entry(format!("{fault:?}")).or_default() += 1,
                Err(e) => tracing::warn!(?fault, error = %e, "fault injection failed"),
            }
            next_fault = Instant::now() + Duration::from_secs(args.fault_interval);
        }
        if let Some((index, since)) = stopped_worker {
            if since.elapsed() >= Duration::from_millis(LEASE_TTL_MS * 2) {
                workers[index].signal(libc::SIGCONT);
                stopped_worker = None;
            }
        }
        // I5: fence tokens only increase.
        if last_token_check.elapsed() >= Duration::from_millis(500) {
            last_token_check = Instant::now();
            if let Ok(rows) = store
                .db()
                .query("SELECT name, fence_token FROM leases")
                .fetch_all(store.db().pool())
                .await
            {
                for row in rows {
                    let (name, token): (String, i64) = (row.try_get(0)?, row.try_get(1)?);
                    let previous = lease_tokens.insert(name.clone(), token).unwrap_or(i64::MIN);
                    if token < previous {
                        report.violations.push(format!(
                            "I5: lease {name} token went from {previous} to {token}"
                        ));
                    }
                }
            }
        }
        // Progress.
        let rows = store
            .db()
            .query("SELECT id FROM submissions WHERE state = 'done'")
            .fetch_all(store.db().pool())
            .await;
        if let Ok(rows) = rows {
            for row in rows {
                let id = SubmissionId(row.try_get(0)?);
                if let Some(t) = tracked.get_mut(&id) {
                    t.terminal.get_or_insert_with(Instant::now);
                }
            }
        }
        let all_terminal =
            tracked.len() == args.submissions && tracked.values().all(|t| t.terminal.is_some());
        // Every kind of fault must have happened at least once before the run may end.
        let all_faults_seen = FAULTS
            .iter()
            .all(|f| report.faults.contains_key(&format!("{f:?}")));
        if all_terminal && all_faults_seen && stopped_worker.is_none() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // Let the pipeline settle (late acknowledgements, reclaims), then check.
    let settle_until = Instant::now() + Duration::from_secs(VISIBILITY_TIMEOUT_S * 3);
    loop {
        let pending = store
            .db()
            .query("SELECT COUNT(*) FROM submissions WHERE state <> 'done'")
            .fetch_one(store.db().pool())
            .await?
            .try_get::<i64, _>(0)?;
        let stats = chaos_queue.stats().await.ok();
        let drained = stats.is_some_and(|s| s.length == 0 && s.pending == 0);
        if (pending == 0 && drained) || Instant::now() >= settle_until {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    check(&store, &chaos_queue, &tracked, args, &mut report).await?;
    report.stale_results_dropped = stale_drops(&work_path);
    report.elapsed_s = started.elapsed().as_secs_f64();

    for worker in &mut workers {
        worker.signal(libc::SIGCONT);
        worker.kill();
    }
    dispatcher.kill();
    redis.kill();
    if args.keep || !report.violations.is_empty() {
        let kept = work.keep();
        eprintln!("logs kept in {}", kept.display());
    }
    Ok(report)
}

/// A Redis of the run's own on a free port (no persistence: a restart loses everything),
/// logging into `work`; with its URL.
pub(super) async fn private_redis(work: &std::path::Path) -> anyhow::Result<(Managed, String)> {
    let port = free_port()?;
    let url = format!("redis://127.0.0.1:{port}");
    let mut redis = Managed {
        name: "redis".into(),
        program: "redis-server".into(),
        args: [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        env: Vec::new(),
        log: work.join("redis.log"),
        child: None,
    };
    redis.start()?;
    wait_for_redis(&url).await?;
    Ok((redis, url))
}

pub(super) async fn wait_for_redis(url: &str) -> anyhow::Result<()> {
    for _ in 0..100 {
        if let Ok(client) = redis::Client::open(url) {
            if let Ok(mut conn) = client.get_multiplexed_async_connection().await {
                let pong: Result<String, _> = redis::cmd("PING").query_async(&mut conn).await;
                if pong.is_ok() {
                    return Ok(());
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("redis did not start at {url}")
}

#[allow(clippy::too_many_arguments)]
async fn inject(
    fault: Fault,
    rng: &mut Rng,
    workers: &mut [Managed],
    dispatcher: &mut Managed,
    redis: &mut Managed,
    redis_url: &str,
    admin: &Db,
    database: &str,
    store: &SubmissionStore,
    queue: &Arc<dyn JudgeQueue>,
    tracked: &HashMap<SubmissionId, Tracked>,
    stopped: &mut Option<(usize, Instant)>,
    report: &mut Report,
) -> anyhow::Result<()> {
    match fault {
        Fault::KillWorker => {
            let index = loop {
                let i = rng.below(workers.len());
                if stopped.map(|(s, _)| s) != Some(i) {
                    break i;
                }
            };
            workers[index].signal(libc::SIGKILL);
            workers[index].kill();
            tokio::time::sleep(Duration::from_millis(300)).await;
            workers[index].start()
        }
        Fault::KillDispatcher => {
            dispatcher.signal(libc::SIGKILL);
            dispatcher.kill();
            tokio::time::sleep(Duration::from_millis(500)).await;
            dispatcher.start()
        }
        Fault::StopWorkerPastLease => {
            if stopped.is_some() {
                bail!("a worker is already stopped");
            }
            // Prefer a worker that is judging right now, so its lease really expires under it.
            let busy = busy_consumers(redis_url).await.unwrap_or_default();
            let index = workers
                .iter()
                .position(|w| busy.iter().any(|c| w.args.iter().any(|a| a == c)))
                .unwrap_or_else(|| rng.below(workers.len()));
            workers[index].signal(libc::SIGSTOP);
            *stopped = Some((index, Instant::now()));
            Ok(())
        }
        Fault::FlushRedis => {
            let client = redis::Client::open(redis_url)?;
            let mut conn = client.get_multiplexed_async_connection().await?;
            let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await?;
            Ok(())
        }
        Fault::RestartRedis => {
            redis.signal(libc::SIGKILL);
            redis.kill();
            tokio::time::sleep(Duration::from_millis(300)).await;
            redis.start()?;
            wait_for_redis(redis_url).await
        }
        Fault::TerminateBackends => {
            let killed = admin
                .query("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()")
                .bind(database.to_string())
                .fetch_one(admin.pool())
                .await?
                .try_get::<i64, _>(0)?;
            tracing::info!(killed, "terminated backends");
            Ok(())
        }
        Fault::DuplicateDeliveries => {
            let ids: Vec<SubmissionId> = tracked.keys().copied().collect();
            for n in 0..5 {
                let Some(&id) = ids.get(rng.below(ids.len())) else {
                    break;
                };
                let Some(record) = store.get(id).await? else {
                    continue;
                };
                let message = JudgeMessage {
                    submission_id: id,
                    generation: record.generation,
                    user_id: record.user_id,
                    problem_id: record.problem_id,
                    language: record.language,
                    source: record.source,
                    package_hash: record.facts.package_hash,
                };
                let key = format!("dup:{id}:{}:{n}:{}", record.generation, rng.next());
                queue
                    .enqueue(&key, &serde_json::to_string(&message)?)
                    .await?;
                report.duplicates_enqueued += 1;
            }
            Ok(())
        }
        Fault::RejudgeStorm => {
            let ids: Vec<SubmissionId> = tracked.keys().copied().collect();
            for _ in 0..8 {
                let Some(&id) = ids.get(rng.below(ids.len())) else {
                    break;
                };
                if store.rejudge(id, None).await?.is_some() {
                    report.rejudges += 1;
                }
            }
            Ok(())
        }
    }
}

/// Consumers with entries in the pending-entries list.
async fn busy_consumers(redis_url: &str) -> anyhow::Result<Vec<String>> {
    let client = redis::Client::open(redis_url)?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let pending: Vec<(String, String, u64, u64)> = redis::cmd("XPENDING")
        .arg("{chaos}:judge")
        .arg(queue::GROUP)
        .arg("-")
        .arg("+")
        .arg(100)
        .query_async(&mut conn)
        .await?;
    Ok(pending
        .into_iter()
        .map(|(_, consumer, _, _)| consumer)
        .collect())
}

/// Counts `judge_stale_result_dropped` log lines of the workers (their metrics die with them).
fn stale_drops(work: &Path) -> u64 {
    let mut count = 0;
    for entry in std::fs::read_dir(work).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with("worker-") {
            count += std::fs::read_to_string(entry.path())
                .unwrap_or_default()
                .lines()
                .filter(|l| l.contains("Stale("))
                .count() as u64;
        }
    }
    count
}

async fn check(
    store: &SubmissionStore,
    queue: &Arc<dyn JudgeQueue>,
    tracked: &HashMap<SubmissionId, Tracked>,
    args: &ChaosArgs,
    report: &mut Report,
) -> anyhow::Result<()> {
    let db = store.db();
    let mut latencies = Vec::new();
    for (id, t) in tracked {
        let Some(record) = store.get(*id).await? else {
            report
                .violations
                .push(format!("I1: submission {id} was accepted but is gone"));
            continue;
        };
        if record.state != "done" {
            report.violations.push(format!(
                "I2: submission {id} is still {} (generation {})",
                record.state, record.generation
            ));
            continue;
        }
        let latency = t
            .terminal
            .map_or(Duration::MAX, |done| done.duration_since(t.submitted));
        if latency > Duration::from_secs(args.bound) {
            report.violations.push(format!(
                "I2: submission {id} took {latency:?}, over the {} s bound",
                args.bound
            ));
        }
        latencies.push(latency.as_millis() as u64);
        report.max_generation = report.max_generation.max(record.generation.0);
        let verdict = record.verdict.unwrap_or(Verdict::SE);
        *report.verdicts.entry(verdict.to_string()).or_default() += 1;
        if verdict != t.expected {
            report.violations.push(format!(
                "I6: submission {id} got {verdict}, expected {} ({})",
                t.expected,
                record.message.unwrap_or_default()
            ));
        }
        if record.judged_generation != Some(record.generation) {
            report.violations.push(format!(
                "I4: submission {id} verdict is for generation {:?}, current is {}",
                record.judged_generation, record.generation
            ));
        }
        // I4: the event of the current generation names the attempt recorded with the verdict.
        let event = db
            .query("SELECT payload FROM events_outbox WHERE event_type = 'SubmissionJudged' AND aggregate_id = $1 AND aggregate_version = $2")
            .bind(id.0)
            .bind(record.generation.0)
            .fetch_optional(db.pool())
            .await?;
        match event {
            None => report.violations.push(format!(
                "I4: submission {id} has no verdict event for its current generation"
            )),
            Some(row) => {
                let payload: serde_json::Value =
                    serde_json::from_str(&row.try_get::<String, _>(0)?)?;
                let attempt = payload["attempt_id"].as_str().map(str::to_string);
                if attempt != record.judged_attempt_id {
                    report.violations.push(format!(
                        "I4: submission {id} verdict attempt {:?} differs from its event's {:?}",
                        record.judged_attempt_id, attempt
                    ));
                }
            }
        }
    }
    // Every generation beyond the first came from a rejudge or a recovery (reaper, sweeper,
    // infrastructure failure): the intents tell how many.
    let intents: i64 = db
        .query("SELECT COUNT(*) FROM judge_outbox")
        .fetch_one(db.pool())
        .await?
        .try_get(0)?;
    report.recoveries = intents - tracked.len() as i64 - report.rejudges as i64;
    latencies.sort();
    report.latency_p50_ms = latencies.get(latencies.len() / 2).copied().unwrap_or(0);
    report.latency_max_ms = latencies.last().copied().unwrap_or(0);

    // I3: at most one verdict per (submission, generation).
    let duplicates = db
        .query("SELECT aggregate_id, aggregate_version, COUNT(*) FROM events_outbox WHERE event_type = 'SubmissionJudged' GROUP BY aggregate_id, aggregate_version HAVING COUNT(*) > 1")
        .fetch_all(db.pool())
        .await?;
    for row in duplicates {
        report.violations.push(format!(
            "I3: submission {} generation {} has {} verdicts",
            row.try_get::<i64, _>(0)?,
            row.try_get::<i64, _>(1)?,
            row.try_get::<i64, _>(2)?
        ));
    }

    // I7: nothing left in the queue for terminal submissions; dead letters accounted for.
    let stats = queue.stats().await?;
    if stats.pending > 0 || stats.length > 0 {
        report.violations.push(format!(
            "I7: {} entries ({} pending) left in the queue after every submission ended",
            stats.length, stats.pending
        ));
    }
    report.dead_letters = stats.dead_letters;
    for letter in queue.dead_letters(10_000).await? {
        match serde_json::from_str::<JudgeMessage>(&letter.payload) {
            Ok(message) => {
                let terminal = store
                    .get(message.submission_id)
                    .await?
                    .is_some_and(|r| r.state == "done");
                if !terminal {
                    report.violations.push(format!(
                        "I7: dead letter {} holds the only intent of unfinished submission {}",
                        letter.id, message.submission_id
                    ));
                }
            }
            Err(_) => report.violations.push(format!(
                "I7: dead letter {} is undecodable and was not injected",
                letter.id
            )),
        }
    }
    Ok(())
}
