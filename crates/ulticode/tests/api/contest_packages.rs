//! Contest packages: `ulticode up` imports its example package (an ended ICPC contest)
//! and its board is the one the package's judgements give, without judging; an export
//! imported again (under another id) gives the same board; a broken package is refused
//! with the reason and leaves nothing behind.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::harness::{examples, spawn_up_with, Api, Session};

async fn settled_board(api: &Api, admin: &Session, slug: &str, submissions: usize) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, mine) = api
            .get(
                &format!("/api/v1/contests/{slug}/submissions"),
                Some(&admin.access),
            )
            .await;
        let judged = mine
            .as_array()
            .map_or(0, |s| s.iter().filter(|s| !s["verdict"].is_null()).count());
        if judged == submissions {
            let (status, board) = api
                .get(
                    &format!("/api/v1/contests/{slug}/scoreboard?view=public"),
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{board}");
            return board;
        }
        assert!(
            Instant::now() < deadline,
            "{slug}: {judged} of {submissions} judged"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// (team, rank, solved, penalty, medal) per row.
fn summary(board: &Value) -> Vec<(String, Value, Value, Value, Value)> {
    board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["team_name"].as_str().unwrap().to_string(),
                r["rank"].clone(),
                r["solved"].clone(),
                r["penalty"].clone(),
                r["medal"].clone(),
            )
        })
        .collect()
}

fn row_name(board: &Value, team: &Value) -> String {
    board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["team_id"] == *team)
        .unwrap()["team_name"]
        .as_str()
        .unwrap()
        .to_string()
}

fn rewrite_id(package: &[u8], id: &str) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(package)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).unwrap();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        if entry.name() == "contest.json" {
            let mut contest: Value = serde_json::from_slice(&data).unwrap();
            contest["id"] = json!(id);
            data = serde_json::to_vec(&contest).unwrap();
        }
        out.start_file(entry.name(), zip::write::SimpleFileOptions::default())
            .unwrap();
        out.write_all(&data).unwrap();
    }
    out.finish().unwrap().into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_package_gives_its_board_and_an_export_imports_to_the_same() {
    let contests = examples().parent().unwrap().join("contests");
    let service = spawn_up_with(
        tempfile::tempdir().unwrap(),
        &["--contests".into(), contests.display().to_string()],
    );
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;

    let board = settled_board(&api, &admin, "autumn-cup", 18).await;
    assert_eq!(board["frozen"], false, "the example was thawed");
    let j = |v: i64| json!(v);
    assert_eq!(
        summary(&board),
        [
            (
                "Kyoto Kernels".to_string(),
                j(1),
                j(3),
                j(212),
                json!("gold")
            ),
            ("Tsinghua Trees".into(), j(2), j(3), j(329), json!("gold")),
            ("KTH Knights".into(), j(3), j(3), j(426), json!("gold")),
            ("Tsinghua Tries".into(), j(4), j(1), j(61), json!("gold")),
            ("Kyoto Kites".into(), j(5), j(1), j(84), json!("silver")),
            ("KTH Kites".into(), j(6), j(0), j(0), Value::Null),
        ]
    );
    let (_, contest) = api.get("/api/v1/contests/autumn-cup", None).await;
    assert_eq!(
        (
            contest["status"].as_str(),
            contest["finalized_at_ms"].is_i64()
        ),
        (Some("ended"), true),
        "{contest}"
    );
    let (_, clarifications) = api
        .get("/api/v1/contests/autumn-cup/clarifications", None)
        .await;
    assert_eq!(
        clarifications.as_array().unwrap().len(),
        2,
        "the public sees the answer to all and the announcement: {clarifications}"
    );
    let (_, upcoming) = api.get("/api/v1/contests/winter-cup", None).await;
    assert_eq!(upcoming["status"], "upcoming");

    // Export, and import under another id: the same board.
    let response = api
        .http
        .get(format!("{}/api/v1/contests/autumn-cup/package", api.base))
        .bearer_auth(&admin.access)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let package = response.bytes().await.unwrap().to_vec();
    let copy = rewrite_id(&package, "autumn-copy");
    let response = api
        .http
        .post(format!("{}/api/v1/contests/import", api.base))
        .bearer_auth(&admin.access)
        .header("content-type", "application/zip")
        .body(copy.clone())
        .send()
        .await
        .unwrap();
    let status = response.status();
    let report: Value = response.json().await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "{report}");
    assert_eq!(
        (report["teams"].as_u64(), report["submissions"].as_u64()),
        (Some(6), Some(18))
    );
    let copied = settled_board(&api, &admin, "autumn-copy", 18).await;
    assert_eq!(summary(&copied), summary(&board));
    let named = |board: &Value| -> Vec<(String, Vec<String>)> {
        let name = |id: &Value| row_name(board, id);
        board["awards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["id"].as_str().unwrap().to_string(),
                    a["team_ids"].as_array().unwrap().iter().map(name).collect(),
                )
            })
            .collect()
    };
    assert_eq!(named(&copied), named(&board));

    // Judged afresh (`rejudge`): the example's sources earn the verdicts it records.
    let response = api
        .http
        .post(format!("{}/api/v1/contests/import?rejudge=true", api.base))
        .bearer_auth(&admin.access)
        .body(rewrite_id(&package, "autumn-judged"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let judged = settled_board(&api, &admin, "autumn-judged", 18).await;
    assert_eq!(summary(&judged), summary(&board));

    // The command line: export to a directory, import it again under another id.
    let out = tempfile::tempdir().unwrap();
    let cli = |args: &[&str]| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_ulticode"))
            .args(["contest"])
            .args(args)
            .args(["--url", &service.base, "--username", "admin"])
            .env("ULTICODE_PASSWORD", &service.admin_password)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    cli(&["export", "autumn-cup", out.path().to_str().unwrap()]);
    let contest_json = out.path().join("contest.json");
    let mut exported: Value =
        serde_json::from_slice(&std::fs::read(&contest_json).unwrap()).unwrap();
    assert_eq!(exported["id"], "autumn-cup");
    exported["id"] = json!("autumn-cli");
    std::fs::write(&contest_json, serde_json::to_vec(&exported).unwrap()).unwrap();
    let said = cli(&["import", out.path().to_str().unwrap()]);
    assert!(said.contains("18 submissions"), "{said}");
    let from_cli = settled_board(&api, &admin, "autumn-cli", 18).await;
    assert_eq!(summary(&from_cli), summary(&board));

    // The same id again: refused, nothing changed.
    let again = api
        .http
        .post(format!("{}/api/v1/contests/import", api.base))
        .bearer_auth(&admin.access)
        .body(copy)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::CONFLICT);
    let broken = api
        .http
        .post(format!("{}/api/v1/contests/import", api.base))
        .bearer_auth(&admin.access)
        .body(b"not a zip".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(broken.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let user = api.account("mallory").await;
    let refused = api
        .http
        .post(format!("{}/api/v1/contests/import", api.base))
        .bearer_auth(&user.access)
        .body(package)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
}
