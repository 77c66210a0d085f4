//! The search routes: the public query (over the `SearchPort`, wherever the index runs), the
//! admins' rebuild (where this process holds the index), and the internal route a remote
//! search worker rebuilds from (App's documents, with the service token).

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::Json;
use contracts::search::{SearchPort, SearchQuery, SearchResults, SearchSource};
use contracts::{Permission, PortError};
use platform::http::{ApiError, ApiQuery, Authenticated, ProblemDetails, ServiceToken};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

#[derive(Clone)]
pub struct SearchState {
    pub port: Arc<dyn SearchPort>,
    /// The index in this process, if it holds one.
    pub index: Option<search::SearchIndex>,
    pub source: Arc<dyn SearchSource>,
    pub token: ServiceToken,
}

fn port_error(e: PortError) -> ApiError {
    match e {
        PortError::Rejected(reason) => ApiError::unprocessable("invalid-query", reason),
        PortError::Unavailable(reason) => ApiError::unavailable("the search index", reason),
    }
}

/// Search problems (public ones: hidden problems are not in the index). Japanese and
/// Chinese match by character sequence; matches come highlighted.
#[utoipa::path(get, path = "/api/v1/search", tag = "search",
    params(SearchQuery),
    responses(
        (status = 200, description = "Results, best first", body = SearchResults),
        (status = 422, description = "An empty or over-long query, or a limit out of range", body = ProblemDetails),
        (status = 503, description = "The search index cannot be reached", body = ProblemDetails),
    ))]
async fn search_route(
    State(state): State<SearchState>,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<Json<SearchResults>, ApiError> {
    state
        .port
        .search(&query)
        .await
        .map(Json)
        .map_err(port_error)
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Rebuilt {
    /// Documents in the rebuilt index (tombstones included).
    pub documents: u64,
}

/// Rebuild the search index from the documents' owners (it is derived data: nothing is
/// lost). Only where this process holds the index.
#[utoipa::path(post, path = "/api/v1/admin/search/rebuild", tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "Rebuilt", body = Rebuilt),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 409, description = "The index runs in a search worker: rebuild it there", body = ProblemDetails),
        (status = 503, description = "A source cannot be read", body = ProblemDetails),
    ))]
async fn rebuild(
    State(state): State<SearchState>,
    caller: Authenticated,
) -> Result<Json<Rebuilt>, ApiError> {
    caller.require(Permission::ViewPipeline)?;
    let Some(index) = &state.index else {
        return Err(ApiError::conflict(
            "search-remote",
            "the index runs in a search worker: run `ulticode search-worker --rebuild`",
        ));
    };
    let documents = index
        .rebuild(state.source.as_ref())
        .await
        .map_err(|e| ApiError::unavailable("the search sources", e))?;
    Ok(Json(Rebuilt { documents }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DocumentsPage {
    /// The last id of the previous page.
    pub after: Option<i64>,
    /// Documents, 1 to 1000 (default 1000).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}

/// App's search documents in id order, for a search worker's rebuild (service token).
#[utoipa::path(get, path = "/internal/v1/search/documents", tag = "internal",
    security(("service" = [])),
    params(DocumentsPage),
    responses(
        (status = 200, description = "A page of documents", body = Vec<Object>),
        (status = 401, description = "Not the service token", body = ProblemDetails),
    ))]
async fn documents(
    State(state): State<SearchState>,
    headers: HeaderMap,
    ApiQuery(page): ApiQuery<DocumentsPage>,
) -> Result<Json<Vec<contracts::events::SearchDocument>>, ApiError> {
    state.token.check(&headers)?;
    state
        .source
        .documents(
            page.after.unwrap_or(0),
            platform::http::page_limit(page.limit, 1000, 1000)?,
        )
        .await
        .map(Json)
        .map_err(port_error)
}

pub fn routes(state: SearchState) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(search_route))
        .routes(routes!(rebuild))
        .routes(routes!(documents))
        .with_state(state)
}

/// Rebuilds `index` from `source` when it is empty but the source is not (a new or deleted
/// index): the index is derived, so this loses nothing.
pub async fn rebuild_if_empty(index: &search::SearchIndex, source: &dyn SearchSource) {
    let empty = index.entries().map(|e| e.is_empty()).unwrap_or(false);
    if !empty {
        return;
    }
    match source.documents(0, 1).await {
        Ok(first) if !first.is_empty() => match index.rebuild(source).await {
            Ok(n) => tracing::info!(documents = n, "search index rebuilt"),
            Err(e) => tracing::warn!(error = %e, "search index not rebuilt"),
        },
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "search sources unreadable; index not rebuilt"),
    }
}
