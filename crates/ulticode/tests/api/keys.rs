//! The token-signing keys from the operator's side: `ulticode keys rotate` beside a running
//! `up` (tokens signed before stay valid), and keys sealed at rest with a key-encryption key
//! (a process without it refuses to start, saying why).

use std::process::Command;

use reqwest::StatusCode;

use crate::harness::{run_ulticode, spawn_up_with, Api};

/// `ulticode keys ARGS --data-dir DATA`.
fn keys(args: &[&str], data: &std::path::Path) -> (bool, String) {
    let data = data.to_string_lossy();
    let mut all = vec!["keys"];
    all.extend(args);
    all.extend(["--data-dir", &data]);
    run_ulticode(&all)
}

#[tokio::test]
async fn keys_rotate_beside_a_running_server_and_are_sealed_at_rest() {
    let data = tempfile::tempdir().unwrap();
    let kek_file = data.path().join("kek");
    std::fs::write(&kek_file, format!("{}\n", "3c".repeat(32))).unwrap();
    let kek_arg = kek_file.to_string_lossy().to_string();
    let service = spawn_up_with(
        data,
        &["--key-encryption-key-file".to_string(), kek_arg.clone()],
    );
    let data_dir = service.data_dir.as_ref().unwrap().path().to_path_buf();
    let api = Api::new(&service);
    let user = api.account("keyholder").await;

    let (listed, text) = keys(&["list"], &data_dir);
    assert!(listed, "{text}");
    assert!(
        text.contains("signing") && text.contains("sealed"),
        "{text}"
    );
    assert!(!text.contains("in the clear"), "{text}");

    // Rotating needs the key-encryption key too; without it nothing changes.
    let (refused, text) = keys(&["rotate"], &data_dir);
    assert!(!refused && text.contains("encrypted at rest"), "{text}");
    let (rotated, text) = keys(
        &["rotate", "--key-encryption-key-file", &kek_arg],
        &data_dir,
    );
    assert!(rotated, "{text}");
    assert!(
        text.contains("signing with") && text.contains("verifies until"),
        "{text}"
    );
    let (_, listed) = keys(&["list"], &data_dir);
    assert_eq!(listed.lines().count(), 2, "{listed}");
    assert!(listed.contains("verifying until"), "{listed}");

    // The running server still accepts the token signed before the rotation.
    let (status, me) = api.get("/api/v1/auth/me", Some(&user.access)).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    let data = service.stop().unwrap();

    // Without the key-encryption key, `up` refuses to start and says why.
    let output = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .env("ULTICODE_LOG", "warn")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("encrypted at rest"), "{stderr}");
    assert!(
        !stderr.contains(&"3c".repeat(32)),
        "the key is never printed"
    );
}
