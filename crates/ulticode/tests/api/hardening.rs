//! Abuse of the HTTP edge: slow and idle connections, bodies before authorisation, secret test
//! data in verdicts, account lock-out by strangers, look-alike usernames, sessions that outlive
//! a logout, CSRF tokens from another session, unbounded streams, missing security headers.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::harness::{spawn_up, Api, Service};
use crate::security::callers;

fn address(service: &Service) -> String {
    service.base.trim_start_matches("http://").to_string()
}

/// Waits until the server closes `stream`; returns how long that took.
fn closed_within(mut stream: TcpStream, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Some(started.elapsed()),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return Some(started.elapsed())
            }
            Err(_) => return None,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_and_trickling_connections_are_closed_and_capped() {
    let service = spawn_up();
    let address = address(&service);
    let idle = TcpStream::connect(&address).unwrap();
    let mut trickle = TcpStream::connect(&address).unwrap();
    let (idle_closed, trickle_closed) = tokio::task::spawn_blocking(move || {
        // A request head sent a byte at a time, never finished.
        let writer = std::thread::spawn({
            let mut trickle = trickle.try_clone().unwrap();
            move || {
                for byte in b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: " {
                    if trickle.write_all(&[*byte]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(500));
                }
                for _ in 0..60 {
                    if trickle.write_all(b"a").is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(500));
                }
            }
        });
        let idle_closed = closed_within(idle, Duration::from_secs(30));
        trickle.flush().unwrap();
        let trickle_closed = closed_within(trickle, Duration::from_secs(30));
        let _ = writer.join();
        (idle_closed, trickle_closed)
    })
    .await
    .unwrap();
    assert!(idle_closed.is_some(), "an idle connection stayed open 30 s");
    assert!(
        trickle_closed.is_some(),
        "a byte-at-a-time request head stayed open 30 s"
    );

    // Past the per-address cap, new connections are closed at once; the server keeps serving.
    let held: Vec<TcpStream> = (0..128)
        .map(|_| TcpStream::connect(&address).unwrap())
        .collect();
    let extra = TcpStream::connect(&address).unwrap();
    let extra_closed = tokio::task::spawn_blocking(move || {
        let mut extra = extra;
        let _ = extra.write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n");
        closed_within(extra, Duration::from_secs(5))
    })
    .await
    .unwrap();
    assert!(extra_closed.is_some(), "the 129th connection was served");
    drop(held);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (status, _) = Api::new(&service).get("/health/live", None).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn bodies_are_refused_before_authorisation_and_capped_per_route() {
    let service = spawn_up();
    let api = Api::new(&service);
    let c = callers(&api, &service).await;
    // A plain user announcing a 60 MiB upload gets a 403 without the server waiting for it.
    let address = address(&service);
    let token = c.user.access.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(&address).unwrap();
        write!(
            stream,
            "PUT /api/v1/problems/aplusb/package HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/zip\r\nContent-Length: 62914560\r\n\r\n"
        )
        .unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut head = [0u8; 64];
        let n = stream.read(&mut head).unwrap_or(0);
        String::from_utf8_lossy(&head[..n]).into_owned()
    })
    .await
    .unwrap();
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer:?}");
    // JSON routes take 1 MiB at most, problem routes included.
    let big = "x".repeat(2 << 20);
    let (status, body) = api
        .post(
            "/api/v1/problems",
            Some(&c.setter.access),
            json!({"slug": "big", "title": big}),
        )
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
}

#[tokio::test]
async fn secret_test_details_are_shown_to_staff_only() {
    let service = spawn_up();
    let api = Api::new(&service);
    let c = callers(&api, &service).await;
    // Right on the samples; on secret tests it prints its input back, inside one token.
    let leak = "a, b = map(int, input().split())\n\
                print(a + b if (a, b) in [(1, 2), (-5, 10)] else f'x{a}_{b}')\n";
    let id = api.submit(&c.user, "aplusb", "python3", leak).await;
    let events = api.watch(&c.user, id).await;
    assert_eq!(events.last().unwrap().1["verdict"], "WA", "{events:?}");
    let tests_as = |body: &Value| body["tests"].as_array().unwrap().clone();

    let (_, as_admin) = api
        .get(&format!("/api/v1/submissions/{id}"), Some(&c.admin.access))
        .await;
    let secret = tests_as(&as_admin)
        .into_iter()
        .find(|t| t["verdict"] == "WA")
        .expect("a wrong secret test");
    assert_eq!(secret["group"], "secret");
    let message = secret["message"].as_str().unwrap();
    assert!(!message.is_empty(), "staff see the checker's message");
    assert!(
        !message.contains("x0_0"),
        "the message quotes the output: {message}"
    );

    let (_, as_author) = api
        .get(&format!("/api/v1/submissions/{id}"), Some(&c.user.access))
        .await;
    for test in tests_as(&as_author) {
        let sample = test["group"] == "sample";
        assert!(test["message"] == "" || sample, "{test}");
        assert!(sample || test["output"].is_null(), "{test}");
    }
    let (status, as_other) = api
        .get(&format!("/api/v1/submissions/{id}"), Some(&c.other.access))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(as_other["source"].is_null());
    for test in tests_as(&as_other) {
        assert_eq!(test["message"], "", "{test}");
        assert!(test["output"].is_null(), "{test}");
    }
}

/// A client whose connections come from `ip` (any 127.0.0.0/8 address reaches the server).
fn client_from(ip: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::from(ip)))
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

async fn login_from(
    client: &reqwest::Client,
    service: &Service,
    username: &str,
    password: &str,
) -> StatusCode {
    client
        .post(format!("{}/api/v1/auth/login", service.base))
        .json(&json!({"username": username, "password": password}))
        .send()
        .await
        .unwrap()
        .status()
}

#[tokio::test]
async fn strangers_cannot_lock_an_account() {
    let service = spawn_up();
    let api = Api::new(&service);
    api.register("victim", "the-victims-password").await;
    let stranger = client_from([127, 0, 0, 2]);
    let mut refused = 0;
    for _ in 0..12 {
        match login_from(&stranger, &service, "victim", "guess").await {
            StatusCode::UNAUTHORIZED => {}
            StatusCode::TOO_MANY_REQUESTS => refused += 1,
            other => panic!("{other}"),
        }
    }
    assert!(refused > 0, "the stranger was never slowed down");
    // The owner, from another address, logs in at once.
    let owner = client_from([127, 0, 0, 3]);
    assert_eq!(
        login_from(&owner, &service, "victim", "the-victims-password").await,
        StatusCode::OK
    );
    // Half a megabyte of username is an ordinary failed login, not stored work.
    let long = "u".repeat(512 << 10);
    assert_eq!(
        login_from(&owner, &service, &long, "whatever").await,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn usernames_are_unique_whatever_their_case_or_form() {
    let service = spawn_up();
    let api = Api::new(&service);
    api.register("Ada", "password-of-some-length").await;
    for taken in ["ada", "ADA", "\u{ff21}da"] {
        let (status, body) = api
            .post(
                "/api/v1/auth/register",
                None,
                json!({"username": taken, "password": "password-of-some-length"}),
            )
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{taken}: {body}");
    }
    let session = api.login("aDa", "password-of-some-length").await;
    let (_, me) = api.get("/api/v1/auth/me", Some(&session.access)).await;
    assert_eq!(me["username"], "Ada");
}

#[tokio::test]
async fn logout_ends_the_access_token_and_its_streams() {
    let service = spawn_up();
    let api = Api::new(&service);
    let session = api.account("leaver").await;
    let (status, _) = api.get("/api/v1/auth/me", Some(&session.access)).await;
    assert_eq!(status, StatusCode::OK);
    // A stream on a submission that stays queued behind four slow ones (two workers).
    let slow = "import time\ntime.sleep(30)\n";
    for _ in 0..4 {
        api.submit(&session, "aplusb", "python3", slow).await;
    }
    let queued = api.submit(&session, "aplusb", "python3", slow).await;
    let mut stream = api
        .http
        .get(format!("{}/api/v1/submissions/{queued}/events", api.base))
        .bearer_auth(&session.access)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let (status, body) = api
        .post(
            "/api/v1/auth/logout",
            None,
            json!({"refresh_token": session.refresh}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, _) = api.get("/api/v1/auth/me", Some(&session.access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let mut seen = String::new();
    let ended = tokio::time::timeout(Duration::from_secs(15), async {
        while let Ok(Some(chunk)) = stream.chunk().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    assert!(ended.is_ok(), "the stream outlived the session by 15 s");
    assert!(
        !seen.contains("event: done"),
        "the stream ran to the verdict instead of ending with the session: {seen}"
    );
}

#[tokio::test]
async fn live_status_streams_are_capped_per_user() {
    let service = spawn_up();
    let api = Api::new(&service);
    let session = api.account("watcher").await;
    let slow = "import time\ntime.sleep(30)\n";
    for _ in 0..4 {
        api.submit(&session, "aplusb", "python3", slow).await;
    }
    let queued = api.submit(&session, "aplusb", "python3", slow).await;
    let open = |_| {
        api.http
            .get(format!("{}/api/v1/submissions/{queued}/events", api.base))
            .bearer_auth(&session.access)
            .send()
    };
    let mut streams = Vec::new();
    for i in 0..16 {
        let response = open(i).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "stream {i}");
        streams.push(response);
    }
    let refused = open(16).await.unwrap();
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    drop(streams.pop());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(open(17).await.unwrap().status(), StatusCode::OK);
}

#[tokio::test]
async fn csrf_tokens_belong_to_their_session() {
    let service = spawn_up();
    let api = Api::new(&service);
    for name in ["first", "second"] {
        api.register(name, "password-of-some-length").await;
    }
    let cookies_of = |response: &reqwest::Response| -> (String, String) {
        let mut access = String::new();
        let mut csrf = String::new();
        for value in response.headers().get_all("set-cookie") {
            let text = value.to_str().unwrap();
            let pair = text.split(';').next().unwrap();
            if let Some(v) = pair.strip_prefix("ulticode_access=") {
                access = v.to_string();
            }
            if let Some(v) = pair.strip_prefix("ulticode_csrf=") {
                csrf = v.to_string();
            }
        }
        (access, csrf)
    };
    let mut sessions = Vec::new();
    for name in ["first", "second"] {
        let response = api
            .http
            .post(format!("{}/api/v1/auth/login", api.base))
            .json(&json!({"username": name, "password": "password-of-some-length"}))
            .send()
            .await
            .unwrap();
        sessions.push(cookies_of(&response));
    }
    let preview = |access: &str, csrf: &str| {
        api.http
            .post(format!("{}/api/v1/runs/preview", api.base))
            .header(
                "cookie",
                format!("ulticode_access={access}; ulticode_csrf={csrf}"),
            )
            .header("x-csrf-token", csrf)
            .json(&json!({"language": "python3", "source": "print(1)"}))
            .send()
    };
    let (first_access, first_csrf) = &sessions[0];
    let (_, second_csrf) = &sessions[1];
    assert_eq!(
        preview(first_access, second_csrf).await.unwrap().status(),
        StatusCode::FORBIDDEN,
        "another session's CSRF token was accepted"
    );
    assert_eq!(
        preview(first_access, first_csrf).await.unwrap().status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let service = spawn_up();
    let api = Api::new(&service);
    api.register("headers", "password-of-some-length").await;
    let requests = [
        (Method::GET, "/health/live", None),
        (Method::GET, "/no/such/route", None),
        (
            Method::POST,
            "/api/v1/auth/login",
            Some(json!({"username": "headers", "password": "password-of-some-length"})),
        ),
    ];
    for (method, path, body) in requests {
        let mut request = api.http.request(method, format!("{}{path}", api.base));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let headers = response.headers();
        for (name, value) in [
            ("x-content-type-options", "nosniff"),
            ("x-frame-options", "DENY"),
            ("cache-control", "no-store"),
            ("referrer-policy", "no-referrer"),
        ] {
            assert_eq!(
                headers.get(name).and_then(|v| v.to_str().ok()),
                Some(value),
                "{path}: {name}"
            );
        }
        assert!(headers.contains_key("content-security-policy"), "{path}");
    }
}

#[tokio::test]
async fn admin_rejudges_run_once_per_key_and_once_per_submission() {
    let service = spawn_up();
    let api = Api::new(&service);
    let c = callers(&api, &service).await;
    let id = api
        .submit(
            &c.user,
            "aplusb",
            "python3",
            "print(sum(map(int, input().split())))",
        )
        .await;
    api.watch(&c.user, id).await;
    let generation = |body: &Value| body["status"]["generation"].as_i64().unwrap();
    let batch = |key: Option<&'static str>| {
        let mut request = api
            .http
            .post(format!("{}/api/v1/admin/rejudge", api.base))
            .bearer_auth(&c.admin.access)
            .json(&json!({"submission_ids": vec![id; 500]}));
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        request.send()
    };
    // Eight concurrent requests with one key: one rejudge.
    let answers = futures::future::join_all((0..8).map(|_| batch(Some("one-key")))).await;
    for answer in answers {
        let status = answer.unwrap().status();
        assert!(
            status == StatusCode::OK || status == StatusCode::CONFLICT,
            "{status}"
        );
    }
    let (_, after) = api
        .get(&format!("/api/v1/submissions/{id}"), Some(&c.admin.access))
        .await;
    assert_eq!(generation(&after), 2, "one key, one rejudge");
    // One id named 500 times: rejudged once.
    let response = batch(None).await.unwrap();
    let results: Value = response.json().await.unwrap();
    assert_eq!(results.as_array().map(Vec::len), Some(1), "{results}");
    let (_, after) = api
        .get(&format!("/api/v1/submissions/{id}"), Some(&c.admin.access))
        .await;
    assert_eq!(generation(&after), 3);
}

#[tokio::test]
async fn one_users_runs_never_hold_every_run_slot() {
    let service = spawn_up();
    let api = Api::new(&service);
    let busy = api.account("busy").await;
    let patient = api.account("patient").await;
    for _ in 0..3 {
        let (status, body) = api
            .post(
                "/api/v1/runs",
                Some(&busy.access),
                json!({"language": "python3", "source": "import time\ntime.sleep(4)"}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let started = Instant::now();
    let (status, body) = api
        .post(
            "/api/v1/runs/preview",
            Some(&patient.access),
            json!({"language": "python3", "source": "print(1)"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["state"], "done", "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "another user's preview waited {:?} behind the busy user's runs",
        started.elapsed()
    );
}

#[tokio::test]
async fn one_user_cannot_fill_the_nodes_run_receipts() {
    let service = spawn_up();
    let api = Api::new(&service);
    let hoarder = api.account("hoarder").await;
    let mut kept = 0;
    let refusal = loop {
        let (status, body) = api
            .post(
                "/api/v1/runs",
                Some(&hoarder.access),
                json!({"language": "python3", "source": "print(1)"}),
            )
            .await;
        match status {
            StatusCode::ACCEPTED => kept += 1,
            StatusCode::TOO_MANY_REQUESTS
                if body["type"]
                    .as_str()
                    .unwrap_or("")
                    .ends_with("/rate-limited") =>
            {
                tokio::time::sleep(Duration::from_millis(1_100)).await;
            }
            StatusCode::TOO_MANY_REQUESTS => break body,
            other => panic!("{other}: {body}"),
        }
        assert!(kept <= 32, "more than 32 receipts kept for one user");
    };
    assert_eq!(kept, 32);
    assert!(
        refusal["type"]
            .as_str()
            .unwrap()
            .ends_with("/too-many-runs"),
        "{refusal}"
    );
    // Everyone else still runs.
    let bystander = api.account("bystander").await;
    let (status, body) = api
        .post(
            "/api/v1/runs/preview",
            Some(&bystander.access),
            json!({"language": "python3", "source": "print(1)"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn an_abandoned_preview_keeps_its_slot_until_its_program_ends() {
    let service = spawn_up();
    let api = Api::new(&service);
    let user = api.account("leaves").await;
    let preview = |key: Option<&'static str>, source: &'static str, timeout: Duration| {
        let mut request = api
            .http
            .post(format!("{}/api/v1/runs/preview", api.base))
            .bearer_auth(&user.access)
            .timeout(timeout)
            .json(&json!({"language": "python3", "source": source}));
        if let Some(key) = key {
            request = request.header("idempotency-key", key);
        }
        request.send()
    };
    let slow = "import time\ntime.sleep(6)\n";
    // The client gives up while the program runs.
    assert!(preview(Some("abandoned"), slow, Duration::from_secs(2))
        .await
        .is_err());
    // The same key names the receipt: still running.
    let existing: Value = preview(Some("abandoned"), slow, Duration::from_secs(60))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_ne!(existing["state"], "done", "{existing}");
    let id = existing["id"].as_str().unwrap().to_string();
    // The user's next run waits for the abandoned one's program to end.
    let next = preview(None, "print(1)", Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(next.status(), StatusCode::OK);
    let (_, abandoned) = api
        .get(&format!("/api/v1/runs/{id}"), Some(&user.access))
        .await;
    assert_eq!(
        abandoned["state"], "done",
        "another run started while the abandoned program still ran: {abandoned}"
    );
}

#[tokio::test]
async fn one_users_backlog_does_not_delay_anothers_verdict() {
    let service = spawn_up();
    let api = Api::new(&service);
    let flooder = api.account("flooder").await;
    let regular = api.account("regular").await;
    // Eight submissions that each hold a judge slot until the time limit (two slots).
    let slow = "import time\ntime.sleep(30)\n";
    for _ in 0..8 {
        api.submit(&flooder, "aplusb", "python3", slow).await;
    }
    let started = Instant::now();
    let id = api
        .submit(
            &regular,
            "aplusb",
            "python3",
            "print(sum(map(int, input().split())))",
        )
        .await;
    let events = api.watch(&regular, id).await;
    assert_eq!(events.last().unwrap().1["verdict"], "AC", "{events:?}");
    assert!(
        started.elapsed() < Duration::from_secs(7),
        "the verdict waited {:?} behind another user's backlog",
        started.elapsed()
    );
}
