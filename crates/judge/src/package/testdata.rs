//! `data/`: test cases and nested test groups, configured by `testdata.yaml`.
//!
//! A `testdata.yaml` applies to its directory and every group below it until overridden.
//! Within a group, test cases and subgroups are judged in lexicographic order of their names.

use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

use super::{FormatVersion, PackageError, PackageWarning, ProblemKind};

/// What a group does after a rejected test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnReject {
    /// Stop judging the group (its remaining tests are skipped).
    Break,
    /// Judge the rest of the group anyway.
    Continue,
}

/// How a group turns its children's scores into its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    Sum,
    Avg,
    Min,
    Max,
}

/// How a group turns its children's verdicts into its own (the legacy default grader's
/// verdict modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictMode {
    /// The most severe child verdict (the default).
    WorstError,
    /// The first child verdict that is not AC.
    FirstError,
    /// Always AC (the score still counts).
    AlwaysAccept,
}

/// The effective `testdata.yaml` settings of a group.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GroupSettings {
    pub on_reject: OnReject,
    pub aggregation: Aggregation,
    pub verdict_mode: VerdictMode,
    /// `accept_if_any_accepted`: AC as soon as one child is AC.
    pub accept_if_any_accepted: bool,
    /// The group's own sample results do not count towards its parent (`ignore_sample`).
    pub ignore_sample: bool,
    pub accept_score: f64,
    pub reject_score: f64,
    pub range: Option<(f64, f64)>,
    /// `output_validator_flags`: replaces the problem's `validator_flags` for these tests.
    pub output_validator_flags: Option<String>,
    /// Arguments of the input validators for these tests (`input_validator_flags`,
    /// `input_validator_args`).
    pub input_validator_args: InputValidatorArgs,
    /// `args`: the submission's command-line arguments for these tests.
    pub args: Vec<String>,
    /// `require_pass` (2025-09), with the parents' own: groups (paths below `data/`) every
    /// test of which must be accepted for these tests to count; otherwise they are not run
    /// and score nothing.
    pub require_pass: Vec<String>,
}

/// Input validator arguments: for every validator, or for one by name.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct InputValidatorArgs {
    pub all: Vec<String>,
    pub by_name: Vec<(String, Vec<String>)>,
}

impl InputValidatorArgs {
    /// The arguments of the validator named `name`.
    pub fn of(&self, name: &str) -> &[String] {
        self.by_name
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&self.all, |(_, args)| args)
    }
}

impl GroupSettings {
    fn root(kind: ProblemKind) -> Self {
        Self {
            on_reject: match kind {
                ProblemKind::PassFail => OnReject::Break,
                ProblemKind::Scoring => OnReject::Continue,
            },
            aggregation: Aggregation::Sum,
            verdict_mode: VerdictMode::WorstError,
            accept_if_any_accepted: false,
            ignore_sample: matches!(kind, ProblemKind::Scoring),
            accept_score: 1.0,
            reject_score: 0.0,
            range: None,
            output_validator_flags: None,
            input_validator_args: InputValidatorArgs::default(),
            args: Vec::new(),
            require_pass: Vec::new(),
        }
    }
}

/// One test: an input and the judge's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct TestCase {
    /// Path below `data/` without the extension, e.g. `secret/group1/03`.
    pub name: String,
    pub input: PathBuf,
    pub answer: PathBuf,
    /// Under `data/sample`: its output may be shown to the user.
    pub sample: bool,
    /// `args` (2025-09): command-line arguments for the submission, from the case's own
    /// `<name>.yaml` or its group's configuration.
    pub args: Vec<String>,
    /// `<name>.files/` (2025-09): files copied into the submission's (and the input
    /// validators') working directory for this test.
    pub files: Option<PathBuf>,
    /// A group's static validation test case (2025-09): the static validator judges the
    /// submission's files instead of a run; it has no input or answer.
    pub static_validation: Option<StaticValidation>,
}

impl TestCase {
    /// A file beside the test's `.in` with another extension (`interaction`, `in.statement`),
    /// if it exists.
    pub fn sibling(&self, extension: &str) -> Option<PathBuf> {
        let path = self.input.with_extension(extension);
        path.is_file().then_some(path)
    }

    /// What the package says of the test, for whoever reads of a failure on it: `description`
    /// and `hint` from its `<name>.yaml`, else the legacy `.desc` and `.hint` files.
    pub fn description(&self) -> Option<String> {
        let yaml = std::fs::read_to_string(self.input.with_extension("yaml"))
            .ok()
            .and_then(|text| super::parse_yaml(&text).ok());
        let field = |key: &str, extension: &str| {
            yaml.as_ref()
                .and_then(|value| value.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| std::fs::read_to_string(self.input.with_extension(extension)).ok())
                .map(|text| text.trim().to_string())
                .filter(|text| !text.is_empty())
        };
        match (field("description", "desc"), field("hint", "hint")) {
            (None, None) => None,
            (Some(description), None) => Some(description),
            (None, Some(hint)) => Some(format!("hint: {hint}")),
            (Some(description), Some(hint)) => Some(format!("{description} (hint: {hint})")),
        }
    }

    /// The input a statement shows: `.in.statement`, else the `.in`.
    pub fn shown_input(&self) -> PathBuf {
        self.sibling("in.statement")
            .unwrap_or_else(|| self.input.clone())
    }

    /// The output a statement shows: `.out` (a submission's output) or `.ans.statement`, else
    /// the `.ans`; `overridden` says which.
    pub fn shown_output(&self) -> (PathBuf, bool) {
        match self
            .sibling("out")
            .or_else(|| self.sibling("ans.statement"))
        {
            Some(path) => (path, true),
            None => (self.answer.clone(), self.sibling("interaction").is_some()),
        }
    }
}

/// The display files of a test case: at most one override of its input (`.in.statement`,
/// `.interaction`) and of its output (`.out`, `.ans.statement`, `.interaction`).
fn check_display_files(case: &TestCase) -> Result<(), String> {
    let present = |extensions: &[&str]| -> Vec<String> {
        extensions
            .iter()
            .filter(|e| case.sibling(e).is_some())
            .map(|e| format!(".{e}"))
            .collect()
    };
    for (what, extensions) in [
        ("input", &["in.statement", "interaction"][..]),
        ("output", &["out", "ans.statement", "interaction"][..]),
    ] {
        let found = present(extensions);
        if found.len() > 1 {
            return Err(format!(
                "more than one way to show its {what}: {}",
                found.join(", ")
            ));
        }
    }
    Ok(())
}

/// A static validation test case: `static_validation_score` and `static_validator_args`.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticValidation {
    /// Its score when accepted; `None` for `pass-fail`.
    pub score: Option<f64>,
    pub args: Vec<String>,
}

/// The name of a group's static validation test case, below the group.
pub const STATIC_CASE: &str = "static_validation";

/// A directory of tests.
#[derive(Debug, Clone, PartialEq)]
pub struct TestGroup {
    /// Path below `data/` (empty for the root).
    pub name: String,
    pub settings: GroupSettings,
    pub items: Vec<TestItem>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TestItem {
    Case(TestCase),
    Group(TestGroup),
}

impl TestGroup {
    /// Every test case below this group, in judging order.
    pub fn cases_in_order(&self) -> Vec<&TestCase> {
        let mut out = Vec::new();
        for item in &self.items {
            match item {
                TestItem::Case(case) => out.push(case),
                TestItem::Group(group) => out.extend(group.cases_in_order()),
            }
        }
        out
    }

    /// The settings of the group a test case is directly in.
    pub fn settings_of(&self, case: &TestCase) -> Option<&GroupSettings> {
        self.items.iter().find_map(|item| match item {
            TestItem::Case(c) if c.name == case.name => Some(&self.settings),
            TestItem::Case(_) => None,
            TestItem::Group(child) => child.settings_of(case),
        })
    }

    /// The group at `name` (a path below `data/`), this one or below it.
    pub fn group(&self, name: &str) -> Option<&TestGroup> {
        if self.name == name {
            return Some(self);
        }
        self.items.iter().find_map(|item| match item {
            TestItem::Group(child) => child.group(name),
            TestItem::Case(_) => None,
        })
    }

    /// Whether this is the sample group (or inside it).
    pub fn is_sample(&self) -> bool {
        self.name == "sample" || self.name.starts_with("sample/")
    }
}

/// `require_pass` names groups that exist, come before the group that names them and are not
/// its ancestors; `sample` depends on nothing, and only scoring problems have dependencies.
fn check_dependencies(
    root: &TestGroup,
    group: &TestGroup,
    kind: ProblemKind,
) -> Result<(), PackageError> {
    let fail = |reason: String| {
        Err(PackageError {
            file: PathBuf::from("data")
                .join(&group.name)
                .join("test_group.yaml"),
            key: Some("require_pass".into()),
            reason,
        })
    };
    for required in &group.settings.require_pass {
        if kind == ProblemKind::PassFail {
            return fail("only scoring problems have group dependencies".into());
        }
        if group.is_sample() {
            return fail("sample cannot depend on another group".into());
        }
        if root.group(required).is_none() {
            return fail(format!("there is no test group data/{required}"));
        }
        let ancestor = group.name.starts_with(&format!("{required}/"));
        if ancestor || required.as_str() >= group.name.as_str() {
            return fail(format!(
                "{required} must come before {} (and not contain it)",
                group.name
            ));
        }
    }
    for item in &group.items {
        if let TestItem::Group(child) = item {
            check_dependencies(root, child, kind)?;
        }
    }
    Ok(())
}

pub(super) fn load(
    dir: &Path,
    kind: ProblemKind,
    version: FormatVersion,
    warnings: &mut Vec<PackageWarning>,
) -> Result<TestGroup, PackageError> {
    let modern_scoring = version == FormatVersion::Modern && kind == ProblemKind::Scoring;
    let data = dir.join("data");
    if !data.is_dir() {
        return Err(PackageError::new(
            "data",
            "the package has no data/ directory",
        ));
    }
    let root = load_group(
        dir,
        &data,
        String::new(),
        &GroupSettings::root(kind),
        modern_scoring,
        warnings,
    )?;
    if root.cases_in_order().is_empty() {
        return Err(PackageError::new(
            "data",
            "no test cases (.in with .ans) under data/",
        ));
    }
    check_dependencies(&root, &root, kind)?;
    for item in &root.items {
        if let TestItem::Case(case) = item {
            return Err(PackageError::new(
                format!("data/{}.in", case.name),
                "test cases belong in data/sample or data/secret, not directly in data/",
            ));
        }
    }
    Ok(root)
}

fn load_group(
    package: &Path,
    dir: &Path,
    name: String,
    inherited: &GroupSettings,
    modern_scoring: bool,
    warnings: &mut Vec<PackageWarning>,
) -> Result<TestGroup, PackageError> {
    let relative = |p: &Path| p.strip_prefix(package).unwrap_or(p).to_path_buf();
    // `test_group.yaml` (2025-09) or `testdata.yaml` (legacy, 2023-07).
    let config = ["test_group.yaml", "testdata.yaml"]
        .into_iter()
        .map(|name| dir.join(name))
        .find(|path| path.is_file());
    let mut scoring = Scoring::default();
    let mut settings = match config
        .as_ref()
        .map(|path| (path, std::fs::read_to_string(path)))
    {
        Some((path, Ok(text))) => {
            let mut unknown = Vec::new();
            let settings = parse_testdata_yaml(&text, inherited, &mut unknown, &mut scoring)
                .map_err(|(key, reason)| PackageError {
                    file: relative(path),
                    key,
                    reason,
                })?;
            warnings.extend(unknown.into_iter().map(|(key, reason)| PackageError {
                file: relative(path),
                key,
                reason,
            }));
            settings
        }
        Some((path, Err(e))) => {
            return Err(PackageError::new(
                relative(path),
                format!("cannot read: {e}"),
            ))
        }
        None => inherited.clone(),
    };
    // 2025-09 scoring: `secret` and each test group (a directory with a configuration) have a
    // maximum score and an aggregation; a test case's share follows from them.
    let is_group = name == "secret" || (name.starts_with("secret/") && config.is_some());
    if modern_scoring && is_group {
        scoring
            .apply(&mut settings, name == "secret", count_cases(dir))
            .map_err(|reason| PackageError {
                file: relative(config.as_deref().unwrap_or(dir)),
                key: Some("max_score".into()),
                reason,
            })?;
    } else if scoring.given() {
        warnings.push(PackageError::new(
            relative(config.as_deref().unwrap_or(dir)),
            "2025-09 scoring keys apply to the secret data of a 2025-09 scoring problem (ignored)",
        ));
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| PackageError::new(relative(dir), e.to_string()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    let child_name = |stem: &str| {
        if name.is_empty() {
            stem.to_string()
        } else {
            format!("{name}/{stem}")
        }
    };
    let mut items = Vec::new();
    if let Some(case) = scoring.static_case(&name, &settings, modern_scoring) {
        let case = case.map_err(|reason| PackageError {
            file: relative(config.as_deref().unwrap_or(dir)),
            key: Some("static_validation_score".into()),
            reason,
        })?;
        items.push(TestItem::Case(case));
    }
    for path in &entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or_else(|| PackageError::new(relative(path), "file name is not UTF-8"))?;
        if path.is_dir() && path.extension().is_some_and(|e| e == "files") {
            if !path.with_extension("in").is_file() {
                warnings.push(PackageError::new(
                    relative(path),
                    "a .files directory without a test case of its name (ignored)",
                ));
            }
            continue;
        }
        if path.is_dir() {
            if name.is_empty() && !matches!(stem, "sample" | "secret") {
                // Other top-level directories (e.g. invalid_inputs) are not judged.
                continue;
            }
            items.push(TestItem::Group(load_group(
                package,
                path,
                child_name(stem),
                &settings,
                modern_scoring,
                warnings,
            )?));
        } else if path.extension().is_some_and(|e| e == "in") {
            let answer = path.with_extension("ans");
            if !answer.is_file() {
                return Err(PackageError::new(
                    relative(path),
                    format!("has no answer file {}", relative(&answer).display()),
                ));
            }
            let case_name = child_name(stem);
            let args =
                case_args(&path.with_extension("yaml"), &settings).map_err(|(key, reason)| {
                    PackageError {
                        file: relative(&path.with_extension("yaml")),
                        key,
                        reason,
                    }
                })?;
            let case = TestCase {
                sample: case_name.starts_with("sample/"),
                name: case_name,
                input: path.clone(),
                answer,
                args,
                files: Some(path.with_extension("files")).filter(|dir| dir.is_dir()),
                static_validation: None,
            };
            check_display_files(&case)
                .map_err(|reason| PackageError::new(relative(path), reason))?;
            items.push(TestItem::Case(case));
        } else if path.extension().is_some_and(|e| e == "ans")
            && !path.with_extension("in").is_file()
        {
            return Err(PackageError::new(
                relative(path),
                format!(
                    "has no input file {}",
                    relative(&path.with_extension("in")).display()
                ),
            ));
        }
    }
    Ok(TestGroup {
        name,
        settings,
        items,
    })
}

type KeyError = (Option<String>, String);

/// A group's 2025-09 scoring keys (`max_score`, `score_aggregation`, or the draft's
/// `scoring: {score, aggregation}`), which are not inherited.
#[derive(Debug, Default, PartialEq)]
struct Scoring {
    /// `None`: not given; `Some(None)`: `unbounded`.
    max_score: Option<Option<f64>>,
    aggregation: Option<ScoreAggregation>,
    /// `static_validation_score`: `Some(None)` is `pass-fail`. Never inherited.
    static_score: Option<Option<f64>>,
    static_args: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ScoreAggregation {
    PassFail,
    Sum,
    Min,
}

impl Scoring {
    fn given(&self) -> bool {
        self.max_score.is_some() || self.aggregation.is_some()
    }

    /// `score_aggregation`, or its default: `sum` for `secret`, `pass-fail` for a group.
    fn aggregation(&self, secret: bool) -> ScoreAggregation {
        self.aggregation.unwrap_or(if secret {
            ScoreAggregation::Sum
        } else {
            ScoreAggregation::PassFail
        })
    }

    /// The group's static validation test case, if it has one. A score needs a scoring group
    /// that is not pass-fail; `pass-fail` needs the opposite.
    fn static_case(
        &self,
        group: &str,
        settings: &GroupSettings,
        modern_scoring: bool,
    ) -> Option<Result<TestCase, String>> {
        let Some(score) = self.static_score else {
            return self
                .static_args
                .is_some()
                .then(|| Err("static_validator_args without static_validation_score".into()));
        };
        let aggregation = self.aggregation(group == "secret");
        let pass_fail_group = !modern_scoring || aggregation == ScoreAggregation::PassFail;
        let score = match score {
            Some(_) if pass_fail_group => {
                return Some(Err(
                    "a score needs a scoring problem's group with sum or min aggregation (or say pass-fail)".into(),
                ))
            }
            None if !pass_fail_group => {
                return Some(Err(
                    "pass-fail needs a pass-fail problem or score_aggregation: pass-fail".into(),
                ))
            }
            // With `min` every test is worth the group's maximum, the static one too.
            Some(points) if aggregation == ScoreAggregation::Min => {
                settings.range.map(|(_, max)| max).or(Some(points))
            }
            other => other,
        };
        let name = if group.is_empty() {
            STATIC_CASE.to_string()
        } else {
            format!("{group}/{STATIC_CASE}")
        };
        Some(Ok(TestCase {
            sample: group == "sample" || group.starts_with("sample/"),
            name,
            input: PathBuf::new(),
            answer: PathBuf::new(),
            args: Vec::new(),
            files: None,
            static_validation: Some(StaticValidation {
                score,
                args: self.static_args.clone().unwrap_or_default(),
            }),
        }))
    }

    /// Expresses the group's scoring in the grader's terms: a test's score when accepted
    /// (the maximum for `min` and `pass-fail`, an equal share of it for `sum`) and how the
    /// group combines them (`pass-fail` is the minimum of all-or-nothing tests).
    fn apply(
        &self,
        settings: &mut GroupSettings,
        secret: bool,
        cases: usize,
    ) -> Result<(), String> {
        let aggregation = self.aggregation(secret);
        let max = match self.max_score {
            Some(max) => max,
            None if secret => Some(100.0),
            None => None,
        };
        settings.aggregation = match aggregation {
            ScoreAggregation::Sum => Aggregation::Sum,
            ScoreAggregation::Min | ScoreAggregation::PassFail => Aggregation::Min,
        };
        settings.range = max.map(|max| (0.0, max));
        match (aggregation, max) {
            (ScoreAggregation::PassFail, None) => {
                Err("a pass-fail group needs a bounded max_score".into())
            }
            (ScoreAggregation::Sum, Some(max)) => {
                let static_score = self.static_score.flatten().unwrap_or(0.0);
                if static_score > max {
                    return Err(format!(
                        "static_validation_score {static_score} is more than max_score {max}"
                    ));
                }
                settings.accept_score = (max - static_score) / cases.max(1) as f64;
                Ok(())
            }
            (_, Some(max)) => {
                settings.accept_score = max;
                Ok(())
            }
            // Unbounded: every accepted test's score comes from its validator (score.txt).
            (_, None) => Ok(()),
        }
    }
}

/// The test cases (`.in` files) in a directory and below it.
fn count_cases(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| e.path())
        .map(|path| {
            if path.extension().is_some_and(|e| e == "files") {
                0
            } else if path.is_dir() {
                count_cases(&path)
            } else {
                usize::from(path.extension().is_some_and(|e| e == "in"))
            }
        })
        .sum()
}

/// Parses a group's configuration; unknown keys go to `unknown` (warnings, not errors), and
/// 2025-09 scoring keys to `scoring`.
fn parse_testdata_yaml(
    text: &str,
    inherited: &GroupSettings,
    unknown: &mut Vec<KeyError>,
    scoring: &mut Scoring,
) -> Result<GroupSettings, KeyError> {
    let value: Value = super::parse_yaml(text).map_err(|e| (None, e))?;
    let map = match value {
        Value::Mapping(map) => map,
        Value::Null => return Ok(inherited.clone()),
        _ => return Err((None, "must be a mapping of keys".into())),
    };
    let mut settings = inherited.clone();
    let err = |key: &str, reason: String| (Some(key.to_string()), reason);
    for (key, value) in &map {
        let key = key
            .as_str()
            .ok_or_else(|| (None, "keys must be strings".to_string()))?;
        let text = || -> Result<String, KeyError> {
            match value {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                _ => Err(err(key, "must be a string".into())),
            }
        };
        let number = || -> Result<f64, KeyError> {
            value
                .as_f64()
                .filter(|n| n.is_finite())
                .ok_or_else(|| err(key, "must be a number".into()))
        };
        match key {
            "on_reject" => {
                settings.on_reject = match text()?.as_str() {
                    "break" => OnReject::Break,
                    "continue" => OnReject::Continue,
                    other => {
                        return Err(err(
                            key,
                            format!("expected break or continue, got {other:?}"),
                        ))
                    }
                }
            }
            "grading" => match text()?.as_str() {
                "default" => {}
                "custom" => return Err(err(key, "custom graders are not supported".into())),
                other => return Err(err(key, format!("expected default, got {other:?}"))),
            },
            "grader_flags" => {
                // The group's own flags replace its parent's whole (the reference tool
                // inherits the key, not each flag).
                settings.aggregation = Aggregation::Sum;
                settings.verdict_mode = VerdictMode::WorstError;
                settings.accept_if_any_accepted = false;
                settings.ignore_sample = false;
                for flag in text()?.split_whitespace() {
                    match flag {
                        "sum" => settings.aggregation = Aggregation::Sum,
                        "avg" => settings.aggregation = Aggregation::Avg,
                        "min" => settings.aggregation = Aggregation::Min,
                        "max" => settings.aggregation = Aggregation::Max,
                        "ignore_sample" => settings.ignore_sample = true,
                        "worst_error" => settings.verdict_mode = VerdictMode::WorstError,
                        "first_error" => settings.verdict_mode = VerdictMode::FirstError,
                        "always_accept" => settings.verdict_mode = VerdictMode::AlwaysAccept,
                        "accept_if_any_accepted" => settings.accept_if_any_accepted = true,
                        other => {
                            return Err(err(
                                key,
                                format!("unknown grader flag {other:?} (known: sum avg min max ignore_sample worst_error first_error always_accept accept_if_any_accepted)"),
                            ))
                        }
                    }
                }
            }
            "accept_score" => settings.accept_score = number()?,
            "reject_score" => settings.reject_score = number()?,
            "range" => {
                let text = text()?;
                let bounds: Vec<f64> = text
                    .split_whitespace()
                    .map(|b| match b {
                        "-inf" => Some(f64::NEG_INFINITY),
                        "inf" | "+inf" => Some(f64::INFINITY),
                        other => other.parse().ok(),
                    })
                    .collect::<Option<_>>()
                    .ok_or_else(|| err(key, format!("{text:?} is not two numbers")))?;
                match bounds.as_slice() {
                    [low, high] if low <= high => settings.range = Some((*low, *high)),
                    _ => {
                        return Err(err(
                            key,
                            format!("{text:?} must be \"min max\" with min <= max"),
                        ))
                    }
                }
            }
            "output_validator_flags" => settings.output_validator_flags = Some(text()?),
            // 2025-09: a sequence of arguments.
            "output_validator_args" => {
                settings.output_validator_flags = Some(match value {
                    Value::Sequence(_) => string_list(value)
                        .ok_or_else(|| err(key, "must be a list of strings".into()))?
                        .join(" "),
                    _ => text()?,
                })
            }
            "max_score" => scoring.max_score = Some(max_score(key, value)?),
            "score_aggregation" => scoring.aggregation = Some(score_aggregation(key, &text()?)?),
            // The 2023-07 draft's spelling: `scoring: {score, aggregation}`.
            "scoring" => {
                let Value::Mapping(map) = value else {
                    return Err(err(key, "must be a mapping (score, aggregation)".into()));
                };
                for (inner, value) in map {
                    match inner.as_str() {
                        Some("score") => {
                            scoring.max_score = Some(max_score("scoring.score", value)?)
                        }
                        Some("aggregation") => {
                            let text = value.as_str().unwrap_or_default();
                            scoring.aggregation =
                                Some(score_aggregation("scoring.aggregation", text)?)
                        }
                        other => unknown.push(err(
                            &format!("scoring.{}", other.unwrap_or("?")),
                            "unknown key (ignored)".into(),
                        )),
                    }
                }
            }
            "require_pass" => {
                let names = match value {
                    Value::String(name) => vec![name.clone()],
                    other => string_list(other)
                        .ok_or_else(|| err(key, "must be a group name or a list of them".into()))?,
                };
                for name in names {
                    let path = match name.trim_matches('/') {
                        "sample" => "sample".to_string(),
                        "secret" => "secret".to_string(),
                        own if own.starts_with("secret/") => own.to_string(),
                        own => format!("secret/{own}"),
                    };
                    if !settings.require_pass.contains(&path) {
                        settings.require_pass.push(path);
                    }
                }
            }
            "args" => {
                settings.args = string_list(value)
                    .ok_or_else(|| err(key, "must be a list of strings".into()))?
            }
            "input_validator_flags" | "input_validator_args" => {
                settings.input_validator_args = input_validator_args(key, value)?
            }
            "static_validation_score" => {
                scoring.static_score = Some(match value {
                    Value::String(text) if text == "pass-fail" => None,
                    other => Some(
                        other
                            .as_f64()
                            .filter(|n| n.is_finite() && *n >= 0.0)
                            .ok_or_else(|| {
                                err(key, "must be a non-negative number or pass-fail".into())
                            })?,
                    ),
                })
            }
            "static_validator_args" => {
                scoring.static_args = Some(
                    string_list(value)
                        .ok_or_else(|| err(key, "must be a list of strings".into()))?,
                )
            }
            // Display settings do not change how a submission is judged.
            "full_feedback" | "input_visualizer_args" | "output_visualizer_args" => {}
            other => unknown.push(err(other, "unknown key (ignored)".into())),
        }
    }
    Ok(settings)
}

/// `input_validator_flags` (legacy: a string, or `{name, flags}`) and `input_validator_args`
/// (2025-09: a list, or a map of validator names to lists).
fn input_validator_args(key: &str, value: &Value) -> Result<InputValidatorArgs, KeyError> {
    let words = |value: &Value| -> Option<Vec<String>> {
        match value {
            Value::String(s) => Some(s.split_whitespace().map(str::to_string).collect()),
            Value::Number(n) => Some(vec![n.to_string()]),
            other => string_list(other),
        }
    };
    let wrong = || {
        (
            Some(key.to_string()),
            "must be arguments, or a map of validator names to arguments".to_string(),
        )
    };
    match value {
        Value::Mapping(map) => {
            let get = |k: &str| map.get(Value::String(k.into()));
            // Legacy `{name: validator, flags: "..."}`.
            if let (Some(Value::String(name)), true) = (get("name"), map.len() <= 2) {
                let flags = get("flags")
                    .map_or(Some(Vec::new()), words)
                    .ok_or_else(wrong)?;
                return Ok(InputValidatorArgs {
                    all: Vec::new(),
                    by_name: vec![(name.clone(), flags)],
                });
            }
            let by_name = map
                .iter()
                .map(|(name, args)| Some((name.as_str()?.to_string(), words(args)?)))
                .collect::<Option<_>>()
                .ok_or_else(wrong)?;
            Ok(InputValidatorArgs {
                all: Vec::new(),
                by_name,
            })
        }
        other => Ok(InputValidatorArgs {
            all: words(other).ok_or_else(wrong)?,
            by_name: Vec::new(),
        }),
    }
}

fn string_list(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::Sequence(items) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// A test case's own configuration (`<name>.yaml`, 2025-09): its `args`, else its group's.
/// The other keys (`hint`, `description`, `full_feedback`, validator arguments) do not change
/// how a submission runs.
fn case_args(path: &Path, settings: &GroupSettings) -> Result<Vec<String>, KeyError> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(settings.args.clone());
    };
    let value = super::parse_yaml(&text).map_err(|e| (None, e))?;
    match value.get("args") {
        None => Ok(settings.args.clone()),
        Some(args) => string_list(args)
            .ok_or_else(|| (Some("args".into()), "must be a list of strings".into())),
    }
}

/// `max_score`: a non-negative number, or `unbounded` (`None`).
fn max_score(key: &str, value: &Value) -> Result<Option<f64>, KeyError> {
    match value {
        Value::String(s) if s == "unbounded" => Ok(None),
        _ => value
            .as_f64()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(Some)
            .ok_or_else(|| {
                (
                    Some(key.to_string()),
                    "must be a non-negative number or unbounded".into(),
                )
            }),
    }
}

fn score_aggregation(key: &str, text: &str) -> Result<ScoreAggregation, KeyError> {
    match text {
        "pass-fail" => Ok(ScoreAggregation::PassFail),
        "sum" => Ok(ScoreAggregation::Sum),
        "min" => Ok(ScoreAggregation::Min),
        other => Err((
            Some(key.to_string()),
            format!("expected pass-fail, sum or min, got {other:?}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testdata_yaml_overrides_what_it_names_and_inherits_the_rest() {
        let parent = GroupSettings {
            output_validator_flags: Some("case_sensitive".into()),
            ..GroupSettings::root(ProblemKind::Scoring)
        };
        let child = parse_testdata_yaml(
            "on_reject: break\ngrader_flags: min ignore_sample\naccept_score: 30\nrange: 0 30\n",
            &parent,
            &mut Vec::new(),
            &mut Scoring::default(),
        )
        .unwrap();
        assert_eq!(child.on_reject, OnReject::Break);
        assert_eq!(child.aggregation, Aggregation::Min);
        assert!(child.ignore_sample);
        assert_eq!(child.accept_score, 30.0);
        assert_eq!(child.range, Some((0.0, 30.0)));
        assert_eq!(
            child.output_validator_flags.as_deref(),
            Some("case_sensitive")
        );
        assert_eq!(
            parse_testdata_yaml("", &parent, &mut Vec::new(), &mut Scoring::default()).unwrap(),
            parent
        );
        // 2025-09 spells the validator's arguments as a list.
        let modern = parse_testdata_yaml(
            "output_validator_args: [float_tolerance, 1e-6]\nfull_feedback: true\n",
            &parent,
            &mut Vec::new(),
            &mut Scoring::default(),
        )
        .unwrap();
        assert_eq!(
            modern.output_validator_flags.as_deref(),
            Some("float_tolerance 1e-6")
        );
    }

    #[test]
    fn unknown_testdata_keys_are_warnings() {
        let root = GroupSettings::root(ProblemKind::PassFail);
        let mut unknown = Vec::new();
        let settings = parse_testdata_yaml(
            "points: 5\non_reject: continue\n",
            &root,
            &mut unknown,
            &mut Scoring::default(),
        )
        .unwrap();
        assert_eq!(settings.on_reject, OnReject::Continue);
        assert_eq!(
            unknown,
            [(
                Some("points".to_string()),
                "unknown key (ignored)".to_string()
            )]
        );
    }

    #[test]
    fn malformed_testdata_yaml_names_the_key() {
        let root = GroupSettings::root(ProblemKind::PassFail);
        let cases = [
            (
                "on_reject: sometimes",
                Some("on_reject"),
                "expected break or continue",
            ),
            (
                "grading: custom",
                Some("grading"),
                "custom graders are not supported",
            ),
            (
                "grader_flags: sum best_effort",
                Some("grader_flags"),
                "unknown grader flag \"best_effort\"",
            ),
            (
                "accept_score: lots",
                Some("accept_score"),
                "must be a number",
            ),
            ("range: 10 0", Some("range"), "min <= max"),
            ("args: --fast", Some("args"), "must be a list of strings"),
            ("[", None, "not valid YAML"),
        ];
        for (text, key, reason) in cases {
            let (got_key, got_reason) =
                parse_testdata_yaml(text, &root, &mut Vec::new(), &mut Scoring::default())
                    .unwrap_err();
            assert_eq!(got_key.as_deref(), key, "{text}");
            assert!(got_reason.contains(reason), "{text}: {got_reason}");
        }
    }

    fn write(root: &Path, files: &[(&str, &str)]) {
        for (path, content) in files {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
    }

    #[test]
    fn groups_and_cases_load_in_lexicographic_order() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                ("data/sample/1.in", "1"),
                ("data/sample/1.ans", "1"),
                ("data/secret/b/2.in", ""),
                ("data/secret/b/2.ans", ""),
                (
                    "data/secret/b/testdata.yaml",
                    "accept_score: 70\ngrader_flags: min\n",
                ),
                ("data/secret/a/1.in", ""),
                ("data/secret/a/1.ans", ""),
                ("data/secret/0.in", ""),
                ("data/secret/0.ans", ""),
                ("data/invalid_inputs/x.in", ""),
            ],
        );
        let root = load(
            dir.path(),
            ProblemKind::Scoring,
            FormatVersion::Legacy,
            &mut Vec::new(),
        )
        .unwrap();
        let names: Vec<_> = root
            .cases_in_order()
            .iter()
            .map(|c| c.name.clone())
            .collect();
        assert_eq!(names, ["sample/1", "secret/0", "secret/a/1", "secret/b/2"]);
        assert!(root.cases_in_order()[0].sample);
        assert!(!root.cases_in_order()[1].sample);
        let TestItem::Group(secret) = &root.items[1] else {
            panic!()
        };
        let TestItem::Group(b) = &secret.items[2] else {
            panic!()
        };
        assert_eq!(b.settings.accept_score, 70.0);
        assert_eq!(b.settings.aggregation, Aggregation::Min);
        // Inherited from the root of a scoring problem.
        assert_eq!(b.settings.on_reject, OnReject::Continue);
    }

    #[test]
    fn group_dependencies_and_static_validation_are_checked_where_they_are_written() {
        let cases: [(&str, ProblemKind, &str, Result<(), &str>); 7] = [
            ("secret/b", ProblemKind::Scoring, "max_score: 50\nrequire_pass: a\n", Ok(())),
            (
                "secret/a",
                ProblemKind::Scoring,
                "max_score: 50\nrequire_pass: b\n",
                Err("data/secret/a/test_group.yaml: key `require_pass`: secret/b must come before secret/a"),
            ),
            (
                "secret/b",
                ProblemKind::Scoring,
                "max_score: 50\nrequire_pass: [sample, nowhere]\n",
                Err("key `require_pass`: there is no test group data/secret/nowhere"),
            ),
            (
                "secret/b",
                ProblemKind::PassFail,
                "require_pass: a\n",
                Err("key `require_pass`: only scoring problems have group dependencies"),
            ),
            (
                "secret/b",
                ProblemKind::Scoring,
                "max_score: 50\nstatic_validator_args: [x]\n",
                Err("key `static_validation_score`: static_validator_args without static_validation_score"),
            ),
            (
                "secret/b",
                ProblemKind::Scoring,
                "max_score: 50\nscore_aggregation: pass-fail\nstatic_validation_score: 5\n",
                Err("key `static_validation_score`: a score needs a scoring problem's group"),
            ),
            (
                "secret/b",
                ProblemKind::Scoring,
                "max_score: 50\nscore_aggregation: sum\nstatic_validation_score: 60\n",
                Err("key `max_score`: static_validation_score 60 is more than max_score 50"),
            ),
        ];
        for (group, kind, yaml, expected) in cases {
            let dir = tempfile::tempdir().unwrap();
            let config = format!("data/{group}/test_group.yaml");
            let other = if group == "secret/a" {
                "secret/b"
            } else {
                "secret/a"
            };
            let other_config = format!("data/{other}/test_group.yaml");
            write(
                dir.path(),
                &[
                    ("data/sample/1.in", ""),
                    ("data/sample/1.ans", ""),
                    (&format!("data/{group}/1.in"), ""),
                    (&format!("data/{group}/1.ans"), ""),
                    (&format!("data/{other}/1.in"), ""),
                    (&format!("data/{other}/1.ans"), ""),
                    (&other_config, "max_score: 50\n"),
                    (&config, yaml),
                ],
            );
            let loaded = load(dir.path(), kind, FormatVersion::Modern, &mut Vec::new());
            match (loaded, expected) {
                (Ok(root), Ok(())) => {
                    let b = root.group("secret/b").unwrap();
                    assert_eq!(b.settings.require_pass, ["secret/a"], "{yaml}");
                }
                (Err(err), Err(wanted)) => {
                    assert!(err.to_string().contains(wanted), "{yaml}: {err}")
                }
                (got, wanted) => panic!("{yaml}: {got:?}, expected {wanted:?}"),
            }
        }
    }

    #[test]
    fn a_sample_is_shown_by_at_most_one_override_of_each_side() {
        // (extra files, Ok((input overridden, output overridden)) or the error)
        type Case<'a> = (&'a [&'a str], Result<(bool, bool), &'a str>);
        let cases: [Case; 5] = [
            (&[], Ok((false, false))),
            (&["1.out"], Ok((false, true))),
            (&["1.in.statement", "1.ans.statement"], Ok((true, true))),
            (
                &["1.in.statement", "1.interaction"],
                Err("more than one way to show its input: .in.statement, .interaction"),
            ),
            (
                &["1.out", "1.ans.statement"],
                Err("more than one way to show its output: .out, .ans.statement"),
            ),
        ];
        for (extra, expected) in cases {
            let dir = tempfile::tempdir().unwrap();
            let mut files = vec![
                ("data/sample/1.in".to_string(), ""),
                ("data/sample/1.ans".to_string(), ""),
            ];
            files.extend(extra.iter().map(|f| (format!("data/sample/{f}"), "")));
            let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), *t)).collect();
            write(dir.path(), &files);
            let loaded = load(
                dir.path(),
                ProblemKind::PassFail,
                FormatVersion::Modern,
                &mut Vec::new(),
            );
            match (loaded, expected) {
                (Ok(root), Ok((input_overridden, output_overridden))) => {
                    let case = root.cases_in_order()[0].clone();
                    assert_eq!(
                        case.shown_input() != case.input,
                        input_overridden,
                        "{extra:?}"
                    );
                    assert_eq!(case.shown_output().1, output_overridden, "{extra:?}");
                }
                (Err(err), Err(wanted)) => assert!(err.to_string().contains(wanted), "{err}"),
                (got, wanted) => panic!("{extra:?}: {got:?}, expected {wanted:?}"),
            }
        }
    }

    #[test]
    fn missing_pairs_and_empty_data_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[("data/secret/1.in", "")]);
        let err = load(
            dir.path(),
            ProblemKind::PassFail,
            FormatVersion::Legacy,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "data/secret/1.in: has no answer file data/secret/1.ans"
        );

        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[("data/secret/1.ans", "")]);
        let err = load(
            dir.path(),
            ProblemKind::PassFail,
            FormatVersion::Legacy,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "data/secret/1.ans: has no input file data/secret/1.in"
        );

        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &[("data/secret/readme.txt", "")]);
        let err = load(
            dir.path(),
            ProblemKind::PassFail,
            FormatVersion::Legacy,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("no test cases"), "{err}");

        let dir = tempfile::tempdir().unwrap();
        let err = load(
            dir.path(),
            ProblemKind::PassFail,
            FormatVersion::Legacy,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "data: the package has no data/ directory");
    }

    #[test]
    fn scoring_2025_09_gives_each_test_its_share_of_the_group_maximum() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                ("data/sample/1.in", ""),
                ("data/sample/1.ans", ""),
                (
                    "data/secret/test_group.yaml",
                    "scoring:\n  aggregation: sum\n",
                ),
                (
                    "data/secret/easy/test_group.yaml",
                    "scoring:\n  score: 30\n  aggregation: min\n",
                ),
                ("data/secret/easy/1.in", ""),
                ("data/secret/easy/1.ans", ""),
                ("data/secret/easy/2.in", ""),
                ("data/secret/easy/2.ans", ""),
                (
                    "data/secret/hard/test_group.yaml",
                    "max_score: 70\nscore_aggregation: sum\n",
                ),
                ("data/secret/hard/1.in", ""),
                ("data/secret/hard/1.ans", ""),
                ("data/secret/hard/more/2.in", ""),
                ("data/secret/hard/more/2.ans", ""),
            ],
        );
        let mut warnings = Vec::new();
        let root = load(
            dir.path(),
            ProblemKind::Scoring,
            FormatVersion::Modern,
            &mut warnings,
        )
        .unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let group = |name: &str| -> GroupSettings {
            fn find<'a>(group: &'a TestGroup, name: &str) -> Option<&'a TestGroup> {
                if group.name == name {
                    return Some(group);
                }
                group.items.iter().find_map(|item| match item {
                    TestItem::Group(child) => find(child, name),
                    TestItem::Case(_) => None,
                })
            }
            find(&root, name).unwrap().settings.clone()
        };
        let easy = group("secret/easy");
        assert_eq!(
            (easy.aggregation, easy.accept_score),
            (Aggregation::Min, 30.0)
        );
        let hard = group("secret/hard");
        assert_eq!(
            (hard.aggregation, hard.accept_score),
            (Aggregation::Sum, 35.0)
        );
        // A plain directory inside a group is part of it.
        assert_eq!(group("secret/hard/more").accept_score, 35.0);
        assert_eq!(group("secret").range, Some((0.0, 100.0)));

        let bad = tempfile::tempdir().unwrap();
        write(
            bad.path(),
            &[
                (
                    "data/secret/g/test_group.yaml",
                    "score_aggregation: pass-fail\n",
                ),
                ("data/secret/g/1.in", ""),
                ("data/secret/g/1.ans", ""),
            ],
        );
        let err = load(
            bad.path(),
            ProblemKind::Scoring,
            FormatVersion::Modern,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("needs a bounded max_score"),
            "{err}"
        );
    }
}
