//! `problem verify`: judge every reference submission and compare with its directory.

use serde::Serialize;

use crate::judging::{Judge, JudgeError, JudgeOptions, PreparedProblem};
use crate::package::{language_of, Expectation, PackageSubmission, ProblemKind};
use crate::verdict::Verdict;

/// How one reference submission fared.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyRow {
    pub submission: String,
    pub language: String,
    pub expected: String,
    /// The verdict (and score) it got; empty when it could not be judged here.
    pub got: String,
    pub outcome: RowOutcome,
    pub time_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "reason")]
pub enum RowOutcome {
    Match,
    Mismatch(String),
    /// The submission's language does not work on this machine (listed, not counted).
    LanguageUnavailable(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifyReport {
    pub problem: String,
    pub rows: Vec<VerifyRow>,
    /// No mismatch (unavailable languages excepted) and at least one submission judged.
    pub ok: bool,
}

/// Judges every file under `submissions/`; `on_row` sees each row as soon as it is known.
pub fn verify(
    judge: &Judge<'_>,
    prepared: &PreparedProblem<'_>,
    on_row: &dyn Fn(&VerifyRow),
) -> Result<VerifyReport, JudgeError> {
    let problem = prepared.problem;
    let mut rows = Vec::new();
    for submission in &problem.submissions {
        let row = verify_one(judge, prepared, submission)?;
        on_row(&row);
        rows.push(row);
    }
    let judged = rows
        .iter()
        .filter(|r| !matches!(r.outcome, RowOutcome::LanguageUnavailable(_)))
        .count();
    let ok = judged > 0
        && rows
            .iter()
            .all(|r| !matches!(r.outcome, RowOutcome::Mismatch(_)));
    Ok(VerifyReport {
        problem: problem.name.clone(),
        rows,
        ok,
    })
}

fn verify_one(
    judge: &Judge<'_>,
    prepared: &PreparedProblem<'_>,
    submission: &PackageSubmission,
) -> Result<VerifyRow, JudgeError> {
    let problem = prepared.problem;
    let mut row = VerifyRow {
        submission: submission.display.clone(),
        language: String::new(),
        expected: submission.expectation.describe(),
        got: String::new(),
        outcome: RowOutcome::Match,
        time_ms: 0,
    };
    let Some(language) = language_of(&submission.path) else {
        row.outcome = RowOutcome::Mismatch("no language uses this file extension".into());
        return Ok(row);
    };
    row.language = language.to_string();
    if judge.languages().get(language).is_none() {
        row.outcome = RowOutcome::LanguageUnavailable(judge.languages().why_not(language));
        return Ok(row);
    }
    let source = std::fs::read(&submission.path)?;
    // Reference submissions are judged on every test, so a wrong one cannot hide behind an
    // early failure of another kind... except where the package says to stop.
    let report = judge.judge(
        prepared,
        language,
        &source,
        JudgeOptions::default(),
        &|_| {},
    )?;
    row.time_ms = report.time_ms;
    row.got = match report.score {
        Some(score) => format!("{} ({score})", report.verdict),
        None => report.verdict.to_string(),
    };
    let full = report.score == report.max_score;
    row.outcome = match submission.expectation {
        Expectation::Accepted if report.verdict == Verdict::AC && full => RowOutcome::Match,
        Expectation::Accepted => RowOutcome::Mismatch(
            match report.tests.iter().find(|t| t.verdict != Verdict::AC) {
                Some(test) => format!("{} on {}: {}", test.verdict, test.name, test.message),
                None if report.verdict == Verdict::CE => {
                    format!("CE: {}", first_line(&report.compile_output))
                }
                None => "not full score".into(),
            },
        ),
        Expectation::Verdict(expected) if report.verdict == expected => RowOutcome::Match,
        Expectation::Verdict(expected) => {
            RowOutcome::Mismatch(format!("expected {expected}, got {}", report.verdict))
        }
        Expectation::PartialScore => {
            let score = report.score.unwrap_or(0.0);
            let max = report.max_score.unwrap_or(0.0);
            if problem.kind == ProblemKind::Scoring && score > 0.0 && score < max {
                RowOutcome::Match
            } else {
                RowOutcome::Mismatch(format!("score {score} is not strictly between 0 and {max}"))
            }
        }
    };
    Ok(row)
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}
