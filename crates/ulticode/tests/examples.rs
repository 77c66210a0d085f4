//! Every example problem passes `ulticode problem verify`: each reference submission, in every
//! language this machine has, gets exactly the result its directory names.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn verify(problem: &str) -> Value {
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
    report
}

/// The report's row of one submission (`submissions/...`).
fn row(report: &Value, name: &str) -> Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["submission"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no row {name}: {report:#}"))
}

#[test]
fn aplusb_in_every_language() {
    verify("aplusb");
}

/// The 2025-09 format: a derived time limit, the TLE margin ("with extra time"), per-test
/// expectations of `rejected` and `brute_force`, `test_group.yaml`, `submissions.yaml`,
/// `include/` with `constants`, a directory program, and what the reference tools only warn
/// about (an unknown key, an unknown submissions directory, files that are no program).
#[test]
fn sumlines_in_the_2025_09_format() {
    let report = verify("sumlines");
    assert_eq!(report["time_limit_derived"], true, "{report:#}");
    assert_eq!(report["time_limit_ms"], 1000, "{report:#}");
    assert_eq!(report["margin_ms"], 1500, "{report:#}");
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    for expected in [
        "key `future_key`: unknown key",
        "sum.cc.disabled: not a source file",
        "submissions/slow_accepted: unknown directory",
    ] {
        assert!(
            warnings.iter().any(|w| w.contains(expected)),
            "{expected:?} not in {warnings:#?}"
        );
    }
    // Both input validators (a checktestdata script with a constant, a program with a
    // group's arguments) ran on all four inputs and rejected both invalid ones.
    for validation in report["input_validation"].as_array().unwrap() {
        match validation["not_run"].as_str() {
            Some(reason) => println!("UNAVAILABLE {reason}"),
            None => assert_eq!(validation["accepted"], 4, "{validation:#}"),
        }
        assert_eq!(
            validation["failures"],
            serde_json::json!([]),
            "{validation:#}"
        );
    }
    // The sample's `.out` (shown instead of its answer) passes the output validator.
    assert_eq!(
        report["output_validation"],
        serde_json::json!([]),
        "{report:#}"
    );
    let rows = report["rows"].as_array().unwrap();
    let judged: Vec<&str> = rows
        .iter()
        .map(|r| r["submission"].as_str().unwrap())
        .collect();
    assert!(!judged
        .iter()
        .any(|s| s.contains(".gitkeep") || s.contains("slow_accepted")));
    // A directory program, an included file with a constant, a Java class not named Main, a
    // directory that only submissions.yaml describes: each judged (and, above, as expected).
    for expected in [
        "submissions/accepted/with_helper",
        "submissions/accepted/uses_include.py",
        "submissions/accepted/Summer.java",
        "submissions/overflowing/int32.c",
    ] {
        assert!(
            judged.contains(&expected),
            "{expected} not judged: {judged:#?}"
        );
    }
    let extra_time = rows
        .iter()
        .find(|r| r["submission"] == "submissions/run_time_error/slow_then_out_of_memory.py")
        .expect("the RTE row");
    assert_eq!(extra_time["got"], "TLE", "{extra_time:#}");
    assert!(
        extra_time["note"]
            .as_str()
            .is_some_and(|n| n.contains("only with extra time")),
        "{extra_time:#}"
    );
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

/// Test-case `.files` in the working directory of submissions and input validators, a
/// working directory submissions may write in (`allow_file_writing`, fresh for every test),
/// group dependencies (`require_pass`: a group whose required group failed is not run and
/// scores nothing) and a static validator (10 style points for the submission's source).
#[test]
fn tables_has_files_writing_and_group_dependencies() {
    let report = verify("tables");
    let not_run = row(&report, "submissions/rejected/wrong_first.py");
    assert_eq!(not_run["got"], "WA (10)", "{not_run:#}");
    assert_eq!(
        not_run["groups"],
        serde_json::json!([
            ["sample", "AC"],
            ["secret/1_small", "WA"],
            ["secret/2_large", "-"]
        ]),
        "{not_run:#}"
    );
    assert_eq!(
        row(&report, "submissions/run_time_error/no_file.py")["got"],
        "RE (0)"
    );
    assert_eq!(
        row(&report, "submissions/accepted/cached.py")["got"],
        "AC (100)"
    );
    assert_eq!(
        row(&report, "submissions/partially_accepted/long_lines.py")["got"],
        "WA (90)"
    );
    // `languages`: the package's own C submission is judged, and the row says contestants
    // cannot use C.
    let c = row(&report, "submissions/partially_accepted/int32.c");
    assert!(
        c["note"]
            .as_str()
            .is_some_and(|n| n.contains("c is not one of this problem's languages")),
        "{c:#}"
    );
    let validation = &report["input_validation"][0];
    assert_eq!(validation["accepted"], 6, "{validation:#}");
}

/// A submit-answer problem: submissions are answer files (a directory of them, found by the
/// test's path or base name; or one file for every test), checked by the output validator.
#[test]
fn antisorted_is_submit_answer() {
    let report = verify("antisorted");
    assert_eq!(report["submit_answer"], true, "{report:#}");
    let got: Vec<(&str, &str)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["submission"].as_str().unwrap(),
                r["got"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("submissions/accepted/flat", "AC (100)"),
            ("submissions/accepted/tree", "AC (100)"),
            ("submissions/partially_accepted/some", "WA (33.333333)"),
            ("submissions/wrong_answer/sorted.txt", "WA (0)"),
        ]
    );
}

/// A 2025-09 output validator given as POSIX `build`/`run` scripts (built in the sandbox).
#[test]
fn echo_has_a_build_run_validator() {
    verify("echo");
}

/// A multi-pass problem: three passes per test, each on the input the validator wrote
/// (`nextpass.in`); the crash and the wrong answer only happen in a later pass.
#[test]
fn doubling_is_multi_pass() {
    let report = verify("doubling");
    // Right on the first pass of the sample (3 → 6); the crash needs the third (12).
    let crash = row(&report, "submissions/run_time_error/crashes_later.py");
    assert_eq!(
        crash["groups"][0],
        serde_json::json!(["sample", "RTE"]),
        "{crash:#}"
    );
}

/// Imports the Polygon package `examples/polygon/<name>` into a new directory and verifies
/// it: what the import said, the directory, and the verification's JSON report.
fn import_and_verify(name: &str) -> (String, tempfile::TempDir, PathBuf, Value) {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/polygon")
        .join(name);
    let target = tempfile::tempdir().unwrap();
    let imported = target.path().join(name);
    let output = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["problem", "import"])
        .arg(&source)
        .arg("--to")
        .arg(&imported)
        .output()
        .expect("run ulticode");
    let said = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let output = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["problem", "verify", "--json"])
        .arg(&imported)
        .output()
        .expect("run ulticode");
    let report: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&output.stderr)));
    assert_eq!(report["ok"], true, "{report:#}");
    (said, target, imported, report)
}

fn verdicts(report: &Value) -> Vec<(&str, &str)> {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["submission"].as_str().unwrap(),
                r["got"].as_str().unwrap(),
            )
        })
        .collect()
}

/// Interactive and multi-pass at once: the validator of the second pass talks to a fresh run
/// of the submission about the input the first pass wrote (`nextpass.in`), which it reads as
/// its own input file.
#[test]
fn codec_is_interactive_and_multi_pass() {
    let report = verify("codec");
    let got: Vec<&str> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["got"].as_str().unwrap())
        .collect();
    assert_eq!(got, ["AC", "AC", "RE", "WA"], "{report:#}");
}

/// A Polygon package: `problem import` writes a Kattis-format package (generated tests run
/// in the sandbox, answers from the main solution, the testlib-style checker and validator
/// behind build/run scripts, the groups' points and dependencies), which then verifies.
#[test]
fn polygon_package_imports_and_verifies() {
    let (said, _target, imported, report) = import_and_verify("sum-two");
    assert!(
        said.contains("5 tests (4 inputs generated, 4 answers from the main solution)"),
        "{said}"
    );
    // The generator's output is the test: `gen 1 100` is deterministic.
    let generated = std::fs::read_to_string(imported.join("data/secret/group1/002.in")).unwrap();
    let numbers: Vec<i64> = generated
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    assert_eq!(numbers.len(), 2, "{generated}");
    assert!(numbers.iter().all(|n| n.abs() <= 100), "{generated}");
    // Group dependencies: group 2 on group 1, group 1 on the samples (Polygon's group 0).
    let config = |group: &str| {
        std::fs::read_to_string(imported.join(format!("data/secret/{group}/test_group.yaml")))
            .unwrap()
    };
    assert!(config("group1").contains("require_pass: [sample]"));
    assert!(config("group2").contains("require_pass: [secret/group1]"));

    let got = verdicts(&report);
    assert!(
        got.contains(&("submissions/wrong_answer/int32.cpp", "WA (40)")),
        "{got:?}"
    );
    assert!(
        got.contains(&("submissions/accepted/main.cpp", "AC (100)")),
        "{got:?}"
    );
    assert_eq!(report["input_validation"][0]["accepted"], 5, "{report:#}");

    // A second import into the same (now non-empty) directory is refused.
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/polygon/sum-two");
    let again = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["problem", "import"])
        .arg(&source)
        .arg("--to")
        .arg(&imported)
        .output()
        .expect("run ulticode");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not empty"));
}

/// An interactive Polygon package: the interactor becomes an interactive output validator
/// that runs the checker on the interactor's output; a test without an answer file gets an
/// empty one.
#[test]
fn interactive_polygon_package_imports_and_verifies() {
    let (said, _target, imported, report) = import_and_verify("guess-number");
    assert!(said.contains("1 interactive tests had no answer"), "{said}");
    let yaml = std::fs::read_to_string(imported.join("problem.yaml")).unwrap();
    assert!(yaml.contains("type: [pass-fail, interactive]"), "{yaml}");
    assert_eq!(
        verdicts(&report),
        [
            ("submissions/accepted/bisect.py", "AC"),
            ("submissions/accepted/main.cpp", "AC"),
            ("submissions/wrong_answer/linear.py", "WA"),
        ]
    );
}

/// The problem page's view: names in every language, a LaTeX statement converted by pandoc
/// in the sandbox (problemset macros and constants filled in), the attachments.
#[test]
fn statements_in_latex_are_converted_for_display() {
    if !std::path::Path::new("/usr/bin/pandoc").is_file() {
        println!("UNAVAILABLE pandoc: not installed (scripts/install-toolchains.sh installs it)");
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/problems/sumlines");
    let output = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["problem", "show", "--language", "sv"])
        .arg(&dir)
        .output()
        .expect("run ulticode");
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{shown}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for expected in [
        "name (en): Sum of Lines",
        "name (sv): Radsumma",
        "statement (sv, Latex)",
        "# Radsumma",
        "1 \\le n \\le 20000",
        "# Utdata",
        "attachment: template.py",
    ] {
        assert!(shown.contains(expected), "{expected:?} not in:\n{shown}");
    }
}

/// Legacy scoring with `avg`, `max`, `first_error`, `ignore_sample` and
/// `accept_if_any_accepted`: the scores are exact.
#[test]
fn bestof_scores_by_average_and_best() {
    let report = verify("bestof");
    for row in report["rows"].as_array().unwrap() {
        let expected = match row["submission"].as_str().unwrap() {
            s if s.contains("/accepted/") => "AC (100)",
            s if s.contains("/partially_accepted/") => "AC (90)",
            _ => "WA (0)",
        };
        assert_eq!(row["got"], expected, "{row:#}");
    }
}

/// Function-signature problems: accepted and rejected submissions in C++, Java, Python,
/// JavaScript, Go and Rust, judged through the generated harnesses.
#[test]
fn two_sum_function_problem() {
    verify("two-sum");
}

#[test]
fn my_pow_function_problem_with_a_tolerance() {
    verify("my-pow");
}

#[test]
fn group_anagrams_function_problem_in_any_order() {
    verify("group-anagrams");
}

#[test]
fn invert_tree_function_problem_with_tree_nodes() {
    verify("invert-tree");
}

#[test]
fn merge_k_lists_function_problem_with_list_nodes() {
    verify("merge-k-lists");
}

#[test]
fn lru_cache_design_class() {
    verify("lru-cache");
}

#[test]
fn rotate_image_in_place() {
    verify("rotate-image");
}
