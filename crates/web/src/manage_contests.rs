//! Running contests: creating one (setters), and for its staff the settings, the problem
//! set, team import, freezing, unfreezing and finalizing, rejudgings with their preview, and
//! the balloon list. A contest's pages are for its staff as the API's `viewer.staff` says
//! (a contest's jury need not be setters); every refusal shows the API's own reason.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::Response;
use contracts::Verdict;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::api::{encode, ApiFailure, Payload};
use crate::contests::{contest_api, fetch_contest, frozen_minutes};
use crate::forms::Form;
use crate::page::{failure_page, html, html_with_status, iso_time, see_other, status_of, Chrome};
use crate::session::{Visitor, WebState};
use crate::views::{Balloon, Contest, Rejudging, Team};

const MINUTE_MS: i64 = 60_000;

/// The contest settings form's fields, as typed (kept when the API refuses them).
#[derive(Debug, Clone, Default)]
pub struct SettingsForm {
    slug: String,
    title: String,
    description: String,
    format: String,
    /// `YYYY-MM-DDTHH:MM`, UTC (a `datetime-local` input).
    start: String,
    duration_minutes: String,
    /// How long before the end the public board freezes; empty: no freeze.
    freeze_minutes: String,
    /// The freeze the form was shown with (contest time, ms), kept as it is when the minutes
    /// shown are saved unchanged: they are rounded, and a freeze made by hand is not.
    current_freeze_ms: String,
    penalty_minutes: String,
    visibility: String,
    invite_code: String,
}

impl SettingsForm {
    /// The formats the form offers, with their names' message keys.
    fn formats(&self) -> [(&'static str, &'static str); 3] {
        [
            ("icpc", "contest-format-icpc"),
            ("ioi", "contest-format-ioi"),
            ("atcoder", "contest-format-atcoder"),
        ]
    }

    fn visibilities(&self) -> [(&'static str, &'static str); 3] {
        [
            ("public", "contest-visibility-public"),
            ("invite", "contest-visibility-invite"),
            ("private", "contest-visibility-private"),
        ]
    }

    fn from_form(form: &Form) -> Self {
        let field = |name: &str| form.get(name).trim().to_string();
        Self {
            slug: field("slug"),
            title: field("title"),
            description: form.get("description").to_string(),
            format: field("format"),
            start: field("start"),
            duration_minutes: field("duration_minutes"),
            freeze_minutes: field("freeze_minutes"),
            current_freeze_ms: field("current_freeze_ms"),
            penalty_minutes: field("penalty_minutes"),
            visibility: field("visibility"),
            invite_code: field("invite_code"),
        }
    }

    fn from_contest(contest: &Contest) -> Self {
        Self {
            slug: contest.slug.clone(),
            title: contest.title.clone(),
            description: contest.description.clone(),
            format: contest.format.clone(),
            start: iso_time(contest.start_ms)[..16].to_string(),
            duration_minutes: (contest.duration_ms / MINUTE_MS).to_string(),
            freeze_minutes: contest
                .frozen_minutes()
                .map(|m| m.to_string())
                .unwrap_or_default(),
            current_freeze_ms: contest.freeze_ms.map(|f| f.to_string()).unwrap_or_default(),
            penalty_minutes: contest.penalty_minutes.to_string(),
            visibility: contest.visibility.clone(),
            invite_code: contest.invite_code.clone().unwrap_or_default(),
        }
    }

    /// The API body: a new contest's, or (`creating` false) a patch of every field, where an
    /// empty freeze or invite code removes it. `Err` names the field that is not a number or
    /// a time, as a message key.
    fn body(&self, creating: bool) -> Result<Value, &'static str> {
        let start_ms = parse_utc_minute(&self.start).ok_or("contest-bad-start")?;
        let duration_ms = self
            .duration_minutes
            .parse::<i64>()
            .map_err(|_| "contest-bad-duration")?
            * MINUTE_MS;
        let mut body = Map::new();
        if creating {
            body.insert("slug".into(), self.slug.clone().into());
        }
        body.insert("title".into(), self.title.clone().into());
        body.insert("description".into(), self.description.clone().into());
        body.insert("format".into(), self.format.clone().into());
        body.insert("start_ms".into(), start_ms.into());
        body.insert("duration_ms".into(), duration_ms.into());
        body.insert("visibility".into(), self.visibility.clone().into());
        if !self.freeze_minutes.is_empty() {
            let before_end: i64 = self
                .freeze_minutes
                .parse()
                .map_err(|_| "contest-bad-freeze")?;
            let current = self.current_freeze_ms.parse::<i64>().ok();
            if current.is_none_or(|freeze| frozen_minutes(duration_ms, freeze) != before_end) {
                body.insert(
                    "freeze_ms".into(),
                    (duration_ms - before_end * MINUTE_MS).into(),
                );
            }
        } else if !creating {
            body.insert("freeze_ms".into(), (-1).into());
        }
        if !self.penalty_minutes.is_empty() {
            let penalty: i64 = self
                .penalty_minutes
                .parse()
                .map_err(|_| "contest-bad-penalty")?;
            body.insert("penalty_minutes".into(), penalty.into());
        }
        if !creating || !self.invite_code.is_empty() {
            body.insert("invite_code".into(), self.invite_code.clone().into());
        }
        Ok(Value::Object(body))
    }
}

/// A `datetime-local` value (`YYYY-MM-DDTHH:MM`, seconds optional) read as UTC, to epoch ms.
fn parse_utc_minute(text: &str) -> Option<i64> {
    let (date, clock) = text.trim().split_once(['T', ' '])?;
    let mut date = date.splitn(3, '-').map(str::parse::<i64>);
    let (y, m, d) = (date.next()?.ok()?, date.next()?.ok()?, date.next()?.ok()?);
    let mut clock = clock.splitn(3, ':').map(str::parse::<i64>);
    let (h, min) = (clock.next()?.ok()?, clock.next()?.ok()?);
    let s = clock.next().map_or(Some(0), Result::ok)?;
    let valid = (1..=12).contains(&m)
        && (1..=31).contains(&d)
        && (0..24).contains(&h)
        && (0..60).contains(&min)
        && (0..60).contains(&s);
    if !valid {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm, the inverse of the one in
    // `platform::calendar`).
    let y = if m <= 2 { y - 1 } else { y };
    let (era, yoe) = (y.div_euclid(400), y.rem_euclid(400));
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    Some(((days * 24 + h) * 60 + min) * MINUTE_MS + s * 1000)
}

/// The problem set as typed: one `label slug` per line, blank lines skipped. `Err` is the
/// number of the first line that is not a label and a slug.
fn problem_lines(text: &str) -> Result<Vec<Value>, usize> {
    let mut problems = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            [] => {}
            [label, slug] => problems.push(json!({"label": label, "problem": slug})),
            _ => return Err(index + 1),
        }
    }
    Ok(problems)
}

fn forbidden(visitor: &Visitor) -> Response {
    if visitor.account.is_none() {
        return see_other(&crate::page::login_address(visitor));
    }
    failure_page(
        visitor,
        &ApiFailure {
            status: StatusCode::FORBIDDEN,
            kind: "forbidden".into(),
            detail: visitor.tr.t("error-contest-staff-only"),
        },
    )
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/manage_list.html")]
struct ListPage {
    c: Chrome,
    contests: Vec<Contest>,
}

pub async fn list(State(state): State<WebState>, visitor: Visitor) -> Response {
    if visitor.account.is_none() {
        return forbidden(&visitor);
    }
    match state
        .api
        .get::<Vec<Contest>>("/api/v1/contests", visitor.reader())
        .await
    {
        Ok(contests) => html(ListPage {
            c: Chrome::new(&visitor, visitor.tr.t("manage-contests")),
            contests: contests.into_iter().filter(|c| c.viewer.staff).collect(),
        }),
        Err(failure) => failure_page(&visitor, &failure),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/manage_new.html")]
struct NewPage {
    c: Chrome,
    settings: SettingsForm,
}

pub async fn new_form(visitor: Visitor) -> Response {
    if !visitor.is_staff() {
        return forbidden(&visitor);
    }
    let settings = SettingsForm {
        format: "icpc".into(),
        visibility: "public".into(),
        duration_minutes: "300".into(),
        freeze_minutes: "60".into(),
        ..SettingsForm::default()
    };
    html(NewPage {
        c: Chrome::new(&visitor, visitor.tr.t("contests-new")),
        settings,
    })
}

pub async fn create(State(state): State<WebState>, visitor: Visitor, form: Form) -> Response {
    let settings = SettingsForm::from_form(&form);
    let refused = |status: StatusCode, detail: String| {
        let c = Chrome::new(&visitor, visitor.tr.t("contests-new")).error(detail);
        html_with_status(
            status,
            NewPage {
                c,
                settings: settings.clone(),
            },
        )
    };
    let body = match settings.body(true) {
        Ok(body) => body,
        Err(key) => return refused(StatusCode::UNPROCESSABLE_ENTITY, visitor.tr.t(key)),
    };
    match state
        .api
        .send::<Contest>(
            Method::POST,
            "/api/v1/contests",
            &visitor.writer(form.csrf()),
            &body,
        )
        .await
    {
        Ok(contest) => see_other(&format!("/manage/contests/{}", encode(&contest.slug))),
        Err(failure) => refused(status_of(&failure), failure.detail),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "contests/manage.html")]
struct ManagePage {
    c: Chrome,
    contest: Contest,
    settings: SettingsForm,
    problems_text: String,
    csv: String,
    teams: Vec<Team>,
    rejudgings: Vec<Rejudging>,
    balloons: Vec<Balloon>,
}

impl ManagePage {
    fn verdicts(&self) -> &'static [Verdict] {
        &Verdict::ALL
    }
}

/// What a refused form typed, shown again in its fields.
#[derive(Default)]
struct Kept {
    settings: Option<SettingsForm>,
    problems_text: Option<String>,
    csv: String,
}

/// The result of a form on the management page: its message, or the API's refusal.
type Outcome = Option<Result<String, ApiFailure>>;

async fn manage_page(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    outcome: Outcome,
    kept: Kept,
) -> Response {
    let contest = match fetch_contest(state, visitor, slug).await {
        Ok(contest) if contest.viewer.staff => contest,
        Ok(_) => return forbidden(visitor),
        Err(failure) => return failure_page(visitor, &failure),
    };
    let (api, who) = (&state.api, visitor.reader());
    let paths = ["/teams", "/rejudgings", "/balloons"].map(|tail| contest_api(slug, tail));
    let lists = futures::try_join!(
        api.get::<Vec<Team>>(&paths[0], who),
        api.get::<Vec<Rejudging>>(&paths[1], who),
        api.get::<Vec<Balloon>>(&paths[2], who),
    );
    let (teams, rejudgings, balloons) = match lists {
        Ok(lists) => lists,
        Err(failure) => return failure_page(visitor, &failure),
    };
    let mut c = Chrome::new(
        visitor,
        visitor
            .tr
            .t1("manage-contest-title", "contest", &contest.title),
    );
    let mut status = StatusCode::OK;
    match outcome {
        Some(Ok(message)) => c = c.ok(message),
        Some(Err(failure)) => {
            status = status_of(&failure);
            c = c.error(failure.detail);
        }
        None => {}
    }
    let problems_text = kept.problems_text.unwrap_or_else(|| {
        contest
            .problems
            .iter()
            .map(|p| format!("{} {}\n", p.label, p.slug))
            .collect()
    });
    html_with_status(
        status,
        ManagePage {
            c,
            settings: kept
                .settings
                .unwrap_or_else(|| SettingsForm::from_contest(&contest)),
            contest,
            problems_text,
            csv: kept.csv,
            teams,
            rejudgings,
            balloons,
        },
    )
}

pub async fn manage(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
) -> Response {
    manage_page(&state, &visitor, &slug, None, Kept::default()).await
}

/// A refusal the console makes itself (a field that is not a number), as the API would.
fn invalid(detail: String) -> ApiFailure {
    ApiFailure {
        status: StatusCode::UNPROCESSABLE_ENTITY,
        kind: "invalid".into(),
        detail,
    }
}

/// Runs one management write, then shows the page with `done` or the refusal.
async fn manage_write(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    write: Result<(Method, String, Payload<'_>), ApiFailure>,
    form: &Form,
    done: &str,
    kept: Kept,
) -> Response {
    let answer = match write {
        Ok((method, path, payload)) => state
            .api
            .call(method, &path, &visitor.writer(form.csrf()), payload)
            .await
            .and_then(crate::api::Answer::ok),
        Err(refusal) => Err(refusal),
    };
    match answer {
        Ok(_) => {
            let outcome = Some(Ok(visitor.tr.t(done)));
            manage_page(state, visitor, slug, outcome, Kept::default()).await
        }
        Err(failure) => manage_page(state, visitor, slug, Some(Err(failure)), kept).await,
    }
}

pub async fn update(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let settings = SettingsForm::from_form(&form);
    let write = settings
        .body(false)
        .map(|body| (Method::PATCH, contest_api(&slug, ""), Payload::Json(body)))
        .map_err(|key| invalid(visitor.tr.t(key)));
    let kept = Kept {
        settings: Some(settings),
        ..Kept::default()
    };
    manage_write(&state, &visitor, &slug, write, &form, "manage-saved", kept).await
}

pub async fn set_problems(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let text = form.get("problems").to_string();
    let write = problem_lines(&text)
        .map(|problems| {
            let path = contest_api(&slug, "/problems");
            (Method::PUT, path, Payload::Json(Value::Array(problems)))
        })
        .map_err(|line| invalid(visitor.tr.t1("contest-bad-problem-line", "line", line)));
    let kept = Kept {
        problems_text: Some(text),
        ..Kept::default()
    };
    manage_write(&state, &visitor, &slug, write, &form, "manage-saved", kept).await
}

pub async fn import_teams(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let csv = form.get("csv").to_string();
    let path = contest_api(&slug, "/teams/import");
    let write = Ok((
        Method::POST,
        path,
        Payload::Bytes(csv.as_bytes(), "text/csv"),
    ));
    let kept = Kept {
        csv: csv.clone(),
        ..Kept::default()
    };
    manage_write(
        &state,
        &visitor,
        &slug,
        write,
        &form,
        "contest-teams-imported",
        kept,
    )
    .await
}

/// Freeze, unfreeze or finalize: a POST without a body, refused with the API's reason.
async fn board_action(
    state: &WebState,
    visitor: &Visitor,
    slug: &str,
    action: &str,
    form: Form,
) -> Response {
    let write = Ok((
        Method::POST,
        contest_api(slug, &format!("/{action}")),
        Payload::None,
    ));
    let done = format!("contest-{action}-done");
    manage_write(state, visitor, slug, write, &form, &done, Kept::default()).await
}

pub async fn freeze(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    board_action(&state, &visitor, &slug, "freeze", form).await
}

pub async fn unfreeze(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    board_action(&state, &visitor, &slug, "unfreeze", form).await
}

pub async fn finalize(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    board_action(&state, &visitor, &slug, "finalize", form).await
}

/// The rejudging filter from its form: only the fields given. `Err` is a message key.
fn rejudging_filter(form: &Form) -> Result<Value, &'static str> {
    let mut filter = Map::new();
    for field in ["problem", "verdict"] {
        let value = form.get(field).trim();
        if !value.is_empty() {
            filter.insert(field.into(), value.into());
        }
    }
    for field in ["team_id", "submission_id"] {
        let value = form.get(field).trim().trim_start_matches('#');
        if !value.is_empty() {
            let id: i64 = value.parse().map_err(|_| "contest-bad-id")?;
            filter.insert(field.into(), id.into());
        }
    }
    Ok(Value::Object(filter))
}

pub async fn create_rejudging(
    State(state): State<WebState>,
    visitor: Visitor,
    Path(slug): Path<String>,
    form: Form,
) -> Response {
    let filter = match rejudging_filter(&form) {
        Ok(filter) => filter,
        Err(key) => {
            let refusal = Some(Err(invalid(visitor.tr.t(key))));
            return manage_page(&state, &visitor, &slug, refusal, Kept::default()).await;
        }
    };
    #[derive(Deserialize)]
    struct Created {
        id: i64,
    }
    match state
        .api
        .send::<Created>(
            Method::POST,
            &contest_api(&slug, "/rejudgings"),
            &visitor.writer(form.csrf()),
            &filter,
        )
        .await
    {
        Ok(created) => see_other(&format!(
            "/manage/contests/{}/rejudgings/{}",
            encode(&slug),
            created.id
        )),
        Err(failure) => {
            manage_page(&state, &visitor, &slug, Some(Err(failure)), Kept::default()).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetime_local_values_are_utc() {
        for (text, ms) in [
            ("1970-01-01T00:00", Some(0)),
            ("2000-02-29T00:00", Some(951_782_400_000)),
            ("2026-12-01T16:33", Some(1_796_142_780_000)),
            ("2026-12-01T16:33:37", Some(1_796_142_817_000)),
            ("2026-12-01 16:33", Some(1_796_142_780_000)),
            ("2026-13-01T16:33", None),
            ("2026-12-01T24:00", None),
            ("2026-12-01", None),
            ("", None),
        ] {
            assert_eq!(parse_utc_minute(text), ms, "{text:?}");
        }
        assert_eq!(iso_time(1_796_142_780_000)[..16], *"2026-12-01T16:33");
    }

    #[test]
    fn problem_lines_are_a_label_and_a_slug() {
        assert_eq!(
            problem_lines("A aplusb\n\n  B  hello-world \r\n").unwrap(),
            [
                json!({"label": "A", "problem": "aplusb"}),
                json!({"label": "B", "problem": "hello-world"}),
            ]
        );
        assert_eq!(problem_lines("A aplusb\nB\n"), Err(2));
        assert_eq!(problem_lines("A aplusb extra"), Err(1));
        assert!(problem_lines("").unwrap().is_empty());
    }

    #[test]
    fn the_freeze_is_asked_as_minutes_before_the_end() {
        let form = SettingsForm {
            slug: "spring".into(),
            title: "Spring".into(),
            format: "icpc".into(),
            start: "2026-12-01T10:00".into(),
            duration_minutes: "300".into(),
            freeze_minutes: "60".into(),
            visibility: "public".into(),
            ..SettingsForm::default()
        };
        let created = form.body(true).unwrap();
        assert_eq!(created["duration_ms"], 300 * MINUTE_MS);
        assert_eq!(created["freeze_ms"], 240 * MINUTE_MS);
        assert_eq!(
            created["start_ms"],
            parse_utc_minute("2026-12-01T10:00").unwrap()
        );
        assert!(created.get("invite_code").is_none() && created.get("penalty_minutes").is_none());
        let patch = SettingsForm {
            freeze_minutes: String::new(),
            ..form.clone()
        }
        .body(false)
        .unwrap();
        assert_eq!(patch["freeze_ms"], -1);
        assert!(patch.get("slug").is_none());
        assert_eq!(patch["invite_code"], "");
        // A freeze made by hand at 4:00:20 is shown as 60 minutes before the end, and stays
        // where it is when saved so; other minutes, or another length, move it.
        let by_hand = SettingsForm {
            current_freeze_ms: (240 * MINUTE_MS + 20_000).to_string(),
            ..form.clone()
        };
        assert!(by_hand.body(false).unwrap().get("freeze_ms").is_none());
        let earlier = SettingsForm {
            freeze_minutes: "90".into(),
            ..by_hand.clone()
        };
        assert_eq!(earlier.body(false).unwrap()["freeze_ms"], 210 * MINUTE_MS);
        let longer = SettingsForm {
            duration_minutes: "360".into(),
            ..by_hand
        };
        assert_eq!(longer.body(false).unwrap()["freeze_ms"], 300 * MINUTE_MS);
        let bad = SettingsForm {
            duration_minutes: "five hours".into(),
            ..form
        };
        assert_eq!(bad.body(true), Err("contest-bad-duration"));
    }
}
