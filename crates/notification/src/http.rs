//! The in-app inbox over HTTP: list, unread count, mark read, a live stream of the unread
//! count, and preferences. Every route is the caller's own inbox: no route takes a user id.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::Extension;
use axum::Json;
use contracts::UserId;
use futures::Stream;
use platform::http::{
    presented_access_token, ApiError, ApiJson, ApiPath, ApiQuery, Authenticated, ProblemDetails,
    Verifier,
};
use platform::Shutdown;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::{InboxEntry, NotificationError, NotificationService, Preference};

impl From<NotificationError> for ApiError {
    fn from(e: NotificationError) -> Self {
        match e {
            NotificationError::Invalid(reason) => ApiError::unprocessable("invalid-field", reason),
            NotificationError::Db(e) => e.into(),
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct InboxPage {
    /// Keyset cursor: the last (smallest) id of the previous page.
    pub before: Option<i64>,
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Unread {
    pub unread: i64,
}

/// The caller's notifications, newest first.
#[utoipa::path(get, path = "/api/v1/notifications", tag = "notifications",
    security(("bearer" = [])),
    params(InboxPage),
    responses(
        (status = 200, description = "A page of the inbox", body = Vec<InboxEntry>),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
        (status = 422, description = "Limit out of range", body = ProblemDetails),
    ))]
async fn inbox(
    State(service): State<NotificationService>,
    caller: Authenticated,
    ApiQuery(page): ApiQuery<InboxPage>,
) -> Result<Json<Vec<InboxEntry>>, ApiError> {
    let limit = platform::http::page_limit(page.limit, 20, 100)?;
    Ok(Json(
        service.inbox(caller.0.user_id, page.before, limit).await?,
    ))
}

/// How many of the caller's notifications are unread.
#[utoipa::path(get, path = "/api/v1/notifications/unread", tag = "notifications",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The unread count", body = Unread),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
    ))]
async fn unread(
    State(service): State<NotificationService>,
    caller: Authenticated,
) -> Result<Json<Unread>, ApiError> {
    Ok(Json(Unread {
        unread: service.unread(caller.0.user_id).await?,
    }))
}

/// Mark one of the caller's notifications read.
#[utoipa::path(post, path = "/api/v1/notifications/{id}/read", tag = "notifications",
    security(("bearer" = [])),
    params(("id" = i64, Path)),
    responses(
        (status = 204, description = "Read"),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
        (status = 404, description = "No such notification of yours", body = ProblemDetails),
    ))]
async fn mark_read(
    State(service): State<NotificationService>,
    caller: Authenticated,
    ApiPath(id): ApiPath<i64>,
) -> Result<StatusCode, ApiError> {
    if service.mark_read(caller.0.user_id, Some(id)).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("no notification {id}")))
    }
}

/// Mark every notification of the caller read.
#[utoipa::path(post, path = "/api/v1/notifications/read-all", tag = "notifications",
    security(("bearer" = [])),
    responses(
        (status = 204, description = "All read"),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
    ))]
async fn mark_all_read(
    State(service): State<NotificationService>,
    caller: Authenticated,
) -> Result<StatusCode, ApiError> {
    service.mark_read(caller.0.user_id, None).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The caller's unread count, live: an `unread` event now and whenever it changes
/// (changes made by other processes within 3 s). The stream ends when the credential it was
/// opened with stops being valid (logout, role or password change, expiry: checked every
/// 2 s) and when the server shuts down.
#[utoipa::path(get, path = "/api/v1/notifications/stream", tag = "notifications",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Server-Sent Events of `unread` counts", content_type = "text/event-stream", body = Unread),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
    ))]
async fn stream(
    State(state): State<InboxState>,
    caller: Authenticated,
    Extension(verifier): Extension<Verifier>,
    headers: HeaderMap,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    struct Watch {
        service: NotificationService,
        changes: tokio::sync::broadcast::Receiver<i64>,
        last: Option<i64>,
        verifier: Verifier,
        token: String,
        closing: Shutdown,
    }
    let user = caller.0.user_id;
    let watch = Watch {
        changes: state.service.changes(),
        service: state.service,
        last: None,
        verifier,
        token: presented_access_token(&headers).unwrap_or_default(),
        closing: state.closing,
    };
    let events = futures::stream::unfold(watch, move |mut watch| async move {
        loop {
            if watch.last.is_some() {
                let changes = &mut watch.changes;
                let wait = async {
                    loop {
                        match changes.recv().await {
                            Ok(changed) if changed == user.0 => return,
                            Ok(_) => continue,
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
                            Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                                std::future::pending::<()>().await
                            }
                        }
                    }
                };
                tokio::select! {
                    _ = tokio::time::timeout(Duration::from_secs(2), wait) => {}
                    _ = watch.closing.triggered() => return None,
                }
                if watch.verifier.0.verify_access(&watch.token).await.is_err() {
                    return None;
                }
            }
            let Ok(count) = watch.service.unread_recent(UserId(user.0)).await else {
                return None;
            };
            if watch.last != Some(count) {
                watch.last = Some(count);
                let event = Event::default()
                    .event("unread")
                    .data(serde_json::json!({ "unread": count }).to_string());
                return Some((Ok(event), watch));
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}

/// The caller's notification preferences: every (kind, channel) with its current setting.
#[utoipa::path(get, path = "/api/v1/notifications/preferences", tag = "notifications",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Every switch", body = Vec<Preference>),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
    ))]
async fn preferences(
    State(service): State<NotificationService>,
    caller: Authenticated,
) -> Result<Json<Vec<Preference>>, ApiError> {
    Ok(Json(service.preferences(caller.0.user_id).await?))
}

/// Change some of the caller's notification preferences.
#[utoipa::path(put, path = "/api/v1/notifications/preferences", tag = "notifications",
    security(("bearer" = [])),
    request_body = Vec<Preference>,
    responses(
        (status = 200, description = "Every switch, after the change", body = Vec<Preference>),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
        (status = 422, description = "Unknown kind or channel", body = ProblemDetails),
    ))]
async fn set_preferences(
    State(service): State<NotificationService>,
    caller: Authenticated,
    ApiJson(choices): ApiJson<Vec<Preference>>,
) -> Result<Json<Vec<Preference>>, ApiError> {
    service.set_preferences(caller.0.user_id, &choices).await?;
    Ok(Json(service.preferences(caller.0.user_id).await?))
}

/// What the routes hold: the owner, and the server's shutdown (which ends live streams).
#[derive(Clone)]
pub struct InboxState {
    service: NotificationService,
    closing: Shutdown,
}

impl axum::extract::FromRef<InboxState> for NotificationService {
    fn from_ref(state: &InboxState) -> Self {
        state.service.clone()
    }
}

/// The Notification owner's routes; `closing` ends live streams at shutdown.
pub fn routes(service: NotificationService, closing: Shutdown) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(inbox))
        .routes(routes!(unread))
        .routes(routes!(mark_read))
        .routes(routes!(mark_all_read))
        .routes(routes!(stream))
        .routes(routes!(preferences, set_preferences))
        .with_state(InboxState { service, closing })
}
