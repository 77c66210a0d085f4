//! `ulticode chaos-events`: the event backbone under faults. Auth and App make business
//! changes on PostgreSQL while their relays (two per owner, one lease) and the consumers
//! (audit log, notifications, search index; two instances each) are killed mid-batch,
//! deliveries are duplicated, old search documents are delivered late (reordered
//! versions), and a private Redis is flushed and restarted empty. Afterwards:
//!
//! - E1: every committed change has exactly one audit record (and no record has no change);
//! - E2: every notification intent exists once, with exactly one ledger row per channel;
//! - E3: the search index equals one rebuilt from App.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use app::{AppService, NewProblem, ProblemPatch, Visibility};
use auth::{AuthConfig, AuthService, PasswordCost};
use clap::Args;
use contracts::admin::AccountAdmin;
use contracts::events::{consumers, consumers_of, types};
use contracts::{Principal, Role, UserId};
use platform::db::Row;
use platform::events::{Consume, Outbox, ENVELOPE_COLUMNS};
use platform::{Db, Metrics, Shutdown};
use queue::events::{run_consumer, ConsumerConfig, EventStreams, Relay, RelayConfig};
use queue::QueueConfig;
use serde::Serialize;
use tokio::task::JoinHandle;

use super::chaos::{private_redis, wait_for_redis, Managed, Rng};

#[derive(Debug, Args)]
pub struct ChaosEventsArgs {
    /// Business changes to make.
    #[arg(long, default_value_t = 300)]
    changes: usize,
    /// Seed of the workload and the fault schedule.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Upper bound on the wait for the backbone to settle after the last fault, in seconds.
    #[arg(long, default_value_t = 120)]
    settle: u64,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
enum Fault {
    KillRelay,
    KillConsumer,
    DuplicateDeliveries,
    ReorderVersions,
    FlushRedis,
    RestartRedis,
}

const FAULTS: [Fault; 6] = [
    Fault::KillRelay,
    Fault::KillConsumer,
    Fault::DuplicateDeliveries,
    Fault::ReorderVersions,
    Fault::FlushRedis,
    Fault::RestartRedis,
];

#[derive(Debug, Default, Serialize)]
struct Report {
    seed: u64,
    changes: usize,
    elapsed_s: f64,
    faults: BTreeMap<String, usize>,
    events: i64,
    audit_records: i64,
    notifications: i64,
    ledger_rows: i64,
    index_entries: usize,
    violations: Vec<String>,
}

/// A background task that can be killed (aborted: whatever it was doing stops at once, as
/// in a crash) and started again.
struct Restartable {
    start: Box<dyn Fn() -> JoinHandle<()> + Send>,
    task: Option<JoinHandle<()>>,
}

impl Restartable {
    fn new(start: Box<dyn Fn() -> JoinHandle<()> + Send>) -> Self {
        let task = Some(start());
        Self { start, task }
    }

    fn kill(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }

    fn restart(&mut self) {
        self.kill();
        self.task = Some((self.start)());
    }
}

struct Owners {
    auth: AuthService,
    app: AppService,
    audit: admin::AuditConsumer,
    audit_db: Db,
    notification: notification::NotificationService,
    index: search::SearchIndex,
    outboxes: Vec<Outbox>,
}

pub fn run(args: ChaosEventsArgs) -> anyhow::Result<std::process::ExitCode> {
    super::services::init_logging();
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(chaos(&args))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} changes, {} events, {} audit records, {} notifications, faults {:?}: {} violation(s)",
            report.changes,
            report.events,
            report.audit_records,
            report.notifications,
            report.faults,
            report.violations.len()
        );
        for v in &report.violations {
            println!("  {v}");
        }
    }
    Ok(if report.violations.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    })
}

async fn chaos(args: &ChaosEventsArgs) -> anyhow::Result<Report> {
    let started = Instant::now();
    let work = tempfile::Builder::new()
        .prefix("ulticode-chaos-events-")
        .tempdir()?;
    let (mut redis, redis_url) = private_redis(work.path()).await?;
    let postgres = platform::testing::TestPostgres::new()
        .await
        .context("a database")?;
    let owners = open(&postgres, work.path()).await?;
    let config = QueueConfig {
        visibility_timeout: Duration::from_secs(1),
        max_deliveries: 1_000,
        dedup_window: Duration::from_secs(3600),
        ..QueueConfig::default()
    };
    let streams = EventStreams::redis(&redis_url, "chaos", config).await?;
    let metrics = Metrics::new();
    let shutdown = Shutdown::new();

    let mut tasks: Vec<Restartable> = Vec::new();
    let mut relays = Vec::new();
    for outbox in &owners.outboxes {
        for holder in ["relay-a", "relay-b"] {
            let (outbox, streams, metrics, shutdown) = (
                outbox.clone(),
                streams.clone(),
                metrics.clone(),
                shutdown.clone(),
            );
            relays.push(tasks.len());
            tasks.push(Restartable::new(Box::new(move || {
                let mut config = RelayConfig::new(holder);
                config.lease_ttl = Duration::from_secs(2);
                config.interval = Duration::from_millis(200);
                let relay = Relay::new(outbox.clone(), streams.clone(), config, metrics.clone());
                tokio::spawn(relay.run(shutdown.clone()))
            })));
        }
    }
    let handlers: Vec<Arc<dyn Consume>> = vec![
        Arc::new(owners.audit.clone()),
        Arc::new(owners.notification.clone()),
        Arc::new(owners.index.clone()),
    ];
    let mut consumer_tasks = Vec::new();
    for handler in handlers {
        for instance in ["one", "two"] {
            let stream = streams.stream(handler.name()).context("a stream")?;
            let (handler, metrics, shutdown) = (handler.clone(), metrics.clone(), shutdown.clone());
            consumer_tasks.push(tasks.len());
            tasks.push(Restartable::new(Box::new(move || {
                let mut config = ConsumerConfig::new(format!("{}-{instance}", handler.name()));
                config.block = Duration::from_millis(200);
                config.reclaim_interval = Duration::from_millis(500);
                tokio::spawn(run_consumer(
                    stream.clone(),
                    handler.clone(),
                    config,
                    metrics.clone(),
                    shutdown.clone(),
                ))
            })));
        }
    }

    // The workload, beside the faults.
    let workload = tokio::spawn(workload(
        owners.auth.clone(),
        owners.app.clone(),
        args.changes,
        args.seed,
    ));
    let mut rng = Rng::new(args.seed ^ 0xfa17);
    let mut report = Report {
        seed: args.seed,
        changes: args.changes,
        ..Report::default()
    };
    let mut round = 0;
    while !workload.is_finished() || round < FAULTS.len() {
        // Each kind once first, then at random.
        let fault = if round < FAULTS.len() {
            FAULTS[round]
        } else {
            FAULTS[rng.below(FAULTS.len())]
        };
        round += 1;
        inject(
            fault,
            &mut rng,
            &mut tasks,
            &relays,
            &consumer_tasks,
            &streams,
            &owners,
            &mut redis,
            &redis_url,
        )
        .await?;
        *report.faults.entry(format!("{fault:?}")).or_default() += 1;
        tokio::time::sleep(Duration::from_millis(150 + rng.below(300) as u64)).await;
    }
    workload.await??;
    // Everything runs again; the backbone settles.
    for task in &mut tasks {
        if task.task.as_ref().is_none_or(|t| t.is_finished()) {
            task.restart();
        }
    }
    let deadline = Instant::now() + Duration::from_secs(args.settle);
    loop {
        let settled = settled(&owners, &streams).await?;
        if settled || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    shutdown.trigger();
    for task in &mut tasks {
        if let Some(t) = task.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(10), t).await;
        }
    }
    check(&owners, work.path(), &mut report).await?;
    report.elapsed_s = started.elapsed().as_secs_f64();
    drop(postgres);
    Ok(report)
}

async fn open(
    postgres: &platform::testing::TestPostgres,
    dir: &std::path::Path,
) -> anyhow::Result<Owners> {
    let auth = AuthService::open(
        postgres.owner("auth").await?,
        AuthConfig {
            password_cost: PasswordCost {
                memory_kib: 1024,
                iterations: 1,
                parallelism: 1,
            },
            ..AuthConfig::default()
        },
    )
    .await?;
    let app = AppService::open(
        postgres.owner("app").await?,
        Arc::new(auth.clone()),
        dir.join("packages"),
    )
    .await?;
    let audit_db = postgres.owner("admin").await?;
    let audit = admin::AuditConsumer::open(audit_db.clone()).await?;
    let notification = notification::NotificationService::open(
        postgres.owner("notification").await?,
        Arc::new(auth.clone()),
        notification::NotificationConfig {
            public_url: "http://chaos.invalid".into(),
            mail: true,
        },
    )
    .await?;
    let index = search::SearchIndex::open(&dir.join("index"))?;
    let outboxes = vec![auth.events().clone(), app.events().clone()];
    Ok(Owners {
        auth,
        app,
        audit,
        audit_db,
        notification,
        index,
        outboxes,
    })
}

/// Accounts, role changes and problems (created, renamed, hidden, shown again).
async fn workload(
    auth: AuthService,
    app: AppService,
    changes: usize,
    seed: u64,
) -> anyhow::Result<()> {
    let mut rng = Rng::new(seed);
    let admin = auth
        .register("chaos-admin", "chaos admin password", Role::Admin)
        .await?;
    let principal = Principal {
        user_id: admin.id,
        username: admin.username.clone(),
        role: Role::Admin,
    };
    let mut users: Vec<UserId> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    for n in 0..changes {
        match rng.below(5) {
            0 => {
                let account = auth
                    .register(&format!("user-{n}"), "chaos user password", Role::User)
                    .await?;
                users.push(account.id);
            }
            1 if !users.is_empty() => {
                let user = users[rng.below(users.len())];
                let role = if rng.below(2) == 0 {
                    Role::Setter
                } else {
                    Role::User
                };
                auth.set_role(admin.id, user, role)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            2 | 1 => {
                let slug = format!("p-{n}");
                app.create(
                    &principal,
                    NewProblem {
                        slug: slug.clone(),
                        title: format!("問題 {n} problem"),
                        statement: format!("statement {n} 配列"),
                        tags: vec!["chaos".into()],
                        difficulty: None,
                        visibility: Visibility::Public,
                        time_limit_ms: None,
                        memory_mib: None,
                    },
                )
                .await?;
                problems.push(slug);
            }
            _ if !problems.is_empty() => {
                let slug = problems[rng.below(problems.len())].clone();
                let patch = match rng.below(3) {
                    0 => ProblemPatch {
                        title: Some(format!("renamed {n}")),
                        ..ProblemPatch::default()
                    },
                    1 => ProblemPatch {
                        visibility: Some(Visibility::Hidden),
                        ..ProblemPatch::default()
                    },
                    _ => ProblemPatch {
                        visibility: Some(Visibility::Public),
                        ..ProblemPatch::default()
                    },
                };
                app.update(&principal, &slug, patch).await?;
            }
            _ => {
                let account = auth
                    .register(&format!("user-{n}"), "chaos user password", Role::User)
                    .await?;
                users.push(account.id);
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn inject(
    fault: Fault,
    rng: &mut Rng,
    tasks: &mut [Restartable],
    relays: &[usize],
    consumers: &[usize],
    streams: &EventStreams,
    owners: &Owners,
    redis: &mut Managed,
    redis_url: &str,
) -> anyhow::Result<()> {
    match fault {
        Fault::KillRelay | Fault::KillConsumer => {
            let pool = if fault == Fault::KillRelay {
                relays
            } else {
                consumers
            };
            let victim = pool[rng.below(pool.len())];
            tasks[victim].kill();
            tokio::time::sleep(Duration::from_millis(rng.below(800) as u64)).await;
            tasks[victim].restart();
        }
        Fault::DuplicateDeliveries | Fault::ReorderVersions => {
            // Envelopes published before, delivered again under new keys; for search
            // documents these are older versions arriving after newer ones.
            let outbox = if fault == Fault::ReorderVersions {
                &owners.outboxes[1]
            } else {
                &owners.outboxes[rng.below(owners.outboxes.len())]
            };
            let only_search = if fault == Fault::ReorderVersions {
                format!("AND event_type = '{}'", types::SEARCH_DOCUMENT_CHANGED)
            } else {
                String::new()
            };
            let db = outbox.db();
            let rows = db
                .query(&format!(
                    "SELECT {ENVELOPE_COLUMNS} FROM events_outbox WHERE state = 'SENT' {only_search} ORDER BY id LIMIT 200"
                ))
                .fetch_all(db.pool())
                .await?;
            for _ in 0..8.min(rows.len()) {
                let row = &rows[rng.below(rows.len())];
                let Ok(envelope) = platform::events::envelope_from_row(row, 0) else {
                    continue;
                };
                let text = serde_json::to_string(&envelope)?;
                for consumer in consumers_of(&envelope.event_type) {
                    if let Some(stream) = streams.stream(consumer) {
                        let key = format!("dup-{}-{}", envelope.event_id, rng.next());
                        let _ = stream.enqueue(&key, &text).await;
                    }
                }
            }
        }
        Fault::FlushRedis => {
            let client = redis::Client::open(redis_url)?;
            let mut conn = client.get_multiplexed_async_connection().await?;
            let _: () = redis::cmd("FLUSHALL").query_async(&mut conn).await?;
        }
        Fault::RestartRedis => {
            redis.signal(libc::SIGKILL);
            redis.kill();
            tokio::time::sleep(Duration::from_millis(300)).await;
            redis.start()?;
            wait_for_redis(redis_url).await?;
        }
    }
    Ok(())
}

async fn count(db: &Db, sql: &str) -> anyhow::Result<i64> {
    Ok(db.query(sql).fetch_one(db.pool()).await?.try_get(0)?)
}

/// Every outbox row sent and every stream drained.
async fn settled(owners: &Owners, streams: &EventStreams) -> anyhow::Result<bool> {
    for outbox in &owners.outboxes {
        if count(
            outbox.db(),
            "SELECT COUNT(*) FROM events_outbox WHERE state <> 'SENT'",
        )
        .await?
            > 0
        {
            return Ok(false);
        }
    }
    for (_, stream) in streams.all() {
        match stream.stats().await {
            Ok(stats) if stats.length == 0 => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

async fn check(owners: &Owners, dir: &std::path::Path, report: &mut Report) -> anyhow::Result<()> {
    // Every event of every owner, by id, with its type.
    let mut events: HashMap<String, String> = HashMap::new();
    let mut role_changes = 0;
    for outbox in &owners.outboxes {
        let db = outbox.db();
        for row in db
            .query("SELECT event_id, event_type, aggregate_id FROM events_outbox")
            .fetch_all(db.pool())
            .await?
        {
            let (id, kind): (String, String) = (row.try_get(0)?, row.try_get(1)?);
            if kind == types::ROLE_CHANGED {
                role_changes += 1;
            }
            events.insert(id, kind);
        }
    }
    report.events = events.len() as i64;
    // E1.
    let db = &owners.audit_db;
    let mut audited: HashMap<String, i64> = HashMap::new();
    for row in db
        .query("SELECT event_id FROM audit_log")
        .fetch_all(db.pool())
        .await?
    {
        let id: Option<String> = row.try_get(0)?;
        *audited.entry(id.unwrap_or_default()).or_default() += 1;
    }
    report.audit_records = audited.values().sum();
    for (id, kind) in &events {
        let expected = i64::from(consumers_of(kind).contains(&consumers::AUDIT));
        let got = audited.get(id).copied().unwrap_or(0);
        if got != expected {
            report.violations.push(format!(
                "E1: event {id} ({kind}) has {got} audit records, expected {expected}"
            ));
        }
    }
    for id in audited.keys() {
        if !events.contains_key(id) {
            report
                .violations
                .push(format!("E1: audit record of no event: {id:?}"));
        }
    }
    // E2.
    let db = owners.notification.db();
    report.notifications = count(db, "SELECT COUNT(*) FROM notifications").await?;
    report.ledger_rows = count(db, "SELECT COUNT(*) FROM deliveries").await?;
    if report.notifications != role_changes {
        report.violations.push(format!(
            "E2: {} notifications for {role_changes} role changes",
            report.notifications
        ));
    }
    let uneven = db
        .query(
            "SELECT n.id, COUNT(d.id), COUNT(DISTINCT d.channel) FROM notifications n LEFT JOIN deliveries d ON d.notification_id = n.id \
             GROUP BY n.id HAVING COUNT(d.id) <> 2 OR COUNT(DISTINCT d.channel) <> 2",
        )
        .fetch_all(db.pool())
        .await?;
    for row in uneven {
        let (id, rows): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        report.violations.push(format!(
            "E2: notification {id} has {rows} ledger rows, expected one per channel (2)"
        ));
    }
    // E3.
    let rebuilt = search::SearchIndex::open(&dir.join("rebuilt"))?;
    rebuilt.rebuild(&owners.app).await?;
    let (live, fresh) = (owners.index.entries()?, rebuilt.entries()?);
    report.index_entries = live.len();
    if live != fresh {
        let differing: Vec<_> = live.iter().filter(|e| !fresh.contains(e)).take(5).collect();
        report.violations.push(format!(
            "E3: the index ({} entries) differs from a rebuild ({}): e.g. {differing:?}",
            live.len(),
            fresh.len()
        ));
    }
    Ok(())
}
