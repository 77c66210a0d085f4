//! The judging port: in process (the store itself) and over HTTP (routes for remote judge
//! workers, authenticated as a service with a bearer token).

use async_trait::async_trait;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use contracts::wire::{Claim, Complete, Failure, Held, Progress, Renew};
use contracts::{
    Acquired, AttemptId, Generation, JudgeProgress, JudgeResult, JudgingPort, PortError,
    SubmissionId,
};
use platform::http::{ApiError, ApiJson, ProblemDetails, ServiceToken};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::store::{Recovery, SubmissionStore};

fn unavailable(e: platform::DbError) -> PortError {
    PortError::Unavailable(e.to_string())
}

#[async_trait]
impl JudgingPort for SubmissionStore {
    async fn acquire(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
    ) -> Result<Acquired, PortError> {
        SubmissionStore::acquire(self, id, generation, attempt)
            .await
            .map_err(unavailable)
    }

    async fn renew(&self, id: SubmissionId, attempt: &AttemptId) -> Result<bool, PortError> {
        SubmissionStore::renew(self, id, attempt)
            .await
            .map_err(unavailable)
    }

    async fn complete(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        result: &JudgeResult,
    ) -> Result<bool, PortError> {
        SubmissionStore::complete(self, id, generation, attempt, result)
            .await
            .map_err(unavailable)
    }

    async fn progress(
        &self,
        id: SubmissionId,
        attempt: &AttemptId,
        progress: JudgeProgress,
    ) -> Result<bool, PortError> {
        self.report_progress(id, attempt, progress)
            .await
            .map_err(unavailable)
    }

    async fn infrastructure_failure(
        &self,
        id: SubmissionId,
        generation: Generation,
        attempt: &AttemptId,
        reason: &str,
    ) -> Result<bool, PortError> {
        let outcome =
            SubmissionStore::infrastructure_failure(self, id, generation, attempt, reason)
                .await
                .map_err(unavailable)?;
        Ok(outcome != Recovery::Lost)
    }
}

#[derive(Clone)]
struct PortState {
    store: SubmissionStore,
    token: ServiceToken,
    metrics: platform::Metrics,
}

impl PortState {
    /// Counts a fenced call refused because its claim was stale.
    fn count_stale(&self, call: &'static str) {
        self.metrics.inc(
            "judging_port_stale_total",
            "Judging-port calls refused because the caller's claim was stale, by call.",
            &[("call", call)],
            1,
        );
    }

    fn held(&self, call: &'static str, held: bool) -> Json<Held> {
        if !held {
            self.count_stale(call);
        }
        Json(Held { held })
    }
}

type Reply<T> = Result<Json<T>, ApiError>;

fn failed(e: PortError) -> ApiError {
    match e {
        PortError::Unavailable(m) => ApiError::unavailable("the submission store", m),
        PortError::Rejected(m) => ApiError::invalid("rejected", m),
    }
}

/// Acquire the judging lease of a submission's generation (judge workers only).
#[utoipa::path(post, path = "/internal/v1/judging/acquire", tag = "internal",
    security(("service" = [])), request_body = Claim,
    responses(
        (status = 200, description = "The job, or why the message is stale", body = Acquired),
        (status = 401, description = "No service token", body = ProblemDetails),
    ))]
async fn acquire(
    State(state): State<PortState>,
    headers: HeaderMap,
    ApiJson(claim): ApiJson<Claim>,
) -> Reply<Acquired> {
    state.token.check(&headers)?;
    JudgingPort::acquire(
        &state.store,
        claim.submission_id,
        claim.generation,
        &claim.attempt_id,
    )
    .await
    .map(|acquired| {
        if matches!(acquired, Acquired::Stale { .. }) {
            state.count_stale("acquire");
        }
        Json(acquired)
    })
    .map_err(failed)
}

/// Renew a held lease.
#[utoipa::path(post, path = "/internal/v1/judging/renew", tag = "internal",
    security(("service" = [])), request_body = Renew,
    responses(
        (status = 200, description = "Whether the lease is still held", body = Held),
        (status = 401, description = "No service token", body = ProblemDetails),
    ))]
async fn renew(
    State(state): State<PortState>,
    headers: HeaderMap,
    ApiJson(renew): ApiJson<Renew>,
) -> Reply<Held> {
    state.token.check(&headers)?;
    JudgingPort::renew(&state.store, renew.submission_id, &renew.attempt_id)
        .await
        .map(|held| state.held("renew", held))
        .map_err(failed)
}

/// Report live progress of a held attempt.
#[utoipa::path(post, path = "/internal/v1/judging/progress", tag = "internal",
    security(("service" = [])), request_body = Progress,
    responses(
        (status = 200, description = "Whether the lease is still held", body = Held),
        (status = 401, description = "No service token", body = ProblemDetails),
    ))]
async fn progress(
    State(state): State<PortState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Progress>,
) -> Reply<Held> {
    state.token.check(&headers)?;
    JudgingPort::progress(
        &state.store,
        body.submission_id,
        &body.attempt_id,
        body.progress,
    )
    .await
    .map(|held| state.held("progress", held))
    .map_err(failed)
}

/// Write the verdict of a held attempt (fenced on generation and attempt).
#[utoipa::path(post, path = "/internal/v1/judging/complete", tag = "internal",
    security(("service" = [])), request_body = Complete,
    responses(
        (status = 200, description = "Whether the verdict was written", body = Held),
        (status = 401, description = "No service token", body = ProblemDetails),
    ))]
async fn complete(
    State(state): State<PortState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Complete>,
) -> Reply<Held> {
    state.token.check(&headers)?;
    let claim = &body.claim;
    JudgingPort::complete(
        &state.store,
        claim.submission_id,
        claim.generation,
        &claim.attempt_id,
        &body.result,
    )
    .await
    .map(|held| state.held("complete", held))
    .map_err(failed)
}

/// Report an infrastructure failure of a held attempt (retried, never blamed on the user).
#[utoipa::path(post, path = "/internal/v1/judging/infrastructure-failure", tag = "internal",
    security(("service" = [])), request_body = Failure,
    responses(
        (status = 200, description = "Whether the claim held", body = Held),
        (status = 401, description = "No service token", body = ProblemDetails),
    ))]
async fn infrastructure_failure(
    State(state): State<PortState>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Failure>,
) -> Reply<Held> {
    state.token.check(&headers)?;
    let claim = &body.claim;
    JudgingPort::infrastructure_failure(
        &state.store,
        claim.submission_id,
        claim.generation,
        &claim.attempt_id,
        &body.reason,
    )
    .await
    .map(|held| state.held("infrastructure_failure", held))
    .map_err(failed)
}

/// The internal judging routes, requiring the service token.
pub fn routes(
    store: SubmissionStore,
    token: ServiceToken,
    metrics: platform::Metrics,
) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(acquire))
        .routes(routes!(renew))
        .routes(routes!(progress))
        .routes(routes!(complete))
        .routes(routes!(infrastructure_failure))
        .with_state(PortState {
            store,
            token,
            metrics,
        })
}
