//! Integration events between owners: the envelope every owner writes to its outbox, the
//! event types, and which consumer receives which type.
//!
//! An owner records an event in the same transaction as the change it describes; a relay
//! publishes it to the stream of every consumer that takes its type; a consumer applies it
//! once (its inbox) in the same transaction as its effect. Payloads carry facts, never
//! secrets, except `confidential`, which only the consumer the event is meant for reads
//! (a password-reset token on its way to the mail) and the audit log never stores.

use serde::{Deserialize, Serialize};

/// Envelope schema version.
pub const ENVELOPE_VERSION: i64 = 1;

/// One integration event as it travels between owners.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventEnvelope {
    /// Unique (a UUID): the idempotency key of every consumer's inbox.
    pub event_id: String,
    /// The owner that recorded it (`auth`, `app`, `submission`, `admin`).
    pub owner: String,
    pub aggregate_type: String,
    pub aggregate_id: i64,
    /// The aggregate's version after the change (0 where the aggregate has none, e.g. a
    /// failed login). Consumers that need per-aggregate order compare it, never arrival.
    pub aggregate_version: i64,
    /// The event or command that caused this one, when known.
    pub causation_id: Option<String>,
    /// The request id of the request that caused it (`x-request-id`).
    pub trace_id: Option<String>,
    /// The user on whose behalf the change was made, when there was one.
    pub actor_id: Option<i64>,
    pub event_type: String,
    /// The payload's schema version.
    pub schema_version: i64,
    /// The owner's database clock at the change, epoch milliseconds.
    pub occurred_at_ms: i64,
    pub payload: serde_json::Value,
    /// For the intended consumer only; never stored by the audit log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidential: Option<serde_json::Value>,
}

/// Event types. Every type but [`types::SEARCH_DOCUMENT_CHANGED`] is an audit record.
pub mod types {
    pub const ACCOUNT_REGISTERED: &str = "auth.account_registered";
    pub const LOGIN_SUCCEEDED: &str = "auth.login_succeeded";
    pub const LOGIN_FAILED: &str = "auth.login_failed";
    pub const LOGGED_OUT: &str = "auth.logged_out";
    pub const REFRESH_FAMILY_REVOKED: &str = "auth.refresh_family_revoked";
    pub const ROLE_CHANGED: &str = "auth.role_changed";
    pub const PASSWORD_CHANGED: &str = "auth.password_changed";
    pub const EMAIL_CHANGED: &str = "auth.email_changed";
    pub const EMAIL_VERIFICATION_REQUESTED: &str = "auth.email_verification_requested";
    pub const EMAIL_VERIFIED: &str = "auth.email_verified";
    pub const PASSWORD_RESET_REQUESTED: &str = "auth.password_reset_requested";
    pub const PASSWORD_RESET: &str = "auth.password_reset";

    pub const PROBLEM_CREATED: &str = "app.problem_created";
    pub const PROBLEM_UPDATED: &str = "app.problem_updated";
    pub const PROBLEM_VISIBILITY_CHANGED: &str = "app.problem_visibility_changed";
    pub const PACKAGE_UPLOADED: &str = "app.package_uploaded";
    pub const CONTEST_CREATED: &str = "app.contest_created";
    pub const CONTEST_UPDATED: &str = "app.contest_updated";
    pub const CONTEST_PROBLEMS_SET: &str = "app.contest_problems_set";
    pub const CONTEST_STAFF_CHANGED: &str = "app.contest_staff_changed";
    pub const CONTEST_REGISTERED: &str = "app.contest_registered";
    pub const CONTEST_TEAMS_IMPORTED: &str = "app.contest_teams_imported";
    pub const CONTEST_FROZEN: &str = "app.contest_frozen";
    pub const CONTEST_UNFROZEN: &str = "app.contest_unfrozen";
    pub const CONTEST_FINALIZED: &str = "app.contest_finalized";
    pub const REJUDGING_CREATED: &str = "app.rejudging_created";
    pub const REJUDGING_APPLIED: &str = "app.rejudging_applied";
    pub const REJUDGING_CANCELLED: &str = "app.rejudging_cancelled";
    /// A clarification request, answer or announcement (payload: its recipients).
    pub const CLARIFICATION_POSTED: &str = "app.clarification_posted";
    /// A searchable document changed (payload: [`super::SearchDocument`]).
    pub const SEARCH_DOCUMENT_CHANGED: &str = "search.document_changed";

    pub const SUBMITTED: &str = "submission.submitted";
    /// A generation's verdict was written (the scoreboard's and the notifications' input).
    pub const SUBMISSION_JUDGED: &str = "SubmissionJudged";
    pub const REJUDGED: &str = "submission.rejudged";
    pub const DEAD_LETTERED: &str = "submission.dead_lettered";

    pub const JUDGE_DEAD_LETTER_REPLAYED: &str = "admin.judge_dead_letter_replayed";
    pub const EVENT_DEAD_LETTER_REPLAYED: &str = "admin.event_dead_letter_replayed";
}

/// The consumers of events: each has a stream of its own and an inbox in its own database.
pub mod consumers {
    /// Admin's audit log.
    pub const AUDIT: &str = "audit";
    /// The Notification owner's intents.
    pub const NOTIFICATION: &str = "notification";
    /// The search worker's index.
    pub const SEARCH: &str = "search";
    /// App's contest boards (contest submissions and their verdicts).
    pub const CONTEST: &str = "contest";

    pub const ALL: [&str; 4] = [AUDIT, NOTIFICATION, SEARCH, CONTEST];
}

/// The consumers that receive `event_type`.
pub fn consumers_of(event_type: &str) -> Vec<&'static str> {
    use types::*;
    let mut out = Vec::with_capacity(3);
    if event_type == SEARCH_DOCUMENT_CHANGED {
        out.push(consumers::SEARCH);
        return out;
    }
    out.push(consumers::AUDIT);
    if [
        SUBMISSION_JUDGED,
        ROLE_CHANGED,
        PASSWORD_CHANGED,
        EMAIL_VERIFICATION_REQUESTED,
        PASSWORD_RESET_REQUESTED,
        CLARIFICATION_POSTED,
    ]
    .contains(&event_type)
    {
        out.push(consumers::NOTIFICATION);
    }
    if [SUBMITTED, SUBMISSION_JUDGED].contains(&event_type) {
        out.push(consumers::CONTEST);
    }
    out
}

/// A document of the derived search index, as the owner of its source describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchDocument {
    /// `problem` (later `user`, `discussion`).
    pub kind: String,
    pub id: i64,
    /// The source's version: an older version never overwrites a newer one.
    pub version: i64,
    /// `None`: the document is gone (deleted, or no longer public) — a tombstone.
    pub content: Option<SearchContent>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchContent {
    pub slug: String,
    pub title: String,
    pub body: String,
    #[serde(default)]
    pub tags: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_but_search_documents_is_audited() {
        assert_eq!(
            consumers_of(types::SEARCH_DOCUMENT_CHANGED),
            [consumers::SEARCH]
        );
        assert_eq!(consumers_of(types::LOGIN_FAILED), [consumers::AUDIT]);
        assert_eq!(
            consumers_of(types::SUBMISSION_JUDGED),
            [
                consumers::AUDIT,
                consumers::NOTIFICATION,
                consumers::CONTEST
            ]
        );
        assert_eq!(
            consumers_of(types::SUBMITTED),
            [consumers::AUDIT, consumers::CONTEST]
        );
    }

    #[test]
    fn confidential_is_omitted_when_absent() {
        let envelope = EventEnvelope {
            event_id: "e".into(),
            owner: "auth".into(),
            aggregate_type: "account".into(),
            aggregate_id: 1,
            aggregate_version: 0,
            causation_id: None,
            trace_id: None,
            actor_id: None,
            event_type: types::LOGIN_FAILED.into(),
            schema_version: 1,
            occurred_at_ms: 0,
            payload: serde_json::json!({}),
            confidential: None,
        };
        let text = serde_json::to_string(&envelope).unwrap();
        assert!(!text.contains("confidential"));
        assert_eq!(
            serde_json::from_str::<EventEnvelope>(&text).unwrap(),
            envelope
        );
    }
}
