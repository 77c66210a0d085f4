//! The search worker: a derived full-text index of other owners' documents. It is fed by
//! `SearchDocumentChanged` events and never writes a business table; it can always be
//! deleted and rebuilt from the documents' owners ([`SearchIndex::rebuild`]).
//!
//! Versioned upserts: every document carries its source's version; an event whose version
//! is not newer than the indexed one changes nothing, so redelivered and reordered events
//! are harmless (the index's versions are this consumer's inbox, committed with the
//! documents). A document that must not be found (deleted, hidden) stays as a tombstone
//! holding its version, so an older event cannot bring it back.

pub mod http;
pub mod tokenizer;

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use contracts::events::{consumers, types, EventEnvelope, SearchDocument};
use contracts::search::{SearchHit, SearchPort, SearchQuery, SearchResults, SearchSource};
use contracts::PortError;
use platform::events::{Consume, Handled, HandlerError};
use tantivy::collector::{Count, TopDocs};
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, Value,
    STORED, STRING,
};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{doc, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("index: {0}")]
    Index(#[from] tantivy::TantivyError),
    #[error("index directory: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Invalid(String),
}

#[derive(Clone, Copy)]
struct Fields {
    key: Field,
    kind: Field,
    id: Field,
    version: Field,
    tombstone: Field,
    slug: Field,
    title: Field,
    body: Field,
    tags: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(tokenizer::NAME)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let number = NumericOptions::default()
        .set_stored()
        .set_indexed()
        .set_fast();
    let fields = Fields {
        key: builder.add_text_field("key", STRING | STORED),
        kind: builder.add_text_field("kind", STRING | STORED),
        id: builder.add_i64_field("id", number.clone()),
        version: builder.add_i64_field("version", number.clone()),
        tombstone: builder.add_u64_field("tombstone", number),
        slug: builder.add_text_field("slug", STRING | STORED),
        title: builder.add_text_field("title", text.clone()),
        body: builder.add_text_field("body", text),
        tags: builder.add_text_field("tags", STRING | STORED),
    };
    (builder.build(), fields)
}

fn key(kind: &str, id: i64) -> String {
    format!("{kind}:{id}")
}

/// The index. Cheap to clone; writes are serialised.
#[derive(Clone)]
pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    writer: Arc<Mutex<IndexWriter>>,
    fields: Fields,
}

/// Writer memory (tantivy splits it among its threads; 15 MB is its minimum per thread).
const WRITER_MEMORY: usize = 50_000_000;

impl SearchIndex {
    /// Opens the index in `dir`, creating it (and the directory) if missing.
    pub fn open(dir: &Path) -> Result<Self, SearchError> {
        std::fs::create_dir_all(dir)?;
        let (schema, fields) = schema();
        let directory = tantivy::directory::MmapDirectory::open(dir)
            .map_err(|e| SearchError::Invalid(e.to_string()))?;
        let index = Index::open_or_create(directory, schema)?;
        index.tokenizers().register(
            tokenizer::NAME,
            TextAnalyzer::from(tokenizer::CjkAwareTokenizer),
        );
        let writer = index.writer_with_num_threads(1, WRITER_MEMORY)?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            index,
            reader,
            writer: Arc::new(Mutex::new(writer)),
            fields,
        })
    }

    /// The indexed version of `kind`/`id` (tombstones included).
    fn version_of(&self, kind: &str, id: i64) -> Result<Option<i64>, SearchError> {
        let searcher = self.reader.searcher();
        let query = TermQuery::new(
            Term::from_field_text(self.fields.key, &key(kind, id)),
            IndexRecordOption::Basic,
        );
        let top = searcher.search(&query, &TopDocs::with_limit(1).order_by_score())?;
        match top.first() {
            Some((_, address)) => {
                let doc: TantivyDocument = searcher.doc(*address)?;
                Ok(doc.get_first(self.fields.version).and_then(|v| v.as_i64()))
            }
            None => Ok(None),
        }
    }

    fn add(&self, writer: &IndexWriter, document: &SearchDocument) -> Result<(), SearchError> {
        let f = self.fields;
        let k = key(&document.kind, document.id);
        writer.delete_term(Term::from_field_text(f.key, &k));
        let mut doc = doc!(
            f.key => k,
            f.kind => document.kind.clone(),
            f.id => document.id,
            f.version => document.version,
            f.tombstone => u64::from(document.content.is_none()),
        );
        if let Some(content) = &document.content {
            doc.add_text(f.slug, &content.slug);
            doc.add_text(f.title, &content.title);
            doc.add_text(f.body, &content.body);
            for tag in &content.tags {
                doc.add_text(f.tags, tag);
            }
        }
        writer.add_document(doc)?;
        Ok(())
    }

    /// Applies `document` unless the index holds this version or a newer one; `true` when it
    /// changed the index.
    pub fn apply(&self, document: &SearchDocument) -> Result<bool, SearchError> {
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        if self
            .version_of(&document.kind, document.id)?
            .is_some_and(|indexed| indexed >= document.version)
        {
            return Ok(false);
        }
        self.add(&writer, document)?;
        writer.commit()?;
        self.reader.reload()?;
        Ok(true)
    }

    /// Replaces the whole index with `source`'s documents (in one commit: searches see the
    /// old index until the new one is complete). Returns how many documents it holds.
    pub async fn rebuild(&self, source: &dyn SearchSource) -> Result<u64, SearchError> {
        let mut documents = Vec::new();
        let mut after = 0;
        loop {
            let page = source
                .documents(after, 1000)
                .await
                .map_err(|e| SearchError::Invalid(e.to_string()))?;
            let Some(last) = page.last() else { break };
            after = last.id;
            documents.extend(page);
        }
        let this = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut writer = this.writer.lock().unwrap_or_else(|p| p.into_inner());
            writer.delete_all_documents()?;
            for document in &documents {
                this.add(&writer, document)?;
            }
            writer.commit()?;
            this.reader.reload()?;
            Ok(documents.len() as u64)
        })
        .await
        .map_err(|e| SearchError::Invalid(e.to_string()))?
    }

    /// Documents that can be found (tombstones excluded).
    pub fn live_documents(&self) -> Result<u64, SearchError> {
        let query = TermQuery::new(
            Term::from_field_u64(self.fields.tombstone, 0),
            IndexRecordOption::Basic,
        );
        Ok(self.reader.searcher().search(&query, &Count)? as u64)
    }

    /// Every indexed (key, version, tombstone), sorted: two indexes with the same entries
    /// answer every query the same.
    pub fn entries(&self) -> Result<Vec<(String, i64, bool)>, SearchError> {
        let searcher = self.reader.searcher();
        let all = tantivy::query::AllQuery;
        let limit = (searcher.num_docs() as usize).max(1);
        let mut out = Vec::new();
        for (_, address) in searcher.search(&all, &TopDocs::with_limit(limit).order_by_score())? {
            let doc: TantivyDocument = searcher.doc(address)?;
            let f = self.fields;
            out.push((
                doc.get_first(f.key)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string(),
                doc.get_first(f.version)
                    .and_then(|v| v.as_i64())
                    .unwrap_or_default(),
                doc.get_first(f.tombstone).and_then(|v| v.as_u64()) == Some(1),
            ));
        }
        out.sort();
        Ok(out)
    }

    /// Answers `query`: title matches weigh double; filters by kind and tag.
    pub fn query(&self, query: &SearchQuery) -> Result<SearchResults, SearchError> {
        let text = query.q.trim();
        if text.is_empty() || text.chars().count() > 200 {
            return Err(SearchError::Invalid("q: 1 to 200 characters".into()));
        }
        let limit = query.limit.unwrap_or(20);
        if !(1..=50).contains(&limit) {
            return Err(SearchError::Invalid("limit: 1 to 50".into()));
        }
        let f = self.fields;
        let mut parser = QueryParser::for_index(&self.index, vec![f.title, f.body]);
        parser.set_field_boost(f.title, 2.0);
        // Every word must match, as in any search box.
        parser.set_conjunction_by_default();
        // Operators a user did not mean are read as words, never as an error.
        let (words, _) = parser.parse_query_lenient(text);
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![
            (Occur::Must, words.box_clone()),
            (
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_u64(f.tombstone, 0),
                    IndexRecordOption::Basic,
                )),
            ),
        ];
        if let Some(kind) = &query.kind {
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.kind, kind),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        if let Some(tag) = &query.tag {
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(
                    Term::from_field_text(f.tags, tag),
                    IndexRecordOption::Basic,
                )),
            ));
        }
        let combined = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let (top, total) = searcher.search(
            &combined,
            &(TopDocs::with_limit(limit as usize).order_by_score(), Count),
        )?;
        let mut titles = tantivy::snippet::SnippetGenerator::create(&searcher, &*words, f.title)?;
        titles.set_max_num_chars(200);
        let mut bodies = tantivy::snippet::SnippetGenerator::create(&searcher, &*words, f.body)?;
        bodies.set_max_num_chars(160);
        let mut hits = Vec::with_capacity(top.len());
        for (score, address) in top {
            let doc: TantivyDocument = searcher.doc(address)?;
            let text_of = |field: Field| {
                doc.get_first(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string()
            };
            let title = text_of(f.title);
            let title_html = {
                let snippet = titles.snippet_from_doc(&doc);
                if snippet.is_empty() {
                    platform::html::escape(&title)
                } else {
                    snippet.to_html()
                }
            };
            let snippet_html = {
                let snippet = bodies.snippet_from_doc(&doc);
                if snippet.is_empty() {
                    platform::html::escape(&text_of(f.body).chars().take(160).collect::<String>())
                } else {
                    snippet.to_html()
                }
            };
            hits.push(SearchHit {
                kind: text_of(f.kind),
                id: doc
                    .get_first(f.id)
                    .and_then(|v| v.as_i64())
                    .unwrap_or_default(),
                slug: text_of(f.slug),
                title,
                title_html,
                snippet_html,
                tags: doc
                    .get_all(f.tags)
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
                score,
            });
        }
        Ok(SearchResults {
            hits,
            total: total as u64,
        })
    }
}

#[async_trait]
impl SearchPort for SearchIndex {
    async fn search(&self, query: &SearchQuery) -> Result<SearchResults, PortError> {
        let this = self.clone();
        let query = query.clone();
        tokio::task::spawn_blocking(move || this.query(&query))
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?
            .map_err(|e| match e {
                SearchError::Invalid(reason) => PortError::Rejected(reason),
                other => PortError::Unavailable(other.to_string()),
            })
    }
}

#[async_trait]
impl Consume for SearchIndex {
    fn name(&self) -> &'static str {
        consumers::SEARCH
    }

    async fn consume(&self, event: &EventEnvelope) -> Result<Handled, HandlerError> {
        if event.event_type != types::SEARCH_DOCUMENT_CHANGED {
            return Ok(Handled::Duplicate);
        }
        let document: SearchDocument = serde_json::from_value(event.payload.clone())
            .map_err(|e| HandlerError::Poison(format!("not a search document: {e}")))?;
        let this = self.clone();
        let applied = tokio::task::spawn_blocking(move || this.apply(&document))
            .await
            .map_err(|e| HandlerError::Transient(e.to_string()))?
            .map_err(|e| HandlerError::Transient(e.to_string()))?;
        Ok(if applied {
            Handled::Applied
        } else {
            Handled::Duplicate
        })
    }
}
