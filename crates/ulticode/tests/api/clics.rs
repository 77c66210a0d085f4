//! The CLICS Contest API (2023-06) on `ulticode up`: every endpoint, the formats of its
//! types (TIME, RELTIME, ID), HTTP Basic, what the public may not see during the freeze,
//! ID filters, the error shape, and the event feed with `since_token`.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::{source, spawn_up, Api, Session};

const MIN: i64 = 60_000;
const PASSWORD: &str = "password-of-some-length";

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn is_time(text: &str) -> bool {
    // yyyy-mm-ddThh:mm:ss.uuu+hh:mm (we always write milliseconds and a zone)
    let b = text.as_bytes();
    text.len() == 29
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && (b[23] == b'+' || b[23] == b'-')
        && b[26] == b':'
        && text
            .chars()
            .enumerate()
            .all(|(i, c)| [4, 7, 10, 13, 16, 19, 23, 26].contains(&i) || c.is_ascii_digit())
}

fn is_reltime(text: &str) -> bool {
    let text = text.strip_prefix('-').unwrap_or(text);
    let Some((h, rest)) = text.split_once(':') else {
        return false;
    };
    let ok_hours =
        !h.is_empty() && h.chars().all(|c| c.is_ascii_digit()) && (h == "0" || !h.starts_with('0'));
    let b = rest.as_bytes();
    ok_hours
        && rest.len() == 9
        && b[2] == b':'
        && b[5] == b'.'
        && b[0] <= b'5'
        && b[3] <= b'5'
        && rest
            .chars()
            .enumerate()
            .all(|(i, c)| i == 2 || i == 5 || c.is_ascii_digit())
}

fn is_id(text: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-';
    !text.is_empty()
        && text.len() <= 36
        && text.chars().all(ok_char)
        && !text.starts_with(['-', '.'])
        && !text.ends_with('.')
}

/// Checks every property whose name says its type, recursively.
fn check_types(value: &Value, path: &str) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                let here = format!("{path}.{key}");
                match (key.as_str(), v) {
                    (_, Value::Null) => {}
                    (
                        "time"
                        | "start_time"
                        | "end_time"
                        | "scoreboard_thaw_time"
                        | "started"
                        | "frozen"
                        | "ended"
                        | "thawed"
                        | "finalized"
                        | "end_of_updates",
                        Value::String(s),
                    ) => {
                        assert!(is_time(s), "{here}: TIME {s:?}")
                    }
                    (
                        "contest_time"
                        | "start_contest_time"
                        | "end_contest_time"
                        | "duration"
                        | "scoreboard_freeze_duration",
                        Value::String(s),
                    ) => {
                        assert!(is_reltime(s), "{here}: RELTIME {s:?}")
                    }
                    (
                        "id" | "team_id" | "problem_id" | "language_id" | "submission_id"
                        | "judgement_id" | "judgement_type_id" | "organization_id" | "from_team_id"
                        | "to_team_id" | "reply_to_id",
                        Value::String(s),
                    ) => {
                        assert!(is_id(s), "{here}: ID {s:?}")
                    }
                    ("id" | "team_id" | "problem_id" | "submission_id", other)
                        if path != "scoreboard" =>
                    {
                        panic!("{here}: an ID must be a string, not {other}")
                    }
                    _ => check_types(v, &here),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| check_types(v, path)),
        _ => {}
    }
}

struct Clics<'a> {
    api: &'a Api,
}

impl Clics<'_> {
    async fn get(&self, path: &str, auth: Option<(&str, &str)>) -> (StatusCode, Value) {
        let mut request = self
            .api
            .http
            .get(format!("{}/api/contest-api{path}", self.api.base));
        if let Some((user, password)) = auth {
            request = request.basic_auth(user, Some(password));
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        let body = response.json().await.unwrap_or(Value::Null);
        if status == StatusCode::OK {
            check_types(&body, path);
        }
        (status, body)
    }

    /// The feed's first `n` lines (or fewer at the deadline), parsed.
    async fn feed(
        &self,
        query: &str,
        auth: Option<(&str, &str)>,
        n: usize,
    ) -> (StatusCode, Vec<Value>) {
        let mut request = self
            .api
            .http
            .get(format!(
                "{}/api/contest-api/contests/cup/event-feed{query}",
                self.api.base
            ))
            .timeout(Duration::from_secs(30));
        if let Some((user, password)) = auth {
            request = request.basic_auth(user, Some(password));
        }
        let mut response = request.send().await.unwrap();
        let status = response.status();
        if status != StatusCode::OK {
            return (status, vec![response.json().await.unwrap_or(Value::Null)]);
        }
        assert_eq!(response.headers()["content-type"], "application/x-ndjson");
        let mut text = String::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        while text.lines().count() < n && Instant::now() < deadline {
            match tokio::time::timeout(Duration::from_secs(3), response.chunk()).await {
                Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
                _ => break,
            }
        }
        let lines: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
            .collect();
        for event in &lines {
            let keys: Vec<&String> = event.as_object().unwrap().keys().collect();
            assert!(
                event.get("type").is_some()
                    && event.get("id").is_some()
                    && event.get("data").is_some(),
                "{event}: {keys:?}"
            );
            check_types(&event["data"], event["type"].as_str().unwrap());
        }
        (status, lines)
    }
}

async fn submit(api: &Api, who: &Session, file: &str) -> i64 {
    let (status, body) = api
        .post("/api/v1/submissions", Some(&who.access), json!({"problem": "A", "language": "python3", "source": source(file), "contest": "cup"}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let id = body["id"].as_i64().unwrap();
    api.watch(who, id).await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_contest_api_serves_every_endpoint_to_each_reader() {
    let service = spawn_up();
    let api = Api::new(&service);
    let clics = Clics { api: &api };
    let admin = api.login("admin", &service.admin_password).await;
    let admin_basic = Some(("admin", service.admin_password.as_str()));
    let alice = api.account("alice").await;
    let bob = api.account("bob").await;
    let (status, _) = api
        .post(
            "/api/v1/contests",
            Some(&admin.access),
            json!({"slug": "cup", "title": "The Cup", "format": "icpc",
            "start_ms": now_ms() - 10 * MIN, "duration_ms": 300 * MIN, "freeze_ms": 5 * MIN}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    api.call(
        Method::PUT,
        "/api/v1/contests/cup/problems",
        Some(&admin.access),
        Some(json!([{"label": "A", "problem": "aplusb", "rgb": "#00ff00", "color": "green"}])),
    )
    .await;
    let (_, team_a) = api
        .post(
            "/api/v1/contests/cup/register",
            Some(&alice.access),
            json!({"affiliation": "KTH Royal Institute of Technology"}),
        )
        .await;
    let (_, team_b) = api
        .post(
            "/api/v1/contests/cup/register",
            Some(&bob.access),
            json!({}),
        )
        .await;
    let (ta, tb) = (team_a["id"].to_string(), team_b["id"].to_string());
    let accepted = submit(&api, &alice, "aplusb/submissions/accepted/sum.py").await;
    submit(&api, &bob, "aplusb/submissions/wrong_answer/difference.py").await;
    api.post(
        "/api/v1/contests/cup/clarifications",
        Some(&alice.access),
        json!({"text": "May I?"}),
    )
    .await;
    api.post(
        "/api/v1/contests/cup/clarifications",
        Some(&admin.access),
        json!({"text": "Welcome, everyone."}),
    )
    .await;
    // The verdicts reach the contest's derived data.
    let deadline = Instant::now() + Duration::from_secs(60);
    while clics
        .get("/contests/cup/judgements", admin_basic)
        .await
        .1
        .as_array()
        .map_or(0, Vec::len)
        < 2
    {
        assert!(Instant::now() < deadline, "judgements never arrived");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let (status, info) = clics.get("/", None).await;
    assert_eq!(
        (status, info["version"].as_str()),
        (StatusCode::OK, Some("2023-06")),
        "{info}"
    );
    assert!(info["version_url"].is_string() && info["provider"]["name"].is_string());
    let (_, contests) = clics.get("/contests", None).await;
    assert_eq!(contests[0]["id"], "cup");
    let (_, contest) = clics.get("/contests/cup", None).await;
    assert_eq!(contest["scoreboard_type"], "pass-fail");
    assert_eq!(contest["penalty_time"], 20);
    assert_eq!(contest["duration"], "5:00:00.000");
    assert_eq!(contest["scoreboard_freeze_duration"], "4:55:00.000");
    let (_, access) = clics.get("/contests/cup/access", None).await;
    assert_eq!(access["capabilities"], json!([]));
    let types: Vec<&str> = access["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(
        !types.contains(&"accounts"),
        "the public has no accounts: {types:?}"
    );
    let (_, access) = clics.get("/contests/cup/access", admin_basic).await;
    assert!(access["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["type"] == "accounts"));
    let (_, state) = clics.get("/contests/cup/state", None).await;
    assert!(
        state["started"].is_string() && state["frozen"].is_string() && state["ended"].is_null(),
        "{state}"
    );
    let (_, judgement_types) = clics.get("/contests/cup/judgement-types", None).await;
    let ac = judgement_types
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "AC")
        .unwrap();
    assert_eq!(
        (ac["solved"].as_bool(), ac["penalty"].as_bool()),
        (Some(true), Some(false))
    );
    let (_, languages) = clics.get("/contests/cup/languages", None).await;
    let python = languages
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["id"] == "python3")
        .expect("python3");
    assert_eq!(python["extensions"], json!(["py"]));
    let (_, problems) = clics.get("/contests/cup/problems", None).await;
    assert_eq!(problems[0]["id"], "aplusb");
    assert_eq!(
        (
            problems[0]["label"].as_str(),
            problems[0]["ordinal"].as_i64()
        ),
        (Some("A"), Some(1))
    );
    assert!(
        problems[0]["test_data_count"].as_i64().unwrap() > 0,
        "{problems}"
    );
    assert!(problems[0]["time_limit"].is_number());
    let (_, organizations) = clics.get("/contests/cup/organizations", None).await;
    assert_eq!(
        organizations[0]["name"],
        "KTH Royal Institute of Technology"
    );
    let (_, teams) = clics.get("/contests/cup/teams", None).await;
    assert_eq!(teams.as_array().unwrap().len(), 2);
    let alice_team = teams
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == ta.as_str())
        .unwrap();
    assert_eq!(alice_team["organization_id"], organizations[0]["id"]);
    assert_eq!(alice_team["label"], ta.as_str());
    let (_, one) = clics.get(&format!("/contests/cup/teams/{ta}"), None).await;
    assert_eq!(&one, alice_team);

    // Accounts: the jury sees all, a team its own; `account` is the caller.
    let (_, accounts) = clics.get("/contests/cup/accounts", admin_basic).await;
    assert_eq!(accounts.as_array().unwrap().len(), 3, "{accounts}");
    let (_, mine) = clics
        .get("/contests/cup/accounts", Some(("alice", PASSWORD)))
        .await;
    assert_eq!(mine.as_array().unwrap().len(), 1);
    let (_, me) = clics
        .get("/contests/cup/account", Some(("alice", PASSWORD)))
        .await;
    assert_eq!(
        (me["type"].as_str(), me["team_id"].as_str()),
        (Some("team"), Some(ta.as_str())),
        "{me}"
    );
    let (status, nobody) = clics.get("/contests/cup/account", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{nobody}");
    let (status, wrong) = clics
        .get("/contests/cup/state", Some(("alice", "not-her-password")))
        .await;
    assert_eq!(
        (status, wrong["code"].as_u64()),
        (StatusCode::UNAUTHORIZED, Some(401)),
        "{wrong}"
    );
    // The API's own bearer token works too.
    let response = api
        .http
        .get(format!("{}/api/contest-api/contests/cup/account", api.base))
        .bearer_auth(&bob.access)
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.json::<Value>().await.unwrap()["team_id"],
        tb.as_str()
    );

    // Submissions, judgements and runs: the freeze hides results from the public.
    let (_, submissions) = clics.get("/contests/cup/submissions", None).await;
    assert_eq!(submissions.as_array().unwrap().len(), 2);
    let href = submissions[0]["files"][0]["href"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        href,
        format!(
            "contests/cup/submissions/{}/files",
            submissions[0]["id"].as_str().unwrap()
        )
    );
    let files = api
        .http
        .get(format!("{}/api/contest-api/{href}", api.base))
        .basic_auth("admin", Some(&service.admin_password))
        .send()
        .await
        .unwrap();
    assert_eq!(files.status(), StatusCode::OK);
    let zip = files.bytes().await.unwrap();
    assert!(zip.starts_with(b"PK"), "a zip archive");
    let public_files = api
        .http
        .get(format!("{}/api/contest-api/{href}", api.base))
        .send()
        .await
        .unwrap();
    assert_eq!(public_files.status(), StatusCode::FORBIDDEN);
    let (_, public_judgements) = clics.get("/contests/cup/judgements", None).await;
    assert_eq!(
        public_judgements,
        json!([]),
        "submitted after the freeze: hidden until the thaw"
    );
    let (_, own) = clics
        .get("/contests/cup/judgements", Some(("alice", PASSWORD)))
        .await;
    assert_eq!(
        own.as_array().unwrap().len(),
        1,
        "a team sees its own: {own}"
    );
    assert_eq!(own[0]["judgement_type_id"], "AC");
    let (_, judgements) = clics.get("/contests/cup/judgements", admin_basic).await;
    let (_, filtered) = clics
        .get(
            &format!("/contests/cup/judgements?submission_id={accepted}"),
            admin_basic,
        )
        .await;
    assert_eq!(filtered.as_array().unwrap().len(), 1, "{filtered}");
    assert_eq!(judgements.as_array().unwrap().len(), 2);
    let (_, runs) = clics
        .get(
            &format!(
                "/contests/cup/runs?judgement_id={}",
                filtered[0]["id"].as_str().unwrap()
            ),
            admin_basic,
        )
        .await;
    assert!(!runs.as_array().unwrap().is_empty(), "{runs}");
    assert_eq!(runs[0]["ordinal"], 1);
    let (status, missing) = clics.get("/contests/cup/submissions/999999", None).await;
    assert_eq!(
        (status, missing["code"].as_u64()),
        (StatusCode::NOT_FOUND, Some(404))
    );
    let (status, _) = clics.get("/contests/nope/teams", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Clarifications: the public sees broadcasts; filters on ID properties (empty = null).
    let (_, public_clars) = clics.get("/contests/cup/clarifications", None).await;
    assert_eq!(public_clars.as_array().unwrap().len(), 1);
    let (_, all) = clics.get("/contests/cup/clarifications", admin_basic).await;
    assert_eq!(all.as_array().unwrap().len(), 2);
    let (_, from_jury) = clics
        .get("/contests/cup/clarifications?from_team_id=", admin_basic)
        .await;
    assert_eq!(from_jury[0]["text"], "Welcome, everyone.");

    // Scoreboard and awards: frozen for the public, live for the jury.
    let (_, public_board) = clics.get("/contests/cup/scoreboard", None).await;
    assert!(
        public_board["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["score"]["num_solved"] == 0),
        "{public_board}"
    );
    let first = &public_board["rows"][0]["problems"][0];
    assert_eq!(
        (first["num_pending"].as_u64(), first.get("time")),
        (Some(1), None),
        "{public_board}"
    );
    let (_, board) = clics.get("/contests/cup/scoreboard", admin_basic).await;
    let top = &board["rows"][0];
    assert_eq!(
        (
            top["team_id"].as_str(),
            top["rank"].as_u64(),
            top["score"]["num_solved"].as_u64()
        ),
        (Some(ta.as_str()), Some(1), Some(1)),
        "{board}"
    );
    assert!(top["problems"][0]["time"].is_u64());
    let (_, awards) = clics.get("/contests/cup/awards", admin_basic).await;
    assert!(
        awards
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == "first-to-solve-aplusb" && a["team_ids"] == json!([ta])),
        "{awards}"
    );

    // The event feed: everything first, each line with a token; a reconnection with the
    // last token gets only what came after.
    let (status, lines) = clics.feed("", admin_basic, 500).await;
    assert_eq!(status, StatusCode::OK);
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    for kind in [
        "contest",
        "judgement-types",
        "languages",
        "problems",
        "teams",
        "state",
        "submissions",
        "judgements",
        "clarifications",
    ] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    assert!(lines[0]["id"].is_null() && lines[0]["type"] == "contest");
    let token = lines.last().unwrap()["token"].as_str().unwrap().to_string();
    let (status, bad) = clics.feed("?since_token=nonsense", None, 1).await;
    assert_eq!(
        (status, bad[0]["code"].as_u64()),
        (StatusCode::BAD_REQUEST, Some(400))
    );
    api.post(
        "/api/v1/contests/cup/clarifications",
        Some(&admin.access),
        json!({"text": "Ten minutes left."}),
    )
    .await;
    let (_, after) = clics.feed(&format!("?since_token={token}"), None, 1).await;
    assert_eq!(after.len(), 1, "{after:?}");
    assert_eq!(
        (after[0]["type"].as_str(), after[0]["data"]["text"].as_str()),
        (Some("clarifications"), Some("Ten minutes left."))
    );
    let (_, public_feed) = clics.feed("", None, 500).await;
    assert!(
        public_feed.iter().all(|l| l["type"] != "judgements"),
        "no judgements during the freeze: {public_feed:?}"
    );
}
