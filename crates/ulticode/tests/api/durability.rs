//! The embedded shape's promise under crashes: `ulticode up` is killed with SIGKILL at chosen
//! moments — while submissions are taken in, while they are judged, while a batch rejudge
//! is applied, while a package upload is validated — and restarted on the same data
//! directory. Every submission that got a 2xx reaches a verdict, no generation is judged
//! twice, and no upload is half applied. What the killed process was judging is resumed by
//! the next one as it starts, not when its judging leases (a minute) would have expired.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use platform::db::Row;
use platform::Db;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::harness::{examples, source, spawn_up_in, Api, Service, Session};

/// Where in the work a kill lands.
#[derive(Debug, Clone, Copy)]
enum Moment {
    Intake,
    Judging,
    Rejudge,
    Upload,
}

/// xorshift64: the kill delays are random but replayable (`ULTICODE_DURABILITY_SEED`).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// What the clients were told, across every incarnation.
#[derive(Default)]
struct Ledger {
    /// Submissions answered 2xx.
    accepted: Vec<i64>,
    /// Statuses other than 2xx and 429 (rate limit): each one is a failure of the test.
    refused: Vec<String>,
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// The clients of every incarnation.
struct Workload {
    users: Vec<Session>,
    admin: Session,
    ledger: Arc<Mutex<Ledger>>,
    /// The upload target's second package.
    extended: Vec<u8>,
}

/// Submits accepted solutions round-robin for `users`, one every `ULTICODE_DURABILITY_PACE_MS`
/// (default 60), until the process dies (a connection error ends it).
async fn submit(base: String, users: Vec<Session>, ledger: Arc<Mutex<Ledger>>) {
    let pace = env_number("ULTICODE_DURABILITY_PACE_MS").unwrap_or(60);
    let http = client();
    let sources = [
        ("c", source("aplusb/submissions/accepted/sum.c")),
        ("python3", source("aplusb/submissions/accepted/sum.py")),
    ];
    for i in 0.. {
        let (language, text) = &sources[i % sources.len()];
        let sent = http
            .post(format!("{base}/api/v1/submissions"))
            .bearer_auth(&users[i % users.len()].access)
            .json(&json!({"problem": "aplusb", "language": language, "source": text}))
            .send()
            .await;
        let Ok(response) = sent else { return };
        let status = response.status();
        let Ok(body) = response.json::<Value>().await else {
            return;
        };
        {
            let mut ledger = ledger.lock().unwrap();
            if status.is_success() {
                ledger.accepted.push(body["id"].as_i64().unwrap());
            } else if status != StatusCode::TOO_MANY_REQUESTS {
                ledger.refused.push(format!("submit: {status} {body}"));
            }
        }
        tokio::time::sleep(Duration::from_millis(pace)).await;
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|s| s.parse().ok())
}

/// The submissions in `judging` and the attempt judging each, read from the data directory.
async fn judging(data: &Path) -> BTreeMap<i64, String> {
    let db = Db::sqlite_owner(data, "submission").await.unwrap();
    let rows = db
        .query("SELECT id, current_attempt_id FROM submissions WHERE state = 'judging'")
        .fetch_all(db.pool())
        .await
        .unwrap();
    db.close().await;
    rows.iter()
        .map(|r| (r.try_get(0).unwrap(), r.try_get(1).unwrap()))
        .collect()
}

async fn state_of(api: &Api, token: &str, id: i64) -> Value {
    let (status, body) = api
        .get(&format!("/api/v1/submissions/{id}"), Some(token))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Works until the kill: submissions throughout, and the moment's own work.
async fn work_then_kill(
    service: Service,
    moment: Moment,
    rng: &mut Rng,
    work: &Workload,
) -> tempfile::TempDir {
    let (admin, ledger) = (&work.admin, &work.ledger);
    let api = Api::new(&service);
    let submitter = tokio::spawn(submit(
        service.base.clone(),
        work.users.clone(),
        ledger.clone(),
    ));
    match moment {
        Moment::Intake => {
            tokio::time::sleep(Duration::from_millis(300 + rng.below(1500))).await;
        }
        Moment::Judging => {
            // Kill while something is being judged (a compile or a test run).
            let deadline = Instant::now() + Duration::from_secs(30);
            'judged: loop {
                let recent: Vec<i64> = ledger
                    .lock()
                    .unwrap()
                    .accepted
                    .iter()
                    .rev()
                    .take(5)
                    .copied()
                    .collect();
                for id in recent {
                    let view = state_of(&api, &admin.access, id).await;
                    let state = view["status"]["state"].as_str().unwrap_or_default();
                    if state != "pending" && state != "done" {
                        break 'judged;
                    }
                }
                assert!(Instant::now() < deadline, "nothing was ever being judged");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
        Moment::Rejudge => {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let ids = ledger.lock().unwrap().accepted.clone();
            let request = api
                .http
                .post(format!("{}/api/v1/admin/rejudge", api.base))
                .bearer_auth(&admin.access)
                .header("idempotency-key", uuid::Uuid::new_v4().to_string())
                .json(&json!({"submission_ids": ids}))
                .send();
            let rejudge = tokio::spawn(request);
            tokio::time::sleep(Duration::from_millis(rng.below(60))).await;
            drop(rejudge);
        }
        Moment::Upload => {
            let request = api
                .http
                .put(format!("{}/api/v1/problems/durable/package", api.base))
                .bearer_auth(&admin.access)
                .header("content-type", "application/zip")
                .body(work.extended.clone())
                .send();
            let upload = tokio::spawn(request);
            tokio::time::sleep(Duration::from_millis(20 + rng.below(200))).await;
            drop(upload);
        }
    }
    let data = service.kill().unwrap();
    let _ = submitter.await;
    data
}

#[tokio::test]
async fn sigkill_at_any_moment_loses_no_accepted_submission() {
    let seed = env_number("ULTICODE_DURABILITY_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1
    });
    println!("ULTICODE_DURABILITY_SEED={seed}");
    let mut rng = Rng(seed);

    let service = spawn_up_in(tempfile::tempdir().unwrap());
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let mut users = Vec::new();
    for i in 0..4 {
        users.push(api.account(&format!("durable-{i}")).await);
    }
    // The upload target, with the example's package; the kill during an upload replaces it
    // with the example plus one test: after the kill it holds one of them whole.
    let (status, body) = api
        .post(
            "/api/v1/problems",
            Some(&admin.access),
            json!({"slug": "durable", "title": "Durable", "visibility": "public"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let plain = judge::package::archive::pack(&examples().join("aplusb")).unwrap();
    let extended_dir = tempfile::tempdir().unwrap();
    copy_dir(&examples().join("aplusb"), extended_dir.path());
    let secret = extended_dir.path().join("data/secret");
    std::fs::write(secret.join("zz-durable.in"), "40 2\n").unwrap();
    std::fs::write(secret.join("zz-durable.ans"), "42\n").unwrap();
    let extended = judge::package::archive::pack(extended_dir.path()).unwrap();
    let response = api
        .http
        .put(format!("{}/api/v1/problems/durable/package", api.base))
        .bearer_auth(&admin.access)
        .header("content-type", "application/zip")
        .body(plain)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let work = Workload {
        users,
        admin,
        ledger: Arc::new(Mutex::new(Ledger::default())),
        extended,
    };
    let moments = [
        Moment::Intake,
        Moment::Judging,
        Moment::Rejudge,
        Moment::Upload,
    ];
    // `ULTICODE_DURABILITY_KILLS` makes it a long run (the moments in turn).
    let kills = env_number("ULTICODE_DURABILITY_KILLS").unwrap_or(4) as usize;
    let mut service = service;
    for (round, moment) in moments.into_iter().cycle().take(kills).enumerate() {
        let data = work_then_kill(service, moment, &mut rng, &work).await;
        let orphaned = judging(data.path()).await;
        println!(
            "round {round}: killed during {moment:?}; {} left judging",
            orphaned.len()
        );
        service = spawn_up_in(data);
        // Resumed as the process starts: within 2 s of readiness, none of them is still
        // held by an attempt of the dead process.
        let ready = Instant::now();
        loop {
            let now = judging(service.data_dir.as_ref().unwrap().path()).await;
            let stuck: Vec<_> = orphaned
                .iter()
                .filter(|(id, attempt)| now.get(id) == Some(attempt))
                .collect();
            if stuck.is_empty() {
                println!(
                    "round {round}: resumed within {:?} of readiness",
                    ready.elapsed()
                );
                break;
            }
            assert!(
                ready.elapsed() < Duration::from_secs(2),
                "still judged by the killed process's attempts: {stuck:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    // Every accepted submission reaches its verdict, and each judged generation has one.
    let api = Api::new(&service);
    let admin = &work.admin.access;
    let accepted = work.ledger.lock().unwrap().accepted.clone();
    // Something was taken in (how much depends on the machine's load, not on the promise).
    assert!(
        accepted.len() >= kills,
        "too little was submitted: {accepted:?}"
    );
    // A submission whose judging is cut by five kills ends in SE by the recovery budget (the
    // guard against a submission that crashes the process each time): only in a long run.
    let given_up = all_judged_once(&api, admin, &accepted, kills >= 5).await;
    println!(
        "{kills} kills: {} submissions judged, {given_up} ended SE by the recovery budget",
        accepted.len()
    );
    let refused = work.ledger.lock().unwrap().refused.clone();
    assert!(refused.is_empty(), "{refused:?}");

    // The upload target holds one whole package and judges with it.
    let (status, problem) = api.get("/api/v1/problems/durable", Some(admin)).await;
    assert_eq!(status, StatusCode::OK, "{problem}");
    assert_eq!(problem["has_test_data"], true, "{problem}");
    let user = &work.users[0];
    let id = api
        .submit(
            user,
            "durable",
            "c",
            &source("aplusb/submissions/accepted/sum.c"),
        )
        .await;
    let events = api.watch(user, id).await;
    assert_eq!(events.last().unwrap().1["verdict"], "AC", "{events:?}");

    let data = service.stop().unwrap();
    let submissions = Db::sqlite_owner(data.path(), "submission").await.unwrap();
    let judged = submissions
        .query("SELECT payload FROM events_outbox WHERE event_type = 'SubmissionJudged'")
        .fetch_all(submissions.pool())
        .await
        .unwrap();
    let mut seen = BTreeSet::new();
    for row in &judged {
        let payload: Value = serde_json::from_str(&row.try_get::<String, _>(0).unwrap()).unwrap();
        let key = (
            payload["submission_id"].clone(),
            payload["generation"].clone(),
        );
        assert!(seen.insert(format!("{key:?}")), "judged twice: {key:?}");
    }
    let app = Db::sqlite_owner(data.path(), "app").await.unwrap();
    let dangling: i64 = app
        .query(
            "SELECT COUNT(*) FROM problems p WHERE p.package_hash IS NOT NULL \
             AND NOT EXISTS (SELECT 1 FROM packages k WHERE k.hash = p.package_hash)",
        )
        .fetch_one(app.pool())
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(
        dangling, 0,
        "a problem names a package that was never stored"
    );
}

/// Every submission of `accepted` reaches an accepted verdict (within 4 minutes plus half a
/// second per submission), with one verdict per generation; or, when `budget_may_end` holds,
/// the SE of an exhausted recovery budget. Returns how many ended so.
async fn all_judged_once(api: &Api, admin: &str, accepted: &[i64], budget_may_end: bool) -> usize {
    let deadline = Instant::now() + Duration::from_secs(240 + accepted.len() as u64 / 2);
    let mut given_up = 0;
    for id in accepted {
        loop {
            let view = state_of(api, admin, *id).await;
            if view["status"]["state"] == "done" {
                let budget_spent = view["status"]["verdict"] == "SE"
                    && view["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("gave up after 5 recoveries"));
                if budget_may_end && budget_spent {
                    given_up += 1;
                } else {
                    assert_eq!(view["status"]["verdict"], "AC", "{view}");
                }
                let generations: Vec<i64> = view["history"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|g| g["generation"].as_i64().unwrap())
                    .collect();
                let distinct: BTreeSet<_> = generations.iter().collect();
                assert_eq!(distinct.len(), generations.len(), "{view}");
                break;
            }
            assert!(
                Instant::now() < deadline,
                "submission {id} never finished: {view}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    given_up
}

/// The distributed shape: `serve` killed with SIGKILL while submissions come in and are
/// judged (the dispatcher and the judge worker go on, retrying the judging port), restarted
/// on the same database and address. Every submission answered 2xx reaches its verdict, once
/// per generation: PostgreSQL commits before the answer (`synchronous_commit` on).
#[tokio::test]
async fn sigkill_of_serve_loses_no_accepted_submission() {
    let seed = env_number("ULTICODE_DURABILITY_SEED").unwrap_or(0x5eed_5e7e) | 1;
    println!("ULTICODE_DURABILITY_SEED={seed}");
    let mut rng = Rng(seed);
    let mut service = crate::harness::spawn_distributed().await;
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let mut users = Vec::new();
    for i in 0..3 {
        users.push(api.account(&format!("durable-{i}")).await);
    }
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    for round in 0..3 {
        let submitter = tokio::spawn(submit(service.base.clone(), users.clone(), ledger.clone()));
        tokio::time::sleep(Duration::from_millis(300 + rng.below(1500))).await;
        service.kill_serve();
        let _ = submitter.await;
        service.restart_serve();
        println!(
            "round {round}: serve killed and back; {} accepted so far",
            ledger.lock().unwrap().accepted.len()
        );
    }
    // Tokens issued before the kills still verify: the signing keys are in the database.
    let accepted = ledger.lock().unwrap().accepted.clone();
    assert!(
        accepted.len() >= 3,
        "too little was submitted: {accepted:?}"
    );
    all_judged_once(&api, &admin.access, &accepted, false).await;
    let refused = ledger.lock().unwrap().refused.clone();
    assert!(refused.is_empty(), "{refused:?}");
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Back-pressure: past the configured backlog, submitting answers 503 with `Retry-After`
/// (nothing is taken in that cannot be judged soon); once the backlog drains, it accepts.
#[tokio::test]
async fn a_full_backlog_refuses_submissions_with_retry_after() {
    let service = crate::harness::spawn_up_with(
        tempfile::tempdir().unwrap(),
        &["--max-unjudged".to_string(), "1".to_string()],
    );
    let api = Api::new(&service);
    let user = api.account("backlogged").await;
    // At least a second of CPU before its verdict: the backlog holds it meanwhile.
    let slow = api
        .submit(
            &user,
            "aplusb",
            "python3",
            &source("aplusb/submissions/time_limit_exceeded/busy.py"),
        )
        .await;
    let submit = || {
        api.http
            .post(format!("{}/api/v1/submissions", api.base))
            .bearer_auth(&user.access)
            .json(&json!({"problem": "aplusb", "language": "c",
                          "source": source("aplusb/submissions/accepted/sum.c")}))
            .send()
    };
    let refused = submit().await.unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()["retry-after"], "10");
    assert_eq!(
        refused.headers()["content-type"],
        "application/problem+json"
    );
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["type"]
            .as_str()
            .unwrap()
            .ends_with("judge-backlog-full"),
        "{body}"
    );
    let events = api.watch(&user, slow).await;
    assert_eq!(events.last().unwrap().1["verdict"], "TLE", "{events:?}");
    assert_eq!(submit().await.unwrap().status(), StatusCode::ACCEPTED);
}
