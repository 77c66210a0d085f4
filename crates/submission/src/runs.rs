//! Running code without judging it (SYSTEM.md §8): a synchronous preview and an asynchronous
//! execution API (submit / poll / cancel) over one request, status and result contract.
//!
//! Every request has an idempotency key (the `Idempotency-Key` header, else
//! `runId:testCaseId`) and a SHA-256 fingerprint of its payload: the same key with the same
//! payload returns the same receipt, with another payload it is a conflict. Receipts are
//! durable rows (a restart or another replica sees them), bounded per node (1024 by default)
//! and reclaimed after their TTL (15 minutes by default). A node that restarts marks the runs
//! it had in flight as failed instead of leaving them running forever.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use contracts::execution::{
    Canceller, CodeRunner, RunLimits, RunReport, RunRequest, RunState, RunTarget,
};
use contracts::{Permission, PortError, Principal, ProblemFacts, UserId};
use platform::db::{AnyRow, Row};
use platform::http::{idempotency_key, ApiError, ApiJson, ApiPath, Authenticated, ProblemDetails};
use platform::rate::RateLimit;
use platform::{Db, DbError, Shutdown};
use serde::Serialize;
use tokio::sync::Semaphore;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Tunables of the execution API.
#[derive(Clone)]
pub struct RunsConfig {
    /// This node's name: receipts it runs are tagged with it.
    pub node: String,
    /// Receipts a node keeps at most (unexpired).
    pub max_receipts: i64,
    /// Unexpired receipts one user may hold: no handful of accounts can fill the node's.
    pub max_receipts_per_user: i64,
    pub receipt_ttl: Duration,
    /// Limits of the synchronous preview (strict: it holds a request open).
    pub preview_limits: RunLimits,
    /// Limits of asynchronous runs.
    pub run_limits: RunLimits,
    pub max_source_bytes: usize,
    pub max_stdin_bytes: usize,
    /// Runs executing at once on this node.
    pub concurrency: usize,
    /// Runs of one user executing at once on this node: the user's further runs wait for
    /// their own, never for a slot another user could have.
    pub concurrency_per_user: usize,
    /// Run requests per user.
    pub rate_limit: RateLimit,
    pub languages: Arc<Vec<String>>,
}

impl RunsConfig {
    pub fn new(node: impl Into<String>, languages: Vec<String>) -> Self {
        Self {
            node: node.into(),
            max_receipts: 8192,
            max_receipts_per_user: 32,
            receipt_ttl: Duration::from_secs(15 * 60),
            preview_limits: RunLimits {
                time_limit_ms: 2_000,
                memory_mib: 256,
                output_bytes: 64 * 1024,
            },
            run_limits: RunLimits {
                time_limit_ms: 10_000,
                memory_mib: 512,
                output_bytes: 1 << 20,
            },
            max_source_bytes: 64 * 1024,
            max_stdin_bytes: 256 * 1024,
            concurrency: 2,
            concurrency_per_user: 1,
            rate_limit: RateLimit::new("run", 20, 1.0),
            languages: Arc::new(languages),
        }
    }
}

/// A run as its owner sees it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RunView {
    pub id: String,
    pub state: RunState,
    pub idempotency_key: String,
    /// SHA-256 of the request's payload.
    pub fingerprint: String,
    pub result: Option<RunReport>,
    pub error: Option<String>,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Preview,
    Async,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Preview => "preview",
            Mode::Async => "async",
        }
    }
}

/// The execution service. Cheap to clone.
#[derive(Clone)]
pub struct Runs {
    db: Db,
    runner: Arc<dyn CodeRunner>,
    config: Arc<RunsConfig>,
    slots: Arc<Semaphore>,
    /// Each user's own slots (see [`RunsConfig::concurrency_per_user`]).
    user_slots: Arc<Mutex<HashMap<i64, Arc<Semaphore>>>>,
    /// Cancellers of the runs executing in this process.
    running: Arc<Mutex<HashMap<String, Canceller>>>,
    /// App's facts, for runs of function problems (which run the problem's harness).
    problems: Option<Arc<dyn ProblemFacts>>,
}

/// What an admitted run executes, and under which limits.
struct Job {
    request: RunRequest,
    target: RunTarget,
    limits: RunLimits,
}

fn fingerprint(mode: Mode, request: &RunRequest) -> String {
    platform::digest::fingerprint(&[
        mode.as_str().as_bytes(),
        request.language.as_bytes(),
        request.source.as_bytes(),
        request.stdin.as_bytes(),
        request.problem.as_deref().unwrap_or_default().as_bytes(),
    ])
}

fn view_of(row: &AnyRow) -> Result<RunView, ApiError> {
    let get_err = |e: sqlx::Error| ApiError::from(DbError::from(e));
    let state: String = row.try_get("state").map_err(get_err)?;
    let result: Option<String> = row.try_get("result").map_err(get_err)?;
    Ok(RunView {
        id: row.try_get("id").map_err(get_err)?,
        state: state.parse().map_err(ApiError::internal)?,
        idempotency_key: row.try_get("idempotency_key").map_err(get_err)?,
        fingerprint: row.try_get("fingerprint").map_err(get_err)?,
        result: result.and_then(|r| serde_json::from_str(&r).ok()),
        error: row.try_get("error").map_err(get_err)?,
        created_at_ms: row.try_get("created_at").map_err(get_err)?,
        expires_at_ms: row.try_get("expires_at").map_err(get_err)?,
    })
}

const COLUMNS: &str =
    "id, user_id, idempotency_key, fingerprint, state, result, error, created_at, expires_at";

impl Runs {
    /// The service on the Submission owner's database (already migrated). Runs this node had
    /// in flight when it stopped are marked failed.
    pub async fn open(
        db: Db,
        runner: Arc<dyn CodeRunner>,
        config: RunsConfig,
    ) -> Result<Self, DbError> {
        db.query(
            "UPDATE run_receipts SET state = 'failed', error = 'interrupted: the node restarted', \
             updated_at = {now} WHERE node = $1 AND state IN ('queued', 'running')",
        )
        .bind(config.node.clone())
        .execute(db.pool())
        .await?;
        Ok(Self {
            db,
            runner,
            slots: Arc::new(Semaphore::new(config.concurrency.max(1))),
            user_slots: Arc::default(),
            config: Arc::new(config),
            running: Arc::default(),
            problems: None,
        })
    }

    /// Lets runs name a function problem (`RunRequest::problem`), through App's facts.
    pub fn with_problems(mut self, problems: Arc<dyn ProblemFacts>) -> Self {
        self.problems = Some(problems);
        self
    }

    /// What `request` runs, checked before anything is recorded: the code, and for a function
    /// problem the problem (visible to the caller, with a package) and the arguments
    /// (against its signature). A function run's time limit per case is the problem's,
    /// at most the mode's.
    async fn job(
        &self,
        caller: &Principal,
        request: RunRequest,
        mut limits: RunLimits,
    ) -> Result<Job, ApiError> {
        self.validate(&request)?;
        let target = match &request.problem {
            None => RunTarget::Program,
            Some(slug) => {
                let problems = self.problems.as_ref().ok_or_else(|| {
                    ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "function-runs-unavailable",
                        "this node does not run function problems",
                    )
                })?;
                let facts = problems.capture(caller, slug, None).await?;
                limits.time_limit_ms = limits.time_limit_ms.min(facts.time_limit_ms);
                RunTarget::Function {
                    package_hash: facts.package_hash,
                }
            }
        };
        match self.runner.check(&request, &target).await {
            Ok(()) => {}
            Err(PortError::Rejected(reason)) => {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "invalid-arguments",
                    reason,
                ))
            }
            Err(e) => return Err(e.into()),
        }
        Ok(Job {
            request,
            target,
            limits,
        })
    }

    /// Deletes expired receipts until shutdown.
    pub async fn reclaim_expired(self, shutdown: Shutdown) {
        loop {
            tokio::select! {
                _ = shutdown.triggered() => return,
                _ = tokio::time::sleep(Duration::from_secs(30)) => {}
            }
            if let Err(e) = self.delete_expired().await {
                tracing::warn!(error = %e, "expired run receipts not reclaimed");
            }
        }
    }

    async fn delete_expired(&self) -> Result<u64, DbError> {
        Ok(self
            .db
            .query("DELETE FROM run_receipts WHERE expires_at < {now}")
            .execute(self.db.pool())
            .await?
            .rows_affected())
    }

    /// Unexpired receipts of this node.
    async fn receipts_held_by(&self, user: i64) -> Result<i64, DbError> {
        Ok(self
            .db
            .query("SELECT COUNT(*) FROM run_receipts WHERE user_id = $1 AND expires_at >= {now}")
            .bind(user)
            .fetch_one(self.db.pool())
            .await?
            .try_get(0)?)
    }

    async fn receipts_held(&self) -> Result<i64, DbError> {
        Ok(self
            .db
            .query("SELECT COUNT(*) FROM run_receipts WHERE node = $1 AND expires_at >= {now}")
            .bind(self.config.node.clone())
            .fetch_one(self.db.pool())
            .await?
            .try_get(0)?)
    }

    fn validate(&self, request: &RunRequest) -> Result<(), ApiError> {
        crate::api::check_code(
            &self.config.languages,
            &request.language,
            &request.source,
            self.config.max_source_bytes,
        )?;
        if request.stdin.len() > self.config.max_stdin_bytes {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "stdin-too-large",
                format!("at most {} bytes of input", self.config.max_stdin_bytes),
            ));
        }
        Ok(())
    }

    async fn find(&self, user: UserId, key: &str) -> Result<Option<AnyRow>, ApiError> {
        Ok(self
            .db
            .query(&format!(
                "SELECT {COLUMNS} FROM run_receipts WHERE user_id = $1 AND idempotency_key = $2"
            ))
            .bind(user.0)
            .bind(key.to_string())
            .fetch_optional(self.db.pool())
            .await
            .map_err(DbError::from)?)
    }

    /// The earlier receipt for this key, if any (a conflict when the payload differs).
    async fn replay(
        &self,
        user: UserId,
        key: &str,
        print: &str,
    ) -> Result<Option<RunView>, ApiError> {
        let Some(row) = self.find(user, key).await? else {
            return Ok(None);
        };
        let view = view_of(&row)?;
        if view.fingerprint != print {
            return Err(ApiError::conflict(
                "idempotency-conflict",
                format!("idempotency key {key:?} was used for a different run"),
            ));
        }
        Ok(Some(view))
    }

    /// Records a new receipt; `Ok(Err(view))` when the key already has one.
    async fn admit(
        &self,
        caller: &Principal,
        mode: Mode,
        key: String,
        request: &RunRequest,
    ) -> Result<Result<RunView, RunView>, ApiError> {
        let print = fingerprint(mode, request);
        if let Some(existing) = self.replay(caller.user_id, &key, &print).await? {
            return Ok(Err(existing));
        }
        if self.receipts_held_by(caller.user_id.0).await? >= self.config.max_receipts_per_user {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too-many-runs",
                format!(
                    "at most {} runs per user are kept at once; older ones expire after {} s",
                    self.config.max_receipts_per_user,
                    self.config.receipt_ttl.as_secs()
                ),
            ));
        }
        if self.receipts_held().await? >= self.config.max_receipts {
            self.delete_expired().await?;
            if self.receipts_held().await? >= self.config.max_receipts {
                return Err(ApiError::rate_limited(Duration::from_secs(5)));
            }
        }
        let id = uuid::Uuid::new_v4().to_string();
        let inserted = self
            .db
            .query(&format!(
                "INSERT INTO run_receipts (id, user_id, idempotency_key, fingerprint, mode, state, request, node, \
                 created_at, updated_at, expires_at) \
                 VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, {{now}}, {{now}}, {{now}} + $8) RETURNING {COLUMNS}"
            ))
            .bind(id)
            .bind(caller.user_id.0)
            .bind(key.clone())
            .bind(print.clone())
            .bind(mode.as_str())
            .bind(serde_json::to_string(request).expect("requests serialise"))
            .bind(self.config.node.clone())
            .bind(self.config.receipt_ttl.as_millis() as i64)
            .fetch_one(self.db.pool())
            .await
            .map_err(DbError::from);
        match inserted {
            Ok(row) => Ok(Ok(view_of(&row)?)),
            // A concurrent request with the same key won the race.
            Err(e) if e.is_unique_violation() => {
                match self.replay(caller.user_id, &key, &print).await? {
                    Some(existing) => Ok(Err(existing)),
                    None => Err(e.into()),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn get_row(&self, id: &str) -> Result<Option<AnyRow>, ApiError> {
        Ok(self
            .db
            .query(&format!("SELECT {COLUMNS} FROM run_receipts WHERE id = $1"))
            .bind(id.to_string())
            .fetch_optional(self.db.pool())
            .await
            .map_err(DbError::from)?)
    }

    /// The receipt, if it is the caller's (admins may read any).
    pub async fn get(&self, caller: &Principal, id: &str) -> Result<RunView, ApiError> {
        let not_found = || ApiError::not_found(format!("run {id} not found"));
        let row = self.get_row(id).await?.ok_or_else(not_found)?;
        let owner: i64 = row.try_get("user_id").map_err(DbError::from)?;
        if owner != caller.user_id.0 && !caller.can(Permission::ViewAnySource) {
            return Err(not_found());
        }
        view_of(&row)
    }

    /// Executes a queued receipt on a task of its own (so a caller that goes away cannot free
    /// the slot while the program still runs) and waits for it.
    async fn execute(&self, user: i64, id: &str, job: Job) {
        let (runs, id) = (self.clone(), id.to_string());
        let _ = tokio::spawn(async move { runs.execute_here(user, &id, job).await }).await;
    }

    /// queued → running → done (or failed), each step conditional so a cancel in between wins.
    /// The user's own slot first, then one of the node's: a user's backlog waits in line
    /// behind itself.
    async fn execute_here(&self, user: i64, id: &str, job: Job) {
        let mine = self
            .user_slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(user)
            .or_insert_with(|| Arc::new(Semaphore::new(self.config.concurrency_per_user.max(1))))
            .clone();
        let mine = mine.acquire_owned().await;
        let slot = self.slots.acquire().await;
        let started = self
            .db
            .query(
                "UPDATE run_receipts SET state = 'running', updated_at = {now} WHERE id = $1 AND state = 'queued'",
            )
            .bind(id.to_string())
            .execute(self.db.pool())
            .await;
        if !matches!(started, Ok(done) if done.rows_affected() == 1) {
            return; // cancelled before it started, or the database is gone
        }
        let run = self.runner.start(&job.request, job.limits, job.target);
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_string(), run.canceller());
        let finished = run.finish().await;
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        let (state, result, error) = match finished {
            Ok(report) => (
                "done",
                Some(serde_json::to_string(&report).expect("reports serialise")),
                None,
            ),
            Err(e) => ("failed", None, Some(e.to_string())),
        };
        let written = self
            .db
            .query(
                "UPDATE run_receipts SET state = $2, result = $3, error = $4, updated_at = {now} \
                 WHERE id = $1 AND state = 'running'",
            )
            .bind(id.to_string())
            .bind(state)
            .bind(result)
            .bind(error)
            .execute(self.db.pool())
            .await;
        if let Err(e) = written {
            tracing::error!(error = %e, run = id, "run result not recorded");
        }
        drop(slot);
        drop(mine);
        // Forget users with nothing running or waiting (the map holds the only other handle).
        self.user_slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, slots| Arc::strong_count(slots) > 1);
    }

    /// Cancels a queued or running run of the caller's.
    pub async fn cancel(&self, caller: &Principal, id: &str) -> Result<RunView, ApiError> {
        let view = self.get(caller, id).await?;
        if view.state.is_final() {
            return Err(ApiError::conflict(
                "run-finished",
                format!("run {id} already ended ({})", view.state.as_str()),
            ));
        }
        self.db
            .query(
                "UPDATE run_receipts SET state = 'cancelled', updated_at = {now} \
                 WHERE id = $1 AND state IN ('queued', 'running')",
            )
            .bind(id.to_string())
            .execute(self.db.pool())
            .await
            .map_err(DbError::from)?;
        let canceller = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned();
        if let Some(cancel) = canceller {
            cancel();
        }
        self.get(caller, id).await
    }
}

fn request_key(headers: &HeaderMap, request: &RunRequest) -> Result<String, ApiError> {
    if let Some(key) = idempotency_key(headers)? {
        return Ok(key);
    }
    let run_id = request
        .run_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let test_case_id = request
        .test_case_id
        .clone()
        .unwrap_or_else(|| "custom".into());
    let key = format!("{run_id}:{test_case_id}");
    if key.len() > 256 {
        return Err(ApiError::invalid(
            "invalid-idempotency-key",
            "run_id and test_case_id are too long",
        ));
    }
    Ok(key)
}

async fn caller_may_run(caller: &Authenticated, runs: &Runs) -> Result<Principal, ApiError> {
    let principal = caller.require(Permission::RunCode)?.clone();
    runs.config
        .rate_limit
        .check(&principal.user_id.to_string())
        .await?;
    Ok(principal)
}

/// Run code on custom input and wait for the result (public preview only: strict limits).
/// The same idempotency key and payload return the stored result without running again.
#[utoipa::path(post, path = "/api/v1/runs/preview", tag = "runs",
    security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Default: runId:testCaseId")),
    request_body = RunRequest,
    responses(
        (status = 200, description = "The finished run", body = RunView),
        (status = 409, description = "Idempotency conflict", body = ProblemDetails),
        (status = 404, description = "No such function problem (`problem`)", body = ProblemDetails),
        (status = 413, description = "Source or input too large", body = ProblemDetails),
        (status = 422, description = "Unknown language or empty source", body = ProblemDetails),
        (status = 429, description = "Rate limited, or the node's receipts are full", body = ProblemDetails),
    ))]
async fn preview(
    State(runs): State<Runs>,
    caller: Authenticated,
    headers: HeaderMap,
    ApiJson(request): ApiJson<RunRequest>,
) -> Result<Json<RunView>, ApiError> {
    let principal = caller_may_run(&caller, &runs).await?;
    let key = request_key(&headers, &request)?;
    let job = runs
        .job(&principal, request, runs.config.preview_limits)
        .await?;
    let view = match runs
        .admit(&principal, Mode::Preview, key, &job.request)
        .await?
    {
        Ok(new) => {
            runs.execute(principal.user_id.0, &new.id, job).await;
            runs.get(&principal, &new.id).await?
        }
        Err(existing) => existing,
    };
    Ok(Json(view))
}

/// Submit code for an asynchronous run; poll it with `GET /api/v1/runs/{id}`.
#[utoipa::path(post, path = "/api/v1/runs", tag = "runs",
    security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Default: runId:testCaseId")),
    request_body = RunRequest,
    responses(
        (status = 202, description = "Queued", body = RunView),
        (status = 200, description = "The earlier run with this idempotency key", body = RunView),
        (status = 409, description = "Idempotency conflict", body = ProblemDetails),
        (status = 404, description = "No such function problem (`problem`)", body = ProblemDetails),
        (status = 413, description = "Source or input too large", body = ProblemDetails),
        (status = 422, description = "Unknown language or empty source", body = ProblemDetails),
        (status = 429, description = "Rate limited, or the node's receipts are full", body = ProblemDetails),
    ))]
async fn submit_run(
    State(runs): State<Runs>,
    caller: Authenticated,
    headers: HeaderMap,
    ApiJson(request): ApiJson<RunRequest>,
) -> Result<Response, ApiError> {
    let principal = caller_may_run(&caller, &runs).await?;
    let key = request_key(&headers, &request)?;
    let job = runs
        .job(&principal, request, runs.config.run_limits)
        .await?;
    match runs
        .admit(&principal, Mode::Async, key, &job.request)
        .await?
    {
        Ok(new) => {
            let (worker, id) = (runs.clone(), new.id.clone());
            let user = principal.user_id.0;
            tokio::spawn(async move { worker.execute_here(user, &id, job).await });
            Ok((StatusCode::ACCEPTED, Json(new)).into_response())
        }
        Err(existing) => Ok(Json(existing).into_response()),
    }
}

/// A run's state and, once done, its result.
#[utoipa::path(get, path = "/api/v1/runs/{id}", tag = "runs",
    security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "The run", body = RunView),
        (status = 404, description = "No such run (or not the caller's)", body = ProblemDetails),
    ))]
async fn get_run(
    State(runs): State<Runs>,
    caller: Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<RunView>, ApiError> {
    Ok(Json(runs.get(&caller.0, &id).await?))
}

/// Cancel a queued or running run.
#[utoipa::path(delete, path = "/api/v1/runs/{id}", tag = "runs",
    security(("bearer" = [])),
    params(("id" = String, Path)),
    responses(
        (status = 200, description = "Cancelled", body = RunView),
        (status = 404, description = "No such run (or not the caller's)", body = ProblemDetails),
        (status = 409, description = "The run already ended", body = ProblemDetails),
    ))]
async fn cancel_run(
    State(runs): State<Runs>,
    caller: Authenticated,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<RunView>, ApiError> {
    Ok(Json(runs.cancel(&caller.0, &id).await?))
}

/// The execution routes.
pub fn routes(runs: Runs) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(preview))
        .routes(routes!(submit_run))
        .routes(routes!(get_run, cancel_run))
        .with_state(runs)
}
