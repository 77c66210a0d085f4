//! The public submission API: submit (App captures the facts, intake stores them), read one,
//! list, and watch live status over Server-Sent Events.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use contracts::{
    FinishedTest, Generation, JudgeProgress, Permission, Principal, ProblemFacts, ProblemId,
    SubmissionId, UserId, Verdict,
};
use futures::Stream;
use platform::http::{
    idempotency_key, presented_access_token, ApiError, ApiJson, ApiPath, ApiQuery, Authenticated,
    ProblemDetails, Verifier,
};
use platform::rate::RateLimit;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::store::{
    state, Listing, StoredTest, SubmissionRecord, SubmissionStore, SubmissionSummary, SubmitError,
    SubmitRequest,
};

/// Limits of the submission API.
#[derive(Clone)]
pub struct SubmissionApiConfig {
    /// Ids of the languages the judge workers can run.
    pub languages: Arc<Vec<String>>,
    pub max_source_bytes: usize,
    /// Submissions per user.
    pub submit_limit: RateLimit,
    /// Live-status streams one user may hold open at once.
    pub max_streams_per_user: usize,
    /// Submissions waiting for or under judging (everyone's) past which a new submission
    /// is refused with 503 and `Retry-After`, instead of the backlog growing without bound.
    pub max_unjudged: i64,
    /// Ends every live-status stream when triggered (server shutdown).
    pub closing: platform::Shutdown,
}

impl SubmissionApiConfig {
    pub fn new(languages: Vec<String>) -> Self {
        Self {
            languages: Arc::new(languages),
            max_source_bytes: 64 * 1024,
            submit_limit: RateLimit::new("submit", 20, 1.0),
            max_streams_per_user: 16,
            max_unjudged: 10_000,
            closing: platform::Shutdown::new(),
        }
    }

    /// The same configuration with its limits' buckets in `store` (`None`: this process's).
    pub fn with_rates(mut self, store: Option<Arc<dyn platform::rate::RateStore>>) -> Self {
        self.submit_limit = self.submit_limit.in_store(store);
        self
    }
}

#[derive(Clone)]
struct ApiState {
    store: SubmissionStore,
    facts: Arc<dyn ProblemFacts>,
    config: SubmissionApiConfig,
    streams: Arc<Mutex<HashMap<UserId, usize>>>,
}

/// What a submitter refused for the backlog is told to wait.
const BACKLOG_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

impl ApiState {
    /// Refuses a new submission while the backlog is past its bound (counted on the
    /// state index: as cheap as the backlog is short).
    async fn check_backlog(&self) -> Result<(), ApiError> {
        let unjudged = self.store.unjudged().await?;
        if unjudged >= self.config.max_unjudged {
            return Err(ApiError {
                retry_after: Some(BACKLOG_RETRY_AFTER),
                ..ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "judge-backlog-full",
                    format!(
                        "{unjudged} submissions are waiting to be judged; retry in {} s",
                        BACKLOG_RETRY_AFTER.as_secs()
                    ),
                )
            });
        }
        Ok(())
    }
}

/// One open live-status stream, counted against its user until dropped.
struct StreamSlot {
    streams: Arc<Mutex<HashMap<UserId, usize>>>,
    user: UserId,
}

impl StreamSlot {
    fn take(state: &ApiState, user: UserId) -> Result<Self, ApiError> {
        let mut streams = state.streams.lock().unwrap_or_else(|e| e.into_inner());
        let open = streams.entry(user).or_insert(0);
        if *open >= state.config.max_streams_per_user {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too-many-streams",
                format!(
                    "at most {} live-status streams per user at once",
                    state.config.max_streams_per_user
                ),
            ));
        }
        *open += 1;
        Ok(Self {
            streams: state.streams.clone(),
            user,
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut streams = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(open) = streams.get_mut(&self.user) {
            *open -= 1;
            if *open == 0 {
                streams.remove(&self.user);
            }
        }
    }
}

/// How often a live-status stream re-checks the credential it was opened with.
const REVERIFY_EVERY: Duration = Duration::from_secs(2);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSubmission {
    /// The problem's slug (within a contest: its label or its slug).
    pub problem: String,
    /// A language id from `GET /api/v1/languages`.
    pub language: String,
    /// Not only spaces; at most 64 KiB.
    #[schema(pattern = r"\S", max_length = 65536)]
    pub source: String,
    /// A contest's slug: the submission counts there (or as upsolving after the end).
    #[serde(default)]
    pub contest: Option<String>,
}

/// One test's result. Messages and outputs appear for sample tests only, except to staff
/// (checker messages of secret tests may quote hidden data); only the author and staff see
/// messages at all.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TestView {
    pub name: String,
    pub group: String,
    pub verdict: Verdict,
    pub time_ms: i64,
    pub memory_kib: i64,
    pub message: String,
    pub score: Option<f64>,
    pub output: Option<String>,
    /// Function problems: staff see every case's detail; the author sees a sample case's
    /// whole detail and, of other cases, only the exception's type and frames (a message
    /// or a print could carry hidden data); others see none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<contracts::CaseDetail>,
}

/// Who is looking at a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Audience {
    /// Setters and admins: every detail.
    Staff,
    /// The submission's author: details of sample tests.
    Author,
    /// Anyone else who may see the problem: verdicts, times and memory only.
    Other,
}

impl Audience {
    fn of(caller: &Principal, record: &SubmissionRecord) -> Self {
        if caller.can(Permission::ViewTestDetails) {
            Audience::Staff
        } else if caller.user_id == record.user_id {
            Audience::Author
        } else {
            Audience::Other
        }
    }
}

fn is_sample(group: &str) -> bool {
    group == "sample" || group.starts_with("sample/")
}

impl TestView {
    fn of(t: &StoredTest, audience: Audience) -> Self {
        let detailed = match audience {
            Audience::Staff => true,
            Audience::Author => is_sample(&t.group),
            Audience::Other => false,
        };
        Self {
            name: t.name.clone(),
            group: t.group.clone(),
            verdict: t.verdict,
            time_ms: t.time_ms,
            memory_kib: t.memory_kib,
            message: if detailed {
                t.message.clone()
            } else {
                String::new()
            },
            score: t.score,
            output: t.output.clone().filter(|_| detailed),
            detail: match audience {
                _ if detailed => t.detail.clone(),
                Audience::Author => t.detail.as_ref().map(|d| contracts::CaseDetail {
                    error: d.error.as_ref().map(|e| contracts::CaseError {
                        message: String::new(),
                        ..e.clone()
                    }),
                    ..contracts::CaseDetail::default()
                }),
                _ => None,
            },
        }
    }
}

/// Where a submission is: `queued`, `compiling`, `running` (test k of n) or `done`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct LiveStatus {
    pub state: String,
    #[schema(value_type = i64)]
    pub generation: Generation,
    pub test: Option<u32>,
    pub total: Option<u32>,
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    pub time_ms: Option<i64>,
    pub memory_kib: Option<i64>,
    /// While running: the tests that have ended so far, in judging order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub finished: Vec<FinishedTest>,
}

impl LiveStatus {
    fn of(record: &SubmissionRecord) -> Self {
        let (state, test, total, mut finished) = match (record.state.as_str(), &record.progress) {
            (state::DONE, _) => ("done", None, None, Vec::new()),
            (
                state::JUDGING,
                Some(JudgeProgress::Running {
                    test,
                    total,
                    finished,
                }),
            ) => ("running", Some(*test), Some(*total), finished.clone()),
            (state::JUDGING, _) => ("compiling", None, None, Vec::new()),
            _ => ("queued", None, None, Vec::new()),
        };
        finished.sort_by_key(|t| t.index);
        let done = state == "done";
        Self {
            state: state.into(),
            generation: record.generation,
            test,
            total,
            verdict: record.verdict.filter(|_| done),
            score: record.score.filter(|_| done),
            time_ms: record.time_ms.filter(|_| done),
            memory_kib: record.memory_kib.filter(|_| done),
            finished,
        }
    }
}

/// A submission. `source` and `compile_output` are shown to its author and admins only.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubmissionView {
    pub id: i64,
    pub user_id: i64,
    pub problem_id: i64,
    pub problem_slug: String,
    pub problem_title: String,
    pub language: String,
    pub source: Option<String>,
    pub status: LiveStatus,
    pub compile_output: Option<String>,
    /// Why judging ended in a system error, when it did.
    pub message: Option<String>,
    pub max_score: Option<f64>,
    pub tests: Vec<TestView>,
    pub created_at_ms: i64,
    pub judged_at_ms: Option<i64>,
    /// The verdict of every judged generation, oldest first (rejudges add one each).
    pub history: Vec<GenerationView>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct GenerationView {
    pub generation: i64,
    pub verdict: Verdict,
    pub score: Option<f64>,
    pub judged_at_ms: i64,
}

fn view(record: &SubmissionRecord, privileged: bool, audience: Audience) -> SubmissionView {
    let done = record.state == state::DONE;
    SubmissionView {
        id: record.id.0,
        user_id: record.user_id.0,
        problem_id: record.problem_id.0,
        problem_slug: record.facts.problem_slug.clone(),
        problem_title: record.facts.problem_title.clone(),
        language: record.language.clone(),
        source: privileged.then(|| record.source.clone()),
        status: LiveStatus::of(record),
        compile_output: record.compile_output.clone().filter(|_| privileged && done),
        message: record.message.clone().filter(|_| done),
        max_score: record.max_score.filter(|_| done),
        tests: if done {
            record
                .tests
                .iter()
                .map(|t| TestView::of(t, audience))
                .collect()
        } else {
            Vec::new()
        },
        created_at_ms: record.created_at_ms,
        judged_at_ms: record.judged_at_ms.filter(|_| done),
        history: record
            .history
            .iter()
            .map(|h| GenerationView {
                generation: h.generation.0,
                verdict: h.verdict,
                score: h.score,
                judged_at_ms: h.judged_at_ms,
            })
            .collect(),
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SummaryView {
    pub id: i64,
    pub user_id: i64,
    pub problem_id: i64,
    pub problem_slug: String,
    pub language: String,
    pub state: String,
    pub generation: i64,
    pub verdict: Option<Verdict>,
    pub score: Option<f64>,
    pub time_ms: Option<i64>,
    pub memory_kib: Option<i64>,
    pub created_at_ms: i64,
}

impl From<SubmissionSummary> for SummaryView {
    fn from(s: SubmissionSummary) -> Self {
        Self {
            id: s.id.0,
            user_id: s.user_id.0,
            problem_id: s.problem_id.0,
            problem_slug: s.problem_slug,
            language: s.language,
            state: s.state,
            generation: s.generation.0,
            verdict: s.verdict,
            score: s.score,
            time_ms: s.time_ms,
            memory_kib: s.memory_kib,
            created_at_ms: s.created_at_ms,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubmissionPage {
    pub items: Vec<SummaryView>,
    /// Pass as `before` for the next (older) page; absent on the last page.
    pub next_before: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubmissionFilter {
    /// Submissions to this problem (by id); without it, the caller's own submissions.
    pub problem_id: Option<i64>,
    /// Keyset cursor: the `next_before` of the previous page.
    pub before: Option<i64>,
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<u32>,
}

impl From<SubmitError> for ApiError {
    fn from(e: SubmitError) -> Self {
        match e {
            SubmitError::Rejected(r) => ApiError::unprocessable(
                "not-admitted",
                format!("the submission is not admitted: {r}"),
            ),
            SubmitError::IdempotencyConflict(_) => {
                ApiError::conflict("idempotency-conflict", e.to_string())
            }
            SubmitError::Db(e) => e.into(),
        }
    }
}

/// The checks every piece of submitted code passes before anything is stored: a language
/// the workers can run, a non-empty source, and the size limit.
pub(crate) fn check_code(
    languages: &[String],
    language: &str,
    source: &str,
    max_bytes: usize,
) -> Result<(), ApiError> {
    if !languages.iter().any(|l| l == language) {
        return Err(ApiError::unprocessable(
            "unknown-language",
            format!(
                "unknown language {language:?}; available: {}",
                languages.join(", ")
            ),
        ));
    }
    if source.trim().is_empty() {
        return Err(ApiError::unprocessable(
            "empty-source",
            "the source is empty",
        ));
    }
    if source.len() > max_bytes {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "source-too-large",
            format!(
                "the source is {} bytes; at most {max_bytes} are accepted",
                source.len()
            ),
        ));
    }
    Ok(())
}

impl ApiState {
    /// The submission, if `caller` may see it; whether the caller may see its source.
    async fn visible(
        &self,
        caller: &Principal,
        id: SubmissionId,
    ) -> Result<(SubmissionRecord, bool), ApiError> {
        let not_found = || ApiError::not_found(format!("submission {id} not found"));
        let record = self.store.get_recent(id).await?.ok_or_else(not_found)?;
        let privileged = record.user_id == caller.user_id || caller.can(Permission::ViewAnySource);
        if !privileged && !self.facts.visible(caller, record.problem_id).await? {
            return Err(not_found());
        }
        Ok((record, privileged))
    }
}

/// Submit code for judging. Idempotent with an `Idempotency-Key` header: the same key and
/// payload return the same submission (200), the same key with another payload is a 409.
#[utoipa::path(post, path = "/api/v1/submissions", tag = "submissions",
    security(("bearer" = [])),
    params(("Idempotency-Key" = Option<String>, Header, description = "Client key for safe retries")),
    request_body = NewSubmission,
    responses(
        (status = 202, description = "Accepted for judging", body = SubmissionView),
        (status = 200, description = "The earlier submission with this idempotency key", body = SubmissionView),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
        (status = 404, description = "No such problem", body = ProblemDetails),
        (status = 409, description = "Idempotency conflict, or the problem has no test data", body = ProblemDetails),
        (status = 413, description = "Source too large", body = ProblemDetails),
        (status = 422, description = "Unknown language or empty source", body = ProblemDetails),
        (status = 429, description = "Rate limited", body = ProblemDetails,
            headers(("Retry-After" = u64, description = "Seconds until a submission is let through"))),
        (status = 503, description = "The judge backlog is past its bound (everyone's submissions waiting or being judged)", body = ProblemDetails,
            headers(("Retry-After" = u64, description = "Seconds to wait before submitting again"))),
    ))]
async fn submit(
    State(state): State<ApiState>,
    caller: Authenticated,
    headers: HeaderMap,
    ApiJson(body): ApiJson<NewSubmission>,
) -> Result<Response, ApiError> {
    let principal = caller.require(Permission::Submit)?;
    let key = idempotency_key(&headers)?;
    state
        .config
        .submit_limit
        .check(&principal.user_id.to_string())
        .await?;
    state.check_backlog().await?;
    check_code(
        &state.config.languages,
        &body.language,
        &body.source,
        state.config.max_source_bytes,
    )?;
    let facts = state
        .facts
        .capture(principal, &body.problem, body.contest.as_deref())
        .await?;
    let submitted = state
        .store
        .submit(
            &facts,
            &SubmitRequest {
                user_id: principal.user_id,
                problem_id: facts.problem_id,
                language: body.language,
                source: body.source,
                idempotency_key: key,
            },
        )
        .await?;
    let record = state
        .store
        .get(submitted.id)
        .await?
        .ok_or_else(|| ApiError::internal("a stored submission vanished"))?;
    let status = if submitted.created {
        StatusCode::ACCEPTED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        [(
            header::LOCATION,
            format!("/api/v1/submissions/{}", submitted.id),
        )],
        Json(view(&record, true, Audience::of(principal, &record))),
    )
        .into_response())
}

/// One submission, with per-test results once judged.
#[utoipa::path(get, path = "/api/v1/submissions/{id}", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = i64, Path)),
    responses(
        (status = 200, description = "The submission", body = SubmissionView),
        (status = 404, description = "No such submission (or not visible to the caller)", body = ProblemDetails),
    ))]
async fn get_submission(
    State(state): State<ApiState>,
    caller: Authenticated,
    ApiPath(id): ApiPath<i64>,
) -> Result<Json<SubmissionView>, ApiError> {
    let (record, privileged) = state.visible(&caller.0, SubmissionId(id)).await?;
    let audience = Audience::of(&caller.0, &record);
    Ok(Json(view(&record, privileged, audience)))
}

/// The caller's submissions, or a problem's, newest first.
#[utoipa::path(get, path = "/api/v1/submissions", tag = "submissions",
    security(("bearer" = [])),
    params(SubmissionFilter),
    responses(
        (status = 200, description = "A page of submissions", body = SubmissionPage),
        (status = 404, description = "No such problem", body = ProblemDetails),
    ))]
async fn list_submissions(
    State(state): State<ApiState>,
    caller: Authenticated,
    ApiQuery(filter): ApiQuery<SubmissionFilter>,
) -> Result<Json<SubmissionPage>, ApiError> {
    let listing = match filter.problem_id {
        Some(problem) => {
            if !state.facts.visible(&caller.0, ProblemId(problem)).await? {
                return Err(ApiError::not_found(format!("problem {problem} not found")));
            }
            Listing::ByProblem(ProblemId(problem))
        }
        None => Listing::ByUser(caller.0.user_id),
    };
    let limit = i64::from(platform::http::page_limit(filter.limit, 20, 100)?);
    let mut items = state
        .store
        .list(listing, filter.before.map(SubmissionId), limit + 1)
        .await?;
    let next_before = (items.len() as i64 > limit).then(|| items[limit as usize - 1].id.0);
    items.truncate(limit as usize);
    Ok(Json(SubmissionPage {
        items: items.into_iter().map(SummaryView::from).collect(),
        next_before,
    }))
}

/// A problem in a user's record.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProblemRef {
    pub problem_id: i64,
    pub problem_slug: String,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct VerdictCount {
    pub verdict: Verdict,
    pub count: i64,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DayCount {
    /// The day, `YYYY-MM-DD` in UTC.
    pub day: String,
    pub count: i64,
}

/// The caller's record: solved and attempted problems, verdicts of judged submissions, and
/// submissions per day over the last year.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SubmissionStats {
    pub solved: Vec<ProblemRef>,
    pub attempted: Vec<ProblemRef>,
    pub verdicts: Vec<VerdictCount>,
    pub days: Vec<DayCount>,
}

/// The caller's own record (profile pages, solved marks).
#[utoipa::path(get, path = "/api/v1/submissions/stats", tag = "submissions",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The caller's record", body = SubmissionStats),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
    ))]
async fn submission_stats(
    State(state): State<ApiState>,
    caller: Authenticated,
) -> Result<Json<SubmissionStats>, ApiError> {
    const YEAR_MS: i64 = 371 * 86_400_000;
    let now = state.store.db().now_ms().await?;
    let stats = state
        .store
        .user_stats(caller.0.user_id, now - YEAR_MS)
        .await?;
    let problem = |(id, slug): (ProblemId, String)| ProblemRef {
        problem_id: id.0,
        problem_slug: slug,
    };
    Ok(Json(SubmissionStats {
        solved: stats.solved.into_iter().map(problem).collect(),
        attempted: stats.attempted.into_iter().map(problem).collect(),
        verdicts: stats
            .verdicts
            .into_iter()
            .map(|(verdict, count)| VerdictCount { verdict, count })
            .collect(),
        days: stats
            .days
            .into_iter()
            .map(|(day, count)| DayCount {
                day: platform::calendar::iso_date(day),
                count,
            })
            .collect(),
    }))
}

/// Live status as Server-Sent Events: `queued`, `compiling`, `running` (data has `test` and
/// `total`), and finally `done` with the verdict, after which the stream ends.
#[utoipa::path(get, path = "/api/v1/submissions/{id}/events", tag = "submissions",
    security(("bearer" = [])),
    params(("id" = i64, Path)),
    responses(
        (status = 200, description = "An event stream; each event's data is a LiveStatus", content_type = "text/event-stream", body = LiveStatus),
        (status = 404, description = "No such submission", body = ProblemDetails),
    ))]
async fn submission_events(
    State(state): State<ApiState>,
    caller: Authenticated,
    Extension(verifier): Extension<Verifier>,
    headers: HeaderMap,
    ApiPath(id): ApiPath<i64>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let id = SubmissionId(id);
    state.visible(&caller.0, id).await?;
    let slot = StreamSlot::take(&state, caller.0.user_id)?;
    let credential = Credential {
        verifier,
        token: presented_access_token(&headers).unwrap_or_default(),
        checked: tokio::time::Instant::now(),
    };
    let closing = state.config.closing.clone();
    Ok(
        Sse::new(live_status(state.store, id, slot, credential, closing))
            .keep_alive(KeepAlive::default()),
    )
}

/// The credential a stream was opened with, re-verified every [`REVERIFY_EVERY`]: logging out,
/// a role change or an expired token ends the stream.
struct Credential {
    verifier: Verifier,
    token: String,
    checked: tokio::time::Instant,
}

impl Credential {
    async fn still_valid(&mut self) -> bool {
        if self.checked.elapsed() < REVERIFY_EVERY {
            return true;
        }
        self.checked = tokio::time::Instant::now();
        self.verifier.0.verify_access(&self.token).await.is_ok()
    }
}

/// Status changes of one submission until it is done. Woken by announced changes (every
/// process's on PostgreSQL), re-read anyway after the feed's recheck period.
fn live_status(
    store: SubmissionStore,
    id: SubmissionId,
    slot: StreamSlot,
    credential: Credential,
    closing: platform::Shutdown,
) -> impl Stream<Item = Result<Event, Infallible>> {
    struct Watch {
        store: SubmissionStore,
        changes: tokio::sync::broadcast::Receiver<crate::changes::Change>,
        last: Option<LiveStatus>,
        /// When the record was last read (`None`: it must be read now).
        read_at: Option<tokio::time::Instant>,
        finished: bool,
        credential: Credential,
        closing: platform::Shutdown,
        _slot: StreamSlot,
    }
    let watch = Watch {
        closing,
        changes: store.changes(),
        store,
        last: None,
        read_at: None,
        finished: false,
        credential,
        _slot: slot,
    };
    futures::stream::unfold(watch, move |mut watch| async move {
        if watch.finished {
            return None;
        }
        loop {
            if watch.closing.is_triggered() || !watch.credential.still_valid().await {
                return None;
            }
            let recheck = watch.store.recheck_period();
            if watch.read_at.is_none_or(|at| at.elapsed() >= recheck) {
                watch.read_at = Some(tokio::time::Instant::now());
                let record = match watch.store.get(id).await {
                    Ok(Some(record)) => record,
                    Ok(None) => return None,
                    Err(e) => {
                        tracing::warn!(error = %e, "live status read failed");
                        watch.read_at = None;
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                };
                let status = LiveStatus::of(&record);
                if watch.last.as_ref() != Some(&status) {
                    watch.finished = status.state == "done";
                    let event = Event::default()
                        .event(status.state.clone())
                        .json_data(&status)
                        .unwrap_or_default();
                    watch.last = Some(status);
                    return Some((Ok(event), watch));
                }
            }
            // Woken by a change (read at once), or at the next credential check.
            if platform::lifecycle::wait_for_change(
                &mut watch.changes,
                |change| change.concerns(id),
                REVERIFY_EVERY.min(recheck),
                &watch.closing,
            )
            .await
            {
                watch.read_at = None;
            }
        }
    })
}

/// The public submission routes.
pub fn routes(
    store: SubmissionStore,
    facts: Arc<dyn ProblemFacts>,
    config: SubmissionApiConfig,
) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(submit, list_submissions))
        .routes(routes!(get_submission))
        .routes(routes!(submission_stats))
        .routes(routes!(submission_events))
        .with_state(ApiState {
            store,
            facts,
            config,
            streams: Arc::default(),
        })
}
