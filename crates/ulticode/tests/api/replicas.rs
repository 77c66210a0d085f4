//! Two API replicas of the distributed shape behave as one service: a rate limit counts the
//! requests of both (its buckets are in Redis), and a live-status stream on one replica sees
//! the verdict another process wrote as it lands (PostgreSQL `NOTIFY`), not on a timer.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{source, spawn_distributed, Api, Service};

/// The distributed shape with a second `serve` replica, and a client of each.
async fn two_replicas() -> (Service, Api, Api) {
    let mut service = spawn_distributed().await;
    let second = service.spawn_replica();
    let (a, b) = (
        Api::new(&service),
        Api {
            base: second,
            ..Api::new(&service)
        },
    );
    (service, a, b)
}

#[tokio::test]
async fn replicas_share_the_login_limit() {
    let (service, a, b) = two_replicas().await;
    let credentials = json!({"username": "admin", "password": service.admin_password});
    // The login limit is a burst of 10 per client address: taken half on each replica.
    for n in 0..10 {
        let replica = if n % 2 == 0 { &a } else { &b };
        let (status, body) = replica
            .post("/api/v1/auth/login", None, credentials.clone())
            .await;
        assert_eq!(status, StatusCode::OK, "login {n}: {body}");
    }
    for replica in [&a, &b] {
        let response = replica
            .http
            .post(format!("{}/api/v1/auth/login", replica.base))
            .json(&credentials)
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::TOO_MANY_REQUESTS,
            "the 11th login in the minute, wherever it lands"
        );
        assert!(response.headers().contains_key("retry-after"));
    }
}

#[tokio::test]
async fn a_stream_on_one_replica_sees_verdicts_as_they_land() {
    let (_service, a, b) = two_replicas().await;
    let ada = a.account("ada").await;
    let sum = source("aplusb/submissions/accepted/sum.py");
    let submit = || a.submit(&ada, "aplusb", "python3", &sum);
    // Warm the judge worker (its first compile of the problem's checker) outside the timing.
    let first = submit().await;
    assert_eq!(
        a.watch(&ada, first).await.last().unwrap().1["verdict"],
        "AC"
    );

    let id = submit().await;
    let started = Instant::now();
    let events = b.watch(&ada, id).await;
    let took = started.elapsed();
    let (name, last) = events.last().unwrap();
    assert_eq!(
        (name.as_str(), &last["verdict"]),
        ("done", &json!("AC")),
        "{events:?}"
    );
    // Without announcements across processes the stream would see the verdict only at its
    // 30-second safety re-read.
    assert!(
        took < Duration::from_secs(10),
        "the verdict reached the other replica's stream after {took:?}"
    );
}
