//! The contest pages rendered from canned API answers: a fake API stands in for the real one
//! (the console only ever sees its HTTP answers), so the templates meet the documented shapes.

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use tower::ServiceExt;

use crate::api::Api;

const MIN: i64 = 60_000;

fn contest() -> Value {
    json!({
        "id": 1, "slug": "spring", "title": "Spring <Cup>", "description": "Solve *fast*.",
        "format": "icpc", "start_ms": 1_796_140_000_000_i64, "duration_ms": 300 * MIN,
        "end_ms": 1_796_140_000_000_i64 + 300 * MIN, "freeze_ms": 240 * MIN,
        "unfreeze_at_ms": null, "unfrozen_at_ms": null, "finalized_at_ms": null,
        "penalty_minutes": 20, "visibility": "public", "registration_start_ms": null,
        "registration_end_ms": null, "upsolving": true,
        "medals": {"gold": 1, "silver": 0, "bronze": 0}, "status": "running", "frozen": true,
        "problems": [{"label": "A", "ordinal": 0, "problem_id": 1, "slug": "aplusb",
            "title": "A plus B", "color": "red", "rgb": "#ff0000", "points": 100.0,
            "score_mode": "max_subtask", "time_limit_ms": 1000}],
        "viewer": {"role": null, "team_id": null, "virtual_start_ms": null, "staff": false},
        "created_by": 1, "version": 3
    })
}

fn board() -> Value {
    let cell = |judged: u32, pending: u32, solved: bool, time: Option<i64>, first: bool| {
        json!({"label": "A", "num_judged": judged, "num_pending": pending, "solved": solved,
               "time": time, "penalty": 0, "score": null, "first_to_solve": first})
    };
    let row = |rank: Option<u32>, id: i64, name: &str, is_virtual: bool, cell: Value| {
        json!({"rank": rank, "team_id": id, "team_name": name, "is_virtual": is_virtual,
               "hidden": false, "solved": u32::from(cell["solved"] == true), "penalty": 65,
               "score": null, "last_solve": null, "medal": null, "cells": [cell],
               "upsolved": []})
    };
    json!({
        "contest": "spring", "format": "icpc", "view": "public", "frozen": true,
        "freeze_ms": 240 * MIN, "contest_time_ms": 250 * MIN,
        "problems": [{"label": "A", "title": "A plus B", "color": "red", "rgb": "#ff0000", "points": 100.0}],
        "rows": [
            row(Some(1), 7, "Alice's <b>team</b>", false, cell(2, 0, true, Some(45), true)),
            row(Some(2), 8, "bob", false, cell(1, 2, false, None, false)),
            row(None, 9, "carol", true, cell(1, 0, true, Some(12), false)),
        ],
        "awards": [], "board_version": 5
    })
}

fn rejudging() -> Value {
    json!({"id": 4, "state": "open", "filter": {"problem": "A"}, "created_by": 1, "created_at_ms": 0,
           "closed_at_ms": null, "submissions": 3, "judged": 2, "not_started": [],
           "matrix": [{"old": "WA", "new": "AC", "submissions": [11, 12]},
                      {"old": "AC", "new": null, "submissions": [13]}],
           "score_deltas": []})
}

fn problem_details(status: StatusCode, kind: &str, detail: &str) -> (StatusCode, Json<Value>) {
    (
        status,
        Json(
            json!({"type": format!("https://ulticode.dev/problems/{kind}"), "title": kind,
                    "status": status.as_u16(), "detail": detail}),
        ),
    )
}

/// A contest like `spring` that ended, seen by its staff.
fn ended_for_staff() -> Value {
    let mut contest = contest();
    contest["slug"] = "autumn".into();
    contest["status"] = "ended".into();
    contest["frozen"] = false.into();
    contest["viewer"] =
        json!({"role": "admin", "team_id": null, "virtual_start_ms": null, "staff": true});
    contest
}

/// The API as far as these pages ask it: a running, frozen ICPC contest whose problem is
/// hidden, and a submission the contest refuses; `autumn` is one that ended, for its staff.
fn fake_api() -> Router {
    Router::new()
        .route("/api/v1/contests/autumn", get(|| async { Json(ended_for_staff()) }))
        .route(
            "/api/v1/contests/autumn/teams",
            get(|| async {
                Json(json!([{"id": 7, "name": "Alice's <b>team</b>", "affiliation": "", "category": "",
                             "hidden": false, "is_virtual": false, "members": ["alice"]}]))
            }),
        )
        .route(
            "/api/v1/contests/autumn/balloons",
            get(|| async {
                Json(json!([{"submission_id": 31, "team_id": 7, "team_name": "Alice's <b>team</b>",
                             "label": "A", "color": "red", "contest_time_ms": 45 * MIN, "first_to_solve": true}]))
            }),
        )
        .route("/api/v1/contests/autumn/rejudgings", get(|| async { Json(json!([rejudging()])) }))
        .route("/api/v1/contests/autumn/rejudgings/4", get(|| async { Json(rejudging()) }))
        .route(
            "/api/v1/contests/autumn/clarifications",
            get(|| async {
                Json(json!([{"id": 3, "from_team_id": 7, "to_team_id": null, "problem": "A",
                             "reply_to": null, "text": "Is <n> positive?\nReally?", "created_at_ms": 0,
                             "contest_time_ms": 61 * MIN, "answered": false}]))
            }),
        )
        .route(
            "/api/v1/auth/me",
            get(|| async { Json(json!({"id": 2, "username": "alice", "role": "user"})) }),
        )
        .route("/api/v1/contests/spring", get(|| async { Json(contest()) }))
        .route(
            "/api/v1/contests/spring/scoreboard",
            get(|| async { Json(board()) }),
        )
        .route(
            "/api/v1/languages",
            get(|| async { Json(json!([{"id": "python3", "name": "Python 3", "version": "3.13"}])) }),
        )
        .route(
            "/api/v1/problems/aplusb",
            get(|| async { problem_details(StatusCode::NOT_FOUND, "not-found", "no problem aplusb") }),
        )
        .route(
            "/api/v1/submissions",
            post(|| async {
                problem_details(StatusCode::CONFLICT, "contest-closed", "register for the contest first")
            }),
        )
}

async fn page(request: Request<Body>) -> (StatusCode, String) {
    let response = crate::routes(Api::new(fake_api()), false)
        .oneshot(request)
        .await
        .unwrap();
    let status = response.status();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn the_board_marks_first_solves_pending_runs_virtual_rows_and_the_freeze() {
    let request = Request::get("/contests/spring/scoreboard/table")
        .body(Body::empty())
        .unwrap();
    let (status, html) = page(request).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(
        html.contains("The scoreboard was frozen with 60 minutes remaining - submissions in the last 60 minutes of the contest are still shown as pending."),
        "{html}"
    );
    assert!(
        html.contains("Alice&#39;s &#60;b&#62;team&#60;/b&#62;"),
        "{html}"
    );
    assert!(!html.contains("<b>team</b>"), "{html}");
    assert!(html.contains("first-to-solve"), "{html}");
    assert!(html.contains("first to solve"), "{html}");
    assert!(
        html.contains(">+2</span> <span class=\"cell-time\">45</span>"),
        "{html}"
    );
    assert!(
        html.contains(">-1</span> <span class=\"cell-pending\">?2</span>"),
        "{html}"
    );
    let carol = html.split("data-team=\"9\"").nth(1).unwrap();
    assert!(
        carol.starts_with(">\n  <td class=\"num rank\"></td>"),
        "{carol}"
    );
    assert!(carol.contains("virtual-mark"), "{carol}");
    assert!(!html.contains("<html"), "a fragment, not a page: {html}");
}

#[tokio::test]
async fn the_board_page_reloads_its_table_on_the_api_stream() {
    let request = Request::get("/contests/spring/scoreboard")
        .body(Body::empty())
        .unwrap();
    let (status, html) = page(request).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(
        html.contains("sse-connect=\"/api/v1/contests/spring/scoreboard/events\""),
        "{html}"
    );
    assert!(
        html.contains("hx-get=\"/contests/spring/scoreboard/table\" hx-trigger=\"sse:board\""),
        "{html}"
    );
    assert!(
        html.contains("<title>Scoreboard: Spring &#60;Cup&#62; · UltiCode</title>"),
        "{html}"
    );
}

#[tokio::test]
async fn a_refused_contest_submission_shows_the_form_again_with_the_reason() {
    let request = Request::post("/contests/spring/problems/A/submit")
        .header(
            header::COOKIE,
            format!("{}=token", platform::http::ACCESS_COOKIE),
        )
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("csrf=x&language=python3&source=print%281%29"))
        .unwrap();
    let (status, html) = page(request).await;
    assert_eq!(status, StatusCode::CONFLICT, "{html}");
    assert!(html.contains("register for the contest first"), "{html}");
    assert!(html.contains("id=\"statement-unavailable\""), "{html}");
    assert!(html.contains(">print(1)</textarea>"), "{html}");
    assert!(
        html.contains("action=\"/contests/spring/problems/A/submit\""),
        "{html}"
    );
    assert!(html.contains("A. A plus B"), "{html}");
}

#[tokio::test]
async fn a_visitor_who_is_not_a_member_is_offered_registration() {
    let request = Request::get("/contests/spring")
        .header(
            header::COOKIE,
            format!("{}=token", platform::http::ACCESS_COOKIE),
        )
        .body(Body::empty())
        .unwrap();
    let (status, html) = page(request).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(
        html.contains("action=\"/contests/spring/register\""),
        "{html}"
    );
    assert!(html.contains("<em>fast</em>"), "{html}");
    assert!(
        html.contains("href=\"/contests/spring/problems/A\""),
        "{html}"
    );
    assert!(!html.contains("id=\"virtual-form\""), "{html}");
}

fn logged_in(path: &str) -> Request<Body> {
    Request::get(path)
        .header(
            header::COOKIE,
            format!("{}=token", platform::http::ACCESS_COOKIE),
        )
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn the_staff_page_holds_the_settings_problems_teams_board_actions_and_balloons() {
    let (status, html) = page(logged_in("/manage/contests/autumn")).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(
        html.contains(
            "id=\"freeze_minutes\" name=\"freeze_minutes\" inputmode=\"numeric\" value=\"60\""
        ),
        "{html}"
    );
    assert!(html.contains("value=\"2026-12-01T15:46\""), "{html}");
    assert!(html.contains(">A aplusb\n</textarea>"), "{html}");
    assert!(
        html.contains("id=\"unfreeze-button\"") && html.contains("id=\"finalize-button\""),
        "{html}"
    );
    assert!(!html.contains("id=\"freeze-button\""), "{html}");
    assert!(html.contains("<tr class=\"first-to-solve\"><td>45:00</td><td>Alice&#39;s &#60;b&#62;team&#60;/b&#62;</td>"), "{html}");
    assert!(
        html.contains("href=\"/manage/contests/autumn/rejudgings/4\""),
        "{html}"
    );
}

#[tokio::test]
async fn a_rejudging_previews_old_against_new_verdicts() {
    let (status, html) = page(logged_in("/manage/contests/autumn/rejudgings/4")).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    let matrix = html.split("id=\"rejudging-matrix\"").nth(1).unwrap();
    let rows: Vec<&str> = matrix.split("<tr>").skip(2).collect();
    assert!(
        rows[0].contains(
            "Accepted</span></th>\n<td></td><td><a href=\"/submissions/13\">13</a> </td>"
        ),
        "{matrix}"
    );
    assert!(rows[1].contains("Wrong answer</span></th>\n<td><a href=\"/submissions/11\">11</a> <a href=\"/submissions/12\">12</a> </td><td></td>"), "{matrix}");
    assert!(
        html.contains("hx-trigger=\"every 2s\""),
        "still judging: {html}"
    );
    assert!(
        html.contains("/rejudgings/4/apply") && html.contains("/rejudgings/4/cancel"),
        "{html}"
    );
}

#[tokio::test]
async fn the_jury_answers_an_open_request_and_sees_it_as_text() {
    let (status, html) = page(logged_in("/contests/autumn/clarifications")).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(
        html.contains("Is &#60;n&#62; positive?<br>Really?<br>"),
        "{html}"
    );
    assert!(html.contains("name=\"reply_to\" value=\"3\""), "{html}");
    assert!(html.contains("id=\"announce-form\""), "{html}");
    assert!(
        !html.contains("id=\"ask-form\""),
        "the jury is not a team: {html}"
    );
}

#[test]
fn the_freeze_banner_counts_the_minutes_from_the_freeze_to_the_end() {
    assert_eq!(super::frozen_minutes(300 * MIN, 240 * MIN), 60);
    assert_eq!(super::frozen_minutes(300 * MIN, 240 * MIN + 20_000), 60);
    assert_eq!(super::frozen_minutes(300 * MIN, 300 * MIN), 0);
}
