//! The whole judging path in one process, with real parts: the Submission store (SQLite),
//! the dispatcher, the SQL queue, the native sandbox, the judge runtime and the worker — both
//! through the in-process judging port and through the HTTP port with a service token.
//!
//! The test binary is its own sandbox supervisor.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use contracts::{
    Generation, JudgingPort, ProblemId, SubmissionFactsSnapshot, SubmissionId, UserId, Verdict,
    FACTS_SCHEMA_VERSION,
};
use judge::{default_languages, Languages};
use judge_worker::{Handled, HttpJudgingPort, JudgeWorker, LocalPackages, WorkerConfig};
use libtest_mimic::{Arguments, Failed, Trial};
use platform::{Db, Metrics};
use queue::{JudgeQueue, QueueConfig, SqlQueue};
use sandbox::{NativeSandbox, SupervisorCommand};
use submission::{Dispatcher, DispatcherConfig, SubmissionConfig, SubmissionStore, SubmitRequest};

fn main() {
    if std::env::args_os().nth(1).as_deref() == Some(sandbox::SUPERVISOR_ARG.as_ref()) {
        sandbox::supervisor_main();
    }
    let args = Arguments::from_args();
    let trials = vec![
        trial(
            "accepted_and_wrong_answers_are_judged_and_acknowledged",
            verdicts_flow,
        ),
        trial("poison_entries_are_dead_lettered", poison),
        trial(
            "a_delivery_for_an_old_generation_is_dropped_as_stale",
            stale_delivery,
        ),
        trial("losing_the_lease_aborts_the_judging", lease_lost),
        trial(
            "infrastructure_failures_are_retried_then_system_error",
            infrastructure,
        ),
        trial("the_http_port_needs_the_service_token", http_port),
        trial(
            "the_worker_leases_ahead_but_judges_only_its_concurrency",
            prefetch,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}

fn trial(name: &'static str, test: fn() -> Result<(), Failed>) -> Trial {
    Trial::test(name, test)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

struct Shared {
    sandbox: Arc<NativeSandbox>,
    languages: Arc<Languages>,
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| {
        let sandbox = Arc::new(NativeSandbox::new(
            SupervisorCommand::current_exe().unwrap(),
        ));
        let configs = default_languages()
            .into_iter()
            .filter(|c| ["c", "python3"].contains(&c.id.as_str()))
            .collect();
        let languages = Arc::new(Languages::detect(sandbox.as_ref(), configs));
        Shared { sandbox, languages }
    })
}

/// A store, a queue, the A+B package registered, and a dispatcher — everything but the worker.
struct Rig {
    _dir: tempfile::TempDir,
    store: SubmissionStore,
    queue: Arc<dyn JudgeQueue>,
    dispatcher: Dispatcher,
    packages: LocalPackages,
    hash: String,
}

async fn rig(config: SubmissionConfig) -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let store = SubmissionStore::open(
        Db::sqlite_owner(dir.path(), "submission").await.unwrap(),
        config,
    )
    .await
    .unwrap();
    let queue_config = QueueConfig {
        visibility_timeout: Duration::from_secs(60),
        ..QueueConfig::default()
    };
    let queue: Arc<dyn JudgeQueue> = Arc::new(
        SqlQueue::new(
            Db::sqlite_owner(dir.path(), "queue").await.unwrap(),
            queue_config,
        )
        .await
        .unwrap(),
    );
    std::fs::create_dir(dir.path().join("packages")).unwrap();
    let packages = LocalPackages::new(dir.path().join("packages"));
    let aplusb = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/problems/aplusb");
    let hash = packages.register(&aplusb).unwrap();
    let dispatcher = Dispatcher::new(
        store.clone(),
        Some(queue.clone()),
        DispatcherConfig::default(),
        Metrics::new(),
    );
    Rig {
        _dir: dir,
        store,
        queue,
        dispatcher,
        packages,
        hash,
    }
}

impl Rig {
    async fn submit(&self, language: &str, source: &str) -> SubmissionId {
        let facts = SubmissionFactsSnapshot {
            schema_version: FACTS_SCHEMA_VERSION,
            user_id: UserId(1),
            user_exists: true,
            problem_id: ProblemId(1),
            problem_title: "A plus B".into(),
            problem_slug: "aplusb".into(),
            time_limit_ms: 1000,
            memory_mib: 256,
            starter_code: None,
            package_hash: self.hash.clone(),
            contest_id: None,
            contest: None,
            captured_at_ms: 0,
        };
        let request = SubmitRequest {
            user_id: UserId(1),
            problem_id: ProblemId(1),
            language: language.into(),
            source: source.into(),
            idempotency_key: None,
        };
        let id = self.store.submit(&facts, &request).await.unwrap().id;
        self.dispatcher.pass().await.unwrap();
        id
    }

    fn worker(&self, port: Arc<dyn JudgingPort>, heartbeat: Duration) -> JudgeWorker {
        let shared = shared();
        let config = WorkerConfig {
            heartbeat,
            ..WorkerConfig::new("test-worker")
        };
        JudgeWorker::new(
            self.queue.clone(),
            port,
            Arc::new(self.packages.clone()),
            shared.sandbox.clone(),
            shared.languages.clone(),
            Metrics::new(),
            config,
        )
    }

    async fn next(&self, worker: &JudgeWorker) -> Handled {
        let delivery = self
            .queue
            .receive("test-worker", 1, Duration::from_secs(2))
            .await
            .unwrap()
            .pop()
            .expect("a delivery");
        worker.handle(delivery).await
    }
}

const SUM_C: &str = "#include <stdio.h>\nint main(void){long long a,b;scanf(\"%lld %lld\",&a,&b);printf(\"%lld\\n\",a+b);return 0;}\n";

fn verdicts_flow() -> Result<(), Failed> {
    runtime().block_on(async {
        let rig = rig(SubmissionConfig::default()).await;
        let worker = rig.worker(Arc::new(rig.store.clone()), Duration::from_secs(20));
        let ac = rig.submit("c", SUM_C).await;
        let wa = rig
            .submit(
                "python3",
                "a, b = map(int, input().split())\nprint(a - b)\n",
            )
            .await;
        assert_eq!(rig.next(&worker).await, Handled::Judged(Verdict::AC));
        assert_eq!(rig.next(&worker).await, Handled::Judged(Verdict::WA));
        let record = rig.store.get(ac).await.unwrap().unwrap();
        assert_eq!(
            (record.state.as_str(), record.verdict),
            ("done", Some(Verdict::AC))
        );
        assert_eq!(record.tests.len(), 8);
        assert_eq!(
            record.tests[0].output.as_deref(),
            Some("3\n"),
            "sample output is kept"
        );
        assert!(record.tests[2].output.is_none(), "secret output is not");
        assert_eq!(
            rig.store.get(wa).await.unwrap().unwrap().verdict,
            Some(Verdict::WA)
        );
        let stats = rig.queue.stats().await.unwrap();
        assert_eq!(
            (stats.length, stats.pending),
            (0, 0),
            "acknowledged after the write"
        );
        Ok(())
    })
}

fn poison() -> Result<(), Failed> {
    runtime().block_on(async {
        let rig = rig(SubmissionConfig::default()).await;
        let worker = rig.worker(Arc::new(rig.store.clone()), Duration::from_secs(20));
        rig.queue
            .enqueue("x:1", "{definitely not a judge message")
            .await
            .unwrap();
        assert_eq!(rig.next(&worker).await, Handled::Poison);
        let stats = rig.queue.stats().await.unwrap();
        assert_eq!((stats.length, stats.dead_letters), (0, 1));
        assert!(rig.queue.dead_letters(1).await.unwrap()[0]
            .reason
            .starts_with("undecodable payload"));
        assert_eq!(worker.metrics.value("judge_poison_total", &[]), 1.0);
        Ok(())
    })
}

fn stale_delivery() -> Result<(), Failed> {
    runtime().block_on(async {
        let rig = rig(SubmissionConfig::default()).await;
        let worker = rig.worker(Arc::new(rig.store.clone()), Duration::from_secs(20));
        let id = rig.submit("c", SUM_C).await;
        // A rejudge before any worker picked up generation 1: its message is now stale.
        assert_eq!(
            rig.store.rejudge(id, None).await.unwrap(),
            Some(Generation(2))
        );
        rig.dispatcher.pass().await.unwrap();
        assert_eq!(rig.next(&worker).await, Handled::Stale("acquire"));
        assert_eq!(
            worker
                .metrics
                .value("judge_stale_result_dropped_total", &[("stage", "acquire")]),
            1.0
        );
        assert_eq!(rig.next(&worker).await, Handled::Judged(Verdict::AC));
        let record = rig.store.get(id).await.unwrap().unwrap();
        assert_eq!(record.judged_generation, Some(Generation(2)));
        assert_eq!(rig.queue.stats().await.unwrap().length, 0);
        Ok(())
    })
}

fn lease_lost() -> Result<(), Failed> {
    runtime().block_on(async {
        let rig = rig(SubmissionConfig::default()).await;
        let worker = Arc::new(rig.worker(Arc::new(rig.store.clone()), Duration::from_millis(200)));
        let id = rig.submit("python3", "import time\ntime.sleep(30)\n").await;
        let delivery = rig
            .queue
            .receive("test-worker", 1, Duration::from_secs(2))
            .await
            .unwrap()
            .pop()
            .unwrap();
        let started = std::time::Instant::now();
        let judging = {
            let worker = worker.clone();
            tokio::spawn(async move { worker.handle(delivery).await })
        };
        tokio::time::sleep(Duration::from_millis(500)).await;
        // A rejudge moves the submission on: the worker's next renewal fails.
        rig.store.rejudge(id, None).await.unwrap();
        let handled = judging.await.unwrap();
        assert_eq!(handled, Handled::Stale("lease_lost"));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the sandbox run was aborted, not waited for: {:?}",
            started.elapsed()
        );
        assert_eq!(rig.store.get(id).await.unwrap().unwrap().state, "pending");
        Ok(())
    })
}

fn infrastructure() -> Result<(), Failed> {
    runtime().block_on(async {
        let rig = rig(SubmissionConfig { max_recoveries: 1, ..SubmissionConfig::default() }).await;
        let worker = rig.worker(Arc::new(rig.store.clone()), Duration::from_secs(20));
        // No worker has COBOL: not the user's fault, so it is retried, then System Error.
        let id = rig.submit("cobol", "DISPLAY 'HI'.").await;
        assert!(matches!(rig.next(&worker).await, Handled::InfrastructureFailure(reason) if reason.contains("cobol")));
        rig.dispatcher.pass().await.unwrap();
        assert!(matches!(rig.next(&worker).await, Handled::InfrastructureFailure(_)));
        let record = rig.store.get(id).await.unwrap().unwrap();
        assert_eq!((record.state.as_str(), record.verdict), ("done", Some(Verdict::SE)));
        assert!(record.message.unwrap().contains("gave up after 1 recoveries"));
        Ok(())
    })
}

fn http_port() -> Result<(), Failed> {
    runtime().block_on(async {
        let rig = rig(SubmissionConfig::default()).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let app: axum::Router = submission::port::routes(
            rig.store.clone(),
            platform::http::ServiceToken("s3cret-service-token".into()),
            platform::Metrics::new(),
        )
        .into();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let base = format!("http://{address}");

        let id = rig.submit("c", SUM_C).await;
        let intruder = rig.worker(Arc::new(HttpJudgingPort::new(&base, "guess")), Duration::from_secs(20));
        assert!(matches!(rig.next(&intruder).await, Handled::LeftPending(reason) if reason.contains("401")));
        assert_eq!(rig.store.get(id).await.unwrap().unwrap().state, "pending", "nothing changed");

        // The entry stays pending for a reclaim; a worker with the token finishes it.
        let worker = rig.worker(Arc::new(HttpJudgingPort::new(&base, "s3cret-service-token")), Duration::from_secs(20));
        let queue_db_entry = rig.queue.stats().await.unwrap();
        assert_eq!(queue_db_entry.pending, 1);
        rig.store.rejudge(id, None).await.unwrap();
        rig.dispatcher.pass().await.unwrap();
        assert_eq!(rig.next(&worker).await, Handled::Judged(Verdict::AC));
        assert_eq!(rig.store.get(id).await.unwrap().unwrap().verdict, Some(Verdict::AC));
        Ok(())
    })
}

/// Delegates to the store and records the order of acquisitions and completions; the first
/// completion waits until a second submission has been acquired, which only a worker that
/// leases ahead of its free judging slots ever does.
struct RecordingPort {
    store: SubmissionStore,
    log: std::sync::Mutex<Vec<(&'static str, SubmissionId)>>,
    acquired: tokio::sync::Notify,
}

impl RecordingPort {
    fn record(&self, event: &'static str, id: SubmissionId) {
        self.log.lock().unwrap().push((event, id));
    }

    fn count(&self, event: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(e, _)| *e == event)
            .count()
    }
}

#[async_trait::async_trait]
impl JudgingPort for RecordingPort {
    async fn acquire(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &contracts::AttemptId,
    ) -> Result<contracts::Acquired, contracts::PortError> {
        let acquired = JudgingPort::acquire(&self.store, id, generation, attempt).await;
        self.record("acquire", id);
        self.acquired.notify_waiters();
        acquired
    }

    async fn renew(
        &self,
        id: SubmissionId,
        attempt: &contracts::AttemptId,
    ) -> Result<bool, contracts::PortError> {
        JudgingPort::renew(&self.store, id, attempt).await
    }

    async fn complete(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &contracts::AttemptId,
        result: &contracts::JudgeResult,
    ) -> Result<bool, contracts::PortError> {
        let second_acquired = async {
            loop {
                let notified = self.acquired.notified();
                if self.count("acquire") >= 2 {
                    return;
                }
                notified.await;
            }
        };
        // Bounded, so a worker that does not lease ahead fails the test instead of hanging.
        let _ = tokio::time::timeout(Duration::from_secs(20), second_acquired).await;
        self.record("complete", id);
        JudgingPort::complete(&self.store, id, generation, attempt, result).await
    }

    async fn progress(
        &self,
        id: SubmissionId,
        attempt: &contracts::AttemptId,
        progress: contracts::JudgeProgress,
    ) -> Result<bool, contracts::PortError> {
        JudgingPort::progress(&self.store, id, attempt, progress).await
    }

    async fn infrastructure_failure(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &contracts::AttemptId,
        reason: &str,
    ) -> Result<bool, contracts::PortError> {
        JudgingPort::infrastructure_failure(&self.store, id, generation, attempt, reason).await
    }
}

/// The real sandbox, tracking which judgings (told apart by their job directories) have a run
/// in progress.
#[derive(Default)]
struct Judgings {
    running: std::sync::Mutex<HashMap<Option<PathBuf>, usize>>,
    most: std::sync::atomic::AtomicUsize,
}

impl Judgings {
    fn started(&self, job: &Option<PathBuf>) {
        let mut running = self.running.lock().unwrap();
        *running.entry(job.clone()).or_default() += 1;
        self.most
            .fetch_max(running.len(), std::sync::atomic::Ordering::SeqCst);
    }

    fn ended(&self, job: &Option<PathBuf>) {
        let mut running = self.running.lock().unwrap();
        if let Some(runs) = running.get_mut(job) {
            *runs -= 1;
            if *runs == 0 {
                running.remove(job);
            }
        }
    }
}

struct TrackingSandbox {
    inner: Arc<NativeSandbox>,
    judgings: Arc<Judgings>,
}

struct TrackedRun<'a> {
    inner: Box<dyn sandbox::Run + 'a>,
    job: Option<PathBuf>,
    judgings: Arc<Judgings>,
}

impl sandbox::Run for TrackedRun<'_> {
    fn canceller(&self) -> sandbox::Canceller {
        self.inner.canceller()
    }

    fn wait(self: Box<Self>) -> sandbox::RunOutcome {
        let TrackedRun {
            inner,
            job,
            judgings,
        } = *self;
        let outcome = inner.wait();
        judgings.ended(&job);
        outcome
    }
}

impl sandbox::Sandbox for TrackingSandbox {
    fn start(
        &self,
        spec: &sandbox::RunSpec,
        fds: sandbox::PassedFds,
    ) -> Result<Box<dyn sandbox::Run + '_>, sandbox::SpecError> {
        self.judgings.started(&spec.job_dir);
        match self.inner.start(spec, fds) {
            Ok(inner) => Ok(Box::new(TrackedRun {
                inner,
                job: spec.job_dir.clone(),
                judgings: self.judgings.clone(),
            })),
            Err(e) => {
                self.judgings.ended(&spec.job_dir);
                Err(e)
            }
        }
    }
}

fn prefetch() -> Result<(), Failed> {
    runtime().block_on(async {
        let rig = rig(SubmissionConfig::default()).await;
        let port = Arc::new(RecordingPort {
            store: rig.store.clone(),
            log: Default::default(),
            acquired: tokio::sync::Notify::new(),
        });
        let judgings = Arc::new(Judgings::default());
        let sandbox = Arc::new(TrackingSandbox {
            inner: shared().sandbox.clone(),
            judgings: judgings.clone(),
        });
        let worker = Arc::new(JudgeWorker::new(
            rig.queue.clone(),
            port.clone(),
            Arc::new(rig.packages.clone()),
            sandbox,
            shared().languages.clone(),
            Metrics::new(),
            WorkerConfig {
                concurrency: 1,
                prefetch: 1,
                receive_block: Duration::from_millis(100),
                ..WorkerConfig::new("test-worker")
            },
        ));
        // Each test sleeps, so judgings that were allowed to overlap would.
        let slow_sum =
            "import time\ntime.sleep(0.05)\na, b = map(int, input().split())\nprint(a + b)\n";
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(rig.submit("python3", slow_sum).await);
        }
        let shutdown = platform::Shutdown::new();
        let running = tokio::spawn(
            worker
                .clone()
                .run(shutdown.clone(), Duration::from_secs(30)),
        );
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let mut done = 0;
            for id in &ids {
                if rig.store.get(*id).await.unwrap().unwrap().state == "done" {
                    done += 1;
                }
            }
            if done == ids.len() || tokio::time::Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        shutdown.trigger();
        running.await.unwrap();
        let log = port.log.lock().unwrap().clone();
        for id in &ids {
            let record = rig.store.get(*id).await.unwrap().unwrap();
            assert_eq!(record.verdict, Some(Verdict::AC), "{id:?}: {log:?}");
        }
        let position = |event: &str, nth: usize| {
            log.iter()
                .enumerate()
                .filter(|(_, (e, _))| *e == event)
                .nth(nth)
                .map(|(at, _)| at)
                .unwrap_or_else(|| panic!("no {event} #{nth} in {log:?}"))
        };
        assert!(
            position("acquire", 1) < position("complete", 0),
            "the second submission is leased while the first is judged: {log:?}"
        );
        assert!(
            position("complete", 0) < position("acquire", 2),
            "no more than concurrency + prefetch are taken: {log:?}"
        );
        assert_eq!(
            judgings.most.load(std::sync::atomic::Ordering::SeqCst),
            1,
            "only `concurrency` judgings run in the sandbox at once"
        );
        Ok(())
    })
}
