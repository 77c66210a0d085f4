//! The search ports: App describes its documents (`SearchSource`, for rebuilding the derived
//! index), and the index answers queries (`SearchPort`, in process or over HTTP).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::events::SearchDocument;
use crate::judging::PortError;

/// A query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, IntoParams, ToSchema)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Words (any language; Japanese and Chinese are matched by character sequence): 1 to
    /// 200 characters, not all of them spaces.
    #[param(min_length = 1, max_length = 200, pattern = r"\S")]
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub q: String,
    /// Only documents of this kind (`problem`).
    pub kind: Option<String>,
    /// Only documents with this tag.
    pub tag: Option<String>,
    /// Results, 1 to 50 (default 20).
    #[param(minimum = 1, maximum = 50)]
    #[schema(minimum = 1, maximum = 50)]
    pub limit: Option<u32>,
}

/// One result, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SearchHit {
    pub kind: String,
    pub id: i64,
    pub slug: String,
    pub title: String,
    /// The title with matches in `<b>` (HTML-escaped otherwise).
    pub title_html: String,
    /// A fragment of the body with matches in `<b>` (HTML-escaped otherwise).
    pub snippet_html: String,
    pub tags: Vec<String>,
    pub score: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    /// Documents matching in all (`hits` holds the first `limit`).
    pub total: u64,
}

/// The search index, wherever it runs.
#[async_trait]
pub trait SearchPort: Send + Sync {
    async fn search(&self, query: &SearchQuery) -> Result<SearchResults, PortError>;
}

/// A source of documents for rebuilding the index: every document it owns (tombstones for
/// those that must not be found), in id order.
#[async_trait]
pub trait SearchSource: Send + Sync {
    async fn documents(&self, after: i64, limit: u32) -> Result<Vec<SearchDocument>, PortError>;
}
