//! The Admin owner: the operators' API. It commands and reads other owners only through
//! their ports (`SubmissionAdmin`, `AccountAdmin`) and the queue port; what it owns is its
//! audit log (a consumer of every owner's events, see [`audit`]) and the idempotency
//! records of its commands. Its own commands (replays) are events of its own outbox.

mod audit;
mod backups;
mod events;

pub use audit::{AuditConsumer, AuditEntry, AuditQuery};
pub use backups::{record_backup, BackupRecord};
pub use events::EventStreamView;

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use contracts::admin::{
    Account, AccountAdmin, RejudgeOutcome, SubmissionAdmin, SubmissionPipeline,
};
use contracts::{Permission, Principal, Role, SubmissionId, UserId};
use platform::db::Row;
use platform::events::{NewEvent, Outbox};
use platform::http::{
    idempotency_key, ApiError, ApiJson, ApiPath, ApiQuery, Authenticated, ProblemDetails,
};
use platform::{Db, DbError, Metrics, Migration};
use queue::events::EventStreams;
use queue::{JudgeQueue, QueueError};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "audit log and command receipts",
        postgres: "
        CREATE TABLE audit_log (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            actor_id BIGINT NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            detail TEXT NOT NULL,
            created_at BIGINT NOT NULL
        );
        CREATE TABLE command_receipts (
            actor_id BIGINT NOT NULL,
            idempotency_key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            response TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            PRIMARY KEY (actor_id, idempotency_key)
        )",
        sqlite: "
        CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            actor_id INTEGER NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            detail TEXT NOT NULL,
            created_at INTEGER NOT NULL
        );
        CREATE TABLE command_receipts (
            actor_id INTEGER NOT NULL,
            idempotency_key TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            response TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (actor_id, idempotency_key)
        )",
    },
    Migration {
        version: 2,
        name: "the audit log is a consumer of events",
        postgres: "
        ALTER TABLE audit_log ADD COLUMN event_id TEXT;
        ALTER TABLE audit_log ADD COLUMN owner TEXT NOT NULL DEFAULT 'admin';
        ALTER TABLE audit_log ADD COLUMN trace_id TEXT;
        ALTER TABLE audit_log ADD COLUMN occurred_at BIGINT;
        CREATE UNIQUE INDEX audit_log_event ON audit_log (event_id);
        CREATE INDEX audit_log_actor ON audit_log (actor_id, id);
        CREATE INDEX audit_log_action ON audit_log (action, id);
        CREATE INDEX audit_log_target ON audit_log (target, id);
        CREATE INDEX audit_log_time ON audit_log (occurred_at)",
        sqlite: "
        ALTER TABLE audit_log ADD COLUMN event_id TEXT;
        ALTER TABLE audit_log ADD COLUMN owner TEXT NOT NULL DEFAULT 'admin';
        ALTER TABLE audit_log ADD COLUMN trace_id TEXT;
        ALTER TABLE audit_log ADD COLUMN occurred_at INTEGER;
        CREATE UNIQUE INDEX audit_log_event ON audit_log (event_id);
        CREATE INDEX audit_log_actor ON audit_log (actor_id, id);
        CREATE INDEX audit_log_action ON audit_log (action, id);
        CREATE INDEX audit_log_target ON audit_log (target, id);
        CREATE INDEX audit_log_time ON audit_log (occurred_at)",
    },
    platform::events::OUTBOX_MIGRATION,
    platform::events::INBOX_MIGRATION,
    platform::leases::MIGRATION,
    backups::MIGRATION,
];

/// What the Admin owner drives.
#[derive(Clone)]
pub struct AdminPorts {
    pub submissions: Arc<dyn SubmissionAdmin>,
    pub accounts: Arc<dyn AccountAdmin>,
    pub queue: Arc<dyn JudgeQueue>,
    /// Every event consumer's stream (for their views and dead-letter replays).
    pub events: EventStreams,
    /// The process's metrics (stale-result drops are counted where the judging port runs).
    pub metrics: Metrics,
}

/// The Admin owner. Cheap to clone.
#[derive(Clone)]
pub struct AdminService {
    db: Db,
    /// Admin's own events (its commands' audit records).
    events: Outbox,
    ports: AdminPorts,
    /// The pipeline's recent counts, oldest first (this process's view; not a record).
    history: Arc<std::sync::Mutex<std::collections::VecDeque<PipelineSample>>>,
}

/// How often [`AdminService::sample_pipeline`] samples, and how many samples it keeps (an hour).
const SAMPLE_EVERY: std::time::Duration = std::time::Duration::from_secs(15);
const SAMPLES_KEPT: usize = 240;

/// The pipeline's counts at one moment.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PipelineSample {
    pub at_ms: i64,
    pub queue_length: u64,
    pub pending: u64,
    pub queue_delay_ms: u64,
    pub dead_letters: u64,
    /// Outbox rows not yet on the queue.
    pub outbox_pending: i64,
    /// Submissions being judged.
    pub judging: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct QueueView {
    pub length: u64,
    pub pending: u64,
    pub oldest_pending_age_ms: u64,
    pub queue_delay_ms: u64,
    pub dead_letters: u64,
}

impl From<queue::QueueStats> for QueueView {
    fn from(stats: queue::QueueStats) -> Self {
        Self {
            length: stats.length,
            pending: stats.pending,
            oldest_pending_age_ms: stats.oldest_pending_age_ms,
            queue_delay_ms: stats.queue_delay_ms,
            dead_letters: stats.dead_letters,
        }
    }
}

impl From<queue::PendingEntry> for PendingEntryView {
    fn from(p: queue::PendingEntry) -> Self {
        Self {
            id: p.id,
            consumer: p.consumer,
            idle_ms: p.idle_ms,
            deliveries: p.deliveries,
        }
    }
}

impl From<queue::DeadLetter> for DeadLetterView {
    fn from(d: queue::DeadLetter) -> Self {
        Self {
            id: d.id,
            payload: d.payload,
            reason: d.reason,
            deliveries: d.deliveries,
        }
    }
}

/// The pipeline at a glance.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PipelineView {
    pub submission: SubmissionPipeline,
    pub queue: QueueView,
    /// Fenced writes refused because their claim was stale, by call, since this process started.
    pub stale_results_dropped: Vec<StaleCount>,
    /// The oldest entries delivered and not yet acknowledged (at most 50).
    pub pending_entries: Vec<PendingEntryView>,
}

/// A queue entry a worker holds.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PendingEntryView {
    pub id: String,
    pub consumer: String,
    /// Since its delivery or the holder's last heartbeat.
    pub idle_ms: u64,
    pub deliveries: u64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StaleCount {
    pub call: String,
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeadLetterView {
    pub id: String,
    pub payload: String,
    pub reason: String,
    pub deliveries: u64,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchRejudge {
    /// 1 to 500 submissions.
    #[schema(min_items = 1, max_items = 500)]
    pub submission_ids: Vec<i64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct RejudgeResult {
    pub submission_id: i64,
    pub outcome: RejudgeOutcome,
}

#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RoleChange {
    /// `user`, `setter` or `admin`.
    pub role: String,
}

#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Page {
    /// Keyset cursor: the last id of the previous page.
    pub after: Option<i64>,
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

impl Page {
    /// The page size asked for (a 422 outside 1 to 200).
    fn size(&self) -> Result<u32, ApiError> {
        platform::http::page_limit(self.limit, 50, 200)
    }
}

impl AdminService {
    pub async fn open(db: Db, ports: AdminPorts) -> Result<Self, DbError> {
        db.migrate(MIGRATIONS).await?;
        Ok(Self {
            events: Outbox::new(db.clone(), "admin"),
            db,
            ports,
            history: Arc::default(),
        })
    }

    /// Samples the pipeline's counts every 15 s for the dashboard's charts of the last hour,
    /// until `shutdown`. A sample that cannot be taken (a dependency down) is skipped.
    pub async fn sample_pipeline(self, shutdown: platform::Shutdown) {
        loop {
            if let Some(sample) = self.sample().await {
                let mut history = self.history.lock().unwrap_or_else(|p| p.into_inner());
                if history.len() == SAMPLES_KEPT {
                    history.pop_front();
                }
                history.push_back(sample);
            }
            tokio::select! {
                _ = shutdown.triggered() => return,
                _ = tokio::time::sleep(SAMPLE_EVERY) => {}
            }
        }
    }

    async fn sample(&self) -> Option<PipelineSample> {
        let submission = self.ports.submissions.pipeline().await.ok()?;
        let queue = self.ports.queue.stats().await.ok()?;
        let count = |states: &[contracts::admin::StateCount], name: &str| {
            states
                .iter()
                .filter(|s| s.state.eq_ignore_ascii_case(name))
                .map(|s| s.count)
                .sum()
        };
        Some(PipelineSample {
            at_ms: self.db.now_ms().await.ok()?,
            queue_length: queue.length,
            pending: queue.pending,
            queue_delay_ms: queue.queue_delay_ms,
            dead_letters: queue.dead_letters,
            outbox_pending: count(&submission.outbox_by_state, "pending"),
            judging: count(&submission.submissions_by_state, "judging"),
        })
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The owner's events outbox (for its relay).
    pub fn events(&self) -> &Outbox {
        &self.events
    }

    /// The audit log's event consumer.
    pub fn audit_consumer(&self) -> AuditConsumer {
        AuditConsumer::new(self.db.clone())
    }

    /// Runs `command` with `event` recorded in a transaction that commits only when the
    /// command succeeded: a command that failed leaves no record, one that succeeded always
    /// does (unless this process dies between the two, which the record then lacks).
    async fn audited<F, Fut>(&self, event: NewEvent, command: F) -> Result<(), ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<(), ApiError>>,
    {
        let mut tx = self.db.begin().await?;
        self.events.record(&mut tx, event).await?;
        command().await?;
        tx.commit().await.map_err(DbError::from)?;
        Ok(())
    }

    /// Runs `command` once per (actor, idempotency key): a repeat with the same request
    /// returns the stored response; the same key with another request is a conflict. The key
    /// is claimed (a receipt row with no response yet) before the command runs, so two
    /// concurrent requests with one key never both run it: the second gets a 409 while the
    /// first is in progress. A command that fails releases its claim, so it may be retried.
    async fn once<T, F, Fut>(
        &self,
        actor: &Principal,
        key: Option<String>,
        request: &str,
        command: F,
    ) -> Result<T, ApiError>
    where
        T: Serialize + serde::de::DeserializeOwned,
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<T, ApiError>>,
    {
        let Some(key) = key else {
            return command().await;
        };
        let print = platform::digest::fingerprint(&[request.as_bytes()]);
        let claimed = self
            .db
            .query(
                "INSERT INTO command_receipts (actor_id, idempotency_key, fingerprint, response, created_at) \
                 VALUES ($1, $2, $3, '', {now})",
            )
            .bind(actor.user_id.0)
            .bind(key.clone())
            .bind(print.clone())
            .execute(self.db.pool())
            .await
            .map_err(DbError::from);
        match claimed {
            Ok(_) => {}
            Err(e) if e.is_unique_violation() => return self.replay(actor, &key, &print).await,
            Err(e) => return Err(e.into()),
        }
        let result = match command().await {
            Ok(result) => result,
            Err(e) => {
                let released = self
                    .db
                    .query(
                        "DELETE FROM command_receipts WHERE actor_id = $1 AND idempotency_key = $2 AND response = ''",
                    )
                    .bind(actor.user_id.0)
                    .bind(key.clone())
                    .execute(self.db.pool())
                    .await;
                if let Err(release) = released {
                    tracing::error!(error = %release, "idempotency claim not released");
                }
                return Err(e);
            }
        };
        let response = serde_json::to_string(&result).map_err(ApiError::internal)?;
        self.db
            .query(
                "UPDATE command_receipts SET response = $3 WHERE actor_id = $1 AND idempotency_key = $2",
            )
            .bind(actor.user_id.0)
            .bind(key)
            .bind(response)
            .execute(self.db.pool())
            .await
            .map_err(DbError::from)?;
        Ok(result)
    }

    /// The stored answer to a key already claimed.
    async fn replay<T: serde::de::DeserializeOwned>(
        &self,
        actor: &Principal,
        key: &str,
        print: &str,
    ) -> Result<T, ApiError> {
        let row = self
            .db
            .query(
                "SELECT fingerprint, response FROM command_receipts WHERE actor_id = $1 AND idempotency_key = $2",
            )
            .bind(actor.user_id.0)
            .bind(key.to_string())
            .fetch_optional(self.db.pool())
            .await
            .map_err(DbError::from)?
            .ok_or_else(|| {
                ApiError::conflict(
                    "idempotency-in-progress",
                    format!("a request with idempotency key {key:?} just failed; retry it"),
                )
            })?;
        let (stored_print, response): (String, String) = (
            row.try_get(0).map_err(DbError::from)?,
            row.try_get(1).map_err(DbError::from)?,
        );
        if stored_print != print {
            return Err(ApiError::conflict(
                "idempotency-conflict",
                format!("idempotency key {key:?} was used for a different request"),
            ));
        }
        if response.is_empty() {
            return Err(ApiError::conflict(
                "idempotency-in-progress",
                format!("a request with idempotency key {key:?} is still in progress"),
            ));
        }
        serde_json::from_str(&response).map_err(ApiError::internal)
    }

    async fn rejudge_one(&self, actor: &Principal, id: i64) -> Result<RejudgeResult, ApiError> {
        // The Submission owner records the rejudge (with the actor) in its transaction.
        let outcome = self
            .ports
            .submissions
            .rejudge(actor.user_id, SubmissionId(id))
            .await?;
        Ok(RejudgeResult {
            submission_id: id,
            outcome,
        })
    }
}

fn admin(caller: &Authenticated, permission: Permission) -> Result<&Principal, ApiError> {
    caller.require(permission)
}

/// Rejudge one submission: a new generation with a new judge intent. Idempotent with an
/// `Idempotency-Key` header.
#[utoipa::path(post, path = "/api/v1/admin/submissions/{id}/rejudge", tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path), ("Idempotency-Key" = Option<String>, Header)),
    responses(
        (status = 200, description = "What the rejudge did", body = RejudgeResult),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 409, description = "Idempotency conflict", body = ProblemDetails),
    ))]
async fn rejudge(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
    headers: HeaderMap,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<RejudgeResult>, ApiError> {
    let actor = admin(&caller, Permission::Rejudge)?;
    let key = idempotency_key(&headers)?;
    let request = format!("rejudge:{id}");
    let result = admin_service
        .once(actor, key, &request, || {
            admin_service.rejudge_one(actor, id)
        })
        .await?;
    Ok(Json(result))
}

/// Rejudge many submissions. Idempotent with an `Idempotency-Key` header.
#[utoipa::path(post, path = "/api/v1/admin/rejudge", tag = "admin",
    security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header)),
    request_body = BatchRejudge,
    responses(
        (status = 200, description = "What each rejudge did", body = Vec<RejudgeResult>),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 409, description = "Idempotency conflict", body = ProblemDetails),
        (status = 422, description = "Too many submissions", body = ProblemDetails),
    ))]
async fn rejudge_batch(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
    headers: HeaderMap,
    ApiJson(body): ApiJson<BatchRejudge>,
) -> Result<Json<Vec<RejudgeResult>>, ApiError> {
    let actor = admin(&caller, Permission::Rejudge)?;
    let key = idempotency_key(&headers)?;
    if body.submission_ids.is_empty() || body.submission_ids.len() > 500 {
        return Err(ApiError::unprocessable(
            "invalid-field",
            "submission_ids: 1 to 500 ids",
        ));
    }
    // Each submission once, however often the list names it (in first-mention order).
    let mut seen = std::collections::HashSet::new();
    let ids: Vec<i64> = body
        .submission_ids
        .iter()
        .copied()
        .filter(|id| seen.insert(*id))
        .collect();
    let request = format!("rejudge-batch:{ids:?}");
    let results = admin_service
        .once(actor, key, &request, || async {
            let mut results = Vec::with_capacity(ids.len());
            for id in &ids {
                results.push(admin_service.rejudge_one(actor, *id).await?);
            }
            Ok(results)
        })
        .await?;
    Ok(Json(results))
}

/// The pipeline: submissions and outbox rows by state, queue length, pending entries and the
/// oldest one's age, dead letters, judging leases, singleton leases and fence tokens.
#[utoipa::path(get, path = "/api/v1/admin/pipeline", tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The pipeline's state", body = PipelineView),
        (status = 403, description = "Not an admin", body = ProblemDetails),
    ))]
async fn pipeline(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
) -> Result<Json<PipelineView>, ApiError> {
    admin(&caller, Permission::ViewPipeline)?;
    let ports = &admin_service.ports;
    let submission = ports.submissions.pipeline().await?;
    let stats = ports
        .queue
        .stats()
        .await
        .map_err(|e| ApiError::unavailable("the judge queue", e))?;
    let stale_results_dropped = [
        "acquire",
        "renew",
        "progress",
        "complete",
        "infrastructure_failure",
    ]
    .into_iter()
    .map(|call| StaleCount {
        call: call.into(),
        count: ports
            .metrics
            .value("judging_port_stale_total", &[("call", call)]) as u64,
    })
    .collect();
    let pending_entries = ports
        .queue
        .pending_entries(50)
        .await
        .map_err(|e| ApiError::unavailable("the judge queue", e))?
        .into_iter()
        .map(PendingEntryView::from)
        .collect();
    Ok(Json(PipelineView {
        pending_entries,
        submission,
        queue: QueueView::from(stats),
        stale_results_dropped,
    }))
}

/// The pipeline's counts over the last hour, sampled every 15 s by this process, oldest first.
#[utoipa::path(get, path = "/api/v1/admin/pipeline/history", tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Samples, oldest first", body = Vec<PipelineSample>),
        (status = 403, description = "Not an admin", body = ProblemDetails),
    ))]
async fn pipeline_history(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
) -> Result<Json<Vec<PipelineSample>>, ApiError> {
    admin(&caller, Permission::ViewPipeline)?;
    let history = admin_service
        .history
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .cloned()
        .collect();
    Ok(Json(history))
}

/// Dead letters: queue entries that will not be delivered again, with the reason.
#[utoipa::path(get, path = "/api/v1/admin/dead-letters", tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Up to 200 dead letters", body = Vec<DeadLetterView>),
        (status = 403, description = "Not an admin", body = ProblemDetails),
    ))]
async fn dead_letters(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
) -> Result<Json<Vec<DeadLetterView>>, ApiError> {
    admin(&caller, Permission::ViewPipeline)?;
    let letters = admin_service
        .ports
        .queue
        .dead_letters(200)
        .await
        .map_err(|e| ApiError::unavailable("the judge queue", e))?;
    Ok(Json(
        letters.into_iter().map(DeadLetterView::from).collect(),
    ))
}

/// Put a dead letter back on the queue. Stale intents it carries are dropped by the fencing.
#[utoipa::path(post, path = "/api/v1/admin/dead-letters/{id}/replay", tag = "admin",
    security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 204, description = "Replayed"),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 404, description = "No such dead letter", body = ProblemDetails),
    ))]
async fn replay_dead_letter(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<StatusCode, ApiError> {
    let actor = admin(&caller, Permission::ViewPipeline)?;
    let event = NewEvent::new(
        contracts::events::types::JUDGE_DEAD_LETTER_REPLAYED,
        "dead_letter",
        // SQL stream ids are numbers; a Redis id (`<ms>-<seq>`) is in the payload only.
        id.parse().unwrap_or(0),
        serde_json::json!({ "dead_letter": id }),
    )
    .by(Some(actor.user_id));
    admin_service
        .audited(event, || async {
            replayed(
                admin_service.ports.queue.replay(&id).await,
                &id,
                "the judge queue",
            )
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The answer to a replay of dead letter `id` on `what`.
fn replayed(result: Result<bool, QueueError>, id: &str, what: &str) -> Result<(), ApiError> {
    match result {
        Ok(true) => Ok(()),
        // An id the queue cannot even parse names no dead letter.
        Ok(false) | Err(QueueError::Protocol(_)) => {
            Err(ApiError::not_found(format!("no dead letter {id}")))
        }
        Err(e) => Err(ApiError::unavailable(what, e)),
    }
}

/// Accounts, by id.
#[utoipa::path(get, path = "/api/v1/admin/users", tag = "admin",
    security(("bearer" = [])),
    params(Page),
    responses(
        (status = 200, description = "A page of accounts", body = Vec<Account>),
        (status = 403, description = "Not an admin", body = ProblemDetails),
    ))]
async fn list_users(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
    ApiQuery(page): ApiQuery<Page>,
) -> Result<Json<Vec<Account>>, ApiError> {
    admin(&caller, Permission::ManageUsers)?;
    Ok(Json(
        admin_service
            .ports
            .accounts
            .list_accounts(page.after.map(UserId), page.size()?)
            .await?,
    ))
}

/// Change an account's role; its existing tokens stop working.
#[utoipa::path(put, path = "/api/v1/admin/users/{id}/role", tag = "admin",
    security(("bearer" = [])),
    params(("id" = i64, Path)),
    request_body = RoleChange,
    responses(
        (status = 200, description = "The account", body = Account),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 404, description = "No such account", body = ProblemDetails),
        (status = 422, description = "Unknown role", body = ProblemDetails),
    ))]
async fn set_role(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
    ApiPath(id): ApiPath<i64>,
    ApiJson(body): ApiJson<RoleChange>,
) -> Result<Json<Account>, ApiError> {
    let actor = admin(&caller, Permission::ManageUsers)?;
    let role: Role = body
        .role
        .parse()
        .map_err(|e: String| ApiError::unprocessable("invalid-field", e))?;
    let account = admin_service
        .ports
        .accounts
        .set_role(actor.user_id, UserId(id), role)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no account {id}")))?;
    Ok(Json(account))
}

/// Admin's routes.
pub fn routes(admin_service: AdminService) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(rejudge))
        .routes(routes!(rejudge_batch))
        .routes(routes!(pipeline))
        .routes(routes!(pipeline_history))
        .routes(routes!(dead_letters))
        .routes(routes!(replay_dead_letter))
        .routes(routes!(list_users))
        .routes(routes!(set_role))
        .routes(routes!(audit::audit_log))
        .routes(routes!(events::event_streams))
        .routes(routes!(events::replay_event_dead_letter))
        .routes(routes!(backups::backups))
        .with_state(admin_service)
}
