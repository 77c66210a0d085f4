//! Shared by the notification suites: the owner on a real database, a recipient directory
//! standing in for Auth's port, and events as Auth and Submission record them.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::Arc;

use contracts::events::{types, EventEnvelope};
use contracts::{PortError, Recipient, Recipients, UserId};
use notification::{NotificationConfig, NotificationService};
use platform::Db;

pub struct Directory(pub HashMap<i64, Recipient>);

#[async_trait::async_trait]
impl Recipients for Directory {
    async fn recipient(&self, user: UserId) -> Result<Option<Recipient>, PortError> {
        Ok(self.0.get(&user.0).cloned())
    }
}

/// Ada (1) has a verified address and reads English; Bo (2) has none and reads Japanese.
pub fn directory() -> Arc<Directory> {
    Arc::new(Directory(HashMap::from([
        (
            1,
            Recipient {
                username: "ada".into(),
                email: Some("ada@example.org".into()),
                locale: None,
            },
        ),
        (
            2,
            Recipient {
                username: "bo".into(),
                email: None,
                locale: Some("ja".into()),
            },
        ),
    ])))
}

pub async fn service(db: Db, mail: bool) -> NotificationService {
    NotificationService::open(
        db,
        directory(),
        NotificationConfig {
            public_url: "http://judge.example".into(),
            mail,
        },
    )
    .await
    .unwrap()
}

pub fn event(event_type: &str, aggregate: i64, payload: serde_json::Value) -> EventEnvelope {
    EventEnvelope {
        event_id: format!("ev-{}", uuid_like()),
        owner: "auth".into(),
        aggregate_type: "account".into(),
        aggregate_id: aggregate,
        aggregate_version: 1,
        causation_id: None,
        trace_id: None,
        actor_id: None,
        event_type: event_type.into(),
        schema_version: 1,
        occurred_at_ms: 0,
        payload,
        confidential: None,
    }
}

pub fn judged(user: i64, submission: i64, verdict: &str) -> EventEnvelope {
    let mut e = event(
        types::SUBMISSION_JUDGED,
        submission,
        serde_json::json!({ "submission_id": submission, "user_id": user, "verdict": verdict }),
    );
    e.owner = "submission".into();
    e.aggregate_type = "submission".into();
    e
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}
