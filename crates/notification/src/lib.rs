//! The Notification owner: it turns other owners' events into notifications for their
//! users, keeps each user's preferences, and delivers through channels — the in-app inbox
//! (with a live unread count) and mail over SMTP — recording every delivery in a ledger.
//!
//! Ledger: exactly one row per (notification, channel) (a unique key, written in the same
//! transaction as the consumer's inbox row). In-app rows are `delivered` when written (the
//! notification is the inbox entry) or `skipped` by preference; mail rows start `pending`
//! (or `skipped`: preference, no verified address, no mail server), are `claimed` by the
//! sender, and end `delivered`, or `failed` to be retried with backoff, and `dead` after
//! [`mail::MAX_ATTEMPTS`]. Mail is at-least-once: a sender that dies after the server took
//! a message and before its row is marked sends it again (with the same `Message-ID`).

pub mod http;
pub mod mail;
pub mod messages;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use contracts::events::{consumers, types, EventEnvelope};
use contracts::{Recipients, UserId};
use platform::cache::ReadCache;
use platform::db::{Any, Row, Transaction};
use platform::events::{EventHandler, HandlerError};
use platform::{Db, DbError, Migration};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "notifications, preferences and the delivery ledger",
        postgres: "
            CREATE TABLE notifications (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                user_id BIGINT NOT NULL,
                kind TEXT NOT NULL,
                title TEXT NOT NULL,
                body TEXT NOT NULL,
                link TEXT,
                in_inbox BIGINT NOT NULL,
                event_id TEXT NOT NULL UNIQUE,
                created_at BIGINT NOT NULL,
                read_at BIGINT
            );
            CREATE INDEX notifications_inbox ON notifications (user_id, in_inbox, id);
            CREATE TABLE deliveries (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                notification_id BIGINT NOT NULL,
                channel TEXT NOT NULL,
                state TEXT NOT NULL,
                reason TEXT,
                address TEXT,
                subject TEXT,
                text_body TEXT,
                html_body TEXT,
                confidential BIGINT NOT NULL DEFAULT 0,
                attempts BIGINT NOT NULL DEFAULT 0,
                next_attempt_at BIGINT NOT NULL,
                claimed_until BIGINT,
                delivered_at BIGINT,
                created_at BIGINT NOT NULL,
                UNIQUE (notification_id, channel)
            );
            CREATE INDEX deliveries_due ON deliveries (channel, state, next_attempt_at);
            CREATE TABLE preferences (
                user_id BIGINT NOT NULL,
                kind TEXT NOT NULL,
                channel TEXT NOT NULL,
                enabled BIGINT NOT NULL,
                PRIMARY KEY (user_id, kind, channel)
            )",
        sqlite: "
            CREATE TABLE notifications (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                user_id INTEGER NOT NULL,
                kind TEXT NOT NULL,
                title TEXT NOT NULL,
                body TEXT NOT NULL,
                link TEXT,
                in_inbox INTEGER NOT NULL,
                event_id TEXT NOT NULL UNIQUE,
                created_at INTEGER NOT NULL,
                read_at INTEGER
            );
            CREATE INDEX notifications_inbox ON notifications (user_id, in_inbox, id);
            CREATE TABLE deliveries (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                notification_id INTEGER NOT NULL,
                channel TEXT NOT NULL,
                state TEXT NOT NULL,
                reason TEXT,
                address TEXT,
                subject TEXT,
                text_body TEXT,
                html_body TEXT,
                confidential INTEGER NOT NULL DEFAULT 0,
                attempts INTEGER NOT NULL DEFAULT 0,
                next_attempt_at INTEGER NOT NULL,
                claimed_until INTEGER,
                delivered_at INTEGER,
                created_at INTEGER NOT NULL,
                UNIQUE (notification_id, channel)
            );
            CREATE INDEX deliveries_due ON deliveries (channel, state, next_attempt_at);
            CREATE TABLE preferences (
                user_id INTEGER NOT NULL,
                kind TEXT NOT NULL,
                channel TEXT NOT NULL,
                enabled INTEGER NOT NULL,
                PRIMARY KEY (user_id, kind, channel)
            )",
    },
    platform::events::INBOX_MIGRATION,
];

pub const IN_APP: &str = "in_app";
pub const EMAIL: &str = "email";

/// A kind of notification users may switch per channel, with its defaults.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    pub name: &'static str,
    pub in_app: bool,
    pub email: bool,
}

/// The kinds a user can configure. Verification and reset mails are not among them: they
/// are sent whenever asked for.
pub const KINDS: &[Kind] = &[
    Kind {
        name: "submission_judged",
        in_app: true,
        email: false,
    },
    Kind {
        name: "contest_clarification",
        in_app: true,
        email: false,
    },
    Kind {
        name: "role_changed",
        in_app: true,
        email: true,
    },
    Kind {
        name: "password_changed",
        in_app: true,
        email: true,
    },
];

#[derive(Debug, thiserror::Error)]
pub enum NotificationError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for NotificationError {
    fn from(e: sqlx::Error) -> Self {
        NotificationError::Db(e.into())
    }
}

#[derive(Debug, Clone)]
pub struct NotificationConfig {
    /// Where links in notifications point (the console's address).
    pub public_url: String,
    /// Whether a mail server is configured; without one, mail deliveries are `skipped`.
    pub mail: bool,
}

/// The Notification owner. Cheap to clone.
#[derive(Clone)]
pub struct NotificationService {
    db: Db,
    recipients: Arc<dyn Recipients>,
    config: Arc<NotificationConfig>,
    /// Users whose inbox changed in this process (live unread counts).
    changed: tokio::sync::broadcast::Sender<i64>,
    /// Unread counts read lately, by user, for live streams (a user's streams share one read).
    unread_counts: Arc<ReadCache<i64, i64>>,
}

/// How old an unread count a live stream may be given: the bound on how late another
/// process's change to the inbox reaches a stream, beyond its own re-read period.
pub const UNREAD_COUNT_FOR: Duration = Duration::from_secs(1);

/// One inbox entry.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct InboxEntry {
    pub id: i64,
    pub kind: String,
    pub title: String,
    pub body: String,
    pub link: Option<String>,
    pub created_at_ms: i64,
    pub read: bool,
}

/// One (kind, channel) switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Preference {
    pub kind: String,
    /// `in_app` or `email`.
    pub channel: String,
    pub enabled: bool,
}

/// A row of the delivery ledger (for operators and tests).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Delivery {
    pub notification_id: i64,
    pub channel: String,
    pub state: String,
    pub reason: Option<String>,
    pub attempts: i64,
}

/// What one event becomes: who, which kind, the data the message needs, and whether it
/// is an inbox entry and a configurable kind.
struct Intent {
    user: UserId,
    kind: &'static str,
    data: serde_json::Value,
    /// A mail address given by the event (verification goes to the new, unverified one).
    address: Option<String>,
    in_inbox: bool,
    confidential: bool,
}

/// What one event becomes: one intent per recipient (most events have one).
fn intents_of(event: &EventEnvelope) -> Result<Vec<Intent>, HandlerError> {
    if event.event_type == types::CLARIFICATION_POSTED {
        let recipients: Vec<i64> = event
            .payload
            .get("recipients")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .ok_or_else(|| HandlerError::Poison("clarification without recipients".into()))?;
        return Ok(recipients
            .into_iter()
            .map(|user| Intent {
                user: UserId(user),
                kind: "contest_clarification",
                data: event.payload.clone(),
                address: None,
                in_inbox: true,
                confidential: false,
            })
            .collect());
    }
    Ok(intent_of(event)?.into_iter().collect())
}

fn intent_of(event: &EventEnvelope) -> Result<Option<Intent>, HandlerError> {
    let confidential = event.confidential.clone().unwrap_or_default();
    let secret = |key: &str| -> Result<String, HandlerError> {
        confidential
            .get(key)
            .and_then(|v| v.as_str())
            .map(str::to_string)
            .ok_or_else(|| HandlerError::Poison(format!("{}: no {key}", event.event_type)))
    };
    let account = UserId(event.aggregate_id);
    Ok(Some(match event.event_type.as_str() {
        types::SUBMISSION_JUDGED => {
            let user = event
                .payload
                .get("user_id")
                .and_then(|v| v.as_i64())
                .ok_or_else(|| HandlerError::Poison("SubmissionJudged without user_id".into()))?;
            Intent {
                user: UserId(user),
                kind: "submission_judged",
                data: event.payload.clone(),
                address: None,
                in_inbox: true,
                confidential: false,
            }
        }
        types::ROLE_CHANGED => Intent {
            user: account,
            kind: "role_changed",
            data: event.payload.clone(),
            address: None,
            in_inbox: true,
            confidential: false,
        },
        types::PASSWORD_CHANGED => Intent {
            user: account,
            kind: "password_changed",
            data: event.payload.clone(),
            address: None,
            in_inbox: true,
            confidential: false,
        },
        types::EMAIL_VERIFICATION_REQUESTED => Intent {
            user: account,
            kind: "email_verification",
            data: serde_json::json!({ "token": secret("token")? }),
            address: Some(secret("email")?),
            in_inbox: false,
            confidential: true,
        },
        types::PASSWORD_RESET_REQUESTED => Intent {
            user: account,
            kind: "password_reset",
            data: serde_json::json!({ "token": secret("token")? }),
            address: Some(secret("email")?),
            in_inbox: false,
            confidential: true,
        },
        _ => return Ok(None),
    }))
}

impl NotificationService {
    pub async fn open(
        db: Db,
        recipients: Arc<dyn Recipients>,
        config: NotificationConfig,
    ) -> Result<Self, DbError> {
        db.migrate(MIGRATIONS).await?;
        Ok(Self {
            db,
            recipients,
            config: Arc::new(config),
            changed: tokio::sync::broadcast::channel(1024).0,
            unread_counts: Arc::new(ReadCache::new(16_384)),
        })
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Users whose inbox changed in this process from now on.
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<i64> {
        self.changed.subscribe()
    }

    /// Whether `user` wants `kind` on `channel` (their choice, else the kind's default).
    async fn wants(
        &self,
        tx: &mut Transaction<'static, Any>,
        user: UserId,
        kind: &str,
        channel: &str,
    ) -> Result<bool, DbError> {
        let Some(defaults) = KINDS.iter().find(|k| k.name == kind) else {
            return Ok(true);
        };
        let chosen: Option<i64> = self
            .db
            .query(
                "SELECT enabled FROM preferences WHERE user_id = $1 AND kind = $2 AND channel = $3",
            )
            .bind(user.0)
            .bind(kind.to_string())
            .bind(channel.to_string())
            .fetch_optional(&mut **tx)
            .await?
            .map(|row| row.try_get(0))
            .transpose()?;
        Ok(match chosen {
            Some(enabled) => enabled != 0,
            None if channel == EMAIL => defaults.email,
            None => defaults.in_app,
        })
    }

    pub async fn preferences(&self, user: UserId) -> Result<Vec<Preference>, NotificationError> {
        let mut tx = self.db.begin().await?;
        let mut out = Vec::new();
        for kind in KINDS {
            for channel in [IN_APP, EMAIL] {
                out.push(Preference {
                    kind: kind.name.into(),
                    channel: channel.into(),
                    enabled: self.wants(&mut tx, user, kind.name, channel).await?,
                });
            }
        }
        tx.commit().await?;
        Ok(out)
    }

    pub async fn set_preferences(
        &self,
        user: UserId,
        choices: &[Preference],
    ) -> Result<(), NotificationError> {
        for choice in choices {
            if !KINDS.iter().any(|k| k.name == choice.kind) {
                return Err(NotificationError::Invalid(format!(
                    "kind: {:?} is not a kind of notification one can switch",
                    choice.kind
                )));
            }
            if choice.channel != IN_APP && choice.channel != EMAIL {
                return Err(NotificationError::Invalid(format!(
                    "channel: {:?} is neither in_app nor email",
                    choice.channel
                )));
            }
        }
        let mut tx = self.db.begin().await?;
        for choice in choices {
            self.db
                .query(
                    "INSERT INTO preferences (user_id, kind, channel, enabled) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (user_id, kind, channel) DO UPDATE SET enabled = excluded.enabled",
                )
                .bind(user.0)
                .bind(choice.kind.clone())
                .bind(choice.channel.clone())
                .bind(i64::from(choice.enabled))
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// A page of `user`'s inbox, newest first.
    pub async fn inbox(
        &self,
        user: UserId,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<InboxEntry>, NotificationError> {
        let rows = self
            .db
            .query(
                "SELECT id, kind, title, body, link, created_at, read_at FROM notifications \
                 WHERE user_id = $1 AND in_inbox = 1 AND id < $2 ORDER BY id DESC LIMIT $3",
            )
            .bind(user.0)
            .bind(before.unwrap_or(i64::MAX))
            .bind(i64::from(limit))
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(InboxEntry {
                    id: r.try_get(0)?,
                    kind: r.try_get(1)?,
                    title: r.try_get(2)?,
                    body: r.try_get(3)?,
                    link: r.try_get(4)?,
                    created_at_ms: r.try_get(5)?,
                    read: r.try_get::<Option<i64>, _>(6)?.is_some(),
                })
            })
            .collect()
    }

    /// `user`'s inbox changed here: the kept count goes before the streams are woken.
    fn inbox_changed(&self, user: i64) {
        self.unread_counts.forget(&user);
        let _ = self.changed.send(user);
    }

    /// [`Self::unread`], as read at most [`UNREAD_COUNT_FOR`] ago and not changed here since.
    pub async fn unread_recent(&self, user: UserId) -> Result<i64, NotificationError> {
        if let Some(count) = self.unread_counts.get(&user.0, UNREAD_COUNT_FOR) {
            return Ok(count);
        }
        let ticket = self.unread_counts.ticket(&user.0);
        let count = self.unread(user).await?;
        self.unread_counts.store(ticket, user.0, count);
        Ok(count)
    }

    pub async fn unread(&self, user: UserId) -> Result<i64, NotificationError> {
        Ok(self
            .db
            .query("SELECT COUNT(*) FROM notifications WHERE user_id = $1 AND in_inbox = 1 AND read_at IS NULL")
            .bind(user.0)
            .fetch_one(self.db.readers())
            .await?
            .try_get(0)?)
    }

    /// Marks `user`'s notification `id` read (or every one with `None`); `false` when there
    /// is no such notification of theirs.
    pub async fn mark_read(
        &self,
        user: UserId,
        id: Option<i64>,
    ) -> Result<bool, NotificationError> {
        let done = match id {
            Some(id) => self
                .db
                .query("UPDATE notifications SET read_at = COALESCE(read_at, {now}) WHERE id = $1 AND user_id = $2 AND in_inbox = 1")
                .bind(id)
                .bind(user.0)
                .execute(self.db.pool())
                .await?
                .rows_affected() == 1,
            None => {
                self.db
                    .query("UPDATE notifications SET read_at = {now} WHERE user_id = $1 AND read_at IS NULL")
                    .bind(user.0)
                    .execute(self.db.pool())
                    .await?;
                true
            }
        };
        self.inbox_changed(user.0);
        Ok(done)
    }

    /// The ledger rows of every notification made from `event_id`.
    pub async fn deliveries_of(&self, event_id: &str) -> Result<Vec<Delivery>, NotificationError> {
        let rows = self
            .db
            .query(
                "SELECT d.notification_id, d.channel, d.state, d.reason, d.attempts FROM deliveries d \
                 JOIN notifications n ON n.id = d.notification_id WHERE n.event_id = $1 ORDER BY d.channel",
            )
            .bind(event_id.to_string())
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Delivery {
                    notification_id: r.try_get(0)?,
                    channel: r.try_get(1)?,
                    state: r.try_get(2)?,
                    reason: r.try_get(3)?,
                    attempts: r.try_get(4)?,
                })
            })
            .collect()
    }

    /// Ledger rows by channel and state.
    pub async fn ledger_counts(&self) -> Result<Vec<(String, String, i64)>, NotificationError> {
        let rows = self
            .db
            .query("SELECT channel, state, COUNT(*) FROM deliveries GROUP BY channel, state ORDER BY channel, state")
            .fetch_all(self.db.pool())
            .await?;
        rows.iter()
            .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .collect()
    }

    async fn ledger_row(
        &self,
        tx: &mut Transaction<'static, Any>,
        notification: i64,
        channel: &str,
        state: &str,
        reason: Option<&str>,
        mail: Option<(&str, &messages::Message, bool)>,
    ) -> Result<(), DbError> {
        let (address, subject, text, html, confidential) = match mail {
            Some((address, message, confidential)) => (
                Some(address.to_string()),
                Some(message.title.clone()),
                Some(message.text.clone()),
                Some(message.html.clone()),
                confidential,
            ),
            None => (None, None, None, None, false),
        };
        self.db
            .query(
                "INSERT INTO deliveries (notification_id, channel, state, reason, address, subject, text_body, html_body, \
                 confidential, next_attempt_at, delivered_at, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, {now}, CASE WHEN $3 = 'delivered' THEN {now} END, {now})",
            )
            .bind(notification)
            .bind(channel.to_string())
            .bind(state.to_string())
            .bind(reason.map(str::to_string))
            .bind(address)
            .bind(subject)
            .bind(text)
            .bind(html)
            .bind(i64::from(confidential))
            .execute(&mut **tx)
            .await?;
        Ok(())
    }
}

#[async_trait]
impl EventHandler for NotificationService {
    fn name(&self) -> &'static str {
        consumers::NOTIFICATION
    }

    fn db(&self) -> &Db {
        &self.db
    }

    async fn apply(
        &self,
        tx: &mut Transaction<'static, Any>,
        event: &EventEnvelope,
    ) -> Result<(), HandlerError> {
        let intents = intents_of(event)?;
        let several = intents.len() > 1;
        for intent in intents {
            // The notification's key: the event, and the recipient when there are several.
            let key = if several {
                format!("{}/{}", event.event_id, intent.user.0)
            } else {
                event.event_id.clone()
            };
            self.notify(tx, &intent, key).await?;
        }
        Ok(())
    }

    fn committed(&self, event: &EventEnvelope) {
        for intent in intents_of(event).unwrap_or_default() {
            self.inbox_changed(intent.user.0);
        }
    }
}

impl NotificationService {
    /// One intent's notification and ledger rows, in the consumer's transaction.
    async fn notify(
        &self,
        tx: &mut Transaction<'static, Any>,
        intent: &Intent,
        key: String,
    ) -> Result<(), HandlerError> {
        let recipient = self
            .recipients
            .recipient(intent.user)
            .await
            .map_err(|e| HandlerError::Transient(e.to_string()))?;
        // An account that no longer exists gets nothing (there is no one to tell).
        let Some(recipient) = recipient else {
            return Ok(());
        };
        let lang = messages::Lang::of(recipient.locale.as_deref());
        let message = messages::render(
            intent.kind,
            lang,
            &recipient.username,
            &intent.data,
            &self.config.public_url,
        );
        // The inbox shows no secrets: a confidential intent's body stays in its mail only.
        let body = if intent.confidential {
            String::new()
        } else {
            message.text.clone()
        };
        let notification: i64 = self
            .db
            .query(
                "INSERT INTO notifications (user_id, kind, title, body, link, in_inbox, event_id, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, {now}) RETURNING id",
            )
            .bind(intent.user.0)
            .bind(intent.kind)
            .bind(message.title.clone())
            .bind(body)
            .bind(if intent.confidential { None } else { message.link.clone() })
            .bind(i64::from(intent.in_inbox))
            .bind(key)
            .fetch_one(&mut **tx)
            .await?
            .try_get(0)?;
        if intent.in_inbox {
            let wanted = self.wants(tx, intent.user, intent.kind, IN_APP).await?;
            let (state, reason) = if wanted {
                ("delivered", None)
            } else {
                ("skipped", Some("preference"))
            };
            self.ledger_row(tx, notification, IN_APP, state, reason, None)
                .await?;
        }
        let address = intent.address.clone().or(recipient.email.clone());
        let wanted = self.wants(tx, intent.user, intent.kind, EMAIL).await?;
        let skip = if !wanted {
            Some("preference")
        } else if address.is_none() {
            Some("no verified address")
        } else if !self.config.mail {
            Some("no mail server is configured")
        } else {
            None
        };
        match (skip, &address) {
            (None, Some(address)) => {
                self.ledger_row(
                    tx,
                    notification,
                    EMAIL,
                    "pending",
                    None,
                    Some((address, &message, intent.confidential)),
                )
                .await?
            }
            (reason, _) => {
                self.ledger_row(tx, notification, EMAIL, "skipped", reason, None)
                    .await?
            }
        }
        Ok(())
    }
}
