//! A whole ICPC contest on `ulticode up`: teams register, submit inside the window (and are
//! refused outside it), the board is derived from the verdict events (freeze hides, the
//! jury sees live), clarifications, a rejudging cancelled and one applied, unfreeze,
//! finalize with its refusals, exports, and a virtual participation afterwards.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::{source, spawn_distributed, spawn_up, Api, Service, Session};

const MIN: i64 = 60_000;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

async fn contest_submit(
    api: &Api,
    who: &Session,
    contest: &str,
    label: &str,
    file: &str,
) -> (StatusCode, Value) {
    api.post(
        "/api/v1/submissions",
        Some(&who.access),
        json!({"problem": label, "language": "python3", "source": source(file), "contest": contest}),
    )
    .await
}

/// Polls the board until `ready` holds.
async fn board_until(
    api: &Api,
    who: Option<&Session>,
    path: &str,
    ready: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (status, board) = api.get(path, who.map(|s| s.access.as_str())).await;
        assert_eq!(status, StatusCode::OK, "{board}");
        if ready(&board) {
            return board;
        }
        assert!(
            Instant::now() < deadline,
            "the board never got there: {board}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn row(board: &Value, team: i64) -> &Value {
    board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["team_id"] == team)
        .unwrap_or_else(|| panic!("no row for team {team}: {board}"))
}

async fn patch(api: &Api, who: &Session, path: &str, body: Value) -> (StatusCode, Value) {
    api.call(Method::PATCH, path, Some(&who.access), Some(body))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_icpc_contest_from_registration_to_final_results_embedded() {
    whole_contest(spawn_up()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_icpc_contest_from_registration_to_final_results_distributed() {
    whole_contest(spawn_distributed().await).await;
}

async fn whole_contest(service: Service) {
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let alice = api.account("alice").await;
    let bob = api.account("bob").await;
    let carol = api.account("carol").await;

    // A contest running for 10 minutes, frozen from minute 5.
    let start = now_ms() - 10 * MIN;
    let (status, contest) = api
        .post(
            "/api/v1/contests",
            Some(&admin.access),
            json!({"slug": "spring", "title": "Spring <Cup>", "format": "icpc", "start_ms": start,
                   "duration_ms": 120 * MIN, "freeze_ms": 5 * MIN, "medals": {"gold": 1, "silver": 0, "bronze": 1}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{contest}");
    assert_eq!(contest["status"], "running");
    assert_eq!(contest["penalty_minutes"], 20);
    let (status, refused) = api
        .post("/api/v1/contests", Some(&alice.access), json!({"slug": "mine", "title": "x", "format": "icpc", "start_ms": start, "duration_ms": MIN}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    let (status, bad) = api
        .post("/api/v1/contests", Some(&admin.access), json!({"slug": "bad", "title": "x", "format": "icpc", "start_ms": start, "duration_ms": 10}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    let (status, set) = api
        .call(
            Method::PUT,
            "/api/v1/contests/spring/problems",
            Some(&admin.access),
            Some(json!([{"label": "A", "problem": "aplusb", "color": "red", "rgb": "#ff0000"}])),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!(set["problems"][0]["label"], "A");
    let (status, problem) = api
        .get("/api/v1/contests/spring/problems/A", Some(&carol.access))
        .await;
    assert_eq!(
        (status, problem["slug"].as_str()),
        (StatusCode::OK, Some("aplusb")),
        "{problem}"
    );
    let (status, _) = api.get("/api/v1/contests/spring/problems/Z", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Outside the contest (not registered): refused with the reason.
    let (status, closed) = contest_submit(
        &api,
        &carol,
        "spring",
        "A",
        "aplusb/submissions/accepted/sum.py",
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{closed}");
    assert!(
        closed["detail"].as_str().unwrap().contains("register"),
        "{closed}"
    );

    let (status, alice_team) = api
        .post(
            "/api/v1/contests/spring/register",
            Some(&alice.access),
            json!({"team_name": "Alice's <b>team</b>"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{alice_team}");
    let (status, again) = api
        .post(
            "/api/v1/contests/spring/register",
            Some(&alice.access),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    let (_, bob_team) = api
        .post(
            "/api/v1/contests/spring/register",
            Some(&bob.access),
            json!({}),
        )
        .await;
    let (alice_id, bob_id) = (
        alice_team["id"].as_i64().unwrap(),
        bob_team["id"].as_i64().unwrap(),
    );

    // Alice: wrong, then right; Bob: right. All after the freeze.
    let (status, wrong) = contest_submit(
        &api,
        &alice,
        "spring",
        "A",
        "aplusb/submissions/wrong_answer/difference.py",
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{wrong}");
    let wrong_id = wrong["id"].as_i64().unwrap();
    api.watch(&alice, wrong_id).await;
    let (_, right) = contest_submit(
        &api,
        &alice,
        "spring",
        "aplusb",
        "aplusb/submissions/accepted/sum.py",
    )
    .await;
    api.watch(&alice, right["id"].as_i64().unwrap()).await;
    let (_, bobs) = contest_submit(
        &api,
        &bob,
        "spring",
        "A",
        "aplusb/submissions/accepted/sum.py",
    )
    .await;
    api.watch(&bob, bobs["id"].as_i64().unwrap()).await;

    let live = board_until(
        &api,
        Some(&admin),
        "/api/v1/contests/spring/scoreboard",
        |b| {
            b["rows"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["solved"] == 1)
        },
    )
    .await;
    assert_eq!(live["view"], "live");
    let a = row(&live, alice_id);
    assert_eq!(a["cells"][0]["num_judged"], 2);
    let minutes = a["cells"][0]["time"].as_i64().unwrap();
    assert!((10..12).contains(&minutes), "{a}");
    assert_eq!(a["penalty"], minutes + 20);
    assert_eq!(row(&live, bob_id)["rank"], 1, "{live}");
    assert_eq!(row(&live, alice_id)["rank"], 2, "{live}");

    // The public board is frozen: the attempts after minute 5 are pending.
    let (_, public) = api.get("/api/v1/contests/spring/scoreboard", None).await;
    assert_eq!(
        (public["view"].as_str(), public["frozen"].as_bool()),
        (Some("public"), Some(true)),
        "{public}"
    );
    assert_eq!(row(&public, alice_id)["solved"], 0);
    assert_eq!(row(&public, alice_id)["cells"][0]["num_pending"], 2);
    let (status, _) = api
        .get(
            "/api/v1/contests/spring/scoreboard?view=live",
            Some(&alice.access),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    // A team sees its own verdicts.
    let (_, mine) = api
        .get("/api/v1/contests/spring/submissions", Some(&alice.access))
        .await;
    assert_eq!(mine.as_array().unwrap().len(), 2, "{mine}");
    assert_eq!(mine[0]["verdict"], "AC");

    // Clarifications: a question reaches the jury; finalize waits for its answer.
    let (status, question) = api
        .post(
            "/api/v1/contests/spring/clarifications",
            Some(&alice.access),
            json!({"problem": "A", "text": "Are negative numbers allowed?"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{question}");
    // The jury hears of it in its inbox (the Notification owner).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, inbox) = api.get("/api/v1/notifications", Some(&admin.access)).await;
        if inbox
            .as_array()
            .is_some_and(|a| a.iter().any(|n| n["kind"] == "contest_clarification"))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no clarification notification: {inbox}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (_, bobs_view) = api
        .get("/api/v1/contests/spring/clarifications", Some(&bob.access))
        .await;
    assert_eq!(
        bobs_view.as_array().unwrap().len(),
        0,
        "a team's question is private: {bobs_view}"
    );
    let (status, refused) = api
        .post(
            "/api/v1/contests/spring/finalize",
            Some(&admin.access),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert!(
        refused["detail"].as_str().unwrap().contains("not ended"),
        "{refused}"
    );

    // A rejudging of the wrong answer: the old verdict counts until applied; cancel keeps it.
    let (status, rejudging) = api
        .post(
            "/api/v1/contests/spring/rejudgings",
            Some(&admin.access),
            json!({"verdict": "WA"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{rejudging}");
    assert_eq!(rejudging["submissions"], 1, "{rejudging}");
    let path = format!("/api/v1/contests/spring/rejudgings/{}", rejudging["id"]);
    let preview = board_until(&api, Some(&admin), &path, |r| r["judged"] == 1).await;
    assert_eq!(
        preview["matrix"],
        json!([{"old": "WA", "new": "WA", "submissions": [wrong_id]}])
    );
    let (status, cancelled) = api
        .post(&format!("{path}/cancel"), Some(&admin.access), json!({}))
        .await;
    assert_eq!(
        (status, cancelled["state"].as_str()),
        (StatusCode::OK, Some("cancelled")),
        "{cancelled}"
    );
    let (status, again) = api
        .post(&format!("{path}/apply"), Some(&admin.access), json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    let (_, second) = api
        .post(
            "/api/v1/contests/spring/rejudgings",
            Some(&admin.access),
            json!({"submission_id": wrong_id}),
        )
        .await;
    let path = format!("/api/v1/contests/spring/rejudgings/{}", second["id"]);
    board_until(&api, Some(&admin), &path, |r| r["judged"] == 1).await;
    let (status, applied) = api
        .post(&format!("{path}/apply"), Some(&admin.access), json!({}))
        .await;
    assert_eq!(
        (status, applied["state"].as_str()),
        (StatusCode::OK, Some("applied")),
        "{applied}"
    );
    let after = board_until(
        &api,
        Some(&admin),
        "/api/v1/contests/spring/scoreboard",
        |b| b["rows"].as_array().unwrap().len() == 2,
    )
    .await;
    assert_eq!(
        row(&after, alice_id)["penalty"],
        minutes + 20,
        "same verdict, same board"
    );

    // The contest ends: unfreeze reveals, finalize waits for the answer.
    let (status, ended) = patch(
        &api,
        &admin,
        "/api/v1/contests/spring",
        json!({"start_ms": now_ms() - 200 * MIN}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{ended}");
    assert_eq!(ended["status"], "ended");
    let (status, refused) = api
        .post(
            "/api/v1/contests/spring/finalize",
            Some(&admin.access),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        refused["detail"].as_str().unwrap().contains("unanswered"),
        "{refused}"
    );
    let (status, answer) = api
        .post(
            "/api/v1/contests/spring/clarifications",
            Some(&admin.access),
            json!({"reply_to": question["id"], "text": "No.", "to_all": true}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{answer}");
    let (_, bobs_view) = api
        .get("/api/v1/contests/spring/clarifications", Some(&bob.access))
        .await;
    assert_eq!(bobs_view[0]["text"], "No.", "an answer to all: {bobs_view}");
    let (status, _) = api
        .post(
            "/api/v1/contests/spring/unfreeze",
            Some(&admin.access),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, public) = api.get("/api/v1/contests/spring/scoreboard", None).await;
    assert_eq!(public["frozen"], false);
    assert_eq!(
        public["rows"], after["rows"],
        "unfrozen: the public board is the live one"
    );
    let (status, final_) = api
        .post(
            "/api/v1/contests/spring/finalize",
            Some(&admin.access),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{final_}");
    let awards = public["awards"].as_array().unwrap();
    let award = |id: &str| {
        awards
            .iter()
            .find(|a| a["id"] == id)
            .map(|a| a["team_ids"].clone())
    };
    assert_eq!(award("winner"), Some(json!([bob_id])));
    assert_eq!(
        award("first-to-solve-A"),
        Some(json!([alice_id])),
        "Alice's accepted run came first, though Bob won"
    );

    // Exports.
    let results = api
        .http
        .get(format!("{}/api/v1/contests/spring/results.tsv", api.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let lines: Vec<&str> = results.lines().collect();
    assert_eq!(lines[0], "results\t1");
    assert_eq!(
        lines[1],
        format!(
            "{bob_id}\t1\tGold Medal\t1\t{}\t{}\t",
            row(&after, bob_id)["penalty"],
            row(&after, bob_id)["last_solve"]
        )
    );
    assert!(
        lines[2].starts_with(&format!("{alice_id}\t2\tBronze Medal\t1\t")),
        "{results}"
    );
    let csv = api
        .http
        .get(format!(
            "{}/api/v1/contests/spring/scoreboard.csv",
            api.base
        ))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        csv.starts_with("rank,team_id,team,affiliation,solved,score,penalty,A_attempts,A_time\r\n"),
        "{csv}"
    );
    let (_, balloons) = api
        .get("/api/v1/contests/spring/balloons", Some(&admin.access))
        .await;
    assert_eq!(balloons.as_array().unwrap().len(), 2, "{balloons}");
    assert_eq!(
        (
            balloons[0]["team_id"].as_i64(),
            balloons[0]["first_to_solve"].as_bool()
        ),
        (Some(alice_id), Some(true))
    );

    // After the end: upsolving is shown beside the score, a virtual participant is unranked.
    let (status, upsolve) = contest_submit(
        &api,
        &alice,
        "spring",
        "A",
        "aplusb/submissions/accepted/sum.py",
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{upsolve}");
    api.watch(&alice, upsolve["id"].as_i64().unwrap()).await;
    let upsolved = board_until(&api, None, "/api/v1/contests/spring/scoreboard", |b| {
        row(b, alice_id)["upsolved"] == json!(["A"])
    })
    .await;
    assert_eq!(
        row(&upsolved, alice_id)["penalty"],
        minutes + 20,
        "upsolving is never in the score"
    );
    let dave = api.account("dave").await;
    let (status, virtual_team) = api
        .post(
            "/api/v1/contests/spring/virtual",
            Some(&dave.access),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{virtual_team}");
    let dave_id = virtual_team["id"].as_i64().unwrap();
    let (_, run) = contest_submit(
        &api,
        &dave,
        "spring",
        "A",
        "aplusb/submissions/accepted/sum.py",
    )
    .await;
    api.watch(&dave, run["id"].as_i64().unwrap()).await;
    let seen = board_until(
        &api,
        Some(&dave),
        "/api/v1/contests/spring/scoreboard",
        |b| {
            b["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["team_id"] == dave_id && r["solved"] == 1)
        },
    )
    .await;
    assert_eq!(seen["view"], "virtual");
    assert_eq!(row(&seen, dave_id)["rank"], Value::Null);
    assert!(
        seen["contest_time_ms"].as_i64().unwrap() < 5 * MIN,
        "{seen}"
    );
    assert_eq!(
        row(&seen, bob_id)["solved"],
        0,
        "at dave's elapsed time nobody had solved A yet"
    );
}
