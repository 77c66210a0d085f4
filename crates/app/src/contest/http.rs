//! The contest routes under `/api/v1/contests`.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::IntoResponse;
use axum::Json;
use futures::Stream;
use platform::http::{ApiError, ApiJson, ApiPath, ApiQuery, Authenticated, Caller, ProblemDetails};
use platform::Shutdown;
use serde::Deserialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::board::{BoardView, ScoreboardView};
use super::clarifications::{ClarificationView, NewClarification};
use super::listing::{Balloon, ContestSubmissionView};
use super::model::*;
use super::rejudging::{RejudgingFilter, RejudgingView};
use super::ContestService;

#[derive(Clone)]
struct ContestState {
    contests: ContestService,
    closing: Shutdown,
}

type Result<T> = std::result::Result<T, ApiError>;

/// Contests the caller may see (public ones, their own, all for admins), newest first.
#[utoipa::path(get, path = "/api/v1/contests", tag = "contests",
    responses((status = 200, description = "Contests", body = [ContestView])))]
async fn list_contests(
    State(s): State<ContestState>,
    caller: Caller,
) -> Result<Json<Vec<ContestView>>> {
    Ok(Json(s.contests.list(caller.0.as_ref()).await?))
}

/// Create a contest (setters and admins); its creator becomes its admin.
#[utoipa::path(post, path = "/api/v1/contests", tag = "contests",
    security(("bearer" = [])),
    request_body = NewContest,
    responses(
        (status = 201, description = "Created", body = ContestView),
        (status = 403, description = "Not a setter", body = ProblemDetails),
        (status = 409, description = "Slug taken", body = ProblemDetails),
        (status = 422, description = "Invalid field", body = ProblemDetails),
    ))]
async fn create_contest(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiJson(body): ApiJson<NewContest>,
) -> Result<(StatusCode, Json<ContestView>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.contests.create(&caller.0, body).await?),
    ))
}

/// One contest; a private one is not found for non-members. Problems are listed once it
/// has started (to staff at any time).
#[utoipa::path(get, path = "/api/v1/contests/{slug}", tag = "contests",
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "The contest", body = ContestView),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn get_contest(
    State(s): State<ContestState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> Result<Json<ContestView>> {
    Ok(Json(s.contests.get(caller.0.as_ref(), &slug).await?))
}

/// Change a contest's settings (its admins).
#[utoipa::path(patch, path = "/api/v1/contests/{slug}", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body = ContestPatch,
    responses(
        (status = 200, description = "Updated", body = ContestView),
        (status = 403, description = "Not a contest admin", body = ProblemDetails),
        (status = 404, description = "No such contest", body = ProblemDetails),
        (status = 409, description = "Changed meanwhile", body = ProblemDetails),
        (status = 422, description = "Invalid field", body = ProblemDetails),
    ))]
async fn update_contest(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    ApiJson(body): ApiJson<ContestPatch>,
) -> Result<Json<ContestView>> {
    Ok(Json(s.contests.update(&caller.0, &slug, body).await?))
}

/// A contest problem by label: its statement, limits and samples, from the start (staff:
/// any time), hidden problems included.
#[utoipa::path(get, path = "/api/v1/contests/{slug}/problems/{label}", tag = "contests",
    params(("slug" = String, Path), ("label" = String, Path)),
    responses(
        (status = 200, description = "The problem", body = crate::ProblemView),
        (status = 404, description = "No such problem, or not yet", body = ProblemDetails),
    ))]
async fn contest_problem(
    State(s): State<ContestState>,
    caller: Caller,
    ApiPath((slug, label)): ApiPath<(String, String)>,
) -> Result<Json<crate::ProblemView>> {
    Ok(Json(
        s.contests.problem(caller.0.as_ref(), &slug, &label).await?,
    ))
}

/// Replace the contest's problems (labels in order).
#[utoipa::path(put, path = "/api/v1/contests/{slug}/problems", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body = [ContestProblemInput],
    responses(
        (status = 200, description = "Updated", body = ContestView),
        (status = 403, description = "Not a contest admin", body = ProblemDetails),
        (status = 422, description = "Invalid problem list", body = ProblemDetails),
    ))]
async fn set_problems(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    ApiJson(body): ApiJson<Vec<ContestProblemInput>>,
) -> Result<Json<ContestView>> {
    Ok(Json(s.contests.set_problems(&caller.0, &slug, body).await?))
}

/// The contest's teams and their members.
#[utoipa::path(get, path = "/api/v1/contests/{slug}/teams", tag = "contests",
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "Teams", body = [TeamView]),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn list_teams(
    State(s): State<ContestState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> Result<Json<Vec<TeamView>>> {
    let (contest, _) = s.contests.visible(&slug, caller.0.as_ref()).await?;
    Ok(Json(s.contests.teams(contest.id).await?))
}

/// Import teams from CSV (`name,affiliation,category,members`, members as `;`-separated
/// usernames); all or nothing.
#[utoipa::path(post, path = "/api/v1/contests/{slug}/teams/import", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body(content = String, content_type = "text/csv"),
    responses(
        (status = 201, description = "Imported", body = [TeamView]),
        (status = 403, description = "Not staff", body = ProblemDetails),
        (status = 409, description = "A name or member taken", body = ProblemDetails),
        (status = 422, description = "A bad line", body = ProblemDetails),
    ))]
async fn import_teams(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    body: String,
) -> Result<(StatusCode, Json<Vec<TeamView>>)> {
    if body.trim().is_empty() {
        return Err(ApiError::unprocessable(
            "invalid-field",
            "csv: empty; one team per line (name,affiliation,category,members)",
        ));
    }
    Ok((
        StatusCode::CREATED,
        Json(s.contests.import_teams(&caller.0, &slug, &body).await?),
    ))
}

/// Register: the caller becomes a team of their own.
#[utoipa::path(post, path = "/api/v1/contests/{slug}/register", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body = Registration,
    responses(
        (status = 201, description = "Registered", body = TeamView),
        (status = 403, description = "Private, or a wrong invite code", body = ProblemDetails),
        (status = 409, description = "Already registered, a name taken, or closed", body = ProblemDetails),
    ))]
async fn register_for_contest(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    ApiJson(body): ApiJson<Registration>,
) -> Result<(StatusCode, Json<TeamView>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.contests.register(&caller.0, &slug, body).await?),
    ))
}

/// Start a virtual participation in an ended contest (a window of its length, from now).
#[utoipa::path(post, path = "/api/v1/contests/{slug}/virtual", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 201, description = "Started", body = TeamView),
        (status = 409, description = "Not ended, or already taking part", body = ProblemDetails),
    ))]
async fn join_virtual(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<(StatusCode, Json<TeamView>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.contests.join_virtual(&caller.0, &slug).await?),
    ))
}

/// Add a staff member or change their role (`participant` removes it).
#[utoipa::path(put, path = "/api/v1/contests/{slug}/staff", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body = StaffMember,
    responses(
        (status = 204, description = "Changed"),
        (status = 403, description = "Not a contest admin", body = ProblemDetails),
        (status = 422, description = "No such user", body = ProblemDetails),
    ))]
async fn set_staff(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    ApiJson(body): ApiJson<StaffMember>,
) -> Result<StatusCode> {
    s.contests.set_staff(&caller.0, &slug, body).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct BoardQuery {
    /// `public` or `live` (staff). Default: live for staff, public otherwise, and for a
    /// virtual participant inside their window the standings at their elapsed time.
    #[param(inline)]
    view: Option<BoardView>,
}

/// The scoreboard.
#[utoipa::path(get, path = "/api/v1/contests/{slug}/scoreboard", tag = "contests",
    params(("slug" = String, Path), BoardQuery),
    responses(
        (status = 200, description = "The board", body = ScoreboardView),
        (status = 403, description = "The live board is for staff", body = ProblemDetails),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn scoreboard(
    State(s): State<ContestState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
    ApiQuery(query): ApiQuery<BoardQuery>,
) -> Result<Json<ScoreboardView>> {
    Ok(Json(
        s.contests
            .scoreboard(caller.0.as_ref(), &slug, query.view)
            .await?,
    ))
}

/// Server-Sent Events: a `board` event (data: the board version) whenever the board
/// changes; read the scoreboard again on each. Ends at shutdown.
#[utoipa::path(get, path = "/api/v1/contests/{slug}/scoreboard/events", tag = "contests",
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "An event stream", content_type = "text/event-stream", body = i64),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn scoreboard_events(
    State(s): State<ContestState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> Result<Sse<impl Stream<Item = std::result::Result<Event, Infallible>>>> {
    let (contest, _) = s.contests.visible(&slug, caller.0.as_ref()).await?;
    Ok(Sse::new(board_changes(s.contests, contest.id, s.closing)).keep_alive(KeepAlive::default()))
}

/// Board versions of one contest as they change: woken by this process's changes, and
/// re-read every second for other processes' (and for a scheduled unfreeze).
fn board_changes(
    contests: ContestService,
    contest: i64,
    closing: Shutdown,
) -> impl Stream<Item = std::result::Result<Event, Infallible>> {
    let changes = contests.boards.subscribe();
    let state = (contests, changes, None::<(i64, bool)>, closing);
    futures::stream::unfold(
        state,
        move |(contests, mut changes, last, closing)| async move {
            loop {
                if closing.is_triggered() {
                    return None;
                }
                let now_state = match contests.load_id(contest).await {
                    Ok(Some(c)) => (c.board_version, c.frozen(crate::service::now_ms())),
                    Ok(None) => return None,
                    Err(_) => {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                };
                if last != Some(now_state) {
                    let event = Event::default()
                        .event("board")
                        .data(now_state.0.to_string());
                    return Some((Ok(event), (contests, changes, Some(now_state), closing)));
                }
                platform::lifecycle::wait_for_change(
                    &mut changes,
                    |changed| *changed == contest,
                    Duration::from_secs(1),
                    &closing,
                )
                .await;
            }
        },
    )
}

/// Rebuild the board from the stored facts (staff); says whether the board kept up to
/// date event by event was the same.
#[utoipa::path(post, path = "/api/v1/contests/{slug}/scoreboard/recompute", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "Recomputed", body = super::board::RecomputeReport),
        (status = 403, description = "Not staff", body = ProblemDetails),
    ))]
async fn recompute(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<Json<super::board::RecomputeReport>> {
    Ok(Json(s.contests.recompute_board(&caller.0, &slug).await?))
}

/// Freeze the public board now (staff; while the contest runs).
#[utoipa::path(post, path = "/api/v1/contests/{slug}/freeze", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 204, description = "Frozen"),
        (status = 403, description = "Not staff", body = ProblemDetails),
        (status = 409, description = "Not running, or frozen already", body = ProblemDetails),
    ))]
async fn freeze(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<StatusCode> {
    s.contests.freeze(&caller.0, &slug).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Reveal the frozen results (staff; after the end).
#[utoipa::path(post, path = "/api/v1/contests/{slug}/unfreeze", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 204, description = "Unfrozen"),
        (status = 403, description = "Not staff", body = ProblemDetails),
        (status = 409, description = "Not ended, or not frozen", body = ProblemDetails),
    ))]
async fn unfreeze(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<StatusCode> {
    s.contests.unfreeze(&caller.0, &slug).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Declare the results final (contest admins): refused while the contest runs, while a
/// submission is unjudged and while a clarification request is unanswered.
#[utoipa::path(post, path = "/api/v1/contests/{slug}/finalize", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 204, description = "Final"),
        (status = 403, description = "Not a contest admin", body = ProblemDetails),
        (status = 409, description = "Not yet possible (the reason says why)", body = ProblemDetails),
    ))]
async fn finalize(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<StatusCode> {
    s.contests.finalize(&caller.0, &slug).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The caller's team's contest submissions (staff: all), newest first.
#[utoipa::path(get, path = "/api/v1/contests/{slug}/submissions", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "Submissions", body = [ContestSubmissionView]),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn contest_submissions(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<Json<Vec<ContestSubmissionView>>> {
    Ok(Json(
        s.contests.contest_submissions(&caller.0, &slug).await?,
    ))
}

/// First accepted runs in contest order, first solves marked (staff).
#[utoipa::path(get, path = "/api/v1/contests/{slug}/balloons", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "Balloons", body = [Balloon]),
        (status = 403, description = "Not staff", body = ProblemDetails),
    ))]
async fn balloons(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<Json<Vec<Balloon>>> {
    Ok(Json(s.contests.balloons(&caller.0, &slug).await?))
}

/// Clarifications the caller may read.
#[utoipa::path(get, path = "/api/v1/contests/{slug}/clarifications", tag = "contests",
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "Clarifications", body = [ClarificationView]),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn list_clarifications(
    State(s): State<ContestState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> Result<Json<Vec<ClarificationView>>> {
    Ok(Json(
        s.contests.clarifications(caller.0.as_ref(), &slug).await?,
    ))
}

/// Ask the jury (a team), or answer or announce (the jury).
#[utoipa::path(post, path = "/api/v1/contests/{slug}/clarifications", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body = NewClarification,
    responses(
        (status = 201, description = "Posted", body = ClarificationView),
        (status = 403, description = "Not a team or the jury", body = ProblemDetails),
        (status = 422, description = "Invalid field", body = ProblemDetails),
    ))]
async fn post_clarification(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    ApiJson(body): ApiJson<NewClarification>,
) -> Result<(StatusCode, Json<ClarificationView>)> {
    Ok((
        StatusCode::CREATED,
        Json(
            s.contests
                .post_clarification(&caller.0, &slug, body)
                .await?,
        ),
    ))
}

/// The contest's rejudgings (staff).
#[utoipa::path(get, path = "/api/v1/contests/{slug}/rejudgings", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "Rejudgings, newest first", body = [RejudgingView]),
        (status = 403, description = "Not staff", body = ProblemDetails),
    ))]
async fn list_rejudgings(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<Json<Vec<RejudgingView>>> {
    Ok(Json(s.contests.rejudgings(&caller.0, &slug).await?))
}

/// Judge the submissions the filter chooses again (staff); the old verdicts count until
/// it is applied.
#[utoipa::path(post, path = "/api/v1/contests/{slug}/rejudgings", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    request_body = RejudgingFilter,
    responses(
        (status = 201, description = "Started", body = RejudgingView),
        (status = 403, description = "Not staff", body = ProblemDetails),
        (status = 422, description = "Nothing matches", body = ProblemDetails),
    ))]
async fn create_rejudging(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
    ApiJson(body): ApiJson<RejudgingFilter>,
) -> Result<(StatusCode, Json<RejudgingView>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.contests.create_rejudging(&caller.0, &slug, body).await?),
    ))
}

/// A rejudging with its preview (old verdict × new verdict).
#[utoipa::path(get, path = "/api/v1/contests/{slug}/rejudgings/{id}", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path), ("id" = i64, Path)),
    responses(
        (status = 200, description = "The rejudging", body = RejudgingView),
        (status = 404, description = "No such rejudging", body = ProblemDetails),
    ))]
async fn get_rejudging(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath((slug, id)): ApiPath<(String, i64)>,
) -> Result<Json<RejudgingView>> {
    Ok(Json(s.contests.rejudging(&caller.0, &slug, id).await?))
}

/// Make the rejudging's verdicts count (all judged first).
#[utoipa::path(post, path = "/api/v1/contests/{slug}/rejudgings/{id}/apply", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path), ("id" = i64, Path)),
    responses(
        (status = 200, description = "Applied", body = RejudgingView),
        (status = 409, description = "Unfinished or closed", body = ProblemDetails),
    ))]
async fn apply_rejudging(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath((slug, id)): ApiPath<(String, i64)>,
) -> Result<Json<RejudgingView>> {
    Ok(Json(
        s.contests.apply_rejudging(&caller.0, &slug, id).await?,
    ))
}

/// Discard the rejudging's verdicts.
#[utoipa::path(post, path = "/api/v1/contests/{slug}/rejudgings/{id}/cancel", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path), ("id" = i64, Path)),
    responses(
        (status = 200, description = "Cancelled", body = RejudgingView),
        (status = 409, description = "Closed already", body = ProblemDetails),
    ))]
async fn cancel_rejudging(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath((slug, id)): ApiPath<(String, i64)>,
) -> Result<Json<RejudgingView>> {
    Ok(Json(
        s.contests.cancel_rejudging(&caller.0, &slug, id).await?,
    ))
}

/// The results export (`results.tsv`) of the public board.
#[utoipa::path(get, path = "/api/v1/contests/{slug}/results.tsv", tag = "contests",
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "results.tsv", content_type = "text/tab-separated-values", body = String),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn results_tsv(
    State(s): State<ContestState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> Result<impl IntoResponse> {
    let text = s.contests.results_tsv(caller.0.as_ref(), &slug).await?;
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/tab-separated-values; charset=utf-8",
        )],
        text,
    ))
}

/// The scoreboard as CSV.
#[utoipa::path(get, path = "/api/v1/contests/{slug}/scoreboard.csv", tag = "contests",
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "CSV", content_type = "text/csv", body = String),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn scoreboard_csv(
    State(s): State<ContestState>,
    caller: Caller,
    ApiPath(slug): ApiPath<String>,
) -> Result<impl IntoResponse> {
    let text = s.contests.scoreboard_csv(caller.0.as_ref(), &slug).await?;
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], text))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ImportQuery {
    /// Judge the package's submissions afresh instead of taking its judgements.
    #[serde(default)]
    rejudge: bool,
}

/// The largest contest package accepted.
const MAX_CONTEST_PACKAGE_BYTES: usize = 256 << 20;

/// Import a CLICS contest package (a zip): the contest, its problems (which must exist
/// by id), teams, accounts, clarifications, and its submissions with their judgements.
#[utoipa::path(post, path = "/api/v1/contests/import", tag = "contests",
    security(("bearer" = [])),
    params(ImportQuery),
    request_body(content = Vec<u8>, content_type = "application/zip"),
    responses(
        (status = 201, description = "Imported", body = super::package::ImportReport),
        (status = 403, description = "Not an admin", body = ProblemDetails),
        (status = 409, description = "The contest id is taken", body = ProblemDetails),
        (status = 413, description = "Too large", body = ProblemDetails),
        (status = 422, description = "Not a valid package (the reason says where)", body = ProblemDetails),
    ))]
async fn import_package(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiQuery(query): ApiQuery<ImportQuery>,
    body: axum::body::Body,
) -> Result<(StatusCode, Json<super::package::ImportReport>)> {
    if caller.0.role != contracts::Role::Admin {
        return Err(ApiError::forbidden("only admins import contest packages"));
    }
    let bytes = axum::body::to_bytes(body, MAX_CONTEST_PACKAGE_BYTES)
        .await
        .map_err(|_| {
            ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload-too-large",
                "the package is over 256 MiB",
            )
        })?;
    let files = super::package::read_zip(&bytes)?;
    let report = s
        .contests
        .import_package(&caller.0, &files, query.rejudge)
        .await?;
    Ok((StatusCode::CREATED, Json(report)))
}

/// The contest as a CLICS contest package (a zip; staff).
#[utoipa::path(get, path = "/api/v1/contests/{slug}/package", tag = "contests",
    security(("bearer" = [])),
    params(("slug" = String, Path)),
    responses(
        (status = 200, description = "The package", content_type = "application/zip", body = Vec<u8>),
        (status = 403, description = "Not staff", body = ProblemDetails),
        (status = 404, description = "No such contest", body = ProblemDetails),
    ))]
async fn export_package(
    State(s): State<ContestState>,
    caller: Authenticated,
    ApiPath(slug): ApiPath<String>,
) -> Result<impl IntoResponse> {
    let files = s.contests.export_package(&caller.0, &slug).await?;
    let zip = super::package::write_zip(&files)?;
    Ok(([(header::CONTENT_TYPE, "application/zip")], zip))
}

/// The contest routes.
pub fn routes(contests: ContestService, closing: Shutdown) -> OpenApiRouter {
    OpenApiRouter::new()
        .routes(routes!(list_contests, create_contest))
        .routes(routes!(get_contest, update_contest))
        .routes(routes!(set_problems))
        .routes(routes!(contest_problem))
        .routes(routes!(list_teams))
        .routes(routes!(import_teams))
        .routes(routes!(register_for_contest))
        .routes(routes!(join_virtual))
        .routes(routes!(set_staff))
        .routes(routes!(scoreboard))
        .routes(routes!(scoreboard_events))
        .routes(routes!(recompute))
        .routes(routes!(freeze))
        .routes(routes!(unfreeze))
        .routes(routes!(finalize))
        .routes(routes!(contest_submissions))
        .routes(routes!(balloons))
        .routes(routes!(list_clarifications, post_clarification))
        .routes(routes!(list_rejudgings, create_rejudging))
        .routes(routes!(get_rejudging))
        .routes(routes!(apply_rejudging))
        .routes(routes!(cancel_rejudging))
        .routes(routes!(results_tsv))
        .routes(routes!(scoreboard_csv))
        .routes(routes!(import_package))
        .routes(routes!(export_package))
        .with_state(ContestState { contests, closing })
}
