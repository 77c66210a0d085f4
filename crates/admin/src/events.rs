//! The event backbone as operators see it: each consumer's stream (length, pending entries,
//! dead letters) and the replay of an event dead letter.

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use contracts::events::types;
use contracts::Permission;
use platform::events::NewEvent;
use platform::http::{ApiError, ApiPath, Authenticated, ProblemDetails};
use serde::Serialize;
use utoipa::ToSchema;

use crate::{AdminService, DeadLetterView, PendingEntryView, QueueView};

/// One consumer's stream.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EventStreamView {
    /// `audit`, `notification`, `search`.
    pub consumer: String,
    pub stream: QueueView,
    /// The oldest entries delivered and not yet acknowledged (at most 50).
    pub pending_entries: Vec<PendingEntryView>,
    /// Events the consumer gave up on (at most 50), with the reason.
    pub dead_letters: Vec<DeadLetterView>,
}

/// The consumers' event streams.
#[utoipa::path(get, path = "/api/v1/admin/events", tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Every consumer's stream", body = Vec<EventStreamView>),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 503, description = "A stream cannot be read", body = ProblemDetails),
    ))]
pub(crate) async fn event_streams(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
) -> Result<Json<Vec<EventStreamView>>, ApiError> {
    caller.require(Permission::ViewPipeline)?;
    let unavailable = |e: queue::QueueError| ApiError::unavailable("an event stream", e);
    let mut views = Vec::new();
    for (consumer, stream) in admin_service.ports.events.all() {
        let stats = stream.stats().await.map_err(unavailable)?;
        let pending = stream.pending_entries(50).await.map_err(unavailable)?;
        let dead = stream.dead_letters(50).await.map_err(unavailable)?;
        views.push(EventStreamView {
            consumer: consumer.to_string(),
            stream: QueueView::from(stats),
            pending_entries: pending.into_iter().map(PendingEntryView::from).collect(),
            dead_letters: dead.into_iter().map(DeadLetterView::from).collect(),
        });
    }
    Ok(Json(views))
}

/// Put an event dead letter back on its consumer's stream. The consumer's inbox makes an
/// event it already applied a no-op.
#[utoipa::path(post, path = "/api/v1/admin/events/{consumer}/dead-letters/{id}/replay", tag = "admin",
    security(("bearer" = [])),
    params(("consumer" = String, Path), ("id" = String, Path)),
    responses(
        (status = 204, description = "Replayed"),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 404, description = "No such consumer or dead letter", body = ProblemDetails),
        (status = 503, description = "The stream cannot be reached", body = ProblemDetails),
    ))]
pub(crate) async fn replay_event_dead_letter(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
    ApiPath((consumer, id)): ApiPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let actor = caller.require(Permission::ViewPipeline)?;
    let stream = admin_service
        .ports
        .events
        .stream(&consumer)
        .ok_or_else(|| ApiError::not_found(format!("no event consumer {consumer:?}")))?;
    let event = NewEvent::new(
        types::EVENT_DEAD_LETTER_REPLAYED,
        "dead_letter",
        id.parse().unwrap_or(0),
        serde_json::json!({ "consumer": consumer, "dead_letter": id }),
    )
    .by(Some(actor.user_id));
    admin_service
        .audited(event, || async {
            crate::replayed(stream.replay(&id).await, &id, "an event stream")
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
