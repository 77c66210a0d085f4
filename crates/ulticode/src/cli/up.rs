//! The two service shapes. `ulticode up`: everything in one process on SQLite files and the
//! SQL stream, with in-process judge workers — nothing to install. `ulticode serve`: the same
//! owners on PostgreSQL (a schema and role each) and Redis Streams, with the dispatcher and
//! the judge workers as separate processes.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use admin::{AdminPorts, AdminService};
use anyhow::Context;
use app::{AppError, AppService, NewProblem};
use auth::{AuthConfig, AuthService};
use clap::Args;
use contracts::{Principal, Role};
use judge::{default_languages, Languages};
use judge_worker::{JudgeWorker, WorkerConfig};
use platform::rate::RateStore;
use platform::{Db, Metrics, Shutdown};
use queue::events::EventStreams;
use queue::{JudgeQueue, QueueConfig, SqlQueue};
use submission::{
    Dispatcher, DispatcherConfig, Executions, ExecutionsConfig, MaintenanceConfig, Runs,
    RunsConfig, SubmissionConfig, SubmissionStore,
};

use super::judge0_edge::Judge0Args;
use super::modules::{Module, Modules};
use super::runner::SandboxRunner;
use super::server::{http_app, Owners};
use super::services::{init_logging, MailArgs, QueueArgs};

#[derive(Debug, Args)]
pub struct UpArgs {
    /// Where the SQLite databases and unpacked packages live (created if missing).
    #[arg(long, default_value = "ulticode-data", env = "ULTICODE_DATA_DIR")]
    data_dir: PathBuf,
    /// Address to serve on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:8080", env = "ULTICODE_LISTEN")]
    listen: SocketAddr,
    /// Write the admin account's first password to this file (mode 0600) instead of
    /// printing it (for a service whose output goes to a journal).
    #[arg(long, env = "ULTICODE_ADMIN_PASSWORD_FILE")]
    admin_password_file: Option<PathBuf>,
    /// Problem packages to load at start (each subdirectory with a problem.yaml) [default:
    /// examples/problems when it exists].
    #[arg(long, env = "ULTICODE_PROBLEMS")]
    problems: Option<PathBuf>,
    /// CLICS contest packages to import at start (each subdirectory), once each [default:
    /// the example contests, when the example problems are loaded].
    #[arg(long)]
    contests: Option<PathBuf>,
    /// Submissions judged at once [default: one per core].
    #[arg(long)]
    workers: Option<usize>,
    /// Submissions waiting for or under judging past which new ones are refused (503 with
    /// Retry-After) instead of the backlog growing without bound.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(i64).range(1..))]
    max_unjudged: i64,
    #[command(flatten)]
    mail: MailArgs,
    #[command(flatten)]
    judge0: Judge0Args,
    #[command(flatten)]
    keys: super::keys::KeyEncryptionArgs,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A PostgreSQL URL allowed to create schemas and roles: each owner gets its own.
    #[arg(long, env = "ULTICODE_DATABASE_URL")]
    database_url: String,
    /// Prefix of the owners' login roles (roles are cluster-wide).
    #[arg(long, default_value = "ulticode")]
    role_prefix: String,
    #[command(flatten)]
    queue: QueueArgs,
    /// Address to serve on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "ULTICODE_LISTEN")]
    listen: SocketAddr,
    /// Write the admin account's first password to this file (mode 0600) instead of
    /// printing it (for a service whose output goes to a journal).
    #[arg(long, env = "ULTICODE_ADMIN_PASSWORD_FILE")]
    admin_password_file: Option<PathBuf>,
    /// The token judge workers present on the internal routes (a secret: never logged).
    #[arg(long, env = "ULTICODE_SERVICE_TOKEN", hide_env_values = true)]
    service_token: String,
    /// Problem packages to load at start (each subdirectory with a problem.yaml).
    #[arg(long, env = "ULTICODE_PROBLEMS")]
    problems: Option<PathBuf>,
    /// This node's name on its run receipts; a restarted node fails the runs it had in
    /// flight [default: the hostname].
    #[arg(long)]
    node_id: Option<String>,
    /// Judging lease TTL in milliseconds (must match the dispatcher's).
    #[arg(long, default_value_t = 60_000)]
    lease_ttl_ms: u64,
    /// Submissions waiting for or under judging past which new ones are refused (503 with
    /// Retry-After) instead of the backlog growing without bound.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(i64).range(1..))]
    max_unjudged: i64,
    #[command(flatten)]
    mail: MailArgs,
    /// A search worker (`ulticode search-worker`) to query; without it this process holds
    /// the index (with the `search` module).
    #[arg(long, env = "ULTICODE_SEARCH_URL")]
    search_url: Option<String>,
    /// Where this process keeps the search index [default: a directory under the temp dir;
    /// it is rebuilt from App when empty].
    #[arg(long)]
    search_index_dir: Option<PathBuf>,
    /// The background modules this process runs (singleton leases keep relays single
    /// across replicas; consumers share their streams' groups).
    #[arg(long, env = "ULTICODE_MODULES", value_delimiter = ',', default_values_t = Module::ALL)]
    modules: Vec<Module>,
    #[command(flatten)]
    judge0: Judge0Args,
    #[command(flatten)]
    keys: super::keys::KeyEncryptionArgs,
}

/// Opens the owners on their databases and bootstraps the admin account.
struct Opened {
    owners: Owners,
    admin: Principal,
    admin_password: Option<String>,
}

struct Databases {
    auth: Db,
    app: Db,
    submission: Db,
    admin: Db,
    notification: Db,
}

/// What differs between the shapes besides storage.
struct ShapeSettings {
    /// Names this node's run receipts.
    node: String,
    /// Runs code for the execution API (unless `judge0.runner` names another runner).
    runner: Arc<SandboxRunner>,
    /// Prepares uploaded packages (Polygon import, derived time limits) in the sandbox.
    preparer: Arc<dyn contracts::PackagePreparer>,
    package_cache: PathBuf,
    submission: SubmissionConfig,
    service_token: String,
    secure_cookies: bool,
    check_queue: bool,
    sandbox: Arc<dyn sandbox::Sandbox>,
    mail: MailArgs,
    /// Where links in notifications point when `mail.public_url` is not given.
    public_url: String,
    search: SearchAt,
    /// The Judge0 API and where execution runs.
    judge0: Judge0Args,
    /// The submission backlog's bound.
    max_unjudged: i64,
    /// The Auth owner's configuration (the key sealing its signing keys).
    auth: AuthConfig,
    /// Where rate-limit buckets live when replicas share them (else in this process).
    rates: Option<Arc<dyn RateStore>>,
}

/// Where the search index lives.
enum SearchAt {
    /// In this process, in this directory.
    Here(PathBuf),
    /// In a search worker at this URL.
    Worker(String),
}

async fn open_owners(
    dbs: Databases,
    queue: Arc<dyn JudgeQueue>,
    events: EventStreams,
    languages: Arc<Languages>,
    shape: ShapeSettings,
) -> anyhow::Result<Opened> {
    let ShapeSettings {
        node,
        runner,
        preparer,
        package_cache,
        submission,
        service_token,
        secure_cookies,
        check_queue,
        sandbox,
        mail,
        public_url,
        search,
        judge0,
        max_unjudged,
        auth: auth_config,
        rates,
    } = shape;
    let code_runner: Arc<dyn contracts::execution::CodeRunner> = match judge0.external_runner()? {
        Some(external) => external,
        None => runner.clone(),
    };
    let (search, search_index): (Arc<dyn contracts::search::SearchPort>, _) = match search {
        SearchAt::Here(dir) => {
            let index = search::SearchIndex::open(&dir)
                .with_context(|| format!("open the search index in {}", dir.display()))?;
            (Arc::new(index.clone()), Some(index))
        }
        SearchAt::Worker(url) => (
            Arc::new(search::http::HttpSearch::new(&url, &service_token)),
            None,
        ),
    };

    let metrics = Metrics::new();
    let auth = AuthService::open(dbs.auth, auth_config)
        .await
        .context("open the auth owner")?;
    let (account, admin_password) = auth
        .ensure_account("admin", Role::Admin)
        .await
        .context("create the admin account")?;
    let mailer = mail.mailer()?;
    let notification = notification::NotificationService::open(
        dbs.notification,
        Arc::new(auth.clone()),
        notification::NotificationConfig {
            public_url: mail.public_url.clone().unwrap_or(public_url),
            mail: mailer.is_some(),
        },
    )
    .await
    .context("open the notification owner")?;
    let app = AppService::open(dbs.app, Arc::new(auth.clone()), package_cache)
        .await
        .context("open the app owner")?
        .with_preparer(preparer);
    let submissions = SubmissionStore::open(dbs.submission, submission)
        .await
        .context("open the submission owner")?;
    app.contests().connect(app::contest::ContestPorts {
        submissions: Arc::new(submissions.clone()),
        accounts: Arc::new(auth.clone()),
        languages: languages
            .available
            .iter()
            .map(|l| app::contest::clics::ClicsLanguage {
                id: l.config.id.clone(),
                name: l.config.name.clone(),
                source_file: l.config.source_file.clone(),
                version: l.version.clone(),
            })
            .collect(),
    });
    let language_ids = languages
        .available
        .iter()
        .map(|l| l.config.id.clone())
        .collect();
    // Function problems run their harness on the package App holds.
    let _ = runner.packages.set(Arc::new(app.clone()));
    let mut runs_config = RunsConfig::new(node.clone(), language_ids);
    runs_config.rate_limit = runs_config.rate_limit.in_store(rates.clone());
    let runs = Runs::open(submissions.db().clone(), code_runner.clone(), runs_config)
        .await
        .context("open the execution service")?
        .with_problems(Arc::new(app.clone()));
    let executions = Executions::open(
        submissions.db().clone(),
        code_runner,
        ExecutionsConfig {
            max_queue: judge0.judge0_max_queue,
            concurrency: judge0.workers(),
            ..ExecutionsConfig::new(node)
        },
    )
    .await
    .context("open the execution jobs")?;
    let judge0_api = super::judge0_edge::api(&judge0, Arc::new(executions.clone()), &languages);
    let admin_service = AdminService::open(
        dbs.admin,
        AdminPorts {
            submissions: Arc::new(submissions.clone()),
            accounts: Arc::new(auth.clone()),
            queue: queue.clone(),
            events: events.clone(),
            metrics: metrics.clone(),
        },
    )
    .await
    .context("open the admin owner")?;
    Ok(Opened {
        owners: Owners {
            auth,
            app,
            submissions,
            admin: admin_service,
            notification,
            mailer,
            search,
            search_index,
            runs,
            executions,
            judge0: judge0_api,
            judge0_prefix: judge0.judge0_prefix.clone(),
            max_unjudged,
            rates,
            queue,
            events,
            languages,
            metrics,
            service_token,
            secure_cookies,
            check_queue,
            sandbox,
        },
        admin: Principal {
            user_id: account.id,
            username: account.username,
            role: Role::Admin,
        },
        admin_password,
    })
}

/// Loads each package directory under `root` as a problem (slug = directory name) unless a
/// problem with that slug exists, through the same validation as an upload.
/// The statement a problem page shows: the package's first (English first), a LaTeX one
/// converted by pandoc in the sandbox. A statement that cannot be shown is logged, not fatal.
fn display_statement(judge: &judge::Judge<'_>, problem: &judge::Problem) -> String {
    let Some(statement) = judge::statement::statements(problem).into_iter().next() else {
        return String::new();
    };
    judge::statement::render(judge, problem, &statement).unwrap_or_else(|e| {
        tracing::warn!(problem = %problem.dir.display(), error = %e, "statement not shown");
        String::new()
    })
}

async fn load_problems(
    app: &AppService,
    admin: &Principal,
    root: &Path,
    judge: &judge::Judge<'_>,
) -> anyhow::Result<()> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .with_context(|| format!("read {}", root.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("problem.yaml").is_file())
        .collect();
    dirs.sort();
    for dir in dirs {
        let slug = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        match app.get(Some(admin), &slug).await {
            Ok(_) => continue,
            Err(AppError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
        let problem = judge::Problem::load(&dir)?;
        let statement = display_statement(judge, &problem);
        app.create(
            admin,
            NewProblem {
                slug: slug.clone(),
                title: problem.name.clone(),
                statement,
                tags: Vec::new(),
                difficulty: None,
                visibility: app::Visibility::Public,
                time_limit_ms: None,
                memory_mib: None,
            },
        )
        .await?;
        let archive = judge::package::archive::pack(&dir)?;
        app.upload_package(admin, &slug, archive).await?;
        tracing::info!(%slug, "problem loaded");
    }
    Ok(())
}

/// The example contests, compiled into the binary (CLICS contest packages).
static EXAMPLE_CONTESTS: include_dir::Dir<'_> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../examples/contests");

/// The example contests on the example problems, each once: the ended ones are packages
/// (teams, judged submissions, a thawed freeze), imported without judging; and an upcoming
/// one a week ahead.
async fn load_contests(
    app: &AppService,
    admin: &Principal,
    dir: Option<&Path>,
) -> anyhow::Result<()> {
    let contests = app.contests();
    let mut packages: Vec<(String, app::contest::package::PackageFiles)> = Vec::new();
    if let Some(dir) = dir {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("read {}", dir.display()))?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for package in dirs {
            let slug = package
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            packages.push((slug, app::contest::package::read_dir(&package)?));
        }
    }
    for package in EXAMPLE_CONTESTS.dirs().filter(|_| dir.is_none()) {
        let slug = package.path().to_string_lossy().to_string();
        fn walk(
            dir: &include_dir::Dir<'_>,
            root: &Path,
            out: &mut app::contest::package::PackageFiles,
        ) {
            for file in dir.files() {
                let path = file.path().strip_prefix(root).unwrap_or(file.path());
                out.insert(
                    path.to_string_lossy().replace('\\', "/"),
                    file.contents().to_vec(),
                );
            }
            for sub in dir.dirs() {
                walk(sub, root, out);
            }
        }
        let mut files = app::contest::package::PackageFiles::new();
        walk(package, package.path(), &mut files);
        packages.push((slug, files));
    }
    for (slug, files) in packages {
        if contests.get(Some(admin), &slug).await.is_ok() {
            continue;
        }
        let report = contests
            .import_package(admin, &files, false)
            .await
            .with_context(|| format!("import the example contest {slug}"))?;
        tracing::info!(contest = %report.contest, submissions = report.submissions, "example contest loaded");
    }
    if contests.get(Some(admin), "winter-cup").await.is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let day = 86_400_000;
        contests
            .create(
                admin,
                app::contest::model::NewContest {
                    slug: "winter-cup".into(),
                    title: "Winter Cup (example)".into(),
                    description: "An upcoming example contest: register now.".into(),
                    format: app::contest::scoring::Format::Icpc,
                    start_ms: (now / day + 7) * day + 9 * 3_600_000,
                    duration_ms: 5 * 3_600_000,
                    freeze_ms: Some(4 * 3_600_000),
                    unfreeze_at_ms: None,
                    penalty_minutes: None,
                    visibility: app::contest::model::ContestVisibility::Public,
                    invite_code: None,
                    registration_start_ms: None,
                    registration_end_ms: None,
                    upsolving: true,
                    medals: app::contest::scoring::Medals {
                        gold: 1,
                        silver: 1,
                        bronze: 1,
                    },
                },
            )
            .await?;
        let problems = ["aplusb", "hypot", "sumlines"]
            .iter()
            .zip(["A", "B", "C"])
            .map(|(slug, label)| app::contest::model::ContestProblemInput {
                label: label.into(),
                problem: slug.to_string(),
                color: None,
                rgb: None,
                points: None,
                score_mode: None,
            })
            .collect();
        contests.set_problems(admin, "winter-cup", problems).await?;
    }
    Ok(())
}

/// The example problems, compiled into the binary so `up` has problems from any directory.
static EXAMPLES: include_dir::Dir<'_> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/../../examples/problems");

/// Where `up` loads problems from without `--problems`: a checkout's `examples/problems`
/// (current while they are edited), else the embedded copy, written under the data dir.
fn example_problems(data_dir: &Path) -> anyhow::Result<PathBuf> {
    let checkout = PathBuf::from("examples/problems");
    if checkout.is_dir() {
        println!("loading the example problems from {}", checkout.display());
        return Ok(checkout);
    }
    let target = data_dir.join("examples");
    if target.exists() {
        std::fs::remove_dir_all(&target)
            .with_context(|| format!("replace {}", target.display()))?;
    }
    std::fs::create_dir_all(&target)?;
    EXAMPLES
        .extract(&target)
        .with_context(|| format!("write the embedded examples to {}", target.display()))?;
    println!("loading the example problems embedded in this binary");
    Ok(target)
}

/// Serves until shutdown, then drains `tasks` within `grace`.
async fn serve_until_shutdown(
    owners: Owners,
    listener: tokio::net::TcpListener,
    shutdown: Shutdown,
    tasks: Vec<tokio::task::JoinHandle<()>>,
) -> anyhow::Result<()> {
    let router = http_app(&owners, &shutdown);
    let serving = {
        let shutdown = shutdown.clone();
        platform::edge::serve(
            listener,
            router,
            platform::edge::ConnectionPolicy::default(),
            async move { shutdown.triggered().await },
        )
    };
    serving.await.context("serve HTTP")?;
    tracing::info!("draining background work");
    let drained = platform::lifecycle::drain(
        async {
            for task in tasks {
                let _ = task.await;
            }
        },
        Duration::from_secs(30),
    )
    .await;
    if drained.is_none() {
        tracing::warn!("background work did not finish within 30 s; stopping anyway");
    }
    for db in [
        owners.auth.db(),
        owners.app.db(),
        owners.submissions.db(),
        owners.admin.db(),
        owners.notification.db(),
    ] {
        db.close().await;
    }
    Ok(())
}

fn announce(
    addr: SocketAddr,
    admin_password: Option<&str>,
    password_file: Option<&Path>,
) -> anyhow::Result<()> {
    println!("UltiCode is serving on http://{addr}");
    println!("  console:    http://{addr}/");
    println!("  management: http://{addr}/manage");
    println!("  API:        http://{addr}/api/openapi.json");
    match (admin_password, password_file) {
        (Some(password), Some(file)) => {
            write_secret(file, password)?;
            println!(
                "admin account created: username admin, password written to {} (change it with POST /api/v1/auth/password)",
                file.display()
            );
        }
        (Some(password), None) => println!(
            "admin account created: username admin, password {password} (shown once; change it with POST /api/v1/auth/password)"
        ),
        (None, _) => {
            println!("admin account: exists (its password was given when it was created)")
        }
    }
    Ok(())
}

/// Writes `secret` to `file`, readable by its owner only from the start.
fn write_secret(file: &Path, secret: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(file)
        .with_context(|| format!("write the admin password to {}", file.display()))?;
    // An existing file keeps its mode on open: narrow it before writing.
    out.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    writeln!(out, "{secret}")?;
    Ok(())
}

pub fn up(args: UpArgs) -> anyhow::Result<ExitCode> {
    init_logging();
    let sandbox = Arc::new(super::native_sandbox()?);
    let languages = Arc::new(Languages::detect(sandbox.as_ref(), default_languages()));
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let shutdown = Shutdown::new();
        shutdown.trigger_on_signals();
        std::fs::create_dir_all(&args.data_dir)
            .with_context(|| format!("create {}", args.data_dir.display()))?;
        let dir = &args.data_dir;
        let _lock = super::data_dir::DataDirLock::acquire(dir)?;
        let dbs = Databases {
            auth: Db::sqlite_owner(dir, "auth").await?,
            app: Db::sqlite_owner(dir, "app").await?,
            submission: Db::sqlite_owner(dir, "submission").await?,
            admin: Db::sqlite_owner(dir, "admin").await?,
            notification: Db::sqlite_owner(dir, "notification").await?,
        };
        let streams = Db::sqlite_owner(dir, "queue").await?;
        // The lock proves the previous process is dead: what it had taken from the streams
        // is taken again now, not after the visibility timeout.
        let redelivered = SqlQueue::redeliver_all_pending(&streams).await?;
        // This process alone writes the streams (the lock), each through one handle.
        let exclusive = |config| QueueConfig {
            poll_interval: queue::EXCLUSIVE_POLL_INTERVAL,
            ..config
        };
        let queue: Arc<dyn JudgeQueue> =
            Arc::new(SqlQueue::new(streams.clone(), exclusive(QueueConfig::default())).await?);
        let events = EventStreams::sql(streams, exclusive(queue::events::stream_config())).await?;
        let submission = SubmissionConfig::default();
        let sandbox_runner = Arc::new(SandboxRunner::new(sandbox.clone(), languages.clone()));
        // Bound first: links in notifications name the address actually served.
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listen on {}", args.listen))?;
        let opened = open_owners(
            dbs,
            queue.clone(),
            events,
            languages.clone(),
            ShapeSettings {
                node: "embedded".into(),
                runner: sandbox_runner.clone(),
                preparer: sandbox_runner,
                package_cache: dir.join("packages"),
                submission,
                // Nothing outside this process uses the internal routes: a random token.
                service_token: uuid::Uuid::new_v4().simple().to_string(),
                secure_cookies: false,
                check_queue: false,
                sandbox: sandbox.clone(),
                mail: args.mail.clone(),
                public_url: format!("http://{}", listener.local_addr()?),
                search: SearchAt::Here(dir.join("search")),
                judge0: args.judge0.clone(),
                auth: args.keys.auth_config()?,
                max_unjudged: args.max_unjudged,
                rates: None,
            },
        )
        .await?;
        let owners = opened.owners.clone();
        let problems = match args.problems.clone() {
            Some(dir) => dir,
            None => example_problems(dir)?,
        };
        let judge = judge::Judge::new(sandbox.as_ref(), &languages);
        load_problems(&owners.app, &opened.admin, &problems, &judge).await?;
        match (&args.contests, &args.problems) {
            (Some(dir), _) => load_contests(&owners.app, &opened.admin, Some(dir)).await?,
            (None, None) => load_contests(&owners.app, &opened.admin, None).await?,
            (None, Some(_)) => {}
        }
        if let Some(index) = &owners.search_index {
            super::search_api::rebuild_if_empty(index, &owners.app).await;
        }
        let metrics = owners.metrics.clone();
        let concurrency = args
            .workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let worker = Arc::new(JudgeWorker::new(
            queue.clone(),
            Arc::new(owners.submissions.clone()),
            Arc::new(owners.app.clone()),
            sandbox,
            languages,
            metrics.clone(),
            WorkerConfig {
                concurrency,
                heartbeat: submission.lease_ttl / 3,
                compile_cache: Some(super::open_compile_cache(
                    &args.data_dir.join("compile-cache"),
                    1024,
                )?),
                ..WorkerConfig::new("embedded")
            },
        ));
        // One user may keep every judge slot busy, but no more: whoever submits next waits
        // for one judging at most, never for the first user's whole backlog.
        let dispatcher = Dispatcher::new(
            owners.submissions.clone(),
            Some(queue),
            DispatcherConfig {
                max_in_flight_per_user: concurrency as i64,
                ..DispatcherConfig::default()
            },
            metrics.clone(),
        );
        let holder = format!("embedded-{}", std::process::id());
        let maintenance = MaintenanceConfig::default();
        // ... and what it was judging is re-driven now, not when its judging leases expire.
        let recovered = submission::maintenance::recover_previous_process(
            &owners.submissions,
            &holder,
            &maintenance,
        )
        .await
        .context("re-drive the judgings the previous process left")?;
        if redelivered > 0 || !recovered.is_empty() {
            tracing::info!(
                redelivered,
                recovered = recovered.len(),
                "resumed the previous process's work"
            );
        }
        let mut tasks = super::modules::spawn(&owners, &Modules::all(), &holder, &shutdown);
        tasks.extend([
            tokio::spawn(dispatcher.run(shutdown.clone())),
            tokio::spawn(submission::maintenance::run(
                owners.submissions.clone(),
                holder.clone(),
                maintenance,
                metrics,
                shutdown.clone(),
            )),
            tokio::spawn(worker.run(shutdown.clone(), Duration::from_secs(25))),
            tokio::spawn(owners.runs.clone().reclaim_expired(shutdown.clone())),
            tokio::spawn(owners.admin.clone().sample_pipeline(shutdown.clone())),
            tokio::spawn(owners.executions.clone().run(shutdown.clone())),
        ]);
        tasks.extend(super::judge0_edge::start(&args.judge0, &owners.judge0, &shutdown).await?);
        announce(
            listener.local_addr()?,
            opened.admin_password.as_deref(),
            args.admin_password_file.as_deref(),
        )?;
        serve_until_shutdown(owners, listener, shutdown, tasks).await?;
        Ok(ExitCode::SUCCESS)
    })
}

pub fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    init_logging();
    // Languages are probed here too: the API accepts exactly what workers built from the same
    // binary and configuration can run.
    let sandbox: Arc<dyn sandbox::Sandbox> = Arc::new(super::native_sandbox()?);
    let languages = Arc::new(Languages::detect(sandbox.as_ref(), default_languages()));
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let shutdown = Shutdown::new();
        shutdown.trigger_on_signals();
        let owner = |name: &'static str| {
            let (url, prefix) = (args.database_url.clone(), args.role_prefix.clone());
            async move {
                let owner_url = platform::db::provision_owner(&url, name, &prefix)
                    .await
                    .with_context(|| format!("provision the {name} owner"))?;
                Db::connect(&owner_url, Some(name), 16)
                    .await
                    .with_context(|| format!("connect the {name} owner"))
            }
        };
        let dbs = Databases {
            auth: owner("auth").await?,
            app: owner("app").await?,
            submission: owner("submission").await?,
            admin: owner("admin").await?,
            notification: owner("notification").await?,
        };
        let queue = args.queue.open(None).await?;
        let events = args.queue.open_events().await?;
        let package_cache = std::env::temp_dir().join("ulticode-packages");
        let sandbox_runner = Arc::new(SandboxRunner::new(sandbox.clone(), languages.clone()));
        // Bound first: links in notifications name the address actually served.
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listen on {}", args.listen))?;
        let opened = open_owners(
            dbs,
            queue,
            events,
            languages.clone(),
            ShapeSettings {
                node: args
                    .node_id
                    .clone()
                    .unwrap_or_else(super::services::hostname),
                runner: sandbox_runner.clone(),
                preparer: sandbox_runner,
                package_cache,
                submission: SubmissionConfig {
                    lease_ttl: Duration::from_millis(args.lease_ttl_ms),
                    ..SubmissionConfig::default()
                },
                service_token: args.service_token.clone(),
                secure_cookies: !args.listen.ip().is_loopback(),
                check_queue: true,
                sandbox: sandbox.clone(),
                mail: args.mail.clone(),
                public_url: format!("http://{}", listener.local_addr()?),
                search: match &args.search_url {
                    Some(url) => SearchAt::Worker(url.clone()),
                    None => SearchAt::Here(args.search_index_dir.clone().unwrap_or_else(|| {
                        std::env::temp_dir().join(format!("ulticode-search-{}", std::process::id()))
                    })),
                },
                judge0: args.judge0.clone(),
                auth: args.keys.auth_config()?,
                max_unjudged: args.max_unjudged,
                rates: args.queue.rate_store().await?,
            },
        )
        .await?;
        if let Some(problems) = &args.problems {
            let judge = judge::Judge::new(sandbox.as_ref(), &languages);
            load_problems(&opened.owners.app, &opened.admin, problems, &judge).await?;
        }
        if let Some(index) = &opened.owners.search_index {
            super::search_api::rebuild_if_empty(index, &opened.owners.app).await;
        }
        let holder = format!(
            "serve-{}-{}",
            super::services::hostname(),
            std::process::id()
        );
        let mut tasks = super::modules::spawn(
            &opened.owners,
            &Modules::of(&args.modules),
            &holder,
            &shutdown,
        );
        tasks.extend([
            tokio::spawn(opened.owners.runs.clone().reclaim_expired(shutdown.clone())),
            tokio::spawn(
                opened
                    .owners
                    .admin
                    .clone()
                    .sample_pipeline(shutdown.clone()),
            ),
            tokio::spawn(opened.owners.executions.clone().run(shutdown.clone())),
        ]);
        tasks.extend(
            super::judge0_edge::start(&args.judge0, &opened.owners.judge0, &shutdown).await?,
        );
        announce(
            listener.local_addr()?,
            opened.admin_password.as_deref(),
            args.admin_password_file.as_deref(),
        )?;
        serve_until_shutdown(opened.owners, listener, shutdown, tasks).await?;
        Ok(ExitCode::SUCCESS)
    })
}
