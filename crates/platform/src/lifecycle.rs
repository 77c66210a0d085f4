//! Shutdown coordination: one signal, observed by every module, each draining its in-flight
//! work within a bounded time.

use std::time::Duration;

use tokio::sync::watch;

/// The shutdown switch. Cloning it shares the switch.
#[derive(Debug, Clone)]
pub struct Shutdown {
    sender: watch::Sender<bool>,
}

impl Default for Shutdown {
    fn default() -> Self {
        Self::new()
    }
}

impl Shutdown {
    pub fn new() -> Self {
        Self {
            sender: watch::channel(false).0,
        }
    }

    /// Starts shutting down (idempotent).
    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }

    pub fn is_triggered(&self) -> bool {
        *self.sender.borrow()
    }

    /// Resolves once shutdown has been triggered.
    pub async fn triggered(&self) {
        let mut receiver = self.sender.subscribe();
        let _ = receiver.wait_for(|stop| *stop).await;
    }

    /// Triggers on SIGINT or SIGTERM.
    pub fn trigger_on_signals(&self) {
        let this = self.clone();
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("SIGTERM handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            tracing::info!("shutdown requested");
            this.trigger();
        });
    }
}

/// What live views (event streams) wait for between two reads: an announced change that
/// `concerns` them, at most `period` (for changes not announced), or shutdown. A
/// receiver that lagged counts as a change; a closed channel leaves only the period.
/// Says whether a change ended the wait.
pub async fn wait_for_change<K: Clone>(
    changes: &mut tokio::sync::broadcast::Receiver<K>,
    concerns: impl Fn(&K) -> bool,
    period: Duration,
    closing: &Shutdown,
) -> bool {
    let changed = async {
        loop {
            match changes.recv().await {
                Ok(changed) if concerns(&changed) => return,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                    std::future::pending::<()>().await
                }
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(period, async {
        tokio::select! {
            () = closing.triggered() => false,
            () = changed => true,
        }
    })
    .await
    .unwrap_or(false)
}

/// Waits for `task` up to `grace`; reports whether it finished in time.
pub async fn drain<F: std::future::Future>(task: F, grace: Duration) -> Option<F::Output> {
    tokio::time::timeout(grace, task).await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn triggering_wakes_every_waiter_and_is_idempotent() {
        let shutdown = Shutdown::new();
        let waiter = {
            let s = shutdown.clone();
            tokio::spawn(async move { s.triggered().await })
        };
        assert!(!shutdown.is_triggered());
        shutdown.trigger();
        shutdown.trigger();
        waiter.await.unwrap();
        // Late waiters return at once.
        shutdown.triggered().await;
        assert_eq!(
            drain(std::future::pending::<()>(), Duration::from_millis(10)).await,
            None
        );
    }
}
