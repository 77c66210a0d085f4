//! The owner's singleton jobs: the lease reaper and the lost-delivery sweeper. Each runs only
//! while its process holds the job's lease, and every write it makes is conditioned on the
//! lease's current fence token.

use std::time::Duration;

use platform::{Leases, Metrics, Shutdown};

use crate::store::{Recovery, SubmissionStore};

#[derive(Debug, Clone, Copy)]
pub struct MaintenanceConfig {
    pub reap_interval: Duration,
    pub sweep_interval: Duration,
    /// A `pending` submission whose intent was sent this long ago without being picked up is
    /// re-driven. Should exceed the normal queue delay.
    pub sweep_after: Duration,
    pub batch: i64,
}

impl Default for MaintenanceConfig {
    fn default() -> Self {
        Self {
            reap_interval: Duration::from_secs(10),
            sweep_interval: Duration::from_secs(30),
            sweep_after: Duration::from_secs(300),
            batch: 100,
        }
    }
}

pub const REAPER_LEASE: &str = "submission.lease-reaper";
pub const SWEEPER_LEASE: &str = "submission.delivery-sweeper";

fn record(metrics: &Metrics, job: &str, outcomes: &[(contracts::SubmissionId, Recovery)]) {
    for (_, outcome) in outcomes {
        let kind = match outcome {
            Recovery::Redriven(_) => "redriven",
            Recovery::GaveUp => "gave_up",
            Recovery::Lost => "lost",
        };
        metrics.inc(
            "submission_recoveries_total",
            "Submissions recovered by the singleton jobs, by job and outcome.",
            &[("job", job), ("outcome", kind)],
            1,
        );
    }
}

/// The embedded shape's start: every submission the previous process was judging is
/// re-driven now (a new generation, so a late report of the dead attempt is fenced out)
/// instead of when its judging lease expires. Takes the reaper's lease over whoever held it:
/// only for a process that knows the previous one is dead (it holds the data directory's
/// lock). `owner` is the name [`run`] is then started with.
pub async fn recover_previous_process(
    store: &SubmissionStore,
    owner: &str,
    config: &MaintenanceConfig,
) -> Result<Vec<(contracts::SubmissionId, Recovery)>, platform::DbError> {
    let lease = Leases::new(store.db().clone())
        .take_over(REAPER_LEASE, owner, config.reap_interval * 3)
        .await?;
    let mut recovered = Vec::new();
    loop {
        let done = store.recover_interrupted(&lease, config.batch).await?;
        let full = done.len() as i64 >= config.batch;
        recovered.extend(done);
        if !full {
            return Ok(recovered);
        }
    }
}

/// Runs both jobs until shutdown. `owner` identifies this process in the lease table.
pub async fn run(
    store: SubmissionStore,
    owner: String,
    config: MaintenanceConfig,
    metrics: Metrics,
    shutdown: Shutdown,
) {
    let leases = Leases::new(store.db().clone());
    let mut reap = tokio::time::interval(config.reap_interval);
    let mut sweep = tokio::time::interval(config.sweep_interval);
    reap.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.triggered() => return,
            _ = reap.tick() => {
                match leases.acquire(REAPER_LEASE, &owner, config.reap_interval * 3).await {
                    Ok(Some(lease)) => match store.reap_expired_leases(&lease, config.batch).await {
                        Ok(done) => record(&metrics, "lease_reaper", &done),
                        Err(e) => tracing::warn!(error = %e, "lease reaper pass failed"),
                    },
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "lease reaper lease"),
                }
            }
            _ = sweep.tick() => {
                match leases.acquire(SWEEPER_LEASE, &owner, config.sweep_interval * 3).await {
                    Ok(Some(lease)) => match store.sweep_lost_deliveries(&lease, config.sweep_after, config.batch).await {
                        Ok(done) => record(&metrics, "delivery_sweeper", &done),
                        Err(e) => tracing::warn!(error = %e, "delivery sweeper pass failed"),
                    },
                    Ok(None) => {}
                    Err(e) => tracing::warn!(error = %e, "delivery sweeper lease"),
                }
            }
        }
    }
}
