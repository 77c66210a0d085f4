//! Which submissions changed, for live-status watchers. In one process a broadcast carries
//! them; on PostgreSQL every change is also a `NOTIFY` that each replica's listener turns into
//! the same broadcast, so a watcher on one replica sees another replica's (or a worker's)
//! change at once instead of on its next re-read.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use contracts::SubmissionId;
use platform::cache::ReadCache;
use platform::{Backend, Db};
use tokio::sync::broadcast;

use crate::store::SubmissionRecord;

/// The channel changes are announced on (payload: the submission id).
pub const CHANGES_CHANNEL: &str = "submission_changes";

/// How often a watcher re-reads anyway while every change reaches it as it happens (it
/// guards against a change made outside any store, e.g. a manual fix in the database).
const SAFETY_RECHECK: Duration = Duration::from_secs(30);
/// How often a watcher re-reads while other processes' changes may not reach it (the
/// listener is down, or was, so notifications may have been lost).
const BLIND_RECHECK: Duration = Duration::from_secs(1);

/// One announcement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// This submission's state or progress changed.
    Of(SubmissionId),
    /// Announcements may have been lost: every watcher re-reads.
    Unknown,
}

impl Change {
    pub fn concerns(&self, id: SubmissionId) -> bool {
        match self {
            Change::Of(changed) => *changed == id,
            Change::Unknown => true,
        }
    }
}

/// Records read recently, kept while no change of theirs was announced.
const RECENT_RECORDS: usize = 1024;

/// The announcements of one store (cheap to clone), and the records read since that no
/// announcement has voided: a record is forgotten before its change is broadcast, so a watcher
/// woken by a change never reads the record from before it.
#[derive(Clone)]
pub struct ChangeFeed {
    db: Db,
    local: broadcast::Sender<Change>,
    recent: Arc<ReadCache<SubmissionId, SubmissionRecord>>,
    /// Whether every process's changes reach this feed now (always on SQLite: one process).
    complete: Arc<AtomicBool>,
}

impl ChangeFeed {
    /// A feed on `db`; on PostgreSQL it listens for other processes' changes until the last
    /// clone is dropped.
    pub fn open(db: Db) -> Self {
        let postgres = db.backend() == Backend::Postgres;
        let feed = Self {
            local: broadcast::channel(1024).0,
            recent: Arc::new(ReadCache::new(RECENT_RECORDS)),
            complete: Arc::new(AtomicBool::new(!postgres)),
            db,
        };
        if postgres {
            tokio::spawn(relay_notifications(
                feed.db.url().to_string(),
                Arc::downgrade(&feed.complete),
                Relay {
                    local: feed.local.clone(),
                    recent: feed.recent.clone(),
                },
            ));
        }
        feed
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.local.subscribe()
    }

    /// How long a watcher may wait for an announcement before re-reading anyway.
    pub fn recheck_period(&self) -> Duration {
        if self.complete.load(Ordering::Relaxed) {
            SAFETY_RECHECK
        } else {
            BLIND_RECHECK
        }
    }

    /// Records read recently; an entry is good for [`Self::recheck_period`].
    pub fn recent(&self) -> &ReadCache<SubmissionId, SubmissionRecord> {
        &self.recent
    }

    /// Announces a committed change of `id` to this process and, on PostgreSQL, to every other.
    pub async fn announce(&self, id: SubmissionId) {
        Relay {
            local: self.local.clone(),
            recent: self.recent.clone(),
        }
        .send(Change::Of(id));
        if self.db.backend() == Backend::Postgres {
            let notified = self
                .db
                .query("SELECT pg_notify($1, $2)")
                .bind(CHANGES_CHANNEL)
                .bind(id.0.to_string())
                .execute(self.db.pool())
                .await;
            if let Err(e) = notified {
                // Other replicas' watchers see it on their next re-read.
                tracing::warn!(error = %e, "could not announce a submission change");
            }
        }
    }
}

/// Where announcements go in this process: the recent records forget first, then watchers
/// are woken.
struct Relay {
    local: broadcast::Sender<Change>,
    recent: Arc<ReadCache<SubmissionId, SubmissionRecord>>,
}

impl Relay {
    fn send(&self, change: Change) {
        match change {
            Change::Of(id) => self.recent.forget(&id),
            Change::Unknown => self.recent.forget_all(),
        }
        let _ = self.local.send(change);
    }
}

/// Forwards this channel's notifications into the process while the feed exists. Whenever the
/// listener is not connected, the feed says it is incomplete (watchers re-read each second);
/// after a reconnection everyone re-reads once, since notifications sent meanwhile are lost.
async fn relay_notifications(url: String, complete: Weak<AtomicBool>, relay: Relay) {
    let set_complete = |value: bool| match complete.upgrade() {
        Some(flag) => {
            flag.store(value, Ordering::Relaxed);
            true
        }
        None => false,
    };
    loop {
        let Some(mut listener) = platform::events::listen(&url, CHANGES_CHANNEL).await else {
            if !set_complete(false) {
                return;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        if !set_complete(true) {
            return;
        }
        relay.send(Change::Unknown);
        // Set while reconnecting: until a notification arrives the connection is not known
        // to be back, so watchers keep re-reading.
        let mut blind = false;
        loop {
            match listener.try_recv().await {
                Ok(Some(notification)) => {
                    if blind {
                        blind = false;
                        if !set_complete(true) {
                            return;
                        }
                        relay.send(Change::Unknown);
                    } else if complete.strong_count() == 0 {
                        return;
                    }
                    if let Ok(id) = notification.payload().parse() {
                        relay.send(Change::Of(SubmissionId(id)));
                    }
                }
                // The connection was lost; the next receive re-establishes it.
                Ok(None) => {
                    blind = true;
                    if !set_complete(false) {
                        return;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "submission change listener failed; re-listening");
                    set_complete(false);
                    break;
                }
            }
        }
    }
}
