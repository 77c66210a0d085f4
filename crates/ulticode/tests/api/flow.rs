//! The whole flow over HTTP, on both shapes: register → log in → list problems → submit A+B →
//! watch the live status → AC; a wrong solution → WA; an admin rejudge → a new generation with
//! the same verdict.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::harness::{source, spawn_distributed, spawn_up, Api, Service};

async fn whole_flow(service: &Service) {
    let api = Api::new(service);
    api.register("ada", "correct horse battery").await;
    let ada = api.login("ada", "correct horse battery").await;

    let (status, page) = api.get("/api/v1/problems", None).await;
    assert_eq!(status, StatusCode::OK);
    let slugs: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["slug"].as_str().unwrap())
        .collect();
    assert!(slugs.contains(&"aplusb"), "{page}");
    let aplusb = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["slug"] == "aplusb")
        .unwrap();
    assert_eq!(aplusb["samples"][0]["input"], "1 2\n", "{aplusb}");

    let accepted = api
        .submit(
            &ada,
            "aplusb",
            "cpp17",
            &source("aplusb/submissions/accepted/sum.cpp"),
        )
        .await;
    let events = api.watch(&ada, accepted).await;
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.last(), Some(&"done"), "{events:?}");
    assert!(
        names
            .iter()
            .all(|n| ["queued", "compiling", "running", "done"].contains(n)),
        "{events:?}"
    );
    let (_, last) = events.last().unwrap();
    assert_eq!(last["verdict"], "AC", "{events:?}");
    assert_eq!(last["generation"], 1);

    let (status, judged) = api
        .get(
            &format!("/api/v1/submissions/{accepted}"),
            Some(&ada.access),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(judged["status"]["verdict"], "AC");
    let tests = judged["tests"].as_array().unwrap();
    assert!(tests.len() >= 3, "{judged}");
    for test in tests {
        let sample = test["name"].as_str().unwrap().starts_with("sample/");
        assert_eq!(
            test["output"].is_string(),
            sample,
            "hidden output shown: {test}"
        );
    }

    let wrong = api
        .submit(
            &ada,
            "aplusb",
            "python3",
            &source("aplusb/submissions/wrong_answer/difference.py"),
        )
        .await;
    let events = api.watch(&ada, wrong).await;
    assert_eq!(events.last().unwrap().1["verdict"], "WA", "{events:?}");

    // Admin rejudge: a new generation, the same verdict.
    let admin = api.login("admin", &service.admin_password).await;
    let (status, rejudged) = api
        .post(
            &format!("/api/v1/admin/submissions/{accepted}/rejudge"),
            Some(&admin.access),
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{rejudged}");
    assert_eq!(rejudged["outcome"]["outcome"], "rejudged", "{rejudged}");
    assert_eq!(rejudged["outcome"]["generation"], 2);
    let events = api.watch(&ada, accepted).await;
    let (_, last) = events.last().unwrap();
    assert_eq!(last["verdict"], "AC", "{events:?}");
    assert_eq!(last["generation"], 2, "{events:?}");

    // Batch rejudge is idempotent on its key: a retry returns the first answer and makes no
    // further generation; the same key with another body is a conflict.
    let batch = |ids: Vec<i64>| {
        api.http
            .post(format!("{}/api/v1/admin/rejudge", api.base))
            .bearer_auth(&admin.access)
            .header("idempotency-key", "storm-1")
            .json(&json!({"submission_ids": ids}))
            .send()
    };
    let first: Value = batch(vec![wrong]).await.unwrap().json().await.unwrap();
    assert_eq!(first[0]["outcome"]["generation"], 2, "{first}");
    let retry: Value = batch(vec![wrong]).await.unwrap().json().await.unwrap();
    assert_eq!(retry, first);
    let conflict = batch(vec![wrong, accepted]).await.unwrap();
    assert_eq!(conflict.status(), StatusCode::CONFLICT);
    let events = api.watch(&ada, wrong).await;
    let (_, last) = events.last().unwrap();
    assert_eq!(
        (last["verdict"].clone(), last["generation"].clone()),
        (json!("WA"), json!(2))
    );
    // The audit log consumes the owners' events: it catches up, with one record per
    // rejudge actually made (the idempotent retry and the refused conflict made none).
    let rejudges = |audit: &Value| audit.as_array().map_or(0, Vec::len);
    let path = "/api/v1/admin/audit?action=submission.rejudged&limit=200";
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut audit = api.get(path, Some(&admin.access)).await.1;
    while rejudges(&audit) < 2 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        audit = api.get(path, Some(&admin.access)).await.1;
    }
    assert_eq!(
        rejudges(&audit),
        2,
        "one per rejudge actually made: {audit}"
    );
    // Newest first with `before`; `after` and `before` together are refused.
    let (_, newest) = api
        .get(
            "/api/v1/admin/audit?before=9223372036854775807&limit=3",
            Some(&admin.access),
        )
        .await;
    let ids: Vec<i64> = newest
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert!(
        ids.len() == 3 && ids.windows(2).all(|w| w[0] > w[1]),
        "{newest}"
    );
    let (status, _) = api
        .get("/api/v1/admin/audit?before=5&after=1", Some(&admin.access))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    for record in audit.as_array().unwrap() {
        assert_eq!(record["owner"], "submission", "{record}");
        assert!(
            record["trace_id"].is_string(),
            "caused by a request: {record}"
        );
        assert_ne!(record["actor_id"], 0, "on behalf of the admin: {record}");
    }

    let (_, mine) = api.get("/api/v1/submissions", Some(&ada.access)).await;
    let ids: Vec<i64> = mine["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids, vec![wrong, accepted], "newest first: {mine}");

    let (_, pipeline) = api.get("/api/v1/admin/pipeline", Some(&admin.access)).await;
    let outbox: Value = pipeline["submission"]["outbox_by_state"].clone();
    assert!(
        outbox
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["state"] == "SENT" && row["count"].as_i64() >= Some(3)),
        "{pipeline}"
    );
    // Everything judged is acknowledged (right after its verdict commits): no entry stays
    // pending on either queue.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let (_, pipeline) = api.get("/api/v1/admin/pipeline", Some(&admin.access)).await;
        let pending = pipeline["pending_entries"]
            .as_array()
            .expect("pending entries");
        if pending.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still pending: {pipeline}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_whole_flow_on_the_embedded_shape() {
    let service = spawn_up();
    whole_flow(&service).await;
    service.stop();
}

#[tokio::test]
async fn the_whole_flow_on_the_distributed_shape() {
    let service = spawn_distributed().await;
    whole_flow(&service).await;
    service.stop();
}
