//! The problem page's view of a package: its statements (Markdown or LaTeX, one per language),
//! its names and its attachments.
//!
//! Statements are found where each format version keeps them: `statement/problem.<lang>.md`
//! or `.tex` (2023-07, 2025-09), `problem_statement/problem.<lang>.tex` (legacy, also `.md`),
//! and this judge's own `problem.md` / `problem.<lang>.md` beside `problem.yaml`. A LaTeX
//! statement is converted to Markdown for display by pandoc (Debian's package), run inside
//! the sandbox like every tool that reads package files, with the problemset macros ICPC
//! packages use defined first; the source stays in the package.

use std::path::{Path, PathBuf};

use sandbox::{Bind, Limits, Profile, RunSpec, Stdin};

use crate::judging::{Judge, JudgeError};
use crate::package::Problem;

/// One statement file of a package.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Statement {
    /// The language code (`en`, `sv`).
    pub language: String,
    pub format: StatementFormat,
    pub path: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatementFormat {
    Markdown,
    Latex,
}

/// The statements of a package, English first.
pub fn statements(problem: &Problem) -> Vec<Statement> {
    let mut found = Vec::new();
    for dir in ["statement", "problem_statement", "."] {
        let Ok(entries) = std::fs::read_dir(problem.dir.join(dir)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(rest) = name.strip_prefix("problem.") else {
                continue;
            };
            let (language, extension) = match rest.rsplit_once('.') {
                Some((language, extension)) => (language.to_string(), extension),
                // `problem.md`: the language is unstated, taken as English.
                None => ("en".to_string(), rest),
            };
            let format = match extension {
                "md" => StatementFormat::Markdown,
                "tex" => StatementFormat::Latex,
                _ => continue,
            };
            if found.iter().any(|s: &Statement| s.language == language) {
                continue;
            }
            found.push(Statement {
                language,
                format,
                path,
            });
        }
    }
    found.sort_by_key(|s| (s.language != "en", s.language.clone()));
    found
}

/// Files under `attachments/` (2023-07+), relative to it.
pub fn attachments(problem: &Problem) -> Vec<String> {
    let root = problem.dir.join("attachments");
    let mut found = Vec::new();
    fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                walk(root, &path, found);
            } else if let Ok(relative) = path.strip_prefix(root) {
                found.push(relative.display().to_string());
            }
        }
    }
    walk(&root, &root, &mut found);
    found.sort();
    found
}

/// The problemset class's commands, defined for pandoc so their text survives.
const PROBLEMSET_MACROS: &str = r"\newcommand{\problemname}[1]{\section{#1}}
\newcommand{\illustration}[3]{}
\newcommand{\fontdesc}[1]{}
\newcommand{\sampletable}[4]{}
\newcommand{\constant}[1]{#1}
\newcommand{\nextsample}{}
";

const PANDOC: &str = "/usr/bin/pandoc";

/// A statement as Markdown: a Markdown statement as written (constants filled in), a LaTeX
/// one through pandoc in the sandbox.
pub fn render(
    judge: &Judge<'_>,
    problem: &Problem,
    statement: &Statement,
) -> Result<String, JudgeError> {
    let source = problem
        .constants
        .substitute(&std::fs::read(&statement.path)?);
    match statement.format {
        StatementFormat::Markdown => Ok(String::from_utf8_lossy(&source).into_owned()),
        StatementFormat::Latex => {
            if !Path::new(PANDOC).is_file() {
                return Err(JudgeError::Language(
                    "pandoc is not installed (scripts/install-toolchains.sh installs it)".into(),
                ));
            }
            let body = problem
                .constants
                .substitute_latex(&String::from_utf8_lossy(&source));
            let document = format!("{PROBLEMSET_MACROS}\n{body}");
            let dir = statement.path.parent().unwrap_or(&problem.dir);
            let spec = RunSpec::new(PANDOC)
                .args([
                    "--from=latex".to_string(),
                    "--to=gfm+tex_math_dollars".into(),
                    "--wrap=none".into(),
                ])
                .bind(Bind::read_only(dir, "/statement"))
                .stdin(Stdin::Bytes(document.into_bytes()))
                .profile(Profile::Native)
                .limits(Limits {
                    cpu_time_ms: 20_000,
                    wall_time_ms: 40_000,
                    memory_bytes: 1 << 30,
                    pids: 16,
                    ..Limits::default()
                });
            let outcome = judge
                .sandbox()
                .run(&spec)
                .map_err(|e| JudgeError::Language(e.to_string()))?;
            if outcome.status != sandbox::Status::Ok {
                return Err(JudgeError::Language(format!(
                    "pandoc could not convert {}: {}",
                    statement.path.display(),
                    String::from_utf8_lossy(&outcome.stderr).trim()
                )));
            }
            Ok(String::from_utf8_lossy(&outcome.stdout).into_owned())
        }
    }
}
