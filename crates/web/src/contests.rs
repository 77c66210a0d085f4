//! The contest pages: the list, a contest's home with registration and virtual
//! participation, its problems with the submit form, the team's submissions, clarifications,
//! and the scoreboard, which htmx reloads whenever the API's board stream says it changed.
//! Every page reads the contest through the API, whose `viewer` says what the visitor is in
//! it (a member, a team, staff), so a page offers only what the API would allow.

use std::collections::HashMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api::{encode, ApiFailure};
use crate::console::{language_choices, source_of, LanguageChoice};
use crate::forms::Form;
use crate::markdown::{self, SafeHtml};
use crate::page::{failure_page, html, html_with_status, see_other, status_of, Chrome};
use crate::session::{Visitor, WebState};
use crate::views::{
    BoardCell, BoardRow, Clarification, Contest, ContestProblem, ContestSubmission, Problem,
    Scoreboard, Team,
};

/// The API address of a contest (or of something under it, `tail` starting with `/`).
pub fn contest_api(slug: &str, tail: &str) -> String {
    format!("/api/v1/contests/{}{tail}", encode(slug))
}

pub async fn fetch_contest(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
) -> Result<Contest, ApiFailure> {
    state
        .api
        .get(&contest_api(slug, ""), visitor.reader())
        .await
}

/// Team names by id, for pages that name teams the API gives by id (empty if unreadable:
/// the ids are shown instead).
async fn team_names(state: &WebState, visitor: &Visitor, slug: &str) -> HashMap<i64, String> {
    state
        .api
        .get::<Vec<Team>>(&contest_api(slug, "/teams"), visitor.reader())
        .await
        .map(|teams| teams.into_iter().map(|t| (t.id, t.name)).collect())
        .unwrap_or_default()
}

/// Minutes between the freeze and the end (rounded), as the freeze banner says them.
pub fn frozen_minutes(duration_ms: i64, freeze_ms: i64) -> i64 {
    ((duration_ms - freeze_ms).max(0) + 30_000) / 60_000
}

/// A form's text field, absent when empty.
fn optional(form: &Form, name: &str) -> Option<String> {
    let value = form.get(name).trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// The login page, returning to `back` (a form's own address cannot be returned to).
fn login_then(back: &str) -> Response {
    see_other(&format!("/login?next={}", encode(back)))
}

/// What templates ask of a contest.
impl Contest {
    /// This console's address of the contest's `section` (its home when empty).
    pub fn page(&self, section: &str) -> String {
        match section {
            "" => format!("/contests/{}", self.slug),
            section => format!("/contests/{}/{section}", self.slug),
        }
    }

    pub fn is_member(&self) -> bool {
        self.viewer.role.is_some()
    }

    pub fn status_key(&self) -> String {
        format!("contest-status-{}", self.status)
    }

    pub fn format_key(&self) -> String {
        format!("contest-format-{}", self.format)
    }

    pub fn frozen_minutes(&self) -> Option<i64> {
        self.freeze_ms
            .map(|freeze| frozen_minutes(self.duration_ms, freeze))
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/list.html")]
struct ListPage {
    c: Chrome,
    contests: Vec<Contest>,
}

pub async fn list(State(state): State<WebState>, visitor: Visitor) -> Response {
    match state
        .api
        .get::<Vec<Contest>>("/api/v1/contests", visitor.reader())
        .await
    {
        Ok(contests) => html(ListPage {
            c: Chrome::new(&visitor, visitor.tr.t("contests-title")),
            contests,
        }),
        Err(failure) => failure_page(&visitor, &failure),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/home.html")]
struct HomePage {
    c: Chrome,
    contest: Contest,
    description: SafeHtml,
}

/// A contest's home; `refusal` is a form the API refused, shown with its reason.
async fn home_page(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    refusal: Option<ApiFailure>,
) -> Response {
    let contest = match fetch_contest(state, visitor, slug).await {
        Ok(contest) => contest,
        Err(failure) => return failure_page(visitor, &failure),
    };
    let description = markdown::render(&contest.description);
    let mut c = Chrome::new(visitor, contest.title.clone());
    if description.has_math() {
        c = c.with_islands(&["math"]);
    }
    let mut status = StatusCode::OK;
    if let Some(failure) = refusal {
        status = status_of(&failure);
        c = c.error(failure.detail);
    }
    html_with_status(
        status,
        HomePage {
            c,
            contest,
            description,
        },
    )
}

pub async fn contest(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> Response {
    home_page(&state, &visitor, &slug, None).await
}

/// A write from the contest's home: back home on success, the home with the reason if not.
async fn home_action(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    tail: &str,
    body: Option<Value>,
    form: &Form,
) -> Response {
    let home = format!("/contests/{}", encode(slug));
    if visitor.account.is_none() {
        return login_then(&home);
    }
    match state
        .api
        .act(
            Method::POST,
            &contest_api(slug, tail),
            &visitor.writer(form.csrf()),
            body.as_ref(),
        )
        .await
    {
        Ok(_) => see_other(&home),
        Err(failure) => home_page(state, visitor, slug, Some(failure)).await,
    }
}

pub async fn register(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let mut body = Map::new();
    for field in ["team_name", "invite_code"] {
        if let Some(value) = optional(&form, field) {
            body.insert(field.into(), value.into());
        }
    }
    let body = Some(Value::Object(body));
    home_action(&state, &visitor, &slug, "/register", body, &form).await
}

pub async fn join_virtual(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    home_action(&state, &visitor, &slug, "/virtual", None, &form).await
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/problem.html")]
struct ProblemPage {
    c: Chrome,
    contest: Contest,
    entry: ContestProblem,
    /// The problem itself, when the visitor may read it (a hidden one is the contest's only).
    problem: Option<Problem>,
    statement: SafeHtml,
    languages: Vec<LanguageChoice>,
    language: String,
    source: String,
}

/// What the submit form held when it is shown again after a refusal.
#[derive(Default)]
struct Draft {
    language: String,
    source: String,
    error: Option<(StatusCode, String)>,
}

fn no_such_problem(visitor: &Visitor, label: &str) -> ApiFailure {
    ApiFailure {
        status: StatusCode::NOT_FOUND,
        kind: "not-found".into(),
        detail: visitor.tr.t1("contest-no-problem", "label", label),
    }
}

async fn problem_page(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    label: &str,
    draft: Draft,
) -> Response {
    let contest = match fetch_contest(state, visitor, slug).await {
        Ok(contest) => contest,
        Err(failure) => return failure_page(visitor, &failure),
    };
    let Some(entry) = contest.problems.iter().find(|p| p.label == label).cloned() else {
        return failure_page(visitor, &no_such_problem(visitor, label));
    };
    let problem = match state
        .api
        .get::<Problem>(
            &format!(
                "/api/v1/contests/{}/problems/{}",
                encode(slug),
                encode(&entry.label)
            ),
            visitor.reader(),
        )
        .await
    {
        Ok(problem) => Some(problem),
        Err(failure) if failure.status == StatusCode::NOT_FOUND => None,
        Err(failure) => return failure_page(visitor, &failure),
    };
    let statement = problem
        .as_ref()
        .map(|p| markdown::render(&p.statement))
        .unwrap_or_default();
    let title = format!("{}. {}", entry.label, entry.title);
    let mut c = Chrome::new(visitor, title).with_islands(&["editor"]);
    if statement.has_math() {
        c = c.with_islands(&["math"]);
    }
    let mut status = StatusCode::OK;
    if let Some((refusal, error)) = draft.error {
        status = refusal;
        c = c.error(error);
    }
    html_with_status(
        status,
        ProblemPage {
            c,
            languages: language_choices(state, visitor).await,
            contest,
            entry,
            problem,
            statement,
            language: draft.language,
            source: draft.source,
        },
    )
}

pub async fn problem(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((slug, label)): Path<(String, String)>,
) -> Response {
    problem_page(&state, &visitor, &slug, &label, Draft::default()).await
}

/// Submits to the contest: the submission counts there (or as upsolving, or in the
/// visitor's virtual window), as the API decides.
pub async fn submit(
    State(state): State<WebState>,
    visitor: Visitor,
    Path((slug, label)): Path<(String, String)>,
    form: Form,
) -> Response {
    if visitor.account.is_none() {
        return login_then(&format!(
            "/contests/{}/problems/{}",
            encode(&slug),
            encode(&label)
        ));
    }
    let language = form.get("language").to_string();
    let refused = |source: String, status: StatusCode, error: String| Draft {
        language: language.clone(),
        source,
        error: Some((status, error)),
    };
    let source = match source_of(&form, &visitor) {
        Ok(source) => source,
        Err(error) => {
            let draft = refused(String::new(), StatusCode::UNPROCESSABLE_ENTITY, error);
            return problem_page(&state, &visitor, &slug, &label, draft).await;
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
            &json!({"problem": label, "language": language, "source": source, "contest": slug}),
        )
        .await;
    match created {
        Ok(created) => see_other(&format!("/submissions/{}", created.id)),
        Err(failure) => {
            let draft = refused(source, status_of(&failure), failure.detail);
            problem_page(&state, &visitor, &slug, &label, draft).await
        }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/submissions.html")]
struct SubmissionsPage {
    c: Chrome,
    contest: Contest,
    submissions: Vec<ContestSubmission>,
    teams: HashMap<i64, String>,
}

impl SubmissionsPage {
    fn team(&self, id: &i64) -> String {
        team_name(&self.teams, *id)
    }
}

fn team_name(teams: &HashMap<i64, String>, id: i64) -> String {
    teams.get(&id).cloned().unwrap_or_else(|| format!("#{id}"))
}

pub async fn submissions(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> Response {
    let listing = async {
        let contest = fetch_contest(&state, &visitor, &slug).await?;
        let submissions = state
            .api
            .get::<Vec<ContestSubmission>>(&contest_api(&slug, "/submissions"), visitor.reader())
            .await?;
        Ok::<_, ApiFailure>((contest, submissions))
    };
    match listing.await {
        Ok((contest, submissions)) => {
            let teams = if contest.viewer.staff {
                team_names(&state, &visitor, &slug).await
            } else {
                HashMap::new()
            };
            let title = visitor
                .tr
                .t1("contest-submissions-title", "contest", &contest.title);
            html(SubmissionsPage {
                c: Chrome::new(&visitor, title),
                contest,
                submissions,
                teams,
            })
        }
        Err(failure) => failure_page(&visitor, &failure),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/clarifications.html")]
struct ClarificationsPage {
    c: Chrome,
    contest: Contest,
    /// Newest first.
    clarifications: Vec<Clarification>,
    teams: HashMap<i64, String>,
}

impl ClarificationsPage {
    fn team(&self, id: &i64) -> String {
        team_name(&self.teams, *id)
    }

    /// Whether the jury still owes this request an answer.
    fn awaits_answer(&self, clarification: &Clarification) -> bool {
        self.contest.viewer.staff && clarification.from_team_id.is_some() && !clarification.answered
    }
}

async fn clarifications_page(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    refusal: Option<ApiFailure>,
) -> Response {
    let read = async {
        let contest = fetch_contest(state, visitor, slug).await?;
        let clarifications = state
            .api
            .get::<Vec<Clarification>>(&contest_api(slug, "/clarifications"), visitor.reader())
            .await?;
        Ok::<_, ApiFailure>((contest, clarifications))
    };
    let (contest, mut clarifications) = match read.await {
        Ok(read) => read,
        Err(failure) => return failure_page(visitor, &failure),
    };
    clarifications.reverse();
    let title = visitor
        .tr
        .t1("clarifications-title", "contest", &contest.title);
    let mut c = Chrome::new(visitor, title);
    let mut status = StatusCode::OK;
    if let Some(failure) = refusal {
        status = status_of(&failure);
        c = c.error(failure.detail);
    }
    html_with_status(
        status,
        ClarificationsPage {
            c,
            teams: team_names(state, visitor, slug).await,
            contest,
            clarifications,
        },
    )
}

pub async fn clarifications(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> Response {
    clarifications_page(&state, &visitor, &slug, None).await
}

/// The body of a clarification form: a team's question, the jury's answer to one
/// (`reply_to`, `to_all`) or the jury's announcement.
fn clarification_body(form: &Form) -> Value {
    let mut body = Map::new();
    body.insert("text".into(), form.get("text").trim().into());
    if let Some(problem) = optional(form, "problem") {
        body.insert("problem".into(), problem.into());
    }
    if let Some(reply_to) = optional(form, "reply_to").and_then(|id| id.parse::<i64>().ok()) {
        body.insert("reply_to".into(), reply_to.into());
        body.insert("to_all".into(), (form.get("to_all") == "on").into());
    }
    Value::Object(body)
}

pub async fn post_clarification(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let back = format!("/contests/{}/clarifications", encode(&slug));
    if visitor.account.is_none() {
        return login_then(&back);
    }
    match state
        .api
        .act(
            Method::POST,
            &contest_api(&slug, "/clarifications"),
            &visitor.writer(form.csrf()),
            Some(&clarification_body(&form)),
        )
        .await
    {
        Ok(_) => see_other(&back),
        Err(failure) => clarifications_page(&state, &visitor, &slug, Some(failure)).await,
    }
}

/// Which board a staff member asks for (`public` or `live`); others get the API's default.
#[derive(Debug, Default, Deserialize)]
pub struct BoardQuery {
    view: Option<String>,
}

impl BoardQuery {
    /// The query string to pass on (empty, or `?view=…`).
    fn query(&self) -> String {
        match self.view.as_deref() {
            Some(view @ ("public" | "live")) => format!("?view={view}"),
            _ => String::new(),
        }
    }
}

/// The board table: the fragment htmx reloads on each `board` event.
#[derive(Template, WebTemplate)]
#[template(path = "contests/board.html")]
struct BoardTable {
    c: Chrome,
    contest: Contest,
    board: Scoreboard,
}

impl BoardTable {
    fn icpc(&self) -> bool {
        self.board.format == "icpc"
    }

    fn atcoder(&self) -> bool {
        self.board.format == "atcoder"
    }

    /// The freeze banner's minutes, while the board hides the last results.
    fn frozen_minutes(&self) -> Option<i64> {
        if !self.board.frozen {
            return None;
        }
        self.board
            .freeze_ms
            .or(self.contest.freeze_ms)
            .map(|freeze| frozen_minutes(self.contest.duration_ms, freeze))
    }

    /// The cell's colour: solved, tried and failed, or waiting.
    fn cell_class(&self, cell: &BoardCell) -> &'static str {
        let scored = cell.score.is_some_and(|s| s > 0.0);
        if cell.solved || (!self.icpc() && scored) {
            "verdict-AC"
        } else if cell.num_pending > 0 {
            "verdict-pending"
        } else if cell.num_judged > 0 {
            "verdict-WA"
        } else {
            ""
        }
    }

    fn medal_key(&self, medal: &str) -> String {
        format!("medal-{medal}")
    }

    fn row_score(&self, row: &BoardRow) -> String {
        row.score.map(score_text).unwrap_or_default()
    }

    fn cell_score(&self, cell: &BoardCell) -> String {
        cell.score.map(score_text).unwrap_or_default()
    }
}

/// A score without a needless fraction (`100`, `37.5`).
fn score_text(score: f64) -> String {
    let rounded = (score * 100.0).round() / 100.0;
    if rounded.fract() == 0.0 {
        format!("{rounded:.0}")
    } else {
        rounded.to_string()
    }
}

async fn board_table(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    query: &BoardQuery,
) -> Result<BoardTable, ApiFailure> {
    let board_path = contest_api(slug, &format!("/scoreboard{}", query.query()));
    let (contest, board) = futures::try_join!(
        fetch_contest(state, visitor, slug),
        state.api.get::<Scoreboard>(&board_path, visitor.reader()),
    )?;
    Ok(BoardTable {
        c: Chrome::new(visitor, String::new()),
        contest,
        board,
    })
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/scoreboard.html")]
struct ScoreboardPage {
    c: Chrome,
    contest: Contest,
    view: String,
    /// The `?view=…` the table's reloads keep.
    query: String,
    table_html: String,
}

impl ScoreboardPage {
    fn view_key(&self) -> String {
        format!("board-view-{}", self.view)
    }
}

pub async fn scoreboard(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    Query(query): Query<BoardQuery>,
) -> Response {
    match board_table(&state, &visitor, &slug, &query).await {
        Ok(table) => {
            let title = visitor
                .tr
                .t1("scoreboard-title", "contest", &table.contest.title);
            html(ScoreboardPage {
                c: Chrome::new(&visitor, title),
                contest: table.contest.clone(),
                view: table.board.view.clone(),
                query: query.query(),
                table_html: table.render().unwrap_or_default(),
            })
        }
        Err(failure) => failure_page(&visitor, &failure),
    }
}

pub async fn scoreboard_table(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    Query(query): Query<BoardQuery>,
) -> Response {
    match board_table(&state, &visitor, &slug, &query).await {
        Ok(table) => html(table),
        Err(failure) => failure_page(&visitor, &failure),
    }
}

#[cfg(test)]
mod tests;
