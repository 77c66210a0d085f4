//! The search worker over HTTP (distributed shape): its internal query route (service
//! token), the adapter `serve` queries it through, and the adapter it reads App's
//! documents through when rebuilding. No business route: the public `/api/v1/search` is
//! the API's, over [`contracts::search::SearchPort`].

use std::time::Duration;

use async_trait::async_trait;
use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::routing::get;
use axum::{Json, Router};
use contracts::events::SearchDocument;
use contracts::search::{SearchPort, SearchQuery, SearchResults, SearchSource};
use contracts::PortError;
use platform::http::{ApiError, ServiceToken};
use serde::Deserialize;

use crate::SearchIndex;

/// The route that answers queries for `serve`: `GET /internal/v1/search`.
pub fn internal_routes(index: SearchIndex, token: ServiceToken) -> Router {
    Router::new()
        .route("/internal/v1/search", get(internal_search))
        .with_state((index, token))
}

async fn internal_search(
    State((index, token)): State<(SearchIndex, ServiceToken)>,
    headers: HeaderMap,
    Query(query): Query<SearchQuery>,
) -> Result<Json<SearchResults>, ApiError> {
    token.check(&headers)?;
    index.search(&query).await.map(Json).map_err(port_error)
}

fn port_error(e: PortError) -> ApiError {
    match e {
        PortError::Rejected(reason) => ApiError::unprocessable("invalid-query", reason),
        PortError::Unavailable(reason) => ApiError::unavailable("the search index", reason),
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default()
}

/// Queries a search worker.
pub struct HttpSearch {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl HttpSearch {
    pub fn new(base: &str, token: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            token: token.to_string(),
            http: client(),
        }
    }
}

#[async_trait]
impl SearchPort for HttpSearch {
    async fn search(&self, query: &SearchQuery) -> Result<SearchResults, PortError> {
        let response = self
            .http
            .get(format!("{}/internal/v1/search", self.base))
            .bearer_auth(&self.token)
            .query(query)
            .send()
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?;
        let status = response.status();
        if status.as_u16() == 422 {
            let body: serde_json::Value = response.json().await.unwrap_or_default();
            return Err(PortError::Rejected(
                body["detail"]
                    .as_str()
                    .unwrap_or("invalid query")
                    .to_string(),
            ));
        }
        if !status.is_success() {
            return Err(PortError::Unavailable(format!(
                "search worker answered {status}"
            )));
        }
        response
            .json()
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))
    }
}

#[derive(Debug, Deserialize)]
pub struct DocumentsPage {
    pub after: Option<i64>,
    pub limit: Option<u32>,
}

/// Reads App's documents from `serve`'s internal route (for a rebuild).
pub struct HttpDocuments {
    base: String,
    token: String,
    http: reqwest::Client,
}

impl HttpDocuments {
    pub fn new(base: &str, token: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
            token: token.to_string(),
            http: client(),
        }
    }
}

#[async_trait]
impl SearchSource for HttpDocuments {
    async fn documents(&self, after: i64, limit: u32) -> Result<Vec<SearchDocument>, PortError> {
        let response = self
            .http
            .get(format!("{}/internal/v1/search/documents", self.base))
            .bearer_auth(&self.token)
            .query(&[("after", after.to_string()), ("limit", limit.to_string())])
            .send()
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?;
        if !response.status().is_success() {
            return Err(PortError::Unavailable(format!(
                "documents answered {}",
                response.status()
            )));
        }
        response
            .json()
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))
    }
}
