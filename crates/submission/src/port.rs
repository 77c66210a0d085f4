//! The judging port: in process (the store itself) and over HTTP (routes for remote judge
//! workers, authenticated as a service with a bearer token).

use async_trait::async_trait;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use contracts::wire::{self, Claim, Complete, Failure, Held, Renew};
use contracts::{
    Acquired, AttemptId, Generation, JudgeResult, JudgingPort, PortError, SubmissionId,
};

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
    token: String,
}

type Reply<T> = Result<Json<T>, (StatusCode, String)>;

fn authorise(state: &PortState, headers: &HeaderMap) -> Result<(), (StatusCode, String)> {
    let presented = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    // Constant-time comparison: the token is a secret.
    let ok = presented.is_some_and(|p| {
        p.len() == state.token.len()
            && p.bytes()
                .zip(state.token.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    });
    if ok {
        Ok(())
    } else {
        Err((
            StatusCode::UNAUTHORIZED,
            "a valid service token is required".into(),
        ))
    }
}

fn failed(e: PortError) -> (StatusCode, String) {
    match e {
        PortError::Unavailable(m) => (StatusCode::SERVICE_UNAVAILABLE, m),
        PortError::Rejected(m) => (StatusCode::BAD_REQUEST, m),
    }
}

async fn acquire(
    State(state): State<PortState>,
    headers: HeaderMap,
    Json(claim): Json<Claim>,
) -> Reply<Acquired> {
    authorise(&state, &headers)?;
    JudgingPort::acquire(
        &state.store,
        claim.submission_id,
        claim.generation,
        &claim.attempt_id,
    )
    .await
    .map(Json)
    .map_err(failed)
}

async fn renew(
    State(state): State<PortState>,
    headers: HeaderMap,
    Json(renew): Json<Renew>,
) -> Reply<Held> {
    authorise(&state, &headers)?;
    JudgingPort::renew(&state.store, renew.submission_id, &renew.attempt_id)
        .await
        .map(|held| Json(Held { held }))
        .map_err(failed)
}

async fn complete(
    State(state): State<PortState>,
    headers: HeaderMap,
    Json(body): Json<Complete>,
) -> Reply<Held> {
    authorise(&state, &headers)?;
    let Claim {
        submission_id,
        generation,
        attempt_id,
    } = body.claim;
    JudgingPort::complete(
        &state.store,
        submission_id,
        generation,
        &attempt_id,
        &body.result,
    )
    .await
    .map(|held| Json(Held { held }))
    .map_err(failed)
}

async fn infrastructure_failure(
    State(state): State<PortState>,
    headers: HeaderMap,
    Json(body): Json<Failure>,
) -> Reply<Held> {
    authorise(&state, &headers)?;
    let Claim {
        submission_id,
        generation,
        attempt_id,
    } = body.claim;
    JudgingPort::infrastructure_failure(
        &state.store,
        submission_id,
        generation,
        &attempt_id,
        &body.reason,
    )
    .await
    .map(|held| Json(Held { held }))
    .map_err(failed)
}

/// The internal judging routes, requiring `service_token`.
pub fn routes(store: SubmissionStore, service_token: String) -> Router {
    Router::new()
        .route(wire::ACQUIRE, post(acquire))
        .route(wire::RENEW, post(renew))
        .route(wire::COMPLETE, post(complete))
        .route(wire::INFRASTRUCTURE_FAILURE, post(infrastructure_failure))
        .with_state(PortState {
            store,
            token: service_token,
        })
}
