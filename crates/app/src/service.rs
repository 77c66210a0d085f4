//! Problems and their test-data packages on the owner's database.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use axum::body::Bytes;
use contracts::events::{types, SearchContent, SearchDocument};
use contracts::{
    FactsError, PackagePreparer, Permission, PortError, Principal, ProblemFacts, ProblemId,
    ProblemPackagePort, SubmissionFactsSnapshot, UserDirectory, FACTS_SCHEMA_VERSION,
};
use judge::package::archive::{self, ArchiveLimits};
use judge::PackageError;
use platform::cache::ReadCache;
use platform::db::{Any, AnyRow, Row, Transaction};
use platform::events::{NewEvent, Outbox};
use platform::{Db, DbError};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    #[default]
    Public,
    /// Seen only by setters and admins; to everyone else it does not exist.
    Hidden,
}

impl Visibility {
    fn as_str(self) -> &'static str {
        match self {
            Visibility::Public => "public",
            Visibility::Hidden => "hidden",
        }
    }
}

/// A sample test, shown with the statement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Sample {
    pub name: String,
    /// The input as the statement shows it (`.in.statement`, else `.in`).
    pub input: String,
    /// The output as the statement shows it (`.out`, `.ans.statement`, else `.ans`).
    pub output: String,
    /// For interactive and multi-pass problems: the interaction log (`.interaction`; lines
    /// `<` from the judge, `>` from the submission, `---` between passes), shown instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interaction: Option<String>,
}

/// A problem as readers see it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ProblemView {
    pub id: i64,
    pub slug: String,
    pub title: String,
    /// Markdown.
    pub statement: String,
    pub time_limit_ms: i64,
    pub memory_mib: i64,
    pub tags: Vec<String>,
    pub difficulty: Option<i64>,
    pub visibility: Visibility,
    pub has_test_data: bool,
    pub samples: Vec<Sample>,
    /// Present for a function-signature problem: what the user writes and how it is judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionInfo>,
    pub created_by: i64,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// A function-signature problem as its readers see it (from its package's `function/`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FunctionInfo {
    /// The signature in LeetCode's metadata schema: `{name, params, return, output_param?}`
    /// or `{classname, constructor, methods}`.
    #[schema(value_type = Object)]
    pub signature: serde_json::Value,
    /// How returned values are compared: `exact`, `any_order`, `any_order_deep`, `set`,
    /// `float` or `checker`.
    pub compare: String,
    /// Starter code by language id (`cpp17`, `cpp20`, `java`, `python3`, `pypy3`,
    /// `javascript`, `go`, `rust`): the only languages the problem takes.
    pub starters: std::collections::BTreeMap<String, String>,
}

impl FunctionInfo {
    fn of(spec: &judge::function::FunctionSpec) -> Self {
        let mut starters = std::collections::BTreeMap::new();
        for language in judge::function::HarnessLanguage::ALL {
            let starter = spec.starter(language);
            for id in language.language_ids() {
                starters.insert(id.to_string(), starter.clone());
            }
        }
        Self {
            signature: spec.signature.to_json(),
            compare: serde_json::to_value(spec.compare.mode)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            starters,
        }
    }
}

/// A new problem. Limits default to the package's when test data is uploaded.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewProblem {
    /// Lowercase letters, digits and `-`, not starting with `-`; at most 64.
    #[schema(pattern = "^[a-z0-9][a-z0-9-]{0,63}$")]
    pub slug: String,
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    #[serde(default)]
    #[schema(max_length = 100000)]
    pub statement: String,
    /// At most 10, each like a slug (at most 32).
    #[serde(default)]
    #[schema(max_items = 10, inline, value_type = Vec<Tag>)]
    pub tags: Vec<String>,
    #[serde(default)]
    #[schema(minimum = 0, maximum = 5000)]
    pub difficulty: Option<i64>,
    #[serde(default)]
    pub visibility: Visibility,
    #[serde(default)]
    #[schema(minimum = 100, maximum = 20000)]
    pub time_limit_ms: Option<i64>,
    #[serde(default)]
    #[schema(minimum = 16, maximum = 2048)]
    pub memory_mib: Option<i64>,
}

/// A problem tag: lowercase letters, digits and `-`, not starting with `-`; at most 32.
#[derive(ToSchema)]
#[schema(pattern = "^[a-z0-9][a-z0-9-]{0,31}$")]
#[allow(dead_code)]
struct Tag(String);

/// A partial update; absent fields are unchanged.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProblemPatch {
    #[schema(min_length = 1, max_length = 200)]
    pub title: Option<String>,
    #[schema(max_length = 100000)]
    pub statement: Option<String>,
    #[schema(max_items = 10, value_type = Option<Vec<Tag>>)]
    pub tags: Option<Vec<String>>,
    #[schema(minimum = 0, maximum = 5000)]
    pub difficulty: Option<i64>,
    pub visibility: Option<Visibility>,
    #[schema(minimum = 100, maximum = 20000)]
    pub time_limit_ms: Option<i64>,
    #[schema(minimum = 16, maximum = 2048)]
    pub memory_mib: Option<i64>,
}

/// Listing filters.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProblemFilter {
    /// Only problems with this tag.
    pub tag: Option<String>,
    pub difficulty_min: Option<i64>,
    pub difficulty_max: Option<i64>,
    /// Case-insensitive substring of the title or slug.
    pub q: Option<String>,
    /// Keyset cursor: the `next_after` of the previous page.
    pub after: Option<i64>,
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProblemPage {
    pub items: Vec<ProblemView>,
    /// Pass as `after` for the next page; absent on the last page.
    pub next_after: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("the slug {0:?} is taken")]
    SlugTaken(String),
    #[error("problem {0:?} not found")]
    NotFound(String),
    #[error("only the problem's author or an admin may change it")]
    NotAuthor,
    /// The request conflicts with the current state (already registered, a name taken,
    /// a contest that cannot be finalized yet).
    #[error("{message}")]
    Conflict { kind: &'static str, message: String },
    #[error("{0}")]
    Forbidden(String),
    #[error("the package is invalid: {0}")]
    BadPackage(PackageError),
    #[error("{0}")]
    Internal(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        AppError::Db(e.into())
    }
}

fn to_json(value: &impl Serialize) -> Result<Vec<u8>, AppError> {
    serde_json::to_vec(value).map_err(|e| AppError::Internal(e.to_string()))
}

fn invalid(field: &'static str, reason: impl Into<String>) -> AppError {
    AppError::Invalid {
        field,
        reason: reason.into(),
    }
}

pub(crate) fn check_slug_like(
    field: &'static str,
    value: &str,
    max: usize,
) -> Result<(), AppError> {
    let ok = (1..=max).contains(&value.len())
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !value.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("1 to {max} characters: a-z, 0-9 and '-', not starting with '-'"),
        ))
    }
}

fn check_range(
    field: &'static str,
    value: Option<i64>,
    low: i64,
    high: i64,
) -> Result<(), AppError> {
    match value {
        Some(v) if !(low..=high).contains(&v) => {
            Err(invalid(field, format!("must be between {low} and {high}")))
        }
        _ => Ok(()),
    }
}

fn check_text(field: &'static str, value: &str, min: usize, max: usize) -> Result<(), AppError> {
    let chars = value.chars().count();
    if (min..=max).contains(&chars) {
        Ok(())
    } else {
        Err(invalid(field, format!("{min} to {max} characters")))
    }
}

fn check_tags(tags: &[String]) -> Result<(), AppError> {
    if tags.len() > 10 {
        return Err(invalid("tags", "at most 10 tags"));
    }
    tags.iter().try_for_each(|t| check_slug_like("tags", t, 32))
}

fn check_limits(time_limit_ms: Option<i64>, memory_mib: Option<i64>) -> Result<(), AppError> {
    check_range("time_limit_ms", time_limit_ms, 100, 20_000)?;
    check_range("memory_mib", memory_mib, 16, 2048)
}

impl NewProblem {
    fn validate(&self) -> Result<(), AppError> {
        check_slug_like("slug", &self.slug, 64)?;
        check_text("title", &self.title, 1, 200)?;
        check_text("statement", &self.statement, 0, 100_000)?;
        check_tags(&self.tags)?;
        check_range("difficulty", self.difficulty, 0, 5000)?;
        check_limits(self.time_limit_ms, self.memory_mib)
    }
}

impl ProblemPatch {
    fn validate(&self) -> Result<(), AppError> {
        if let Some(title) = &self.title {
            check_text("title", title, 1, 200)?;
        }
        if let Some(statement) = &self.statement {
            check_text("statement", statement, 0, 100_000)?;
        }
        if let Some(tags) = &self.tags {
            check_tags(tags)?;
        }
        check_range("difficulty", self.difficulty, 0, 5000)?;
        check_limits(self.time_limit_ms, self.memory_mib)
    }
}

pub(crate) const COLUMNS: &str =
    "id, slug, title, statement, time_limit_ms, memory_mib, tags, difficulty,
    visibility, package_hash, samples, function_spec, created_by, created_at, updated_at";

/// The search document of `problem` at `version`: its text while it is public, a tombstone
/// otherwise (a hidden problem must not be findable).
pub fn search_document(problem: &ProblemView, version: i64) -> SearchDocument {
    SearchDocument {
        kind: "problem".into(),
        id: problem.id,
        version,
        content: (problem.visibility == Visibility::Public).then(|| SearchContent {
            slug: problem.slug.clone(),
            title: problem.title.clone(),
            body: problem.statement.clone(),
            tags: problem.tags.clone(),
        }),
    }
}

pub(crate) fn view_of(row: &AnyRow) -> Result<ProblemView, AppError> {
    let tags: String = row.try_get("tags")?;
    let samples: String = row.try_get("samples")?;
    let visibility: String = row.try_get("visibility")?;
    let package: Option<String> = row.try_get("package_hash")?;
    let function: Option<String> = row.try_get("function_spec")?;
    Ok(ProblemView {
        id: row.try_get("id")?,
        slug: row.try_get("slug")?,
        title: row.try_get("title")?,
        statement: row.try_get("statement")?,
        time_limit_ms: row.try_get("time_limit_ms")?,
        memory_mib: row.try_get("memory_mib")?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        difficulty: row.try_get("difficulty")?,
        visibility: if visibility == "hidden" {
            Visibility::Hidden
        } else {
            Visibility::Public
        },
        has_test_data: package.is_some(),
        samples: serde_json::from_str(&samples).unwrap_or_default(),
        function: function.and_then(|text| serde_json::from_str(&text).ok()),
        created_by: row.try_get("created_by")?,
        created_at_ms: row.try_get("created_at")?,
        updated_at_ms: row.try_get("updated_at")?,
    })
}

/// Whether `viewer` may see problems of this visibility.
fn visible(viewer: Option<&Principal>, visibility: Visibility) -> bool {
    visibility == Visibility::Public
        || viewer.is_some_and(|p| p.can(Permission::ViewHiddenProblems))
}

/// Sample tests of a loaded package, capped so a statement page stays small.
fn samples_of(problem: &judge::Problem) -> Vec<Sample> {
    const CAP: usize = 64 * 1024;
    let read = |path: &std::path::Path| {
        let mut text = std::fs::read_to_string(path).unwrap_or_default();
        if text.len() > CAP {
            let mut end = CAP;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
        }
        text
    };
    problem
        .test_cases()
        .into_iter()
        .filter(|case| case.sample)
        .take(10)
        .map(|case| Sample {
            name: case.name.clone(),
            input: read(&case.shown_input()),
            output: read(&case.shown_output().0),
            interaction: case.sibling("interaction").map(|path| read(&path)),
        })
        .collect()
}

/// The App owner. Cheap to clone.
#[derive(Clone)]
pub struct AppService {
    db: Db,
    /// The owner's integration events (audit records, search documents).
    events: Outbox,
    users: Arc<dyn UserDirectory>,
    /// Where packages are unpacked for in-process judging (`<dir>/<hash>`).
    package_cache: PathBuf,
    /// Package validations at once: each may unpack up to the archive limit into temporary
    /// space, so parallel uploads may not multiply it without bound.
    validations: Arc<tokio::sync::Semaphore>,
    /// Imports Polygon packages and derives missing time limits, where this process has a
    /// sandbox; without it such uploads are refused or keep the fallback limit.
    preparer: Option<Arc<dyn PackagePreparer>>,
    contests: crate::contest::ContestService,
    /// Public problem reads (a page, a list), serialized, kept until this process changes a
    /// problem; another replica's change is seen within [`PROBLEM_READS_FOR`].
    recent: Arc<ReadCache<String, (Visibility, Bytes)>>,
}

/// How long a serialized problem page or list is answered without reading the database.
pub const PROBLEM_READS_FOR: Duration = Duration::from_secs(1);
/// Problem reads kept (one per problem page and per distinct list query).
const RECENT_PROBLEM_READS: usize = 512;

/// Package uploads validated at once per process.
const CONCURRENT_VALIDATIONS: usize = 2;

impl AppService {
    pub async fn open(
        db: Db,
        users: Arc<dyn UserDirectory>,
        package_cache: PathBuf,
    ) -> Result<Self, AppError> {
        db.migrate(crate::schema::MIGRATIONS).await?;
        let events = Outbox::new(db.clone(), "app");
        Ok(Self {
            contests: crate::contest::ContestService::new(
                db.clone(),
                events.clone(),
                users.clone(),
            ),
            events,
            db,
            users,
            package_cache,
            validations: Arc::new(tokio::sync::Semaphore::new(CONCURRENT_VALIDATIONS)),
            preparer: None,
            recent: Arc::new(ReadCache::new(RECENT_PROBLEM_READS)),
        })
    }

    /// Uploads go through `preparer` before they are validated.
    pub fn with_preparer(mut self, preparer: Arc<dyn PackagePreparer>) -> Self {
        self.preparer = Some(preparer);
        self
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Contests, their boards and their consumer.
    pub fn contests(&self) -> &crate::contest::ContestService {
        &self.contests
    }

    /// The owner's events outbox (for its relay).
    pub fn events(&self) -> &Outbox {
        &self.events
    }

    /// Records `event_type` about `problem` at `version`, and the problem's search document,
    /// in the change's transaction.
    async fn record_change(
        &self,
        tx: &mut Transaction<'static, Any>,
        actor: &Principal,
        event_type: &'static str,
        problem: &ProblemView,
        version: i64,
        payload: serde_json::Value,
    ) -> Result<(), AppError> {
        self.events
            .record(
                tx,
                NewEvent::new(event_type, "problem", problem.id, payload)
                    .version(version)
                    .by(Some(actor.user_id)),
            )
            .await?;
        let document = search_document(problem, version);
        self.events
            .record(
                tx,
                NewEvent::new(
                    types::SEARCH_DOCUMENT_CHANGED,
                    "problem",
                    problem.id,
                    serde_json::to_value(&document).unwrap_or_default(),
                )
                .version(version),
            )
            .await?;
        Ok(())
    }

    pub async fn create(
        &self,
        author: &Principal,
        new: NewProblem,
    ) -> Result<ProblemView, AppError> {
        new.validate()?;
        let mut tx = self.db.begin().await?;
        let inserted = self
            .db
            .query(&format!(
                "INSERT INTO problems (slug, title, statement, time_limit_ms, memory_mib, tags,
                    difficulty, visibility, package_hash, samples, created_by, created_at, updated_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, '[]', $9, {{now}}, {{now}})
                 RETURNING {COLUMNS}"
            ))
            .bind(new.slug.clone())
            .bind(new.title)
            .bind(new.statement)
            .bind(new.time_limit_ms.unwrap_or(1000))
            .bind(new.memory_mib.unwrap_or(256))
            .bind(serde_json::to_string(&new.tags).unwrap_or_else(|_| "[]".into()))
            .bind(new.difficulty)
            .bind(new.visibility.as_str())
            .bind(author.user_id.0)
            .fetch_one(&mut *tx)
            .await
            .map_err(DbError::from);
        let problem = match inserted {
            Ok(row) => view_of(&row)?,
            Err(e) if e.is_unique_violation() => return Err(AppError::SlugTaken(new.slug)),
            Err(e) => return Err(e.into()),
        };
        let payload = serde_json::json!({
            "slug": problem.slug,
            "title": problem.title,
            "visibility": problem.visibility.as_str(),
        });
        self.record_change(
            &mut tx,
            author,
            types::PROBLEM_CREATED,
            &problem,
            1,
            payload,
        )
        .await?;
        tx.commit().await?;
        self.recent.forget_all();
        Ok(problem)
    }

    async fn find(&self, slug: &str) -> Result<Option<ProblemView>, AppError> {
        self.db
            .query(&format!("SELECT {COLUMNS} FROM problems WHERE slug = $1"))
            .bind(slug.to_string())
            .fetch_optional(self.db.readers())
            .await?
            .map(|row| view_of(&row))
            .transpose()
    }

    /// A problem the viewer may see (hidden ones do not exist for other viewers).
    pub async fn get(
        &self,
        viewer: Option<&Principal>,
        slug: &str,
    ) -> Result<ProblemView, AppError> {
        self.find(slug)
            .await?
            .filter(|p| visible(viewer, p.visibility))
            .ok_or_else(|| AppError::NotFound(slug.into()))
    }

    /// [`Self::get`] serialized as JSON, answered from memory while no problem changed (and
    /// for at most [`PROBLEM_READS_FOR`]).
    pub async fn get_json(
        &self,
        viewer: Option<&Principal>,
        slug: &str,
    ) -> Result<Bytes, AppError> {
        let key = format!("page {slug}");
        let (visibility, json) = match self.recent.get(&key, PROBLEM_READS_FOR) {
            Some(kept) => kept,
            None => {
                let ticket = self.recent.ticket(&key);
                let problem = self
                    .find(slug)
                    .await?
                    .ok_or_else(|| AppError::NotFound(slug.into()))?;
                let kept = (problem.visibility, Bytes::from(to_json(&problem)?));
                self.recent.store(ticket, key, kept.clone());
                kept
            }
        };
        if !visible(viewer, visibility) {
            return Err(AppError::NotFound(slug.into()));
        }
        Ok(json)
    }

    /// [`Self::list`] serialized as JSON, answered from memory like [`Self::get_json`].
    pub async fn list_json(
        &self,
        viewer: Option<&Principal>,
        filter: &ProblemFilter,
    ) -> Result<Bytes, AppError> {
        let key = format!("list {} {filter:?}", visible(viewer, Visibility::Hidden));
        if let Some((_, json)) = self.recent.get(&key, PROBLEM_READS_FOR) {
            return Ok(json);
        }
        let ticket = self.recent.ticket(&key);
        let json = Bytes::from(to_json(&self.list(viewer, filter).await?)?);
        self.recent
            .store(ticket, key, (Visibility::Public, json.clone()));
        Ok(json)
    }

    /// The problem, if `editor` may change it.
    /// Fails unless `editor` may change the problem (checked before an upload's body is read).
    pub async fn check_editable(&self, editor: &Principal, slug: &str) -> Result<(), AppError> {
        self.editable(editor, slug).await.map(drop)
    }

    async fn editable(&self, editor: &Principal, slug: &str) -> Result<ProblemView, AppError> {
        let problem = self.get(Some(editor), slug).await?;
        if !editor.can(Permission::ManageProblems) {
            return Err(AppError::NotAuthor);
        }
        if problem.created_by != editor.user_id.0 && editor.role != contracts::Role::Admin {
            return Err(AppError::NotAuthor);
        }
        Ok(problem)
    }

    pub async fn update(
        &self,
        editor: &Principal,
        slug: &str,
        patch: ProblemPatch,
    ) -> Result<ProblemView, AppError> {
        patch.validate()?;
        let current = self.editable(editor, slug).await?;
        let changed: Vec<&str> = [
            ("title", patch.title.is_some()),
            ("statement", patch.statement.is_some()),
            ("tags", patch.tags.is_some()),
            ("difficulty", patch.difficulty.is_some()),
            ("visibility", patch.visibility.is_some()),
            ("time_limit_ms", patch.time_limit_ms.is_some()),
            ("memory_mib", patch.memory_mib.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect();
        let visibility = patch.visibility.unwrap_or(current.visibility);
        let mut tx = self.db.begin().await?;
        let version: i64 = self
            .db
            .query(
                "UPDATE problems SET title = $2, statement = $3, tags = $4, difficulty = $5,
                    visibility = $6, time_limit_ms = $7, memory_mib = $8, updated_at = {now},
                    version = version + 1
                 WHERE slug = $1 RETURNING version",
            )
            .bind(slug.to_string())
            .bind(patch.title.unwrap_or(current.title))
            .bind(patch.statement.unwrap_or(current.statement))
            .bind(
                serde_json::to_string(&patch.tags.unwrap_or(current.tags))
                    .unwrap_or_else(|_| "[]".into()),
            )
            .bind(patch.difficulty.or(current.difficulty))
            .bind(visibility.as_str())
            .bind(patch.time_limit_ms.unwrap_or(current.time_limit_ms))
            .bind(patch.memory_mib.unwrap_or(current.memory_mib))
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
        let problem = self.find_in(&mut tx, slug).await?;
        self.record_change(
            &mut tx,
            editor,
            types::PROBLEM_UPDATED,
            &problem,
            version,
            serde_json::json!({ "slug": slug, "changed": changed }),
        )
        .await?;
        if visibility != current.visibility {
            self.events
                .record(
                    &mut tx,
                    NewEvent::new(
                        types::PROBLEM_VISIBILITY_CHANGED,
                        "problem",
                        problem.id,
                        serde_json::json!({
                            "slug": slug,
                            "from": current.visibility.as_str(),
                            "to": visibility.as_str(),
                        }),
                    )
                    .version(version)
                    .by(Some(editor.user_id)),
                )
                .await?;
        }
        tx.commit().await?;
        self.recent.forget_all();
        self.get(Some(editor), slug).await
    }

    async fn find_in(
        &self,
        tx: &mut Transaction<'static, Any>,
        slug: &str,
    ) -> Result<ProblemView, AppError> {
        let row = self
            .db
            .query(&format!("SELECT {COLUMNS} FROM problems WHERE slug = $1"))
            .bind(slug.to_string())
            .fetch_one(&mut **tx)
            .await?;
        view_of(&row)
    }

    /// Validates an uploaded package archive and makes it the problem's test data. A bad
    /// package changes nothing. The problem's limits become the package's.
    pub async fn upload_package(
        &self,
        editor: &Principal,
        slug: &str,
        archive: Vec<u8>,
    ) -> Result<ProblemView, AppError> {
        self.editable(editor, slug).await?;
        // Held by the blocking task itself: a client that goes away does not free the slot
        // while the archive is still being unpacked.
        let validating = self
            .validations
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| AppError::Internal(e.to_string()))?;
        let archive = match &self.preparer {
            Some(preparer) => preparer.prepare(archive).await.map_err(|e| match e {
                PortError::Rejected(reason) => {
                    AppError::BadPackage(PackageError::new("<archive>", reason))
                }
                PortError::Unavailable(reason) => AppError::Internal(reason),
            })?,
            None => archive,
        };
        let (archive, hash, limits, samples, function) = tokio::task::spawn_blocking(move || {
            let _validating = validating;
            let work = tempfile::tempdir().map_err(|e| AppError::Internal(e.to_string()))?;
            let validated = archive::validate(&archive, work.path(), ArchiveLimits::default())
                .map_err(AppError::BadPackage)?;
            let samples = samples_of(&validated.problem);
            let function = validated.problem.function.as_ref().map(FunctionInfo::of);
            Ok::<_, AppError>((
                archive,
                validated.hash,
                validated.problem.limits,
                samples,
                function,
            ))
        })
        .await
        .map_err(|e| AppError::Internal(e.to_string()))??;
        // Validation takes a while: a setter demoted meanwhile commits nothing.
        let role = self
            .users
            .current_role(editor.user_id)
            .await
            .map_err(|e| AppError::Internal(e.to_string()))?;
        if !role.is_some_and(|r| r.can(Permission::ManageProblems)) {
            return Err(AppError::NotAuthor);
        }
        let mut tx = self.db.begin().await?;
        let stored: i64 = self
            .db
            .query("SELECT COUNT(*) FROM packages WHERE hash = $1")
            .bind(hash.clone())
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
        if stored == 0 {
            self.db
                .query(
                    "INSERT INTO packages (hash, archive, size_bytes, created_at) VALUES ($1, $2, $3, {now})",
                )
                .bind(hash.clone())
                .bind(archive.clone())
                .bind(archive.len() as i64)
                .execute(&mut *tx)
                .await?;
        }
        let row = self
            .db
            .query(
                "UPDATE problems SET package_hash = $2, samples = $3, time_limit_ms = $4,
                    memory_mib = $5, function_spec = $6, updated_at = {now}, version = version + 1
                 WHERE slug = $1 RETURNING id, version",
            )
            .bind(slug.to_string())
            .bind(hash.clone())
            .bind(serde_json::to_string(&samples).unwrap_or_else(|_| "[]".into()))
            .bind(limits.time_limit_ms.min(20_000) as i64)
            .bind(limits.memory_mib.min(2048) as i64)
            .bind(function.map(|f| serde_json::to_string(&f).unwrap_or_default()))
            .fetch_one(&mut *tx)
            .await?;
        let (id, version): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        self.events
            .record(
                &mut tx,
                NewEvent::new(
                    types::PACKAGE_UPLOADED,
                    "problem",
                    id,
                    serde_json::json!({
                        "slug": slug,
                        "package_hash": hash,
                        "size_bytes": archive.len(),
                        "new_package": stored == 0,
                    }),
                )
                .version(version)
                .by(Some(editor.user_id)),
            )
            .await?;
        tx.commit().await?;
        self.recent.forget_all();
        self.get(Some(editor), slug).await
    }

    pub async fn list(
        &self,
        viewer: Option<&Principal>,
        filter: &ProblemFilter,
    ) -> Result<ProblemPage, AppError> {
        let limit = match filter.limit {
            None => 20,
            Some(limit @ 1..=100) => i64::from(limit),
            Some(_) => {
                return Err(AppError::Invalid {
                    field: "limit",
                    reason: "1 to 100".into(),
                })
            }
        };
        let show_hidden = visible(viewer, Visibility::Hidden);
        let like = |text: &str| format!("%{}%", text.replace(['%', '_', '\\'], ""));
        let filter_difficulty = filter.difficulty_min.is_some() || filter.difficulty_max.is_some();
        let rows = self
            .db
            .query(&format!(
                "SELECT {COLUMNS} FROM problems
                 WHERE id > $1
                   AND ($2 = 1 OR visibility = 'public')
                   AND ($3 = '' OR tags LIKE $3)
                   AND ($4 = 0 OR (difficulty IS NOT NULL AND difficulty >= $5 AND difficulty <= $6))
                   AND ($7 = '' OR LOWER(title) LIKE $7 OR slug LIKE $7)
                 ORDER BY id LIMIT $8"
            ))
            .bind(filter.after.unwrap_or(0))
            .bind(i64::from(show_hidden))
            .bind(
                filter
                    .tag
                    .as_ref()
                    .map(|t| like(&format!("\"{t}\"")))
                    .unwrap_or_default(),
            )
            .bind(i64::from(filter_difficulty))
            .bind(filter.difficulty_min.unwrap_or(i64::MIN))
            .bind(filter.difficulty_max.unwrap_or(i64::MAX))
            .bind(
                filter
                    .q
                    .as_deref()
                    .map(|q| like(&q.to_lowercase()))
                    .unwrap_or_default(),
            )
            .bind(limit + 1)
            .fetch_all(self.db.readers())
            .await?;
        let mut items = rows.iter().map(view_of).collect::<Result<Vec<_>, _>>()?;
        let next_after = (items.len() as i64 > limit).then(|| items[limit as usize - 1].id);
        items.truncate(limit as usize);
        Ok(ProblemPage { items, next_after })
    }

    /// The stored archive of a package.
    pub async fn package_archive(&self, hash: &str) -> Result<Option<Vec<u8>>, AppError> {
        Ok(self
            .db
            .query("SELECT archive FROM packages WHERE hash = $1")
            .bind(hash.to_string())
            .fetch_optional(self.db.pool())
            .await?
            .map(|row| row.try_get(0))
            .transpose()?)
    }
}

pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[async_trait]
impl ProblemFacts for AppService {
    async fn capture(
        &self,
        user: &Principal,
        problem_slug: &str,
        contest: Option<&str>,
    ) -> Result<SubmissionFactsSnapshot, FactsError> {
        if let Some(contest) = contest {
            return self.contests.capture(user, contest, problem_slug).await;
        }
        let unavailable = |e: AppError| FactsError::Port(PortError::Unavailable(e.to_string()));
        let problem = match self.get(Some(user), problem_slug).await {
            Ok(problem) => problem,
            Err(AppError::NotFound(slug)) => return Err(FactsError::ProblemNotFound(slug)),
            Err(e) => return Err(unavailable(e)),
        };
        let package_hash: Option<String> = self
            .db
            .query("SELECT package_hash FROM problems WHERE id = $1")
            .bind(problem.id)
            .fetch_one(self.db.pool())
            .await
            .and_then(|row| row.try_get(0))
            .map_err(|e| unavailable(AppError::from(e)))?;
        let package_hash =
            package_hash.ok_or_else(|| FactsError::NoTestData(problem_slug.into()))?;
        Ok(SubmissionFactsSnapshot {
            schema_version: FACTS_SCHEMA_VERSION,
            user_id: user.user_id,
            user_exists: self.users.user_exists(user.user_id).await?,
            problem_id: ProblemId(problem.id),
            problem_title: problem.title,
            problem_slug: problem.slug,
            time_limit_ms: problem.time_limit_ms as u64,
            memory_mib: problem.memory_mib as u64,
            starter_code: None,
            package_hash,
            contest_id: None,
            contest: None,
            captured_at_ms: now_ms(),
        })
    }

    async fn visible(&self, viewer: &Principal, problem: ProblemId) -> Result<bool, PortError> {
        let visibility: Option<String> = self
            .db
            .query("SELECT visibility FROM problems WHERE id = $1")
            .bind(problem.0)
            .fetch_optional(self.db.pool())
            .await
            .and_then(|row| row.map(|r| r.try_get(0)).transpose())
            .map_err(|e| PortError::Unavailable(e.to_string()))?;
        Ok(match visibility.as_deref() {
            None => false,
            Some("hidden") => visible(Some(viewer), Visibility::Hidden),
            Some(_) => true,
        })
    }
}

#[async_trait]
impl ProblemPackagePort for AppService {
    async fn package(&self, hash: &str) -> Result<PathBuf, PortError> {
        let cached = self.package_cache.join(hash);
        if hash.chars().all(|c| c.is_ascii_hexdigit()) && cached.join("problem.yaml").is_file() {
            return Ok(cached);
        }
        let archive = self
            .package_archive(hash)
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?
            .ok_or_else(|| PortError::Rejected(format!("no package {hash}")))?;
        let (cache, hash) = (self.package_cache.clone(), hash.to_string());
        tokio::task::spawn_blocking(move || archive::install(&archive, &cache, &hash))
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?
            .map_err(|e| PortError::Rejected(e.to_string()))
    }
}

/// The search index is rebuilt from here: every problem at its current version, hidden
/// ones as tombstones.
#[async_trait]
impl contracts::search::SearchSource for AppService {
    async fn documents(&self, after: i64, limit: u32) -> Result<Vec<SearchDocument>, PortError> {
        let unavailable = |e: sqlx::Error| PortError::Unavailable(e.to_string());
        let rows = self
            .db
            .query(&format!(
                "SELECT {COLUMNS}, version FROM problems WHERE id > $1 ORDER BY id LIMIT $2"
            ))
            .bind(after)
            .bind(i64::from(limit.clamp(1, 1000)))
            .fetch_all(self.db.pool())
            .await
            .map_err(unavailable)?;
        rows.iter()
            .map(|row| {
                let view = view_of(row).map_err(|e| PortError::Unavailable(e.to_string()))?;
                let version: i64 = row.try_get("version").map_err(unavailable)?;
                Ok(search_document(&view, version))
            })
            .collect()
    }
}
