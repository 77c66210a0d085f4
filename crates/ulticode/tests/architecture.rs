//! Static contract checks (no services needed): the crate graph keeps dependencies pointing
//! inward, owners never depend on each other, judge workers never reach an owner's storage,
//! and no owner's SQL names another owner's schema.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// Owners of business data (SYSTEM.md §2). Each has its own schema; none depends on another.
const OWNERS: &[&str] = &["auth", "app", "submission", "notification", "admin"];

/// Each workspace crate's normal (non-dev) dependencies on other workspace crates.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let members: BTreeSet<String> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|package| {
            let deps = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|name| members.contains(name))
                .collect();
            (package["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn dependencies_point_inward() {
    let graph = graph();
    let allowed: &[(&str, &[&str])] = &[
        ("contracts", &[]),
        ("sandbox", &[]),
        // The shared HTTP edge speaks the contracts' identity types.
        ("platform", &["contracts"]),
        // The event relay and consumers speak the contracts' event envelope.
        ("queue", &["contracts", "platform"]),
        ("judge", &["contracts", "sandbox"]),
        ("auth", &["contracts", "platform"]),
        // App validates uploaded packages with the judge runtime's package loader.
        ("app", &["contracts", "judge", "platform"]),
        ("submission", &["contracts", "platform", "queue"]),
        ("admin", &["contracts", "platform", "queue"]),
        ("notification", &["contracts", "platform"]),
        // The search worker holds a derived index and no business table.
        ("search", &["contracts", "platform"]),
        (
            "judge-worker",
            &["contracts", "judge", "platform", "queue", "sandbox"],
        ),
        // The console is a client of the public API (in process): no owner, no runtime.
        ("web", &["contracts", "platform"]),
        // Judge0's API speaks to the execution jobs through their port only.
        ("judge0", &["contracts", "platform"]),
    ];
    for (name, deps) in &graph {
        if name == "ulticode" {
            continue; // the composition root wires everything
        }
        let rule = allowed
            .iter()
            .find(|(crate_name, _)| crate_name == name)
            .unwrap_or_else(|| panic!("crate {name} has no dependency rule here: add one"));
        let extra: Vec<&String> = deps
            .iter()
            .filter(|d| !rule.1.contains(&d.as_str()))
            .collect();
        assert!(extra.is_empty(), "{name} may not depend on {extra:?}");
    }
}

#[test]
fn owners_never_depend_on_each_other_and_workers_on_no_owner() {
    for (name, deps) in graph() {
        if name == "ulticode" {
            continue;
        }
        let owners: Vec<&String> = deps
            .iter()
            .filter(|d| OWNERS.contains(&d.as_str()))
            .collect();
        assert!(owners.is_empty(), "{name} depends on owner(s) {owners:?}");
    }
}

#[test]
fn judge_workers_pull_in_no_owner_even_indirectly() {
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "--offline",
            "-e",
            "normal",
            "-p",
            "judge-worker",
            "--prefix",
            "none",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree");
    let tree = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for owner in OWNERS {
        assert!(
            !tree.lines().any(|l| l.starts_with(&format!("{owner} v"))),
            "judge-worker pulls in {owner}"
        );
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// String literals of a Rust source (good enough for SQL: no raw strings in owner code).
fn literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = source.chars().peekable();
    let mut current: Option<String> = None;
    while let Some(c) = chars.next() {
        match (&mut current, c) {
            (None, '"') => current = Some(String::new()),
            (None, '/') if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            (None, '\'') => {
                // A char literal or a lifetime: skip a quoted char like '"'.
                let mut lookahead = chars.clone();
                if let (Some(_), Some('\'')) = (lookahead.next(), lookahead.next()) {
                    chars.next();
                    chars.next();
                }
            }
            (None, _) => {}
            (Some(text), '\\') => {
                if let Some(escaped) = chars.next() {
                    text.push(escaped);
                }
            }
            (Some(_), '"') => out.push(current.take().unwrap()),
            (Some(text), c) => text.push(c),
        }
    }
    out
}

#[test]
fn no_owner_sql_names_another_owners_schema() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sql = regex_lite_sql();
    let mut checked = 0;
    for owner in OWNERS {
        let src = crates.join(owner).join("src");
        if !src.exists() {
            continue;
        }
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        assert!(!files.is_empty());
        for file in files {
            let source = std::fs::read_to_string(&file).unwrap();
            for literal in literals(&source) {
                if !sql(&literal) {
                    continue;
                }
                checked += 1;
                for other in OWNERS
                    .iter()
                    .chain(&["queue", "public"])
                    .filter(|o| *o != owner)
                {
                    let qualified = format!("{other}.");
                    let named = literal.match_indices(&qualified).any(|(i, _)| {
                        i == 0
                            || !literal.as_bytes()[i - 1].is_ascii_alphanumeric()
                                && literal.as_bytes()[i - 1] != b'_'
                    });
                    assert!(
                        !named,
                        "{}: SQL of {owner} names schema {other}: {literal}",
                        file.display()
                    );
                }
            }
        }
    }
    assert!(
        checked > 20,
        "only {checked} SQL statements found: the scanner is blind"
    );
}

/// Whether a literal is SQL.
fn regex_lite_sql() -> impl Fn(&str) -> bool {
    |text: &str| {
        ["SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE "]
            .iter()
            .any(|k| text.contains(k))
    }
}

#[test]
fn the_literal_scanner_finds_sql_and_skips_comments() {
    let source =
        "// \"SELECT * FROM app.problems\"\nlet q = \"SELECT x FROM app.problems\"; let c = '\"';";
    let found = literals(source);
    assert_eq!(found, vec!["SELECT x FROM app.problems".to_string()]);
}

#[test]
fn the_readme_gives_the_two_commands_and_ci_runs_the_test_one() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a first sh block");
    let commands: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        commands,
        [
            "cargo run --release --locked -p ulticode -- up",
            "scripts/test.sh"
        ],
        "the README's first block must be exactly the main job and the test command"
    );
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l.trim() == "exec scripts/test.sh"),
        ".ci/run must run the README's test command: {ci}"
    );
}
