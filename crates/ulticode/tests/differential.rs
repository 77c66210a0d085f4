//! Differential: problemtools' own `verifyproblem` (the format's reference tool, installed by
//! `scripts/test.sh` into a venv) and `ulticode problem verify` judge the same packages, and
//! every submission both can run gets the same verdict from both.
//!
//! The packages are the examples, with what the legacy format does not have taken out
//! (`limits.time_limit`: there the limit is always derived from the accepted submissions).
//! problemtools does not load `2025-09` packages; it loads its draft, `2023-07-draft`, so
//! the 2025-09 examples whose features it implements (multi-pass, interactive multi-pass,
//! build/run validators) are compared relabelled as that draft.
//! A submission whose language problemtools cannot run on this machine (its toolchain missing,
//! or its runtime refused by problemtools' own limits) is listed by name as UNAVAILABLE.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn verifyproblem() -> Option<PathBuf> {
    let path = std::env::var_os("ULTICODE_VERIFYPROBLEM")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(
                std::env::var("ULTICODE_CACHE_DIR").unwrap_or("/var/cache/ulticode".into()),
            )
            .join("venv-problemtools/bin/verifyproblem")
        });
    path.is_file().then_some(path)
}

/// A copy of an example package as the legacy format has it; `version`: relabelled as this
/// format version.
fn conformant_copy(problem: &str, version: Option<&str>) -> tempfile::TempDir {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/problems")
        .join(problem);
    let target = tempfile::Builder::new()
        .prefix("ulticode-differential-")
        .tempdir()
        .unwrap();
    let copied = target.path().join(problem);
    copy_dir(&source, &copied);
    let yaml = copied.join("problem.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    let relabelled = version.map(|v| format!("problem_format_version: {v}"));
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("time_limit:"))
        .map(|line| match &relabelled {
            Some(new) if line.starts_with("problem_format_version:") => new.as_str(),
            _ => line,
        })
        .collect();
    std::fs::write(&yaml, kept.join("\n") + "\n").unwrap();
    target
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

const PROBLEMTOOLS_LANGUAGES: &str = r#"python3:
    compile: '/usr/bin/python3 -m py_compile {files}'
    run: '/usr/bin/python3 "{mainfile}"'
java:
    compile: 'javac --release 17 -encoding UTF-8 -sourcepath {path} -d {path} {files}'
go:
    compile: 'go build -o {binary} {files}'
"#;

/// What a runtime prints when problemtools' own address-space limit keeps it from starting.
const RUNTIME_REFUSED: [&str; 3] = [
    "Failed to reserve virtual memory",
    "cannot allocate nursery",
    "failed to reserve page summary memory",
];

/// What problemtools said of one submission.
#[derive(Debug)]
enum Reference {
    Verdict(String),
    /// It could not run the submission's language here; the reason.
    CannotRun(String),
}

/// Reads verifyproblem's per-submission lines: `   accepted/sum.c (C) OK: AC [...]`,
/// `ERROR wrong_answer/x.c (C) got AC [...]`, `ERROR Compile error for accepted/x.py (...)`,
/// each maybe followed by indented detail lines.
fn parse_reference(output: &str) -> BTreeMap<String, Reference> {
    let mut found = BTreeMap::new();
    let mut last: Option<String> = None;
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("ERROR Compile error for ") {
            let name = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            found.insert(name.clone(), Reference::CannotRun(rest.to_string()));
            last = Some(name);
            continue;
        }
        let body = line.strip_prefix("ERROR ").unwrap_or(line).trim_start();
        let mut words = body.split_whitespace();
        let (Some(name), Some(_)) = (words.next(), words.next()) else {
            continue;
        };
        if !name.contains('/') || !body.contains('(') {
            if let (Some(name), true) = (&last, line.starts_with("        ")) {
                // V8, PyPy and Go's runtime cannot reserve their address space under
                // problemtools' memory rlimit (RLIMIT_AS) on this machine.
                if RUNTIME_REFUSED.iter().any(|text| line.contains(text)) {
                    found.insert(
                        name.clone(),
                        Reference::CannotRun("the runtime cannot start under its limits".into()),
                    );
                }
            }
            continue;
        }
        let verdict = body
            .split_once(") OK: ")
            .or_else(|| body.split_once(") got "))
            .and_then(|(_, rest)| rest.split_whitespace().next());
        if let Some(verdict) = verdict {
            found.insert(name.to_string(), Reference::Verdict(verdict.to_string()));
            last = Some(name.to_string());
        }
    }
    found
}

/// Our verdict in the format's words.
fn format_verdict(got: &str) -> String {
    match got.split_whitespace().next().unwrap_or_default() {
        "RE" | "MLE" | "OLE" => "RTE".into(),
        "PE" => "WA".into(),
        other => other.into(),
    }
}

fn agree(problem: &str) {
    agree_as(problem, None)
}

fn agree_as(problem: &str, version: Option<&str>) {
    let Some(reference) = verifyproblem() else {
        println!("UNAVAILABLE problemtools: verifyproblem not installed (scripts/test.sh installs it into the cache's venv)");
        return;
    };
    let copy = conformant_copy(problem, version);
    let dir = copy.path().join(problem);
    // problemtools' language table, adjusted to this machine's toolchains (never to the
    // semantics): CPython for Python 3 (PyPy cannot reserve its heap under problemtools'
    // address-space limit), Java 17's release, Go's own compiler (no gccgo here).
    let config = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(config.path().join("problemtools")).unwrap();
    std::fs::write(
        config.path().join("problemtools/languages.yaml"),
        PROBLEMTOOLS_LANGUAGES,
    )
    .unwrap();
    let theirs = Command::new(&reference)
        .arg(&dir)
        .args(["-p", "submissions"])
        .env("XDG_CONFIG_HOME", config.path())
        .output()
        .expect("run verifyproblem");
    let theirs_text = String::from_utf8_lossy(&theirs.stdout).into_owned()
        + &String::from_utf8_lossy(&theirs.stderr);
    let reference_rows = parse_reference(&theirs_text);
    assert!(
        !reference_rows.is_empty(),
        "{problem}: nothing read from verifyproblem:\n{theirs_text}"
    );

    let ours = Command::new(env!("CARGO_BIN_EXE_ulticode"))
        .args(["problem", "verify", "--json"])
        .arg(&dir)
        .output()
        .expect("run ulticode");
    let report: Value = serde_json::from_slice(&ours.stdout).unwrap_or_else(|e| {
        panic!(
            "{problem}: no JSON report ({e}); stderr: {}",
            String::from_utf8_lossy(&ours.stderr)
        )
    });
    let mut compared = 0;
    let mut disagreements = Vec::new();
    for row in report["rows"].as_array().unwrap() {
        let name = row["submission"]
            .as_str()
            .unwrap()
            .trim_start_matches("submissions/");
        match reference_rows.get(name) {
            None => {
                println!("UNAVAILABLE problemtools {problem} {name}: not a directory it judges")
            }
            Some(Reference::CannotRun(reason)) => {
                println!("UNAVAILABLE problemtools {problem} {name}: {reason}")
            }
            Some(Reference::Verdict(_)) if row["outcome"]["kind"] == "language_unavailable" => {
                println!(
                    "UNAVAILABLE ulticode {problem} {name}: {}",
                    row["outcome"]["reason"]
                )
            }
            Some(Reference::Verdict(verdict)) => {
                compared += 1;
                let ours = format_verdict(row["got"].as_str().unwrap_or_default());
                if &ours != verdict {
                    disagreements.push(format!("{name}: problemtools {verdict}, ulticode {ours}"));
                }
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{problem}: {disagreements:#?}\nproblemtools said:\n{theirs_text}"
    );
    assert!(compared > 0, "{problem}: no submission judged by both");
    println!("{problem}: {compared} submissions judged alike by problemtools and ulticode");
}

#[test]
fn aplusb_agrees_with_problemtools() {
    agree("aplusb");
}

#[test]
fn hypot_agrees_with_problemtools() {
    agree("hypot");
}

#[test]
fn pairsum_agrees_with_problemtools() {
    agree("pairsum");
}

#[test]
fn guess_agrees_with_problemtools() {
    agree("guess");
}

#[test]
fn zerosum_agrees_with_problemtools() {
    agree("zerosum");
}

#[test]
fn reference_lines_are_read() {
    let sample = r#"   accepted/sum.c (C) OK: AC [CPU: 0.00s @ testcase sample/1]
ERROR Compile error for accepted/sum.go (Go) (Go: could not find compiler "gccgo")
ERROR accepted/sum.js (JavaScript) got RTE [SIGTRAP, CPU: 0.04s @ testcase sample/1]:
        
        # Fatal process OOM in Failed to reserve virtual memory for CodeRange
ERROR partially_accepted/q.c (C) got TLE [CPU: 3.00s @ testcase secret/2]
   zerosum/accepted/x.cpp (C++) OK: AC (102) [CPU: 0.02s]
Submission results:
   sum.c   AC:0.00s  AC:0.00s  0.00s
"#;
    let rows = parse_reference(sample);
    assert!(matches!(&rows["accepted/sum.c"], Reference::Verdict(v) if v == "AC"));
    assert!(matches!(&rows["accepted/sum.go"], Reference::CannotRun(_)));
    assert!(matches!(&rows["accepted/sum.js"], Reference::CannotRun(_)));
    assert!(matches!(&rows["partially_accepted/q.c"], Reference::Verdict(v) if v == "TLE"));
    assert!(matches!(&rows["zerosum/accepted/x.cpp"], Reference::Verdict(v) if v == "AC"));
    assert_eq!(rows.len(), 5);
}

#[test]
fn bestof_agrees_with_problemtools() {
    agree("bestof");
}

#[test]
fn doubling_agrees_with_problemtools_as_the_2023_07_draft() {
    agree_as("doubling", Some("2023-07-draft"));
}

#[test]
fn codec_agrees_with_problemtools_as_the_2023_07_draft() {
    agree_as("codec", Some("2023-07-draft"));
}

#[test]
fn echo_agrees_with_problemtools_as_the_2023_07_draft() {
    agree_as("echo", Some("2023-07-draft"));
}
