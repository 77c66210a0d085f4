//! The judge worker loop.
//!
//! For each delivery: decode (an undecodable payload is poison: dead-lettered and
//! acknowledged) → acquire the lease through the judging port (stale → `judge.stale_result
//! .dropped`, acknowledge) → heartbeat at a third of the lease while judging (a failed renewal
//! aborts the sandbox runs) → fetch the package by hash → judge in the sandbox → write the
//! verdict through the port, fenced → acknowledge only after the write committed. An
//! infrastructure failure is reported as such (retried with a new generation), never as the
//! user's verdict. Entries this worker cannot finish stay pending and are reclaimed after the
//! visibility timeout, by this or another worker.
//!
//! Intake runs ahead of judging by `WorkerConfig::prefetch` deliveries: while `concurrency`
//! judgings hold the sandbox, the next ones are received, leased (their heartbeat already
//! running) and their packages fetched, so a slot freed by a finished judging is taken at once
//! instead of after a receive, an acquire and a fetch. Writing a verdict and acknowledging it
//! happen after the judging permit is released, for the same reason.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use contracts::{
    Acquired, AttemptId, FinishedTest, JudgeJob, JudgeMessage, JudgeProgress, JudgeResult,
    JudgingPort, PortError, ProblemPackagePort, TestOutcome, Verdict,
};
use judge::{Abort, Coverage, Judge, JudgeOptions, JudgeReport, Languages, Problem, Progress};
use platform::{Metrics, Shutdown};
use queue::{Delivery, JudgeQueue};
use sandbox::Sandbox;
use tokio::sync::Semaphore;

/// How often live progress is reported at most: a test of a few milliseconds need not cost a
/// write (an fsync'd commit, and a wake of every watcher) of its own; four a second still
/// read as live.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// This worker's consumer name in the queue group.
    pub consumer: String,
    /// Submissions judged at once.
    pub concurrency: usize,
    /// Deliveries taken beyond `concurrency`: leased and prepared, waiting for a judging slot.
    pub prefetch: usize,
    /// Lease renewal period: a third of the owner's lease TTL.
    pub heartbeat: Duration,
    /// How often idle pending entries are reclaimed (and queue gauges published).
    pub reclaim_interval: Duration,
    /// How long a receive waits for work.
    pub receive_block: Duration,
    /// How long a port call that fails transiently is retried before giving the entry up.
    pub port_retry: Duration,
    /// Successful compilations kept by content, so a rejudge does not compile again.
    pub compile_cache: Option<Arc<judge::compile_cache::CompileCache>>,
}

impl WorkerConfig {
    pub fn new(consumer: impl Into<String>) -> Self {
        Self {
            consumer: consumer.into(),
            concurrency: 1,
            prefetch: 1,
            heartbeat: Duration::from_secs(20),
            reclaim_interval: Duration::from_secs(10),
            receive_block: Duration::from_secs(2),
            port_retry: Duration::from_secs(30),
            compile_cache: None,
        }
    }
}

/// Everything a worker needs; it holds no database credentials.
pub struct JudgeWorker {
    pub queue: Arc<dyn JudgeQueue>,
    pub port: Arc<dyn JudgingPort>,
    pub packages: Arc<dyn ProblemPackagePort>,
    pub sandbox: Arc<dyn Sandbox>,
    pub languages: Arc<Languages>,
    pub metrics: Metrics,
    pub config: WorkerConfig,
    problems: Mutex<HashMap<String, Arc<Problem>>>,
    /// `concurrency` permits: held only while a judging runs in the sandbox.
    judging: Arc<Semaphore>,
}

/// How a delivery ended, for logs and tests.
#[derive(Debug, Clone, PartialEq)]
pub enum Handled {
    Judged(Verdict),
    Stale(&'static str),
    Poison,
    InfrastructureFailure(String),
    /// Left pending for a later reclaim (the port or the queue could not be reached).
    LeftPending(String),
}

fn stale(metrics: &Metrics, stage: &'static str) -> Handled {
    metrics.inc(
        "judge_stale_result_dropped_total",
        "judge.stale_result.dropped: work dropped because its claim was stale, by stage.",
        &[("stage", stage)],
        1,
    );
    Handled::Stale(stage)
}

/// Retries a port call on `Unavailable` until `window` has passed.
async fn with_retry<T, F, Fut>(window: Duration, mut call: F) -> Result<T, PortError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, PortError>>,
{
    let deadline = tokio::time::Instant::now() + window;
    let mut pause = Duration::from_millis(100);
    loop {
        match call().await {
            Err(PortError::Unavailable(e)) if tokio::time::Instant::now() + pause < deadline => {
                tracing::debug!(error = %e, "port unavailable, retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

/// The report as the contract's result.
pub fn to_result(report: &JudgeReport) -> JudgeResult {
    JudgeResult {
        verdict: report.verdict,
        score: report.score,
        max_score: report.max_score,
        time_ms: report.time_ms,
        memory_kib: report.memory_kib,
        compile_output: report.compile_output.clone(),
        tests: report
            .tests
            .iter()
            .map(|t| TestOutcome {
                name: t.name.clone(),
                group: t.group.clone(),
                verdict: t.verdict,
                time_ms: t.time_ms,
                wall_time_ms: t.wall_time_ms,
                memory_kib: t.memory_kib,
                message: t.message.clone(),
                score: t.score,
                output: t.output.clone(),
                detail: t.detail.clone(),
            })
            .collect(),
        subtasks: report.subtasks.clone(),
    }
}

impl JudgeWorker {
    pub fn new(
        queue: Arc<dyn JudgeQueue>,
        port: Arc<dyn JudgingPort>,
        packages: Arc<dyn ProblemPackagePort>,
        sandbox: Arc<dyn Sandbox>,
        languages: Arc<Languages>,
        metrics: Metrics,
        config: WorkerConfig,
    ) -> Self {
        Self {
            judging: Arc::new(Semaphore::new(config.concurrency.max(1))),
            queue,
            port,
            packages,
            sandbox,
            languages,
            metrics,
            config,
            problems: Mutex::new(HashMap::new()),
        }
    }

    /// Consumes the queue until shutdown, then lets in-flight judgings finish (they are
    /// bounded by their limits) within `grace`; a prefetched delivery still waiting for a
    /// judging slot when the grace expires stays pending, like any unfinished entry.
    pub async fn run(self: Arc<Self>, shutdown: Shutdown, grace: Duration) {
        tracing::info!(
            job_dir = %judge::workdir::root().display(),
            concurrency = self.config.concurrency,
            "judge worker started"
        );
        let slots = Arc::new(Semaphore::new(
            self.config.concurrency.max(1) + self.config.prefetch,
        ));
        let mut tasks = tokio::task::JoinSet::new();
        let mut reclaim = tokio::time::interval(self.config.reclaim_interval);
        reclaim.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            while tasks.try_join_next().is_some() {}
            let slot = tokio::select! {
                _ = shutdown.triggered() => break,
                _ = reclaim.tick() => {
                    self.publish_queue_stats().await;
                    let free = slots.available_permits();
                    if free > 0 {
                        match self.queue.reclaim(&self.config.consumer, free).await {
                            Ok(reclaimed) => {
                                for delivery in reclaimed.deliveries {
                                    let slot = slots.clone().acquire_owned().await.expect("the semaphore is never closed");
                                    let worker = self.clone();
                                    tasks.spawn(async move {
                                        worker.handle(delivery).await;
                                        drop(slot);
                                    });
                                }
                            }
                            Err(e) => tracing::warn!(error = %e, "reclaim failed"),
                        }
                    }
                    continue;
                }
                slot = slots.clone().acquire_owned() => slot.expect("the semaphore is never closed"),
            };
            let received = tokio::select! {
                _ = shutdown.triggered() => break,
                received = self.queue.receive(&self.config.consumer, 1, self.config.receive_block) => received,
            };
            match received {
                Ok(deliveries) => {
                    let Some(delivery) = deliveries.into_iter().next() else {
                        continue;
                    };
                    let worker = self.clone();
                    tasks.spawn(async move {
                        worker.handle(delivery).await;
                        drop(slot);
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "receive failed");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
        let drained =
            tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} }).await;
        if drained.is_err() {
            tracing::warn!(
                "shutdown grace expired with judgings in flight; their entries stay pending"
            );
            tasks.abort_all();
        }
    }

    async fn publish_queue_stats(&self) {
        if let Ok(stats) = self.queue.stats().await {
            let gauge = |name: &'static str, help: &'static str, value: u64| {
                self.metrics.set(name, help, &[], value as f64)
            };
            gauge(
                "queue_length",
                "Unacknowledged queue entries.",
                stats.length,
            );
            gauge(
                "queue_pending_entries",
                "Entries in the pending-entries list (delivered, unacknowledged).",
                stats.pending,
            );
            gauge(
                "queue_oldest_pending_age_ms",
                "Age of the oldest pending entry.",
                stats.oldest_pending_age_ms,
            );
            gauge(
                "queue_delay_ms",
                "Age of the oldest entry not yet delivered.",
                stats.queue_delay_ms,
            );
            gauge(
                "queue_dead_letters",
                "Entries in the dead-letter stream.",
                stats.dead_letters,
            );
        }
    }

    /// Processes one delivery to the end.
    pub async fn handle(&self, delivery: Delivery) -> Handled {
        let handled = self.process(&delivery).await;
        let settle = match &handled {
            Handled::LeftPending(_) => self.queue.nack(&delivery.id).await,
            Handled::Poison => Ok(()),
            _ => self.queue.ack(&delivery.id).await,
        };
        if let Err(e) = settle {
            tracing::warn!(error = %e, entry = %delivery.id, "could not settle the queue entry; it will be reclaimed");
        }
        tracing::info!(entry = %delivery.id, deliveries = delivery.deliveries, outcome = ?handled, "delivery handled");
        handled
    }

    async fn process(&self, delivery: &Delivery) -> Handled {
        let message: JudgeMessage = match serde_json::from_str(&delivery.payload) {
            Ok(message) => message,
            Err(e) => {
                self.metrics.inc(
                    "judge_poison_total",
                    "Undecodable queue entries dead-lettered.",
                    &[],
                    1,
                );
                if let Err(e) = self
                    .queue
                    .dead_letter(&delivery.id, &format!("undecodable payload: {e}"))
                    .await
                {
                    return Handled::LeftPending(format!("poison could not be dead-lettered: {e}"));
                }
                return Handled::Poison;
            }
        };
        let attempt = AttemptId(uuid::Uuid::new_v4().to_string());
        let acquired = with_retry(self.config.port_retry, || {
            self.port
                .acquire(message.submission_id, message.generation, &attempt)
        })
        .await;
        let job = match acquired {
            Ok(Acquired::Job(job)) => *job,
            Ok(Acquired::Stale { .. }) => return stale(&self.metrics, "acquire"),
            Err(e) => return Handled::LeftPending(format!("acquire: {e}")),
        };

        // Heartbeat: renew the lease and keep the queue entry fresh; a lost lease aborts.
        let abort = Abort::default();
        let lost = Arc::new(AtomicBool::new(false));
        let heartbeat = {
            let (port, queue, abort, lost) = (
                self.port.clone(),
                self.queue.clone(),
                abort.clone(),
                lost.clone(),
            );
            let (id, attempt, entry, consumer, period) = (
                job.submission_id,
                job.attempt_id.clone(),
                delivery.id.clone(),
                self.config.consumer.clone(),
                self.config.heartbeat,
            );
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(period).await;
                    match port.renew(id, &attempt).await {
                        Ok(true) => {
                            let _ = queue.touch(&consumer, &entry).await;
                        }
                        Ok(false) => {
                            lost.store(true, Ordering::SeqCst);
                            abort.abort();
                            return;
                        }
                        Err(e) => tracing::warn!(error = %e, "lease renewal failed; retrying"),
                    }
                }
            })
        };
        let outcome = self.judge(&job, abort).await;
        heartbeat.abort();
        if lost.load(Ordering::SeqCst) {
            return stale(&self.metrics, "lease_lost");
        }
        match outcome {
            // A package's own failure (a validator that timed out or crashed) is its verdict,
            // shown to the setter; only the judge's failures are retried.
            Ok(report) if !report.needs_retry() => {
                for test in &report.tests {
                    self.metrics.inc(
                        "judge_test_verdicts_total",
                        "Judged tests by verdict (the sandbox outcome categories as verdicts).",
                        &[("verdict", test.verdict.as_str())],
                        1,
                    );
                }
                let result = to_result(&report);
                let written = with_retry(self.config.port_retry, || {
                    self.port
                        .complete(job.submission_id, job.generation, &job.attempt_id, &result)
                })
                .await;
                match written {
                    Ok(true) => {
                        self.metrics.inc(
                            "judge_verdicts_total",
                            "Verdicts written, by verdict.",
                            &[("verdict", report.verdict.as_str())],
                            1,
                        );
                        Handled::Judged(report.verdict)
                    }
                    Ok(false) => stale(&self.metrics, "complete"),
                    Err(e) => Handled::LeftPending(format!("complete: {e}")),
                }
            }
            failed => {
                let reason = match failed {
                    Ok(report) => report
                        .tests
                        .iter()
                        .find(|t| t.verdict == Verdict::SE)
                        .map(|t| t.message.clone())
                        .unwrap_or(report.compile_output),
                    Err(reason) => reason,
                };
                self.metrics.inc(
                    "judge_infrastructure_failures_total",
                    "Judgings that failed for infrastructure reasons.",
                    &[],
                    1,
                );
                match with_retry(self.config.port_retry, || {
                    self.port.infrastructure_failure(
                        job.submission_id,
                        job.generation,
                        &job.attempt_id,
                        &reason,
                    )
                })
                .await
                {
                    Ok(true) => Handled::InfrastructureFailure(reason),
                    Ok(false) => stale(&self.metrics, "infrastructure_failure"),
                    Err(e) => Handled::LeftPending(format!("infrastructure failure report: {e}")),
                }
            }
        }
    }

    fn problem(&self, hash: &str, dir: &Path) -> Result<Arc<Problem>, String> {
        if let Some(problem) = self.problems.lock().unwrap().get(hash) {
            return Ok(problem.clone());
        }
        let problem = Arc::new(Problem::load(dir).map_err(|e| format!("package {hash}: {e}"))?);
        self.problems
            .lock()
            .unwrap()
            .insert(hash.to_string(), problem.clone());
        Ok(problem)
    }

    /// Judges a job; `Err` is an infrastructure failure (never the user's verdict).
    async fn judge(&self, job: &JudgeJob, abort: Abort) -> Result<JudgeReport, String> {
        let dir = self
            .packages
            .package(&job.facts.package_hash)
            .await
            .map_err(|e| format!("problem package: {e}"))?;
        let mut problem = (*self.problem(&job.facts.package_hash, &dir)?).clone();
        // The facts the submission was admitted with decide its limits.
        problem.limits.time_limit_ms = job.facts.time_limit_ms;
        problem.limits.memory_mib = job.facts.memory_mib;
        // Live progress goes to the port from a task; the judging thread only records the
        // latest value, so a slow port never slows judging down.
        let total = problem.data.cases_in_order().len() as u32;
        let (progress_tx, mut progress_rx) = tokio::sync::watch::channel(None::<JudgeProgress>);
        // Ended when judging is over (its sender dropped): the forwarder stops mid-period.
        let (over, mut judging_over) = tokio::sync::oneshot::channel::<()>();
        let forward = {
            let (port, id, attempt) =
                (self.port.clone(), job.submission_id, job.attempt_id.clone());
            tokio::spawn(async move {
                // The first change is reported at once, later ones at most once a period and
                // looked at only when it is over: a change mid-period wakes nothing (a wake-up
                // per test was most of the judging thread's own work on small tests). Judging
                // that ends meanwhile leaves the rest to its verdict, at once.
                let mut next: Option<tokio::time::Instant> = None;
                loop {
                    match next {
                        None => {
                            if progress_rx.changed().await.is_err() {
                                break;
                            }
                        }
                        Some(at) => {
                            tokio::select! {
                                _ = tokio::time::sleep_until(at) => {}
                                _ = &mut judging_over => break,
                            }
                            match progress_rx.has_changed() {
                                Ok(true) => {}
                                Ok(false) => {
                                    next = None;
                                    continue;
                                }
                                Err(_) => break,
                            }
                        }
                    }
                    let latest = progress_rx.borrow_and_update().clone();
                    if let Some(progress) = latest {
                        next = Some(tokio::time::Instant::now() + PROGRESS_EVERY);
                        if let Err(e) = port.progress(id, &attempt, progress).await {
                            tracing::debug!(error = %e, "progress not reported");
                        }
                    }
                }
            })
        };
        let (sandbox, languages, language, source, compile_cache) = (
            self.sandbox.clone(),
            self.languages.clone(),
            job.language.clone(),
            job.source.clone(),
            self.config.compile_cache.clone(),
        );
        let judging = self
            .judging
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed");
        let judged = tokio::task::spawn_blocking(move || {
            let _judging = judging;
            let judge = Judge::new(sandbox.as_ref(), &languages)
                .with_compile_cache(compile_cache.as_deref());
            let prepared = judge.prepare(&problem).map_err(|e| e.to_string())?;
            let options = JudgeOptions {
                coverage: Coverage::Package,
                abort: Some(abort),
            };
            let finished = std::sync::Mutex::new(Vec::<FinishedTest>::new());
            let report = |progress: Progress<'_>| {
                let update = match progress {
                    Progress::Compiling => JudgeProgress::Compiling,
                    Progress::Compiled { ok: false } => return,
                    Progress::Compiled { ok: true } => JudgeProgress::Running {
                        test: 1,
                        total,
                        finished: Vec::new(),
                    },
                    Progress::Test { index, result, .. } => {
                        let mut finished = finished.lock().unwrap_or_else(|p| p.into_inner());
                        finished.push(FinishedTest {
                            index: index as u32,
                            name: result.name.clone(),
                            verdict: result.verdict,
                            time_ms: result.time_ms,
                            memory_kib: result.memory_kib,
                        });
                        JudgeProgress::Running {
                            test: (finished.len() as u32 + 1).min(total),
                            total,
                            finished: finished.clone(),
                        }
                    }
                };
                progress_tx.send_replace(Some(update));
            };
            judge
                .judge(&prepared, &language, source.as_bytes(), options, &report)
                .map_err(|e| e.to_string())
        })
        .await;
        drop(over);
        let _ = forward.await;
        judged.map_err(|e| format!("judging task: {e}"))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn transient_port_failures_are_retried_within_the_window() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let result = with_retry(Duration::from_secs(5), || {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < 2 {
                    Err(PortError::Unavailable("db restarting".into()))
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(result, Ok(2));
        let rejected: Result<(), _> = with_retry(Duration::from_secs(5), || async {
            Err(PortError::Rejected("bad token".into()))
        })
        .await;
        assert_eq!(
            rejected,
            Err(PortError::Rejected("bad token".into())),
            "not retried"
        );
        let gave_up: Result<(), _> = with_retry(Duration::from_millis(150), || async {
            Err(PortError::Unavailable("down".into()))
        })
        .await;
        assert!(gave_up.is_err());
    }
}
