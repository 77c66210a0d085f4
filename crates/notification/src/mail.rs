//! The mail channel's sender: claims due mail deliveries, sends each over SMTP, and records
//! the outcome in the ledger. A claim lasts [`CLAIM`]; a sender that dies mid-send leaves
//! its claims to expire and be taken again.

use std::time::Duration;

use lettre::message::{header::ContentType, Mailbox, MultiPart, SinglePart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use platform::db::Row;
use platform::events::backoff;
use platform::{DbError, Metrics, Shutdown};

use crate::{NotificationService, EMAIL};

/// Attempts before a mail delivery is `dead`.
pub const MAX_ATTEMPTS: i64 = 8;
/// How long a claimed delivery is this sender's.
const CLAIM: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum MailError {
    #[error("mail server URL: {0}")]
    Url(String),
    #[error("sender address: {0}")]
    From(String),
}

/// Where and as whom mail is sent.
#[derive(Clone)]
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    /// The host part of `Message-ID`s.
    domain: String,
}

impl Mailer {
    /// `url`: `smtp://host:port` (plain; add `?tls=required` for STARTTLS),
    /// `smtps://host:port` (TLS), with `user:password@` for authentication.
    pub fn new(url: &str, from: &str) -> Result<Self, MailError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| MailError::Url(e.to_string()))?
            .timeout(Some(Duration::from_secs(20)))
            .build();
        let from: Mailbox = from
            .parse()
            .map_err(|e: lettre::address::AddressError| MailError::From(e.to_string()))?;
        let domain = from.email.domain().to_string();
        Ok(Self {
            transport,
            from,
            domain,
        })
    }
}

/// What one sending pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendReport {
    pub delivered: usize,
    pub failed: usize,
    pub dead: usize,
}

struct Claimed {
    id: i64,
    address: String,
    subject: String,
    text: String,
    html: String,
    attempts: i64,
}

impl NotificationService {
    async fn claim_mail(&self, max: i64) -> Result<Vec<Claimed>, DbError> {
        let db = self.db();
        let mut tx = db.begin().await?;
        let ids: Vec<i64> = db
            .query(
                "SELECT id FROM deliveries WHERE channel = $1 \
                 AND ((state IN ('pending', 'failed') AND next_attempt_at <= {now}) OR (state = 'claimed' AND claimed_until <= {now})) \
                 ORDER BY id LIMIT $2 {skip_locked}",
            )
            .bind(EMAIL)
            .bind(max)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<Result<_, _>>()?;
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let row = db
                .query(
                    "UPDATE deliveries SET state = 'claimed', claimed_until = {now} + $2 WHERE id = $1 \
                     RETURNING address, subject, text_body, html_body, attempts",
                )
                .bind(id)
                .bind(CLAIM.as_millis() as i64)
                .fetch_one(&mut *tx)
                .await?;
            out.push(Claimed {
                id,
                address: row.try_get::<Option<String>, _>(0)?.unwrap_or_default(),
                subject: row.try_get::<Option<String>, _>(1)?.unwrap_or_default(),
                text: row.try_get::<Option<String>, _>(2)?.unwrap_or_default(),
                html: row.try_get::<Option<String>, _>(3)?.unwrap_or_default(),
                attempts: row.try_get(4)?,
            });
        }
        tx.commit().await?;
        Ok(out)
    }

    /// One pass: up to 20 due mails, sent one after another.
    pub async fn send_mail(
        &self,
        mailer: &Mailer,
        metrics: &Metrics,
    ) -> Result<SendReport, DbError> {
        let mut report = SendReport::default();
        for mail in self.claim_mail(20).await? {
            let result = send(mailer, &mail).await;
            let db = self.db();
            match result {
                Ok(()) => {
                    // A confidential body (a token) is not kept once it is sent.
                    db.query(
                        "UPDATE deliveries SET state = 'delivered', delivered_at = {now}, attempts = attempts + 1, reason = NULL, \
                         text_body = CASE WHEN confidential = 1 THEN NULL ELSE text_body END, \
                         html_body = CASE WHEN confidential = 1 THEN NULL ELSE html_body END \
                         WHERE id = $1 AND state = 'claimed'",
                    )
                    .bind(mail.id)
                    .execute(db.pool())
                    .await?;
                    report.delivered += 1;
                }
                Err(reason) => {
                    let attempts = mail.attempts + 1;
                    let dead = attempts >= MAX_ATTEMPTS;
                    db.query(
                        "UPDATE deliveries SET state = $2, attempts = $3, reason = $4, next_attempt_at = {now} + $5, \
                         text_body = CASE WHEN $2 = 'dead' AND confidential = 1 THEN NULL ELSE text_body END, \
                         html_body = CASE WHEN $2 = 'dead' AND confidential = 1 THEN NULL ELSE html_body END \
                         WHERE id = $1 AND state = 'claimed'",
                    )
                    .bind(mail.id)
                    .bind(if dead { "dead" } else { "failed" })
                    .bind(attempts)
                    .bind(reason)
                    .bind(backoff(mail.attempts).as_millis() as i64)
                    .execute(db.pool())
                    .await?;
                    if dead {
                        report.dead += 1;
                    } else {
                        report.failed += 1;
                    }
                }
            }
        }
        for (outcome, n) in [
            ("delivered", report.delivered),
            ("failed", report.failed),
            ("dead", report.dead),
        ] {
            metrics.inc(
                "mail_deliveries_total",
                "Mail delivery attempts by outcome.",
                &[("outcome", outcome)],
                n as u64,
            );
        }
        Ok(report)
    }

    /// Sends due mail until shutdown, every second (at once again after a full pass).
    pub async fn run_mail(self, mailer: Mailer, metrics: Metrics, shutdown: Shutdown) {
        while !shutdown.is_triggered() {
            let busy = match self.send_mail(&mailer, &metrics).await {
                Ok(report) => report.delivered + report.failed + report.dead > 0,
                Err(e) => {
                    tracing::warn!(error = %e, "mail pass failed");
                    false
                }
            };
            if !busy {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    _ = shutdown.triggered() => {}
                }
            }
        }
    }
}

async fn send(mailer: &Mailer, mail: &Claimed) -> Result<(), String> {
    let to: Mailbox = mail
        .address
        .parse()
        .map_err(|e| format!("recipient address: {e}"))?;
    let message = Message::builder()
        .from(mailer.from.clone())
        .to(to)
        .subject(mail.subject.clone())
        // The same id on every attempt, so a receiver can drop a repeat.
        .message_id(Some(format!("<delivery-{}@{}>", mail.id, mailer.domain)))
        .multipart(
            MultiPart::alternative()
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_PLAIN)
                        .body(mail.text.clone()),
                )
                .singlepart(
                    SinglePart::builder()
                        .header(ContentType::TEXT_HTML)
                        .body(mail.html.clone()),
                ),
        )
        .map_err(|e| format!("message: {e}"))?;
    mailer
        .transport
        .send(message)
        .await
        .map(drop)
        .map_err(|e| e.to_string())
}
