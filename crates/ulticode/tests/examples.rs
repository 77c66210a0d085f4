//! Every example problem passes `ulticode problem verify`: each reference submission, in every
//! language this machine has, gets exactly the result its directory names.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn verify(problem: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/problems")
        .join(problem);
    let output = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["problem", "verify", "--json"])
        .arg(&dir)
        .output()
        .expect("run ulticode");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "{problem}: no JSON report ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let mut mismatches = Vec::new();
    for row in report["rows"].as_array().expect("rows") {
        let name = row["submission"].as_str().unwrap();
        match row["outcome"]["kind"].as_str().unwrap() {
            "match" => {}
            "language_unavailable" => println!(
                "UNAVAILABLE example {problem} {name}: {}",
                row["outcome"]["reason"].as_str().unwrap_or_default()
            ),
            _ => mismatches.push(format!("{name}: {}", row["outcome"]["reason"])),
        }
    }
    assert!(mismatches.is_empty(), "{problem}: {mismatches:#?}");
    assert_eq!(report["ok"], true, "{problem}: {report:#}");
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn aplusb_in_every_language() {
    verify("aplusb");
}

#[test]
fn hypot_with_float_tolerance() {
    verify("hypot");
}

#[test]
fn pairsum_with_a_custom_validator() {
    verify("pairsum");
}

#[test]
fn guess_is_interactive() {
    verify("guess");
}

#[test]
fn zerosum_scores_two_subtasks() {
    verify("zerosum");
}
