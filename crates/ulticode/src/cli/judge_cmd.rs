//! `ulticode judge`, `ulticode problem verify` and `ulticode languages`.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use clap::{Args, Subcommand};
use judge::{
    default_languages, package::language_of, Coverage, Judge, JudgeOptions, JudgeReport,
    LanguageConfig, Languages, Problem, Progress, RowOutcome, Verdict,
};
use sandbox::Sandbox;
use serde_json::json;

/// Where language definitions come from.
#[derive(Debug, Args)]
pub struct LanguageArgs {
    /// JSON file of language entries replacing built-ins with the same id or adding new ones.
    #[arg(long, value_name = "FILE", global = true)]
    languages_file: Option<PathBuf>,
}

impl LanguageArgs {
    fn configs(&self) -> anyhow::Result<Vec<LanguageConfig>> {
        let defaults = default_languages();
        match &self.languages_file {
            Some(path) => judge::language::load_overrides(path, defaults).map_err(|e| anyhow!(e)),
            None => Ok(defaults),
        }
    }

    /// Probes the languages with the given ids (all when `None`).
    fn detect(
        &self,
        sandbox: &dyn Sandbox,
        wanted: Option<&BTreeSet<String>>,
    ) -> anyhow::Result<Languages> {
        let configs = self
            .configs()?
            .into_iter()
            .filter(|c| wanted.is_none_or(|w| w.contains(&c.id)))
            .collect();
        Ok(Languages::detect(sandbox, configs))
    }
}

#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// The problem package directory.
    problem: PathBuf,
    /// The submission's source file.
    source: PathBuf,
    /// Language id (see `ulticode languages`) [default: from the file name].
    #[arg(long, value_name = "ID")]
    language: Option<String>,
    /// Judge every test, even after failures [default: pass-fail problems stop at the first
    /// failure; scoring problems follow each group's on_reject].
    #[arg(long)]
    all_tests: bool,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    languages: LanguageArgs,
}

#[derive(Debug, Subcommand)]
pub enum ProblemCommand {
    /// Judge every file under submissions/ and compare with its directory's expected result.
    Verify {
        problem: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        languages: LanguageArgs,
    },
    /// Show what a problem page shows: names, the statement (LaTeX converted by pandoc in the
    /// sandbox) and attachments.
    Show {
        problem: PathBuf,
        /// The statement's language (default: English, else the first).
        #[arg(long)]
        language: Option<String>,
        #[command(flatten)]
        languages: LanguageArgs,
    },
    /// Convert a Polygon package (a directory or zip with problem.xml) into a Kattis-format
    /// package; generators and the main solution run in the sandbox where tests are missing.
    Import {
        /// The Polygon package.
        source: PathBuf,
        /// The directory to write (new, or empty).
        #[arg(long)]
        to: PathBuf,
        #[command(flatten)]
        languages: LanguageArgs,
    },
}

#[derive(Debug, Args)]
pub struct LanguagesArgs {
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    languages: LanguageArgs,
}

fn load(problem: &Path) -> anyhow::Result<Problem> {
    Problem::load(problem)
        .map_err(|e| anyhow!("invalid problem package {}: {e}", problem.display()))
}

pub fn judge(args: JudgeArgs) -> anyhow::Result<ExitCode> {
    let problem = load(&args.problem)?;
    let language = match &args.language {
        Some(id) => id.clone(),
        None => language_of(&args.source)
            .ok_or_else(|| {
                anyhow!(
                    "cannot tell the language of {}; pass --language",
                    args.source.display()
                )
            })?
            .to_string(),
    };
    let source =
        std::fs::read(&args.source).with_context(|| format!("read {}", args.source.display()))?;
    let sandbox = super::native_sandbox()?;
    let mut wanted = BTreeSet::from([language.clone()]);
    wanted.extend(problem.validator.iter().map(|v| v.language.clone()));
    let languages = args.languages.detect(&sandbox, Some(&wanted))?;
    let judge = Judge::new(&sandbox, &languages);
    let prepared = judge.prepare(&problem)?;
    let options = JudgeOptions {
        coverage: if args.all_tests {
            Coverage::All
        } else {
            Coverage::Package
        },
        abort: None,
    };
    let terminal = !args.json && std::io::stderr().is_terminal();
    let show = |p: Progress<'_>| {
        if args.json {
            return;
        }
        match p {
            Progress::Compiling => eprintln!("compiling ({language})…"),
            Progress::Compiled { ok } => {
                eprintln!("{}", if ok { "compiled" } else { "compilation failed" })
            }
            Progress::Test {
                index,
                total,
                result,
            } => {
                let (on, off) = if terminal {
                    (colour(result.verdict), "\x1b[0m")
                } else {
                    ("", "")
                };
                eprintln!(
                    "[{:>3}/{total}] {:<28} {on}{:<3}{off} {:>6} ms {:>8} KiB {}",
                    index + 1,
                    result.name,
                    result.verdict,
                    result.time_ms,
                    result.memory_kib,
                    result.message
                );
            }
        }
    };
    let report = judge.judge(&prepared, &language, &source, options, &show)?;
    if args.json {
        out!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_summary(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn colour(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::AC => "\x1b[32m",
        Verdict::SE => "\x1b[35m",
        _ => "\x1b[31m",
    }
}

fn print_summary(report: &JudgeReport) {
    if !report.compile_output.trim().is_empty() {
        out!("compiler output:\n{}", report.compile_output.trim_end());
    }
    let score = match (report.score, report.max_score) {
        (Some(score), Some(max)) => format!(", score {score} / {max}"),
        _ => String::new(),
    };
    out!(
        "{} ({}){score}, {} ms, {} KiB, {} tests judged",
        report.verdict,
        report.verdict.long_name(),
        report.time_ms,
        report.memory_kib,
        report.tests.len()
    );
}

pub fn problem(command: ProblemCommand) -> anyhow::Result<ExitCode> {
    let (problem, json, languages) = match command {
        ProblemCommand::Verify {
            problem,
            json,
            languages,
        } => (problem, json, languages),
        ProblemCommand::Import {
            source,
            to,
            languages,
        } => return import(&source, &to, languages),
        ProblemCommand::Show {
            problem,
            language,
            languages,
        } => return show(&problem, language.as_deref(), languages),
    };
    let problem = load(&problem)?;
    let sandbox = super::native_sandbox()?;
    let mut wanted: BTreeSet<String> = problem
        .submissions
        .iter()
        .filter_map(|s| judge::submission_language(s).ok())
        .collect();
    wanted.extend(problem.validator.iter().map(|v| v.language.clone()));
    let languages = languages.detect(&sandbox, Some(&wanted))?;
    let judge = Judge::new(&sandbox, &languages);
    let prepared = judge.prepare(&problem)?;
    if problem.submissions.is_empty() {
        bail!("{} has no submissions/ to verify", problem.dir.display());
    }
    if !json {
        out!("{}: {}", problem.dir.display(), problem.name);
        for warning in &problem.warnings {
            out!("warning: {warning}");
        }
        out!(
            "{:<48} {:<10} {:<14} {:<14} {:>7}  result",
            "submission",
            "language",
            "expected",
            "got",
            "time"
        );
    }
    let report = judge::verify(&judge, &prepared, &|row| {
        if json {
            return;
        }
        let result = match &row.outcome {
            RowOutcome::Match => match &row.note {
                Some(note) => format!("ok, {note}"),
                None => "ok".to_string(),
            },
            RowOutcome::Mismatch(reason) => format!("MISMATCH: {reason}"),
            RowOutcome::LanguageUnavailable(reason) => format!("not judged: {reason}"),
        };
        out!(
            "{:<48} {:<10} {:<14} {:<14} {:>4} ms  {result}",
            row.submission,
            row.language,
            row.expected,
            row.got,
            row.time_ms
        );
    })?;
    if json {
        out!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        let mismatches = report
            .rows
            .iter()
            .filter(|r| matches!(r.outcome, RowOutcome::Mismatch(_)))
            .count();
        let unavailable = report
            .rows
            .iter()
            .filter(|r| matches!(r.outcome, RowOutcome::LanguageUnavailable(_)))
            .count();
        out!(
            "{} submissions: {} as expected, {mismatches} mismatched, {unavailable} in unavailable languages",
            report.rows.len(),
            report.rows.len() - mismatches - unavailable
        );
        // verifyproblem's summary: submissions × test groups.
        let groups = judge::summary_groups(&problem);
        if !groups.is_empty() {
            let width = groups.iter().map(String::len).max().unwrap_or(0).max(4) + 2;
            let header: String = groups.iter().map(|g| format!("{g:<width$}")).collect();
            out!("\n{:<48} {header}", "submission results");
            for row in &report.rows {
                let cells: String = row
                    .groups
                    .iter()
                    .map(|(_, cell)| format!("{cell:<width$}"))
                    .collect();
                out!("{:<48} {}", row.submission, cells.trim_end());
            }
            out!();
        }
        for failure in &report.output_validation {
            out!("MISMATCH output validation {failure}");
        }
        for validation in &report.input_validation {
            match &validation.not_run {
                Some(reason) => out!("UNAVAILABLE {reason}"),
                None if validation.failures.is_empty() => out!(
                    "input validator {}: accepted all {} inputs",
                    validation.validator,
                    validation.accepted
                ),
                None => {
                    for failure in &validation.failures {
                        out!(
                            "MISMATCH input validator {}: {failure}",
                            validation.validator
                        );
                    }
                }
            }
        }
        if report.submit_answer {
            out!("submit-answer: the answers are judged as given, without a time limit");
        } else {
            out!(
                "time limit {} ms ({}), TLE margin {} ms",
                report.time_limit_ms,
                if report.time_limit_derived {
                    "derived from the submissions"
                } else {
                    "the package's"
                },
                report.margin_ms
            );
        }
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn show(
    problem: &Path,
    language: Option<&str>,
    languages: LanguageArgs,
) -> anyhow::Result<ExitCode> {
    let problem = load(problem)?;
    let sandbox = super::native_sandbox()?;
    let languages = languages.detect(&sandbox, Some(&BTreeSet::new()))?;
    let judge = Judge::new(&sandbox, &languages);
    for (code, name) in &problem.names {
        out!("name ({code}): {name}");
    }
    let statements = judge::statement::statements(&problem);
    let chosen = match language {
        Some(code) => statements.iter().find(|s| s.language == code),
        None => statements.first(),
    };
    match chosen {
        Some(statement) => {
            out!(
                "statement ({}, {:?}):",
                statement.language,
                statement.format
            );
            out!("{}", judge::statement::render(&judge, &problem, statement)?);
        }
        None => out!("no statement"),
    }
    for attachment in judge::statement::attachments(&problem) {
        out!("attachment: {attachment}");
    }
    Ok(ExitCode::SUCCESS)
}

fn import(source: &Path, to: &Path, languages: LanguageArgs) -> anyhow::Result<ExitCode> {
    let sandbox = super::native_sandbox()?;
    let languages = languages.detect(&sandbox, None)?;
    let judge = Judge::new(&sandbox, &languages);
    let report = judge::polygon::import(&judge, source, to)
        .with_context(|| format!("import {}", source.display()))?;
    out!(
        "{}: {} tests ({} inputs generated, {} answers from the main solution), {} submissions",
        to.display(),
        report.tests,
        report.generated_inputs,
        report.generated_answers,
        report.submissions
    );
    if report.empty_answers > 0 {
        out!(
            "note: {} interactive tests had no answer in the package and got an empty one",
            report.empty_answers
        );
    }
    for note in &report.notes {
        out!("note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn languages(args: LanguagesArgs) -> anyhow::Result<ExitCode> {
    let sandbox = super::native_sandbox()?;
    let languages = args.languages.detect(&sandbox, None)?;
    if args.json {
        let mut entries: Vec<_> = languages
            .available
            .iter()
            .map(|l| {
                json!({
                    "id": l.config.id,
                    "name": l.config.name,
                    "available": true,
                    "version": l.version,
                    "source_file": l.config.source_file,
                    "compile": l.config.compile,
                    "run": l.config.run,
                    "profile": l.config.profile,
                    "compile_limits": l.config.compile_limits,
                })
            })
            .collect();
        entries.extend(
            languages.unavailable.iter().map(
                |u| json!({"id": u.id, "name": u.name, "available": false, "reason": u.reason}),
            ),
        );
        out!("{}", serde_json::to_string_pretty(&entries)?);
    } else {
        for l in &languages.available {
            out!("{:<11} {:<22} {}", l.config.id, l.config.name, l.version);
        }
        for u in &languages.unavailable {
            out!("{:<11} {:<22} unavailable: {}", u.id, u.name, u.reason);
        }
    }
    Ok(ExitCode::SUCCESS)
}
