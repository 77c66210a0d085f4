//! Search on `ulticode up`: problems are found as App's events reach the index (Japanese
//! too), hidden problems never are, and the index — derived data — comes back whole after
//! it is deleted.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use crate::harness::{spawn_distributed_with, spawn_up, spawn_up_in, Api};

async fn until_found(api: &Api, query: &str, found: bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (status, results) = api.get(&format!("/api/v1/search?q={query}"), None).await;
        // A search worker that is still starting answers 503 meanwhile.
        if status != reqwest::StatusCode::SERVICE_UNAVAILABLE {
            assert_eq!(status, reqwest::StatusCode::OK, "{results}");
            if (results["total"].as_u64().unwrap_or(0) > 0) == found {
                return results;
            }
        }
        assert!(
            Instant::now() < deadline,
            "{query}: found={found} never held: {results}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn problems_are_found_hidden_ones_never_and_a_deleted_index_comes_back() {
    let service = spawn_up();
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let results = until_found(&api, "plus", true).await;
    assert_eq!(results["hits"][0]["slug"], "aplusb", "{results}");
    assert!(
        results["hits"][0]["title_html"]
            .as_str()
            .unwrap()
            .contains("<b>"),
        "{results}"
    );

    let (status, _) = api
        .post(
            "/api/v1/problems",
            Some(&admin.access),
            json!({"slug": "nibutan", "title": "二分探索の練習", "statement": "整列済みの配列から値を探す", "visibility": "hidden"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    let (status, _) = api
        .post(
            "/api/v1/problems",
            Some(&admin.access),
            json!({"slug": "zuihou", "title": "最短路径", "statement": "求最短路径"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    until_found(&api, "路径", true).await;
    // Hidden: not found, by anyone (the index holds a tombstone).
    until_found(&api, "探索", false).await;
    let (_, hidden) = api.get("/api/v1/search?q=探索", Some(&admin.access)).await;
    assert_eq!(hidden["total"], 0);
    let (status, _) = api
        .call(
            Method::PATCH,
            "/api/v1/problems/nibutan",
            Some(&admin.access),
            Some(json!({"visibility": "public"})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let found = until_found(&api, "探索", true).await;
    assert_eq!(found["hits"][0]["slug"], "nibutan");
    let (status, bad) = api.get("/api/v1/search?q=", None).await;
    assert_eq!(status, reqwest::StatusCode::UNPROCESSABLE_ENTITY, "{bad}");

    // The index is derived: delete it, restart, and every answer is the same.
    let before = until_found(&api, "input", true).await["total"].clone();
    let data = service.stop().unwrap();
    std::fs::remove_dir_all(data.path().join("search")).unwrap();
    let service = spawn_up_in(data);
    let api = Api::new(&service);
    assert_eq!(
        until_found(&api, "探索", true).await["hits"][0]["slug"],
        "nibutan"
    );
    assert_eq!(until_found(&api, "input", true).await["total"], before);
    until_found(&api, "路径", true).await;
    service.stop();
}

/// The distributed shape with the index in `ulticode search-worker`: it rebuilds from
/// `serve` at start, follows App's events through Redis, and answers `serve`'s queries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_worker_rebuilds_follows_events_and_answers_serve() {
    let service = spawn_distributed_with(true).await;
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let results = until_found(&api, "plus", true).await;
    assert_eq!(results["hits"][0]["slug"], "aplusb", "{results}");
    let (status, _) = api
        .post(
            "/api/v1/problems",
            Some(&admin.access),
            json!({"slug": "fenbushi", "title": "分布式搜索", "statement": "远程索引"}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED);
    let found = until_found(&api, "分布式", true).await;
    assert_eq!(found["hits"][0]["slug"], "fenbushi");
    let (status, body) = api
        .post(
            "/api/v1/admin/search/rebuild",
            Some(&admin.access),
            json!({}),
        )
        .await;
    assert_eq!(
        status,
        reqwest::StatusCode::CONFLICT,
        "rebuilt where the index is: {body}"
    );
    service.stop();
}
