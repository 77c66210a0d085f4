//! The management console: problems and packages for setters; users, rejudging, the
//! pipeline, the audit log and the machine for admins. Each page shows what its API
//! operation answers the visitor, so a setter who opens an admin page sees the API's refusal.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::api::{encode, ApiFailure, Payload};
use crate::charts::LineChart;
use crate::forms::Form;
use crate::page::{failure_page, html, see_other, Chrome};
use crate::session::{Visitor, WebState};
use crate::views::{
    Account, AuditEntry, Backup, DeadLetter, Pipeline, PipelineSample, Problem, ProblemPage,
    RejudgeResult, SubmissionPage, SystemView,
};

#[derive(Template, WebTemplate)]
#[template(path = "manage/index.html")]
struct IndexPage {
    c: Chrome,
}

fn staff_only(visitor: &Visitor) -> Option<Response> {
    match &visitor.account {
        None => Some(see_other(&crate::page::login_address(visitor))),
        Some(_) if !visitor.is_staff() => Some(failure_page(
            visitor,
            &ApiFailure {
                status: axum::http::StatusCode::FORBIDDEN,
                kind: "forbidden".into(),
                detail: visitor.tr.t("error-staff-only"),
            },
        )),
        Some(_) => None,
    }
}

pub async fn index(visitor: Visitor) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    html(IndexPage {
        c: Chrome::new(&visitor, visitor.tr.t("manage-title")),
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "manage/problems.html")]
struct ProblemsPage {
    c: Chrome,
    problems: Vec<Problem>,
    next_page: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
pub struct After {
    after: Option<i64>,
}

async fn problems_page(
    state: &WebState,
    visitor: &Visitor,
    after: Option<i64>,
    c: Chrome,
) -> Response {
    let path = keyset_page("/api/v1/problems?limit=50", after);
    match state.api.get::<ProblemPage>(&path, visitor.reader()).await {
        Ok(page) => html(ProblemsPage {
            c,
            problems: page.items,
            next_page: page.next_after,
        }),
        Err(failure) => failure_page(visitor, &failure),
    }
}

pub async fn problems(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(q): Query<After>,
) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    let c = Chrome::new(&visitor, visitor.tr.t("manage-problems"));
    problems_page(&state, &visitor, q.after, c).await
}

/// An API listing's address, from `after` on (keyset pagination).
fn keyset_page(listing: &str, after: Option<i64>) -> String {
    match after {
        Some(after) => format!("{listing}&after={after}"),
        None => listing.to_string(),
    }
}

fn optional_number(text: &str) -> Option<i64> {
    text.trim().parse().ok()
}

fn tags(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

pub async fn create_problem(
    State(state): State<WebState>,
    visitor: Visitor,
    form: Form,
) -> Response {
    let body = json!({
        "slug": form.get("slug").trim(),
        "title": form.get("title").trim(),
        "statement": form.get("statement"),
        "tags": tags(form.get("tags")),
        "difficulty": optional_number(form.get("difficulty")),
        "visibility": form.get("visibility"),
        "time_limit_ms": optional_number(form.get("time_limit_ms")),
        "memory_mib": optional_number(form.get("memory_mib")),
    });
    match state
        .api
        .send::<Problem>(
            Method::POST,
            "/api/v1/problems",
            &visitor.writer(form.csrf()),
            &body,
        )
        .await
    {
        Ok(problem) => see_other(&format!("/manage/problems/{}", encode(&problem.slug))),
        Err(failure) => {
            let c = Chrome::new(&visitor, visitor.tr.t("manage-problems")).error(failure.detail);
            problems_page(&state, &visitor, None, c).await
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "manage/problem.html")]
struct ProblemEditPage {
    c: Chrome,
    problem: Problem,
    /// The reasons a refused package was refused, one per line of the API's explanation.
    package_errors: Vec<String>,
}

async fn edit_page(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    notice: Option<(bool, String)>,
    package_errors: Vec<String>,
) -> Response {
    match state
        .api
        .get::<Problem>(
            &format!("/api/v1/problems/{}", encode(slug)),
            visitor.reader(),
        )
        .await
    {
        Ok(problem) => {
            let mut c = Chrome::new(visitor, problem.title.clone());
            match notice {
                Some((true, text)) => c = c.error(text),
                Some((false, text)) => c = c.ok(text),
                None => {}
            }
            html(ProblemEditPage {
                c,
                problem,
                package_errors,
            })
        }
        Err(failure) => failure_page(visitor, &failure),
    }
}

pub async fn problem(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    edit_page(&state, &visitor, &slug, None, Vec::new()).await
}

pub async fn update_problem(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let body = json!({
        "title": form.get("title").trim(),
        "statement": form.get("statement"),
        "tags": tags(form.get("tags")),
        "difficulty": optional_number(form.get("difficulty")),
        "visibility": form.get("visibility"),
        "time_limit_ms": optional_number(form.get("time_limit_ms")),
        "memory_mib": optional_number(form.get("memory_mib")),
    });
    let path = format!("/api/v1/problems/{}", encode(&slug));
    match state
        .api
        .send::<Problem>(Method::PATCH, &path, &visitor.writer(form.csrf()), &body)
        .await
    {
        Ok(_) => {
            edit_page(
                &state,
                &visitor,
                &slug,
                Some((false, visitor.tr.t("manage-saved"))),
                Vec::new(),
            )
            .await
        }
        Err(failure) => {
            edit_page(
                &state,
                &visitor,
                &slug,
                Some((true, failure.detail)),
                Vec::new(),
            )
            .await
        }
    }
}

/// The reasons in a refused upload's explanation, one per line or clause.
fn package_reasons(detail: &str) -> Vec<String> {
    detail
        .lines()
        .flat_map(|line| line.split("; "))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// A package upload. The body (up to 64 MiB) is read only for staff: anyone else is
/// refused before it arrives.
pub async fn upload_package(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    request: axum::extract::Request,
) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    let form = match <Form as axum::extract::FromRequest<()>>::from_request(request, &()).await {
        Ok(form) => form,
        Err(refusal) => return refusal,
    };
    let Some(archive) = form.file("package") else {
        return edit_page(
            &state,
            &visitor,
            &slug,
            Some((true, visitor.tr.t("manage-package-missing"))),
            Vec::new(),
        )
        .await;
    };
    let path = format!("/api/v1/problems/{}/package", encode(&slug));
    let answer = state
        .api
        .call(
            Method::PUT,
            &path,
            &visitor.writer(form.csrf()),
            Payload::Bytes(archive, "application/zip"),
        )
        .await
        .and_then(crate::api::Answer::ok);
    match answer {
        Ok(_) => {
            edit_page(
                &state,
                &visitor,
                &slug,
                Some((false, visitor.tr.t("manage-package-accepted"))),
                Vec::new(),
            )
            .await
        }
        Err(failure) => {
            let reasons = package_reasons(&failure.detail);
            edit_page(
                &state,
                &visitor,
                &slug,
                Some((true, visitor.tr.t("manage-package-refused"))),
                reasons,
            )
            .await
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "manage/users.html")]
struct UsersPage {
    c: Chrome,
    users: Vec<Account>,
    next_page: Option<i64>,
}

async fn users_page(
    state: &WebState,
    visitor: &Visitor,
    after: Option<i64>,
    c: Chrome,
) -> Response {
    let path = keyset_page("/api/v1/admin/users?limit=100", after);
    match state.api.get::<Vec<Account>>(&path, visitor.reader()).await {
        Ok(users) => html(UsersPage {
            c,
            next_page: (users.len() == 100).then(|| users.last().map_or(0, |u| u.id)),
            users,
        }),
        Err(failure) => failure_page(visitor, &failure),
    }
}

pub async fn users(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(q): Query<After>,
) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    let c = Chrome::new(&visitor, visitor.tr.t("manage-users"));
    users_page(&state, &visitor, q.after, c).await
}

pub async fn set_role(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<i64>,
    form: Form,
) -> Response {
    let path = format!("/api/v1/admin/users/{id}/role");
    let answer = state
        .api
        .send::<Account>(
            Method::PUT,
            &path,
            &visitor.writer(form.csrf()),
            &json!({"role": form.get("role")}),
        )
        .await;
    let c = Chrome::new(&visitor, visitor.tr.t("manage-users"));
    let c = match answer {
        Ok(account) => c.ok(visitor
            .tr
            .t1("manage-role-changed", "user", &account.username)),
        Err(failure) => c.error(failure.detail),
    };
    users_page(&state, &visitor, None, c).await
}

#[derive(Template, WebTemplate)]
#[template(path = "manage/rejudge.html")]
struct RejudgePage {
    c: Chrome,
    results: Vec<RejudgeResult>,
}

impl RejudgePage {
    fn outcome(&self, result: &RejudgeResult) -> String {
        match result.outcome.get("outcome").and_then(Value::as_str) {
            Some("rejudged") => self.c.tr.t1(
                "rejudge-outcome-rejudged",
                "generation",
                result
                    .outcome
                    .get("generation")
                    .and_then(Value::as_i64)
                    .unwrap_or_default(),
            ),
            Some("not_found") => self.c.t("rejudge-outcome-not-found"),
            Some("conflict") => self.c.t("rejudge-outcome-conflict"),
            _ => result.outcome.to_string(),
        }
    }
}

pub async fn rejudge_form(visitor: Visitor) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    html(RejudgePage {
        c: Chrome::new(&visitor, visitor.tr.t("manage-rejudge")),
        results: Vec::new(),
    })
}

/// Rejudges the submissions named in the form (ids, comma or space separated) or, with a
/// problem, that problem's latest submissions (up to the API's batch limit of 100).
pub async fn rejudge(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let title = visitor.tr.t("manage-rejudge");
    let refused = |detail: String| {
        html(RejudgePage {
            c: Chrome::new(&visitor, title.clone()).error(detail),
            results: Vec::new(),
        })
    };
    let mut ids: Vec<i64> = Vec::new();
    for word in form
        .get("ids")
        .split([',', ' ', '\n', '\r', '\t'])
        .filter(|w| !w.is_empty())
    {
        match word.trim_start_matches('#').parse() {
            Ok(id) => ids.push(id),
            Err(_) => return refused(visitor.tr.t1("rejudge-bad-id", "id", word)),
        }
    }
    let problem = form.get("problem").trim();
    if !problem.is_empty() {
        let found = state
            .api
            .get::<Problem>(
                &format!("/api/v1/problems/{}", encode(problem)),
                visitor.reader(),
            )
            .await;
        let problem = match found {
            Ok(problem) => problem,
            Err(failure) => return refused(failure.detail),
        };
        let path = format!("/api/v1/submissions?problem_id={}&limit=100", problem.id);
        match state
            .api
            .get::<SubmissionPage>(&path, visitor.reader())
            .await
        {
            Ok(page) => ids.extend(page.items.iter().map(|s| s.id)),
            Err(failure) => return refused(failure.detail),
        }
    }
    if ids.is_empty() {
        return refused(visitor.tr.t("rejudge-nothing"));
    }
    ids.sort_unstable();
    ids.dedup();
    let answer = state
        .api
        .send::<Vec<RejudgeResult>>(
            Method::POST,
            "/api/v1/admin/rejudge",
            &visitor.writer(form.csrf()),
            &json!({"submission_ids": ids}),
        )
        .await;
    match answer {
        Ok(results) => {
            let c = Chrome::new(&visitor, title.clone())
                .ok(visitor.tr.count("rejudge-done", results.len() as i64));
            html(RejudgePage { c, results })
        }
        Err(failure) => refused(failure.detail),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "manage/pipeline.html")]
struct PipelinePage {
    c: Chrome,
    panel_html: String,
}

impl PipelinePage {
    fn new(c: Chrome, panel: &PipelinePanel) -> Self {
        Self {
            c,
            panel_html: panel.render().unwrap_or_default(),
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "manage/pipeline_panel.html")]
struct PipelinePanel {
    c: Chrome,
    pipeline: Pipeline,
    dead_letters: Vec<DeadLetter>,
    events: Vec<crate::views::EventStream>,
    charts: Vec<LineChart>,
    now_ms: i64,
}

impl PipelinePanel {
    fn seconds_left(&self, expires_at_ms: &i64) -> String {
        format!("{:.1}", (*expires_at_ms - self.now_ms) as f64 / 1000.0)
    }
}

fn charts(tr: &crate::i18n::Tr, history: &[PipelineSample]) -> Vec<LineChart> {
    let series = |key: &str, value: fn(&PipelineSample) -> f64| {
        let points: Vec<(i64, f64)> = history.iter().map(|s| (s.at_ms, value(s))).collect();
        LineChart::new(tr.t(key), &points)
    };
    vec![
        series("pipeline-queue-length", |s| s.queue_length as f64),
        series("pipeline-pending", |s| s.pending as f64),
        series("pipeline-queue-delay", |s| s.queue_delay_ms as f64),
        series("pipeline-outbox-pending", |s| s.outbox_pending as f64),
        series("pipeline-judging", |s| s.judging as f64),
        series("pipeline-dead-letters", |s| s.dead_letters as f64),
    ]
}

async fn pipeline_panel(state: &WebState, visitor: &Visitor) -> Result<PipelinePanel, ApiFailure> {
    let api = &state.api;
    let who = visitor.reader();
    let (pipeline, dead_letters, history, events) = futures::try_join!(
        api.get::<Pipeline>("/api/v1/admin/pipeline", who),
        api.get::<Vec<DeadLetter>>("/api/v1/admin/dead-letters", who),
        api.get::<Vec<PipelineSample>>("/api/v1/admin/pipeline/history", who),
        api.get::<Vec<crate::views::EventStream>>("/api/v1/admin/events", who),
    )?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    Ok(PipelinePanel {
        c: Chrome::new(visitor, String::new()),
        charts: charts(&visitor.tr, &history),
        pipeline,
        dead_letters,
        events,
        now_ms,
    })
}

pub async fn pipeline(
    State(state): State<WebState>,
    visitor: Visitor,
    headers: HeaderMap,
) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    let panel = match pipeline_panel(&state, &visitor).await {
        Ok(panel) => panel,
        Err(failure) => return failure_page(&visitor, &failure),
    };
    if headers.contains_key("hx-request") {
        return html(panel);
    }
    html(PipelinePage::new(
        Chrome::new(&visitor, visitor.tr.t("manage-pipeline")),
        &panel,
    ))
}

pub async fn replay(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<String>,
    form: Form,
) -> Response {
    let path = format!("/api/v1/admin/dead-letters/{}/replay", encode(&id));
    replay_at(&state, &visitor, &path, &id, form).await
}

/// Replays an event consumer's dead letter.
pub async fn replay_event(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((consumer, id)): Path<(String, String)>,
    form: Form,
) -> Response {
    let path = format!(
        "/api/v1/admin/events/{}/dead-letters/{}/replay",
        encode(&consumer),
        encode(&id)
    );
    replay_at(&state, &visitor, &path, &id, form).await
}

async fn replay_at(
    state: &WebState,
    visitor: &Visitor,
    path: &str,
    id: &str,
    form: Form,
) -> Response {
    let answer = state
        .api
        .act(
            Method::POST,
            path,
            &visitor.writer(form.csrf()),
            None::<&()>,
        )
        .await;
    let mut c = Chrome::new(visitor, visitor.tr.t("manage-pipeline"));
    c = match answer {
        Ok(_) => c.ok(visitor.tr.t1("pipeline-replayed", "id", id)),
        Err(failure) => c.error(failure.detail),
    };
    match pipeline_panel(state, visitor).await {
        Ok(panel) => html(PipelinePage::new(c, &panel)),
        Err(failure) => failure_page(visitor, &failure),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "manage/audit.html")]
struct AuditPage {
    c: Chrome,
    entries: Vec<AuditEntry>,
    filter: AuditFilter,
    /// The address of the next (older) page.
    next_page: Option<String>,
}

/// The audit page's filters (passed to the API as they are).
#[derive(Debug, Default, Deserialize)]
pub struct AuditFilter {
    #[serde(default)]
    action: String,
    #[serde(default)]
    target: String,
    #[serde(default)]
    actor: String,
    before: Option<i64>,
}

impl AuditFilter {
    /// The query string of these filters (without `before`).
    fn query(&self) -> String {
        [
            ("action", &self.action),
            ("target", &self.target),
            ("actor", &self.actor),
        ]
        .iter()
        .filter(|(_, v)| !v.trim().is_empty())
        .map(|(k, v)| format!("&{k}={}", encode(v.trim())))
        .collect()
    }
}

pub async fn audit(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(filter): Query<AuditFilter>,
) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    // Newest first: what just happened is what an operator looks for.
    let path = format!(
        "/api/v1/admin/audit?limit=100&before={}{}",
        filter.before.unwrap_or(i64::MAX),
        filter.query()
    );
    match state
        .api
        .get::<Vec<AuditEntry>>(&path, visitor.reader())
        .await
    {
        Ok(entries) => html(AuditPage {
            c: Chrome::new(&visitor, visitor.tr.t("manage-audit")),
            next_page: (entries.len() == 100).then(|| {
                let last = entries.last().map_or(0, |e| e.id);
                format!("/manage/audit?before={last}{}", filter.query())
            }),
            entries,
            filter,
        }),
        Err(failure) => failure_page(&visitor, &failure),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "manage/system.html")]
struct SystemPage {
    c: Chrome,
    system: SystemView,
    /// The latest backups, newest first.
    backups: Vec<Backup>,
}

pub async fn system(State(state): State<WebState>, visitor: Visitor) -> Response {
    if let Some(refusal) = staff_only(&visitor) {
        return refusal;
    }
    let system = state
        .api
        .get::<SystemView>("/api/v1/admin/system", visitor.reader())
        .await;
    let backups = state
        .api
        .get::<Vec<Backup>>("/api/v1/admin/backups", visitor.reader())
        .await;
    match (system, backups) {
        (Ok(system), Ok(backups)) => html(SystemPage {
            c: Chrome::new(&visitor, visitor.tr.t("manage-system")),
            system,
            backups,
        }),
        (Err(failure), _) | (_, Err(failure)) => failure_page(&visitor, &failure),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_package_lists_each_reason() {
        assert_eq!(
            package_reasons("problem.yaml: limits.time_limit: not a number; data/secret: no test cases\nsubmissions/accepted: empty"),
            [
                "problem.yaml: limits.time_limit: not a number",
                "data/secret: no test cases",
                "submissions/accepted: empty"
            ]
        );
    }

    #[test]
    fn tags_and_numbers_from_text_fields() {
        assert_eq!(tags(" math, greedy ,,"), ["math", "greedy"]);
        assert_eq!(optional_number(" 1200 "), Some(1200));
        assert_eq!(optional_number(""), None);
    }
}
