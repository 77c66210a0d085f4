//! `ulticode judge` and `ulticode languages` through the real binary.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/problems")
}

fn ulticode(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(args)
        .output()
        .expect("run ulticode")
}

fn judge(problem: &str, submission: &str, extra: &[&str]) -> (Output, Value) {
    let dir = examples().join(problem);
    let source = dir.join("submissions").join(submission);
    let mut args = vec![
        "judge",
        dir.to_str().unwrap(),
        source.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let output = ulticode(&args);
    let report = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output, report)
}

#[test]
fn json_report_has_the_verdict_and_every_test() {
    let (output, report) = judge("aplusb", "accepted/sum.c", &[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(report["verdict"], "AC");
    for key in ["score", "time_ms", "memory_kib", "compile_output", "tests"] {
        assert!(report.get(key).is_some(), "missing {key}");
    }
    let tests = report["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "sample/1",
            "sample/2",
            "secret/01",
            "secret/02",
            "secret/03",
            "secret/04",
            "secret/05",
            "secret/06"
        ]
    );
    for test in tests {
        for key in ["group", "verdict", "time_ms", "memory_kib", "message"] {
            assert!(test.get(key).is_some(), "test lacks {key}: {test}");
        }
        // Output is shown for samples only: hidden data never leaks through a report.
        let sample = test["name"].as_str().unwrap().starts_with("sample/");
        assert_eq!(test.get("output").is_some(), sample, "{test}");
    }
    assert_eq!(tests[0]["output"], "3\n");
}

#[test]
fn a_wrong_answer_completes_judging_with_exit_zero() {
    let (output, report) = judge("aplusb", "wrong_answer/difference.py", &[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(report["verdict"], "WA");
    // Pass-fail stops at the first failure by default; --all-tests judges the rest too.
    let stopped = report["tests"].as_array().unwrap().len();
    let (_, all) = judge("aplusb", "wrong_answer/difference.py", &["--all-tests"]);
    assert_eq!(all["verdict"], "WA");
    assert_eq!(all["tests"].as_array().unwrap().len(), 8);
    assert!(stopped < 8, "{stopped}");
}

#[test]
fn compile_errors_carry_the_compiler_output() {
    let (output, report) = judge("aplusb", "compile_error/missing_semicolon.c", &[]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(report["verdict"], "CE");
    assert!(
        report["compile_output"].as_str().unwrap().contains("error"),
        "{report}"
    );
    assert!(report["tests"].as_array().unwrap().is_empty());
}

#[test]
fn scoring_problems_report_a_score() {
    let (_, report) = judge("zerosum", "partially_accepted/int_counter.cpp", &[]);
    assert_eq!(report["score"], 30.0);
    assert_eq!(report["max_score"], 100.0);
    // `accept_if_any_accepted` in data/secret: one solved subtask is an accepted submission.
    assert_eq!(report["verdict"], "AC");
}

#[test]
fn bad_packages_and_languages_are_errors_with_the_reason() {
    let broken = tempfile::tempdir().unwrap();
    std::fs::write(
        broken.path().join("problem.yaml"),
        "limits:\n  memory: lots\n",
    )
    .unwrap();
    let source = examples().join("aplusb/submissions/accepted/sum.c");
    let output = ulticode(&[
        "judge",
        broken.path().to_str().unwrap(),
        source.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("problem.yaml: key `limits.memory`: must be a positive number"),
        "{stderr}"
    );

    let dir = examples().join("aplusb");
    let output = ulticode(&[
        "judge",
        dir.to_str().unwrap(),
        source.to_str().unwrap(),
        "--language",
        "cobol",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown language \"cobol\""), "{stderr}");
}

#[test]
fn languages_lists_each_with_its_state() {
    let output = ulticode(&["languages", "--json"]);
    assert_eq!(output.status.code(), Some(0));
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    let entries = list.as_array().unwrap();
    for id in [
        "c",
        "cpp17",
        "cpp20",
        "python3",
        "java",
        "javascript",
        "rust",
        "go",
        "pypy3",
    ] {
        let entry = entries
            .iter()
            .find(|e| e["id"] == id)
            .unwrap_or_else(|| panic!("{id} not listed"));
        if entry["available"] == true {
            assert!(
                entry["version"].as_str().is_some_and(|v| !v.is_empty()),
                "{entry}"
            );
        } else {
            println!("UNAVAILABLE language {id}: {}", entry["reason"]);
            assert!(
                entry["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "{entry}"
            );
        }
    }
    // gcc, g++, python3, java and node are part of every machine of this kind.
    for id in ["c", "cpp17", "python3", "java", "javascript"] {
        let entry = entries.iter().find(|e| e["id"] == id).unwrap();
        assert_eq!(entry["available"], true, "{entry}");
    }
}
