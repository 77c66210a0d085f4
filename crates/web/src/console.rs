//! The contestants' console: problems, the editor, runs, submissions with live verdicts.

use std::collections::HashSet;
use std::convert::Infallible;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::json;

use crate::api::{encode, ApiFailure};
use crate::editor::mode_and_starter;
use crate::forms::Form;
use crate::markdown::{self, SafeHtml};
use crate::page::{self, failure_page, html, see_other, Chrome};
use crate::session::{Visitor, WebState};
use crate::views::{
    Language, Problem, ProblemPage, RunReport, RunStatus, Submission, SubmissionPage,
    SubmissionStats,
};

/// Problems per page of the list.
const PAGE_SIZE: u32 = 20;
/// The largest source the editor's file upload takes (the API's own limit is the same).
const MAX_SOURCE_BYTES: usize = 1 << 20;

#[derive(Template, WebTemplate)]
#[template(path = "home.html")]
struct HomePage {
    c: Chrome,
    problems: Vec<Problem>,
}

pub async fn home(State(state): State<WebState>, visitor: Visitor) -> Response {
    let problems = state
        .api
        .get::<ProblemPage>("/api/v1/problems?limit=5", visitor.reader())
        .await
        .map(|p| p.items)
        .unwrap_or_default();
    let c = Chrome::new(&visitor, visitor.tr.t("home-title"));
    html(HomePage { c, problems })
}

#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    tag: String,
    #[serde(default)]
    difficulty_min: String,
    #[serde(default)]
    difficulty_max: String,
    after: Option<i64>,
}

impl ListQuery {
    fn api_query(&self) -> String {
        let mut query = format!("limit={PAGE_SIZE}");
        for (name, value) in [
            ("q", &self.q),
            ("tag", &self.tag),
            ("difficulty_min", &self.difficulty_min),
            ("difficulty_max", &self.difficulty_max),
        ] {
            let value = value.trim();
            if !value.is_empty() {
                query.push_str(&format!("&{name}={}", encode(value)));
            }
        }
        if let Some(after) = self.after {
            query.push_str(&format!("&after={after}"));
        }
        query
    }

    /// The console's own link to the page after `after`, keeping the filters.
    fn page_link(&self, after: Option<i64>) -> String {
        let mut link = String::from("/problems?");
        for (name, value) in [
            ("q", &self.q),
            ("tag", &self.tag),
            ("difficulty_min", &self.difficulty_min),
            ("difficulty_max", &self.difficulty_max),
        ] {
            if !value.trim().is_empty() {
                link.push_str(&format!("{name}={}&", encode(value.trim())));
            }
        }
        if let Some(after) = after {
            link.push_str(&format!("after={after}"));
        }
        link.trim_end_matches(['&', '?']).to_string()
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "problems.html")]
struct ProblemsPage {
    c: Chrome,
    query: ListQuery,
    problems: Vec<Problem>,
    solved: HashSet<i64>,
    attempted: HashSet<i64>,
    first_page: Option<String>,
    next_page: Option<String>,
    tags: Vec<String>,
}

pub async fn problems(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<ListQuery>,
) -> Response {
    let path = format!("/api/v1/problems?{}", query.api_query());
    let page = match state.api.get::<ProblemPage>(&path, visitor.reader()).await {
        Ok(page) => page,
        Err(failure) => return failure_page(&visitor, &failure),
    };
    let (solved, attempted) = match visitor.account {
        Some(_) => match state
            .api
            .get::<SubmissionStats>("/api/v1/submissions/stats", visitor.reader())
            .await
        {
            Ok(stats) => (
                stats.solved.iter().map(|p| p.problem_id).collect(),
                stats.attempted.iter().map(|p| p.problem_id).collect(),
            ),
            Err(_) => Default::default(),
        },
        None => Default::default(),
    };
    let mut tags: Vec<String> = page.items.iter().flat_map(|p| p.tags.clone()).collect();
    tags.sort();
    tags.dedup();
    let c = Chrome::new(&visitor, visitor.tr.t("problems-title"));
    html(ProblemsPage {
        c,
        first_page: query.after.map(|_| query.page_link(None)),
        next_page: page.next_after.map(|a| query.page_link(Some(a))),
        query,
        problems: page.items,
        solved,
        attempted,
        tags,
    })
}

/// A language as the picker offers it.
pub struct LanguageChoice {
    pub id: String,
    pub label: String,
    pub mode: &'static str,
    pub starter: String,
}

/// The languages the judge offers, with their editor modes and starters.
pub async fn language_choices(state: &WebState, visitor: &Visitor) -> Vec<LanguageChoice> {
    state
        .api
        .get::<Vec<Language>>("/api/v1/languages", visitor.reader())
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|l| {
            let (mode, starter) = mode_and_starter(&l.id);
            LanguageChoice {
                label: l.name,
                id: l.id,
                mode,
                starter: starter.to_string(),
            }
        })
        .collect()
}

/// What a run on custom input gave, as the problem page shows it.
struct RunView {
    report: Option<RunReport>,
    error: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "problem.html")]
struct ProblemView {
    c: Chrome,
    problem: Problem,
    statement: SafeHtml,
    languages: Vec<LanguageChoice>,
    language: String,
    source: String,
    stdin: String,
    run: Option<RunView>,
}

#[derive(Template, WebTemplate)]
#[template(path = "run_result.html")]
struct RunFragment {
    c: Chrome,
    run: RunView,
}

/// What the problem page's form holds when it is shown again (after a run or a refusal).
#[derive(Default)]
struct Draft {
    language: String,
    source: String,
    stdin: String,
    run: Option<RunView>,
    /// Why the form was refused, and the status the page answers with.
    error: Option<(StatusCode, String)>,
}

async fn problem_page(state: &WebState, visitor: &Visitor, slug: &str, draft: Draft) -> Response {
    let problem = match state
        .api
        .get::<Problem>(
            &format!("/api/v1/problems/{}", encode(slug)),
            visitor.reader(),
        )
        .await
    {
        Ok(problem) => problem,
        Err(failure) => return failure_page(visitor, &failure),
    };
    let mut languages = language_choices(state, visitor).await;
    let mut source = draft.source;
    if let Some(function) = &problem.function {
        // A function problem takes the harness languages, each starting from the signature.
        languages.retain_mut(|l| match function.starters.get(&l.id) {
            Some(starter) => {
                l.starter = starter.clone();
                true
            }
            None => false,
        });
        // Without JavaScript the text area is the editor: it starts with the starter code.
        if source.trim().is_empty() {
            source = languages
                .iter()
                .find(|l| l.id == draft.language)
                .or(languages.first())
                .map(|l| l.starter.clone())
                .unwrap_or_default();
        }
    }
    let statement = markdown::render(&problem.statement);
    let mut c = Chrome::new(visitor, problem.title.clone()).with_islands(&["editor"]);
    if statement.has_math() {
        c = c.with_islands(&["math"]);
    }
    let mut status = StatusCode::OK;
    if let Some((refusal, error)) = draft.error {
        status = refusal;
        c = c.error(error);
    }
    page::html_with_status(
        status,
        ProblemView {
            c,
            statement,
            problem,
            languages,
            language: draft.language,
            source,
            stdin: draft.stdin,
            run: draft.run,
        },
    )
}

pub async fn problem(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> Response {
    problem_page(&state, &visitor, &slug, Draft::default()).await
}

/// The preview request of the problem page's form: a function problem's form says so, and
/// its input is then the arguments of the problem's harness.
fn run_request(form: &Form, slug: &str, source: &str) -> serde_json::Value {
    let mut request =
        json!({"language": form.get("language"), "source": source, "stdin": form.get("stdin")});
    if !form.get("function").is_empty() {
        request["problem"] = json!(slug);
    }
    request
}

/// The source a form carries: the uploaded file when there is one, else the editor's text.
pub fn source_of(form: &Form, visitor: &Visitor) -> Result<String, String> {
    match form.file("source_file") {
        Some(file) if file.len() > MAX_SOURCE_BYTES => Err(visitor.tr.t("error-source-too-large")),
        Some(file) => {
            String::from_utf8(file.to_vec()).map_err(|_| visitor.tr.t("error-source-not-text"))
        }
        None => Ok(form.get("source").to_string()),
    }
}

pub async fn submit(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let draft = |source: String, status: StatusCode, error: String| Draft {
        language: form.get("language").to_string(),
        source,
        stdin: form.get("stdin").to_string(),
        run: None,
        error: Some((status, error)),
    };
    if visitor.account.is_none() {
        return see_other(&format!(
            "/login?next={}",
            encode(&format!("/problems/{slug}"))
        ));
    }
    let source = match source_of(&form, &visitor) {
        Ok(source) => source,
        Err(error) => {
            return problem_page(
                &state,
                &visitor,
                &slug,
                draft(String::new(), StatusCode::UNPROCESSABLE_ENTITY, error),
            )
            .await
        }
    };
    #[derive(Deserialize)]
    struct Created {
        id: i64,
    }
    let created = state
        .api
        .send::<Created>(
            Method::POST,
            "/api/v1/submissions",
            &visitor.writer(form.csrf()),
            &json!({"problem": slug, "language": form.get("language"), "source": source}),
        )
        .await;
    match created {
        Ok(created) => see_other(&format!("/submissions/{}", created.id)),
        Err(failure) => {
            let status = page::status_of(&failure);
            problem_page(
                &state,
                &visitor,
                &slug,
                draft(source, status, failure.detail),
            )
            .await
        }
    }
}

pub async fn run(
    State(state): State<WebState>,
    visitor: Visitor,
    headers: HeaderMap,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let htmx = headers.contains_key("hx-request");
    if visitor.account.is_none() && !htmx {
        return see_other(&format!(
            "/login?next={}",
            encode(&format!("/problems/{slug}"))
        ));
    }
    let (source, run) = match source_of(&form, &visitor) {
        Err(error) => (
            String::new(),
            RunView {
                report: None,
                error: Some(error),
            },
        ),
        Ok(source) => {
            let answer = state
                .api
                .send::<RunStatus>(
                    Method::POST,
                    "/api/v1/runs/preview",
                    &visitor.writer(form.csrf()),
                    &run_request(&form, &slug, &source),
                )
                .await;
            let run = match answer {
                Ok(status) => RunView {
                    error: status
                        .error
                        .or_else(|| (status.result.is_none()).then(|| status.state.clone())),
                    report: status.result,
                },
                Err(ApiFailure { detail, .. }) => RunView {
                    report: None,
                    error: Some(detail),
                },
            };
            (source, run)
        }
    };
    if htmx {
        let c = Chrome::new(&visitor, String::new());
        return html(RunFragment { c, run });
    }
    let draft = Draft {
        language: form.get("language").to_string(),
        source,
        stdin: form.get("stdin").to_string(),
        run: Some(run),
        error: None,
    };
    problem_page(&state, &visitor, &slug, draft).await
}

#[derive(Debug, Default, Deserialize)]
pub struct Before {
    before: Option<i64>,
}

#[derive(Template, WebTemplate)]
#[template(path = "submissions.html")]
struct SubmissionsPage {
    c: Chrome,
    page: SubmissionPage,
    first_page: bool,
}

pub async fn submissions(
    State(state): State<WebState>,
    visitor: Visitor,
    Query(query): Query<Before>,
) -> Response {
    let mut path = String::from("/api/v1/submissions?limit=30");
    if let Some(before) = query.before {
        path.push_str(&format!("&before={before}"));
    }
    match state
        .api
        .get::<SubmissionPage>(&path, visitor.reader())
        .await
    {
        Ok(page) => {
            let c = Chrome::new(&visitor, visitor.tr.t("submissions-title"));
            html(SubmissionsPage {
                c,
                page,
                first_page: query.before.is_none(),
            })
        }
        Err(failure) => failure_page(&visitor, &failure),
    }
}

/// The verdict panel of a submission: its state, progress, and when done the per-test table.
#[derive(Template, WebTemplate)]
#[template(path = "verdict_panel.html")]
struct VerdictPanel {
    c: Chrome,
    s: Submission,
}

impl VerdictPanel {
    fn done(&self) -> bool {
        self.s.status.state == "done"
    }

    fn progress(&self) -> Option<(u32, u32)> {
        Some((self.s.status.test?, self.s.status.total?))
    }

    fn state_label(&self) -> String {
        self.c.t(&format!("state-{}", self.s.status.state))
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "submission.html")]
struct SubmissionDetail {
    c: Chrome,
    panel: VerdictPanel,
    panel_html: String,
    source_mode: &'static str,
}

async fn fetch_submission(
    state: &WebState,
    visitor: &Visitor,
    id: i64,
) -> Result<Submission, ApiFailure> {
    state
        .api
        .get::<Submission>(&format!("/api/v1/submissions/{id}"), visitor.reader())
        .await
}

pub async fn submission(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<i64>,
) -> Response {
    match fetch_submission(&state, &visitor, id).await {
        Ok(s) => {
            let title = visitor.tr.t1("submission-title", "id", id);
            let mut c = Chrome::new(&visitor, title).with_islands(&["editor"]);
            c.refresh_without_js = s.status.state != "done";
            let source_mode = mode_and_starter(&s.language).0;
            let panel = VerdictPanel {
                c: Chrome::new(&visitor, String::new()),
                s,
            };
            html(SubmissionDetail {
                c,
                panel_html: panel.render().unwrap_or_default(),
                panel,
                source_mode,
            })
        }
        Err(failure) => failure_page(&visitor, &failure),
    }
}

/// The live verdict as HTML fragments over Server-Sent Events, for htmx's SSE extension:
/// each status change of the API's stream becomes the re-rendered panel (`status`), and the
/// end of judging a `done` event that closes the connection.
pub async fn live(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(id): Path<i64>,
) -> Response {
    let upstream = state
        .api
        .stream(
            &format!("/api/v1/submissions/{id}/events"),
            visitor.reader(),
        )
        .await;
    if !upstream.status().is_success() {
        return upstream.status().into_response();
    }
    let frames = sse_frames(upstream.into_body().into_data_stream());
    let events = frames
        .then(move |name| {
            let (state, visitor) = (state.clone(), visitor.clone());
            async move {
                let panel = match fetch_submission(&state, &visitor, id).await {
                    Ok(s) => VerdictPanel {
                        c: Chrome::new(&visitor, String::new()),
                        s,
                    }
                    .render()
                    .unwrap_or_default(),
                    Err(failure) => platform::html::escape(&failure.detail),
                };
                let mut out = vec![Ok::<_, Infallible>(
                    Event::default().event("status").data(panel),
                )];
                if name == "done" {
                    out.push(Ok(Event::default().event("done").data("done")));
                }
                futures::stream::iter(out)
            }
        })
        .flatten();
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// The event names of an SSE byte stream, one per event.
fn sse_frames(
    body: impl futures::Stream<Item = Result<bytes::Bytes, axum::Error>> + Send + 'static,
) -> impl futures::Stream<Item = String> + Send {
    futures::stream::unfold(
        (Box::pin(body), String::new(), String::new()),
        |(mut body, mut buffer, mut name)| async move {
            loop {
                while let Some(end) = buffer.find('\n') {
                    let line = buffer[..end].trim_end_matches('\r').to_string();
                    buffer.drain(..=end);
                    if line.is_empty() {
                        if !name.is_empty() {
                            let event = std::mem::take(&mut name);
                            return Some((event, (body, buffer, name)));
                        }
                    } else if let Some(value) = line.strip_prefix("event:") {
                        name = value.trim().to_string();
                    }
                }
                match body.next().await {
                    Some(Ok(chunk)) => buffer.push_str(&String::from_utf8_lossy(&chunk)),
                    _ => return None,
                }
            }
        },
    )
}

#[derive(Template, WebTemplate)]
#[template(path = "profile.html")]
struct ProfilePage {
    c: Chrome,
    username: String,
    stats: SubmissionStats,
    heatmap: crate::charts::Heatmap,
    total: i64,
}

pub async fn profile(State(state): State<WebState>, visitor: Visitor) -> Response {
    let Some(account) = visitor.account.clone() else {
        return see_other("/login?next=%2Fprofile");
    };
    match state
        .api
        .get::<SubmissionStats>("/api/v1/submissions/stats", visitor.reader())
        .await
    {
        Ok(stats) => {
            let today = crate::charts::today_days();
            let heatmap = crate::charts::Heatmap::new(&stats.days, today, &visitor.tr);
            let total = stats.verdicts.iter().map(|v| v.count).sum();
            html(ProfilePage {
                c: Chrome::new(&visitor, account.username.clone()),
                username: account.username,
                stats,
                heatmap,
                total,
            })
        }
        Err(failure) => failure_page(&visitor, &failure),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sse_frames_name_each_event_across_chunk_boundaries() {
        let chunks: Vec<Result<bytes::Bytes, axum::Error>> = vec![
            Ok("event: queued\ndata: {}\n\nevent: run".into()),
            Ok("ning\r\ndata: {\"test\":1}\r\n\r\n: keep-alive\n\n".into()),
            Ok("event: done\ndata: {}\n\n".into()),
        ];
        let names: Vec<String> = sse_frames(futures::stream::iter(chunks)).collect().await;
        assert_eq!(names, ["queued", "running", "done"]);
    }

    #[test]
    fn list_links_keep_filters() {
        let query = ListQuery {
            q: "sum pairs".into(),
            tag: "math".into(),
            ..ListQuery::default()
        };
        assert_eq!(
            query.page_link(Some(7)),
            "/problems?q=sum%20pairs&tag=math&after=7"
        );
        assert_eq!(query.page_link(None), "/problems?q=sum%20pairs&tag=math");
        assert_eq!(
            query.api_query(),
            format!("limit={PAGE_SIZE}&q=sum%20pairs&tag=math")
        );
    }
}
