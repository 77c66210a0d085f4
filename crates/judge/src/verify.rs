//! `problem verify`: judge every reference submission and compare with what its directory
//! expects, with the reference tool's (problemtools' `verifyproblem`) timing semantics.
//!
//! - The time limit is the package's own, or derived: the slowest test of the accepted
//!   submissions × `ac_to_time_limit`, rounded up to a multiple of `time_resolution`.
//! - Every submission runs once under the time limit × `time_limit_to_tle` (the TLE margin).
//!   Its tests are then read twice: at the time limit (a test slower than the limit is a
//!   timeout) and at the margin (as it ran). A submission that meets its directory's
//!   expectation at the time limit is as expected; one that meets it only at the margin is as
//!   expected "with extra time" (a pass with a note), as there.
//! - Expectations are per-test, as in 2025-09's `submissions.yaml` defaults: every test's
//!   verdict must be in the directory's permitted set, and one in its required set. A memory
//!   overrun and an output overrun count as run-time errors (the format has no MLE verdict).

use serde::Serialize;

use crate::grading::{graded_verdict, group_scores};
use crate::input_validation::{validate_inputs, InputValidation};
use crate::judging::{Answers, Judge, JudgeError, JudgeOptions, JudgeReport, PreparedProblem};
use crate::package::{
    default_rule, format_verdict, language_of, Expectation, FormatVersion, PackageSubmission,
    Problem, ProblemKind, Rule, TestCase, TestItem, TimeLimitUse,
};
use crate::program::{language_for_code, ProgramFiles};
use crate::verdict::Verdict;

/// How one reference submission fared.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyRow {
    pub submission: String,
    pub language: String,
    pub expected: String,
    /// The verdict (and score) it got at the time limit; empty when it could not be judged.
    pub got: String,
    pub outcome: RowOutcome,
    /// Slowest counted test (CPU time).
    pub time_ms: u64,
    /// Set when the expectation holds only with the margin ("with extra time").
    pub note: Option<String>,
    /// Per test group (`sample`, `secret` or its groups), as verifyproblem's summary shows
    /// it: `AC`, the first other verdict, or `-` when nothing there was judged.
    pub groups: Vec<(String, String)>,
}

/// The groups of the summary table: `sample`, and `secret`'s groups (or `secret` itself).
pub fn summary_groups(problem: &Problem) -> Vec<String> {
    let mut names = Vec::new();
    for item in &problem.data.items {
        if let TestItem::Group(group) = item {
            let children: Vec<&str> = group
                .items
                .iter()
                .filter_map(|item| match item {
                    TestItem::Group(child) if group.name == "secret" => Some(child.name.as_str()),
                    _ => None,
                })
                .collect();
            if children.is_empty() {
                names.push(group.name.clone());
            } else {
                names.extend(children.iter().map(|c| c.to_string()));
            }
        }
    }
    names
}

fn group_cells(groups: &[String], view: &View) -> Vec<(String, String)> {
    groups
        .iter()
        .map(|group| {
            let prefix = format!("{group}/");
            let tests: Vec<&(String, Verdict, String)> = view
                .verdicts
                .iter()
                .filter(|(name, ..)| name.starts_with(&prefix))
                .collect();
            let cell = match tests.iter().find(|(_, v, _)| *v != Verdict::AC) {
                _ if tests.is_empty() => "-".to_string(),
                Some((_, verdict, _)) => format_verdict(*verdict).to_string(),
                None => "AC".to_string(),
            };
            (group.clone(), cell)
        })
        .collect()
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
    /// The time limit the submissions were judged against.
    pub time_limit_ms: u64,
    /// Whether it was derived from the submissions (the package gave none).
    pub time_limit_derived: bool,
    /// Submissions are answers: no time limit applies.
    pub submit_answer: bool,
    /// The limit × `time_limit_to_tle`: what "with extra time" means.
    pub margin_ms: u64,
    pub rows: Vec<VerifyRow>,
    /// What each input validator found on the test data.
    pub input_validation: Vec<InputValidation>,
    /// Outputs the output validator judged otherwise than the package says: a sample's shown
    /// output (`.out`, or the `.ans` when nothing overrides it) and `valid_output/` it must
    /// accept, `invalid_output/` it must reject. Each with the reason.
    pub output_validation: Vec<String>,
    /// The package's warnings (unknown keys, skipped files).
    pub warnings: Vec<String>,
    /// No mismatch (unavailable languages excepted) and at least one submission judged.
    pub ok: bool,
}

/// The CPU time limit accepted submissions run under while the time limit is being derived.
const PROBE_TIME_LIMIT_MS: u64 = 20_000;

/// Judges every file under `submissions/`; `on_row` sees each row as soon as it is known.
pub fn verify(
    judge: &Judge<'_>,
    prepared: &PreparedProblem<'_>,
    on_row: &dyn Fn(&VerifyRow),
) -> Result<VerifyReport, JudgeError> {
    let problem = prepared.problem;
    let input_validation = validate_inputs(judge, problem)?;
    let limits = &problem.limits;
    // Answers take no time: a submit-answer problem has nothing to derive a limit from.
    let time_limit_ms = if problem.time_limit_fixed || problem.submit_answer {
        limits.time_limit_ms
    } else {
        derived_time_limit(judge, problem)?
    };
    let margin_ms = (time_limit_ms as f64 * limits.time_limit_to_tle).ceil() as u64;
    let mut extended = problem.clone();
    extended.limits.time_limit_ms = margin_ms;
    // The package's own submissions are judged whatever `languages` allows contestants (the
    // row says so).
    extended.languages = None;
    let extended = judge.prepare(&extended)?;

    let output_validation = check_output_validation(judge, &extended);
    let mut rows = Vec::new();
    for submission in &problem.submissions {
        let row = verify_one(judge, &extended, problem, submission, time_limit_ms)?;
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
            .all(|r| !matches!(r.outcome, RowOutcome::Mismatch(_)))
        && input_validation.iter().all(|v| v.failures.is_empty())
        && output_validation.is_empty();
    Ok(VerifyReport {
        problem: problem.name.clone(),
        time_limit_ms,
        time_limit_derived: !problem.time_limit_fixed && !problem.submit_answer,
        submit_answer: problem.submit_answer,
        margin_ms,
        rows,
        input_validation,
        output_validation,
        warnings: problem.warnings.iter().map(ToString::to_string).collect(),
        ok,
    })
}

/// The format's checks of the output validator, where outputs are judged apart from an
/// interaction (neither interactive nor multi-pass): a sample's `.out` must pass it, and so
/// must its `.ans` when the statement shows it; `valid_output/`'s `.out` files must pass and
/// `invalid_output/`'s must not.
fn check_output_validation(judge: &Judge<'_>, prepared: &PreparedProblem<'_>) -> Vec<String> {
    let problem = prepared.problem;
    if problem.interactive() || problem.multi_pass {
        return Vec::new();
    }
    let mut failures = Vec::new();
    for (input, valid) in &problem.output_cases {
        let shown = input
            .strip_prefix(&problem.dir)
            .unwrap_or(input)
            .with_extension("out");
        let case = TestCase {
            name: shown.with_extension("").display().to_string(),
            input: input.clone(),
            answer: input.with_extension("ans"),
            sample: false,
            args: Vec::new(),
            files: None,
            static_validation: None,
        };
        let result = match std::fs::read(input.with_extension("out")) {
            Ok(bytes) => judge.check_answer(prepared, Some(&bytes), &case, &problem.data.settings),
            Err(e) => {
                failures.push(format!("{}: {e}", shown.display()));
                continue;
            }
        };
        let accepted = result.verdict == Verdict::AC;
        if accepted != *valid {
            failures.push(format!(
                "{}: the output validator says {} ({}), but it must {}",
                shown.display(),
                result.verdict,
                first_line(&result.message),
                if *valid { "accept it" } else { "reject it" }
            ));
        }
    }
    for case in problem.test_cases().into_iter().filter(|c| c.sample) {
        let (shown, overridden) = case.shown_output();
        let file = match (case.sibling("out"), overridden) {
            (Some(out), _) => out,
            (None, false) => shown,
            // `.ans.statement` and `.interaction` are not validated.
            (None, true) => continue,
        };
        let Some(settings) = problem.data.settings_of(case) else {
            continue;
        };
        let shown_name = file
            .strip_prefix(&problem.dir)
            .unwrap_or(&file)
            .display()
            .to_string();
        let result = match std::fs::read(&file) {
            Ok(bytes) => judge.check_answer(prepared, Some(&bytes), case, settings),
            Err(e) => {
                failures.push(format!("{shown_name}: {e}"));
                continue;
            }
        };
        if result.verdict != Verdict::AC {
            failures.push(format!(
                "{shown_name}: the output validator says {} ({})",
                result.verdict,
                first_line(&result.message)
            ));
        }
    }
    failures
}

/// The slowest test of the submissions that bound the time limit from below
/// ([`lower_bounds_time_limit`]), × `ac_to_time_limit`, rounded up to a multiple of
/// `time_resolution` (at least one multiple).
pub(crate) fn derived_time_limit(judge: &Judge<'_>, problem: &Problem) -> Result<u64, JudgeError> {
    let mut probe = problem.clone();
    probe.limits.time_limit_ms = PROBE_TIME_LIMIT_MS;
    probe.languages = None;
    let prepared = judge.prepare(&probe)?;
    let mut slowest_ms = 0;
    for submission in &problem.submissions {
        if !lower_bounds_time_limit(submission, problem.version) {
            continue;
        }
        let Ok(report) = judge_submission(judge, &prepared, submission)? else {
            continue;
        };
        slowest_ms = slowest_ms.max(report.tests.iter().map(|t| t.time_ms).max().unwrap_or(0));
    }
    Ok(time_limit_from(
        slowest_ms,
        problem.limits.ac_to_time_limit,
        problem.limits.time_resolution_s,
    ))
}

/// Whether a submission's run times bound a derived time limit from below. 2025-09: every
/// submission some rule of which does not permit TLE (`accepted`, `wrong_answer`,
/// `run_time_error` by default), unless `use_for_time_limit` opts it out (`false`, `upper`)
/// or in (`lower`). Legacy: the accepted submissions.
fn lower_bounds_time_limit(submission: &PackageSubmission, version: FormatVersion) -> bool {
    let uses: Vec<TimeLimitUse> = submission
        .rules
        .iter()
        .filter_map(|rule| rule.use_for_time_limit)
        .collect();
    if uses.contains(&TimeLimitUse::No) || uses.contains(&TimeLimitUse::Upper) {
        return false;
    }
    if uses.contains(&TimeLimitUse::Lower) {
        return true;
    }
    match version {
        FormatVersion::Legacy => submission.expectation == Expectation::Accepted,
        FormatVersion::Modern => submission
            .expectation
            .rule()
            .iter()
            .chain(&submission.rules)
            .any(|rule| {
                rule.permitted
                    .as_ref()
                    .is_some_and(|permitted| !permitted.iter().any(|v| v == "TLE"))
            }),
    }
}

fn time_limit_from(slowest_ms: u64, ac_to_time_limit: f64, resolution_s: f64) -> u64 {
    let resolution_ms = (resolution_s * 1000.0).max(1.0);
    let steps = (slowest_ms as f64 * ac_to_time_limit / resolution_ms - 1e-9)
        .ceil()
        .max(1.0);
    (steps * resolution_ms).round() as u64
}

/// The language of a reference submission: `submissions.yaml`'s, else its file ending (for a
/// directory, the one language of its source files).
pub fn submission_language(submission: &PackageSubmission) -> Result<String, String> {
    if let Some(code) = &submission.language {
        return Ok(language_for_code(code).to_string());
    }
    if submission.path.is_file() {
        return language_of(&submission.path)
            .map(str::to_string)
            .ok_or_else(|| "no language uses this file ending".into());
    }
    let mut languages: Vec<&str> = std::fs::read_dir(&submission.path)
        .map_err(|e| e.to_string())?
        .flatten()
        .filter_map(|e| language_of(&e.path()))
        .collect();
    languages.sort_unstable();
    languages.dedup();
    match languages.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err("no source file of a known language".into()),
        many => Err(format!(
            "sources in several languages ({}); name one in submissions.yaml",
            many.join(", ")
        )),
    }
}

/// How a reference submission could not be judged: its language, or its program.
enum NotJudged {
    Unavailable(String),
    Invalid(String),
}

/// Judges one reference submission.
fn judge_submission(
    judge: &Judge<'_>,
    prepared: &PreparedProblem<'_>,
    submission: &PackageSubmission,
) -> Result<Result<JudgeReport, NotJudged>, JudgeError> {
    let constants = &prepared.problem.constants;
    if prepared.problem.submit_answer {
        let answers = answer_files(&submission.path)?;
        return Ok(Ok(judge.judge_answers(
            prepared,
            &answers,
            JudgeOptions::default(),
            &|_| {},
        )));
    }
    let language = match submission_language(submission) {
        Ok(language) => language,
        Err(reason) => return Ok(Err(NotJudged::Invalid(reason))),
    };
    let Some(config) = judge.languages().get(&language).map(|l| l.config.clone()) else {
        return Ok(Err(NotJudged::Unavailable(
            judge.languages().why_not(&language),
        )));
    };
    let program = if submission.path.is_file() {
        ProgramFiles::single(
            &config,
            &constants.substitute(&std::fs::read(&submission.path)?),
        )
    } else {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&submission.path)?.flatten() {
            if entry.path().is_file() {
                let bytes = constants.substitute(&std::fs::read(entry.path())?);
                files.push((entry.file_name().to_string_lossy().into_owned(), bytes));
            }
        }
        match ProgramFiles::directory(&config, files, submission.entrypoint.as_deref()) {
            Ok(program) => program,
            Err(reason) => return Ok(Err(NotJudged::Invalid(reason))),
        }
    };
    judge
        .judge_program(
            prepared,
            &language,
            program,
            JudgeOptions::default(),
            &|_| {},
        )
        .map(Ok)
}

/// A submit-answer submission's answers: one file for every test, or a directory's files by
/// their paths in it.
fn answer_files(path: &std::path::Path) -> std::io::Result<Answers> {
    if path.is_file() {
        return Ok(Answers::single(std::fs::read(path)?));
    }
    fn walk(
        root: &std::path::Path,
        dir: &std::path::Path,
        out: &mut Vec<(String, Vec<u8>)>,
    ) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(root, &path, out)?;
            } else {
                let name = path.strip_prefix(root).unwrap_or(&path);
                out.push((name.to_string_lossy().into_owned(), std::fs::read(&path)?));
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(path, path, &mut files)?;
    Ok(Answers::files(files))
}

/// The first rejected test with what the package says of it (`.desc`, `.hint`, or its
/// `.yaml`'s `description` and `hint`), if it says anything.
fn first_failure_described(problem: &Problem, report: &JudgeReport) -> Option<String> {
    let failed = report.tests.iter().find(|t| t.verdict != Verdict::AC)?;
    let case = problem
        .test_cases()
        .into_iter()
        .find(|case| case.name == failed.name)?;
    Some(format!("{}: {}", case.name, case.description()?))
}

/// Verifies one submission on `extended` (the package at the TLE margin, any language);
/// `package` is the package as contestants see it.
fn verify_one(
    judge: &Judge<'_>,
    extended: &PreparedProblem<'_>,
    package: &Problem,
    submission: &PackageSubmission,
    time_limit_ms: u64,
) -> Result<VerifyRow, JudgeError> {
    let problem = extended.problem;
    let mut row = VerifyRow {
        submission: submission.display.clone(),
        language: if problem.submit_answer {
            "answer".into()
        } else {
            submission_language(submission).unwrap_or_default()
        },
        expected: submission.expectation.describe(),
        got: String::new(),
        outcome: RowOutcome::Match,
        time_ms: 0,
        note: None,
        groups: Vec::new(),
    };
    let report = match judge_submission(judge, extended, submission)? {
        Ok(report) => report,
        Err(NotJudged::Unavailable(reason)) => {
            row.outcome = RowOutcome::LanguageUnavailable(reason);
            return Ok(row);
        }
        Err(NotJudged::Invalid(reason)) => {
            row.outcome = RowOutcome::Mismatch(reason);
            return Ok(row);
        }
    };
    row.time_ms = report.time_ms;
    let at_limit = View::at_limit(&report, problem, time_limit_ms);
    let at_margin = View::as_run(&report);
    row.got = at_limit.describe(&report);
    row.groups = group_cells(&summary_groups(problem), &at_limit);
    let group_scores = group_scores(problem, &report.tests);
    let meets = |view: &View| {
        let tests: Vec<(String, &str, String)> = view
            .verdicts
            .iter()
            .map(|(name, verdict, message)| {
                (name.clone(), format_verdict(*verdict), message.clone())
            })
            .collect();
        submission
            .expectation
            .check(view, &tests, &report, problem.kind, problem.version)?;
        submission
            .rules
            .iter()
            .try_for_each(|rule| rule.check(&tests, report.score, &group_scores))
    };
    row.outcome = match (meets(&at_limit), meets(&at_margin)) {
        (Ok(()), _) => RowOutcome::Match,
        (Err(_), Ok(())) => {
            row.note = Some(format!(
                "as expected only with extra time (got {} within {} ms)",
                at_margin.describe(&report),
                problem.limits.time_limit_ms
            ));
            RowOutcome::Match
        }
        (Err(reason), Err(_)) => {
            RowOutcome::Mismatch(match first_failure_described(problem, &report) {
                Some(described) => format!("{reason} [{described}]"),
                None => reason,
            })
        }
    };
    let judged_language = !problem.submit_answer && !row.language.is_empty();
    if let (true, Err(reason)) = (judged_language, package.allows_language(&row.language)) {
        let note = format!("{reason}: judged for the package, contestants cannot use it");
        row.note = Some(match row.note.take() {
            Some(earlier) => format!("{earlier}; {note}"),
            None => note,
        });
    }
    Ok(row)
}

/// The verdict of each counted test, read at one time limit.
struct View {
    verdicts: Vec<(String, Verdict, String)>,
    compile_error: bool,
    /// The submission's verdict in this view, by the package's grader flags.
    graded: Verdict,
}

impl View {
    fn as_run(report: &JudgeReport) -> Self {
        Self {
            verdicts: report
                .tests
                .iter()
                .map(|t| (t.name.clone(), t.verdict, t.message.clone()))
                .collect(),
            compile_error: report.verdict == Verdict::CE,
            graded: report.verdict,
        }
    }

    /// A test slower than the limit timed out there, whatever it did afterwards.
    fn at_limit(report: &JudgeReport, problem: &Problem, time_limit_ms: u64) -> Self {
        let mut tests = report.tests.clone();
        for test in &mut tests {
            if test.time_ms > time_limit_ms && !matches!(test.verdict, Verdict::SE | Verdict::CE) {
                test.verdict = Verdict::TLE;
                test.message = format!("{} ms over the {time_limit_ms} ms limit", test.time_ms);
            }
        }
        let mut view = Self::as_run(report);
        if !view.compile_error {
            view.graded = graded_verdict(problem, &tests);
        }
        view.verdicts = tests
            .into_iter()
            .map(|t| (t.name, t.verdict, t.message))
            .collect();
        view
    }

    fn describe(&self, report: &JudgeReport) -> String {
        match report.score {
            // Six decimals: a third of 100 reads 33.333333, not 33.333333333333336.
            Some(score) => format!("{} ({})", self.graded, (score * 1e6).round() / 1e6),
            None => self.graded.to_string(),
        }
    }
}

impl Expectation {
    /// The directory's per-test rule (the 2025-09 defaults), where it has one.
    fn rule(self) -> Option<Rule> {
        let (dir, _) = Expectation::DIRECTORIES.iter().find(|(_, e)| *e == self)?;
        default_rule(dir)
    }

    fn check(
        self,
        view: &View,
        tests: &[(String, &str, String)],
        report: &JudgeReport,
        kind: ProblemKind,
        version: FormatVersion,
    ) -> Result<(), String> {
        if let Some(rule) = self.rule() {
            if view.compile_error {
                return Err(format!("CE: {}", first_line(&report.compile_output)));
            }
            rule.check(tests, None, &[])?;
            if self == Expectation::Accepted && report.score != report.max_score {
                return Err(format!(
                    "score {} is not the maximum {}",
                    report.score.unwrap_or(0.0),
                    report.max_score.unwrap_or(0.0)
                ));
            }
            return Ok(());
        }
        match self {
            // Legacy: accepted (by the grader flags) with a score below the maximum. A 2025-09
            // scoring problem gives a score instead of a verdict: the score decides alone.
            Expectation::PartialScore => {
                let score = report.score.unwrap_or(0.0);
                let max = report.max_score.unwrap_or(0.0);
                if version == FormatVersion::Legacy && view.graded != Verdict::AC {
                    Err(format!("{} with score {score}, not accepted", view.graded))
                } else if kind == ProblemKind::Scoring && score > 0.0 && score < max {
                    Ok(())
                } else {
                    Err(format!("score {score} is not strictly between 0 and {max}"))
                }
            }
            // This judge's own directories (memory_limit_exceeded, output_limit_exceeded,
            // compile_error) expect one final verdict.
            Expectation::Verdict(expected) if view.graded == expected => Ok(()),
            Expectation::Verdict(expected) => {
                Err(format!("expected {expected}, got {}", view.graded))
            }
            // Only the rules of submissions.yaml, checked by the caller.
            Expectation::Custom => Ok(()),
            _ => unreachable!("the other expectations have a per-test rule"),
        }
    }
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_submissions_that_bound_the_time_limit_from_below() {
        let submission = |expectation, uses: Option<TimeLimitUse>, permitted: Option<&[&str]>| {
            let mut rule = default_rule("accepted").unwrap();
            rule.permitted = permitted.map(|p| p.iter().map(|v| v.to_string()).collect());
            rule.use_for_time_limit = uses;
            PackageSubmission {
                path: Default::default(),
                display: String::new(),
                expectation,
                language: None,
                entrypoint: None,
                rules: vec![rule],
            }
        };
        use FormatVersion::{Legacy, Modern};
        let wa = Expectation::Verdict(Verdict::WA);
        let tle = Expectation::Verdict(Verdict::TLE);
        let cases = [
            (submission(Expectation::Accepted, None, None), Legacy, true),
            (submission(wa, None, None), Legacy, false),
            (submission(wa, None, None), Modern, true),
            (
                submission(Expectation::Verdict(Verdict::RE), None, None),
                Modern,
                true,
            ),
            (submission(tle, None, None), Modern, false),
            (submission(wa, Some(TimeLimitUse::No), None), Modern, false),
            (
                submission(tle, Some(TimeLimitUse::Lower), None),
                Modern,
                true,
            ),
            (
                submission(Expectation::Accepted, Some(TimeLimitUse::Upper), None),
                Modern,
                false,
            ),
            (
                submission(Expectation::Custom, None, Some(&["AC", "WA"])),
                Modern,
                true,
            ),
            (
                submission(Expectation::Custom, None, Some(&["AC", "TLE"])),
                Modern,
                false,
            ),
        ];
        for (index, (submission, version, lower)) in cases.into_iter().enumerate() {
            assert_eq!(
                lower_bounds_time_limit(&submission, version),
                lower,
                "case {index}"
            );
        }
    }

    #[test]
    fn derived_time_limits_round_up_to_the_resolution() {
        // (slowest ms, multiplier, resolution s) → limit ms
        let cases = [
            (120, 2.0, 1.0, 1000),
            (600, 2.0, 1.0, 2000),
            (500, 2.0, 1.0, 1000),
            (0, 2.0, 1.0, 1000),
            (130, 5.0, 0.1, 700),
            (333, 1.5, 0.25, 500),
        ];
        for (slowest, multiplier, resolution, expected) in cases {
            assert_eq!(
                time_limit_from(slowest, multiplier, resolution),
                expected,
                "{slowest} × {multiplier} at {resolution}"
            );
        }
    }
}
