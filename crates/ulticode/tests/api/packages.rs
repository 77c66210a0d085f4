//! Package uploads that need programs run, through the API of the embedded shape: a Polygon
//! package is imported on the server (its generators and main solution run in the sandbox)
//! and judges like any other; a package without a time limit gets the one its accepted
//! submissions give, as `problem verify` derives it.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::harness::{spawn_up, Api};

async fn upload(api: &Api, token: &str, slug: &str, archive: Vec<u8>) -> (StatusCode, Value) {
    let response = api
        .http
        .put(format!("{}/api/v1/problems/{slug}/package", api.base))
        .bearer_auth(token)
        .header("content-type", "application/zip")
        .body(archive)
        .send()
        .await
        .unwrap();
    let status = response.status();
    (status, response.json().await.unwrap_or(Value::Null))
}

fn example(path: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples")
        .join(path)
}

#[tokio::test]
async fn polygon_packages_and_derived_time_limits_through_the_api() {
    let service = spawn_up();
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    for slug in ["sum-two", "quick"] {
        let (status, body) = api
            .post(
                "/api/v1/problems",
                Some(&admin.access),
                json!({"slug": slug, "title": slug, "visibility": "public"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    // A Polygon package, zipped as Polygon gives it out.
    let polygon = judge::package::archive::pack(&example("polygon/sum-two")).unwrap();
    let (status, problem) = upload(&api, &admin.access, "sum-two", polygon).await;
    assert_eq!(status, StatusCode::OK, "{problem}");
    assert_eq!(problem["has_test_data"], true, "{problem}");
    assert_eq!(problem["time_limit_ms"], 1000, "{problem}");
    assert_eq!(problem["memory_mib"], 256, "{problem}");
    let user = api.account("polygon-user").await;
    let source = "a, b = map(int, input().split())\nprint(a + b)\n";
    let id = api.submit(&user, "sum-two", "python3", source).await;
    let events = api.watch(&user, id).await;
    let (_, done) = events.last().unwrap();
    assert_eq!(done["verdict"], "AC", "{events:?}");
    assert_eq!(done["score"], 100.0, "{events:?}");

    // No time limit in the package: derived from its accepted submission (a fast Python
    // program, × 2, rounded up to the package's 0.1 s resolution), not the 1 s fallback.
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "problem.yaml",
            "problem_format_version: 2025-09\nname: Quick\nuuid: q\nlimits:\n  time_resolution: 0.1\n",
        ),
        ("data/sample/1.in", "1\n"),
        ("data/sample/1.ans", "1\n"),
        ("data/secret/1.in", "2\n"),
        ("data/secret/1.ans", "2\n"),
        ("submissions/accepted/echo.py", "print(input())\n"),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let archive = judge::package::archive::pack(dir.path()).unwrap();
    let (status, problem) = upload(&api, &admin.access, "quick", archive).await;
    assert_eq!(status, StatusCode::OK, "{problem}");
    let time_limit = problem["time_limit_ms"].as_u64().unwrap();
    assert!(
        time_limit < 1000 && time_limit % 100 == 0,
        "derived {time_limit} ms: {problem}"
    );

    // A Polygon package that cannot be imported is refused with the reason, and changes
    // nothing.
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(broken.path().join("problem.xml"), "<problem/>").unwrap();
    let archive = judge::package::archive::pack(broken.path()).unwrap();
    let (status, body) = upload(&api, &admin.access, "quick", archive).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("no <judging>"),
        "{body}"
    );
    let (_, unchanged) = api.get("/api/v1/problems/quick", None).await;
    assert_eq!(unchanged["time_limit_ms"], time_limit, "{unchanged}");

    // Samples as the statement shows them: an interaction log for an interactive,
    // multi-pass problem; a sample's `.out` instead of its answer.
    let (_, codec) = api.get("/api/v1/problems/codec", None).await;
    let interaction = codec["samples"][0]["interaction"]
        .as_str()
        .unwrap_or_default();
    assert!(
        interaction.starts_with("<encode kattis\n>xsittak\n---\n"),
        "{codec}"
    );
    let (_, sumlines) = api.get("/api/v1/problems/sumlines", None).await;
    assert_eq!(sumlines["samples"][0]["output"], "  6  \n", "{sumlines}");
    assert!(
        sumlines["samples"][0].get("interaction").is_none(),
        "{sumlines}"
    );
}
