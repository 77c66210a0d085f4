//! Problem packages in the ICPC/Kattis problem package format.
//!
//! Supported: `problem.yaml` (legacy keys, plus the 2023+ `type` list and `limits.time_limit`),
//! a DOMjudge-style `.timelimit` file, `data/` with `.in`/`.ans` pairs and nested test groups
//! configured by `testdata.yaml`, `output_validators/<name>/` (or `output_validator/`), and
//! `submissions/<expected result>/`. Every malformed input is a [`PackageError`] naming the
//! file, the key and the reason.

pub mod archive;
mod testdata;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

use crate::checker::default::DefaultFlags;
use crate::verdict::Verdict;

pub use testdata::{Aggregation, GroupSettings, OnReject, TestCase, TestGroup, TestItem};

/// A package that cannot be used, with the place and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct PackageError {
    /// The file or directory at fault, relative to the package root when inside it.
    pub file: PathBuf,
    /// The offending key, when the fault is one key of a YAML file.
    pub key: Option<String>,
    pub reason: String,
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", self.reason)
    }
}

impl PackageError {
    pub(crate) fn new(file: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            key: None,
            reason: reason.into(),
        }
    }

    pub(crate) fn key(file: impl Into<PathBuf>, key: &str, reason: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            key: Some(key.to_string()),
            reason: reason.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    PassFail,
    Scoring,
}

/// How outputs are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Validation {
    /// The default token comparison.
    Default,
    /// The package's output validator; `interactive` connects it to the submission by pipes,
    /// `score` makes it report a score (`score.txt`).
    Custom { interactive: bool, score: bool },
}

/// Limits from `problem.yaml` (`limits:`), in the format's units.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ProblemLimits {
    /// Per-test CPU time limit of a submission.
    pub time_limit_ms: u64,
    pub memory_mib: u64,
    pub output_mib: u64,
    pub compilation_time_s: u64,
    pub compilation_memory_mib: u64,
    pub validation_time_s: u64,
    pub validation_memory_mib: u64,
    pub validation_output_mib: u64,
}

/// The largest value a package may give each limit. A setter's package must not hold a judge
/// worker for hours (`validation_time: 1e9`) or make the judge keep gigabytes of output in
/// memory; beyond these the package is refused with the reason.
const LIMIT_CAPS: &[(&str, f64, &str)] = &[
    ("time_limit", 60.0, "seconds"),
    ("memory", 8192.0, "MiB"),
    ("output", 256.0, "MiB"),
    ("compilation_time", 300.0, "seconds"),
    ("compilation_memory", 8192.0, "MiB"),
    ("validation_time", 300.0, "seconds"),
    ("validation_memory", 8192.0, "MiB"),
    ("validation_output", 256.0, "MiB"),
];

impl Default for ProblemLimits {
    /// The format's defaults, except the time limit (the format derives it from the
    /// submissions; one second is the conventional fallback).
    fn default() -> Self {
        Self {
            time_limit_ms: 1_000,
            memory_mib: 2048,
            output_mib: 8,
            compilation_time_s: 60,
            compilation_memory_mib: 2048,
            validation_time_s: 60,
            validation_memory_mib: 2048,
            validation_output_mib: 8,
        }
    }
}

/// The source of the package's output validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidatorSource {
    /// The validator's directory (absolute).
    pub dir: PathBuf,
    /// The files that make up the program (absolute), all of one language.
    pub sources: Vec<PathBuf>,
    pub language: String,
    /// testlib convention (`checker input output answer`, exit 0/1/2/3/7) instead of the ICPC
    /// one (`validator input answer feedback_dir < output`, exit 42/43); chosen when the
    /// source includes `testlib.h` or is named `check.*` / `checker.*` (Polygon's names).
    pub testlib: bool,
}

/// What a submission under `submissions/` is expected to get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expectation {
    /// `accepted`: AC (and full score on scoring problems).
    Accepted,
    /// Another directory naming one verdict.
    Verdict(Verdict),
    /// `partially_accepted`: a score strictly between the minimum and the maximum.
    PartialScore,
}

impl Expectation {
    /// The directory names of `submissions/` and what they expect.
    pub const DIRECTORIES: [(&'static str, Expectation); 8] = [
        ("accepted", Expectation::Accepted),
        ("wrong_answer", Expectation::Verdict(Verdict::WA)),
        ("time_limit_exceeded", Expectation::Verdict(Verdict::TLE)),
        ("run_time_error", Expectation::Verdict(Verdict::RE)),
        ("memory_limit_exceeded", Expectation::Verdict(Verdict::MLE)),
        ("output_limit_exceeded", Expectation::Verdict(Verdict::OLE)),
        ("compile_error", Expectation::Verdict(Verdict::CE)),
        ("partially_accepted", Expectation::PartialScore),
    ];

    pub fn describe(self) -> String {
        match self {
            Expectation::Accepted => "AC".into(),
            Expectation::Verdict(v) => v.to_string(),
            Expectation::PartialScore => "partial score".into(),
        }
    }
}

/// A reference submission of the package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageSubmission {
    /// Absolute path of the source file.
    pub path: PathBuf,
    /// `submissions/<dir>/<file>`, for display.
    pub display: String,
    pub expectation: Expectation,
}

/// A loaded problem package.
#[derive(Debug, Clone)]
pub struct Problem {
    pub dir: PathBuf,
    pub name: String,
    pub kind: ProblemKind,
    pub validation: Validation,
    /// `validator_flags`: the default validator's flags, or extra arguments of a custom one.
    pub validator_flags: String,
    pub limits: ProblemLimits,
    pub validator: Option<ValidatorSource>,
    /// The root group (`data/`), with `sample` and `secret` below it.
    pub data: TestGroup,
    pub submissions: Vec<PackageSubmission>,
}

impl Problem {
    /// Loads and checks a package directory.
    pub fn load(dir: &Path) -> Result<Problem, PackageError> {
        let dir = dir
            .canonicalize()
            .map_err(|e| PackageError::new(dir, format!("cannot open the package: {e}")))?;
        let yaml_path = dir.join("problem.yaml");
        let text = std::fs::read_to_string(&yaml_path)
            .map_err(|e| PackageError::new("problem.yaml", format!("cannot read: {e}")))?;
        let config = parse_problem_yaml(&text)?;
        let mut limits = config.limits;
        limits.time_limit_ms = match config.time_limit_ms {
            Some(ms) => ms,
            None => read_timelimit_file(&dir)?.unwrap_or(limits.time_limit_ms),
        };
        let validator = find_validator(&dir)?;
        match (&config.validation, &validator) {
            (Validation::Custom { .. }, None) => {
                return Err(PackageError::key(
                    "problem.yaml",
                    "validation",
                    "custom validation needs a validator in output_validators/",
                ))
            }
            (Validation::Default, _) => {
                DefaultFlags::parse(&config.validator_flags)
                    .map_err(|e| PackageError::key("problem.yaml", "validator_flags", e))?;
            }
            _ => {}
        }
        let data = testdata::load(&dir, config.kind)?;
        let submissions = find_submissions(&dir)?;
        Ok(Problem {
            dir,
            name: config.name,
            kind: config.kind,
            validation: config.validation,
            validator_flags: config.validator_flags,
            limits,
            validator,
            data,
            submissions,
        })
    }

    /// Whether outputs are judged by an interactive validator.
    pub fn interactive(&self) -> bool {
        matches!(
            self.validation,
            Validation::Custom {
                interactive: true,
                ..
            }
        )
    }

    /// Every test case in judging order.
    pub fn test_cases(&self) -> Vec<&TestCase> {
        self.data.cases_in_order()
    }
}

/// What `problem.yaml` says.
#[derive(Debug, Clone, PartialEq)]
struct ProblemConfig {
    name: String,
    kind: ProblemKind,
    validation: Validation,
    validator_flags: String,
    limits: ProblemLimits,
    time_limit_ms: Option<u64>,
}

/// Bounds on a YAML file of a package, checked before parsing: deeply nested or alias-heavy
/// YAML costs the parser super-linear time (a 200 KB nest took a minute of CPU), and these
/// files are a few lines in every real package.
const YAML_MAX_BYTES: usize = 64 * 1024;
const YAML_MAX_DEPTH: usize = 32;
const YAML_MAX_ALIASES: usize = 64;

/// Parses a package's YAML file within the bounds above.
pub(crate) fn parse_yaml(text: &str) -> Result<Value, String> {
    if text.len() > YAML_MAX_BYTES {
        return Err(format!("larger than {YAML_MAX_BYTES} bytes"));
    }
    let mut depth = 0usize;
    for byte in text.bytes() {
        match byte {
            b'[' | b'{' => {
                depth += 1;
                if depth > YAML_MAX_DEPTH {
                    return Err(format!("nested deeper than {YAML_MAX_DEPTH} levels"));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let indent = text
        .lines()
        .map(|line| line.len() - line.trim_start_matches([' ', '-']).len())
        .max()
        .unwrap_or(0);
    if indent > 2 * YAML_MAX_DEPTH {
        return Err(format!("indented deeper than {YAML_MAX_DEPTH} levels"));
    }
    if text.matches('*').count() > YAML_MAX_ALIASES {
        return Err(format!("more than {YAML_MAX_ALIASES} aliases"));
    }
    serde_yaml_ng::from_str(text).map_err(|e| format!("not valid YAML: {e}"))
}

fn parse_problem_yaml(text: &str) -> Result<ProblemConfig, PackageError> {
    const FILE: &str = "problem.yaml";
    let value: Value = parse_yaml(text).map_err(|e| PackageError::new(FILE, e))?;
    let map = match &value {
        Value::Mapping(map) => map.clone(),
        Value::Null => Default::default(),
        _ => return Err(PackageError::new(FILE, "must be a mapping of keys")),
    };
    let get = |key: &str| map.get(Value::String(key.into()));
    let name = match get("name") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        // Localised names: prefer English, else any.
        Some(Value::Mapping(names)) => names
            .get(Value::String("en".into()))
            .or_else(|| names.values().next())
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        Some(_) => return Err(PackageError::key(FILE, "name", "must be a string")),
    };

    // `type`: a string (legacy) or a list (2023+: pass-fail | scoring, plus interactive).
    let mut kind = ProblemKind::PassFail;
    let mut interactive_type = false;
    if let Some(value) = get("type") {
        let types: Vec<String> = match value {
            Value::String(s) => vec![s.clone()],
            Value::Sequence(items) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| {
                    PackageError::key(FILE, "type", "must be a string or a list of strings")
                })?,
            _ => {
                return Err(PackageError::key(
                    FILE,
                    "type",
                    "must be a string or a list of strings",
                ))
            }
        };
        for t in &types {
            match t.as_str() {
                "pass-fail" => kind = ProblemKind::PassFail,
                "scoring" => kind = ProblemKind::Scoring,
                "interactive" => interactive_type = true,
                other => {
                    return Err(PackageError::key(
                        FILE,
                        "type",
                        format!("unsupported problem type {other:?} (expected pass-fail, scoring or interactive)"),
                    ))
                }
            }
        }
    }

    let validation = match get("validation") {
        None => Validation::Default,
        Some(Value::String(s)) => {
            let words: Vec<&str> = s.split_whitespace().collect();
            match words.split_first() {
                Some((&"default", [])) => Validation::Default,
                Some((&"custom", rest)) => {
                    let mut interactive = false;
                    let mut score = false;
                    for word in rest {
                        match *word {
                            "interactive" => interactive = true,
                            "score" => score = true,
                            other => {
                                return Err(PackageError::key(
                                    FILE,
                                    "validation",
                                    format!("unknown validation option {other:?}"),
                                ))
                            }
                        }
                    }
                    Validation::Custom { interactive, score }
                }
                _ => {
                    return Err(PackageError::key(
                        FILE,
                        "validation",
                        format!(
                        "expected default, custom, custom interactive or custom score; got {s:?}"
                    ),
                    ))
                }
            }
        }
        Some(_) => return Err(PackageError::key(FILE, "validation", "must be a string")),
    };
    let validation = match (validation, interactive_type) {
        (Validation::Default, true) => Validation::Custom {
            interactive: true,
            score: false,
        },
        (Validation::Custom { score, .. }, true) => Validation::Custom {
            interactive: true,
            score,
        },
        (v, false) => v,
    };

    let validator_flags = match get("validator_flags") {
        None => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(PackageError::key(
                FILE,
                "validator_flags",
                "must be a string",
            ))
        }
    };

    let mut limits = ProblemLimits::default();
    let mut time_limit_ms = None;
    match get("limits") {
        None => {}
        Some(Value::Mapping(map)) => {
            for (key, value) in map {
                let key = key
                    .as_str()
                    .ok_or_else(|| PackageError::key(FILE, "limits", "keys must be strings"))?;
                let full = format!("limits.{key}");
                let number = value
                    .as_f64()
                    .filter(|n| n.is_finite() && *n > 0.0)
                    .ok_or_else(|| PackageError::key(FILE, &full, "must be a positive number"))?;
                if let Some((_, cap, unit)) = LIMIT_CAPS.iter().find(|(name, ..)| *name == key) {
                    if number > *cap {
                        return Err(PackageError::key(
                            FILE,
                            &full,
                            format!("must be at most {cap} {unit} (this judge's cap)"),
                        ));
                    }
                }
                let whole = || -> Result<u64, PackageError> {
                    if number.fract() == 0.0 {
                        Ok(number as u64)
                    } else {
                        Err(PackageError::key(FILE, &full, "must be a whole number"))
                    }
                };
                match key {
                    "time_limit" => time_limit_ms = Some((number * 1000.0).round() as u64),
                    "memory" => limits.memory_mib = whole()?,
                    "output" => limits.output_mib = whole()?,
                    "compilation_time" => limits.compilation_time_s = whole()?,
                    "compilation_memory" => limits.compilation_memory_mib = whole()?,
                    "validation_time" => limits.validation_time_s = whole()?,
                    "validation_memory" => limits.validation_memory_mib = whole()?,
                    "validation_output" => limits.validation_output_mib = whole()?,
                    // Known keys that only matter when deriving limits from submissions.
                    "time_multiplier" | "time_safety_margin" | "time_multipliers"
                    | "time_resolution" | "code" | "validation_passes" => {}
                    other => {
                        return Err(PackageError::key(
                            FILE,
                            &format!("limits.{other}"),
                            "unknown limit",
                        ))
                    }
                }
            }
        }
        Some(_) => return Err(PackageError::key(FILE, "limits", "must be a mapping")),
    }
    Ok(ProblemConfig {
        name,
        kind,
        validation,
        validator_flags,
        limits,
        time_limit_ms,
    })
}

/// DOMjudge's `.timelimit` (seconds); used when `problem.yaml` has no `limits.time_limit`.
fn read_timelimit_file(dir: &Path) -> Result<Option<u64>, PackageError> {
    let path = dir.join(".timelimit");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let seconds: f64 = text
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0)
        .ok_or_else(|| {
            PackageError::new(
                ".timelimit",
                format!("{:?} is not a positive number of seconds", text.trim()),
            )
        })?;
    Ok(Some((seconds * 1000.0).round() as u64))
}

/// The content hash of a package: SHA-256 over every file's relative path and bytes, in
/// path order. Packages are stored and fetched by this hash.
pub fn content_hash(dir: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(root, &path, out)?;
            } else {
                out.push(
                    path.strip_prefix(root)
                        .expect("below the root")
                        .to_path_buf(),
                );
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort();
    let mut hash = Sha256::new();
    for file in files {
        let name = file.to_string_lossy();
        let bytes = std::fs::read(dir.join(&file))?;
        hash.update((name.len() as u64).to_le_bytes());
        hash.update(name.as_bytes());
        hash.update((bytes.len() as u64).to_le_bytes());
        hash.update(&bytes);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Source-file extensions and the language that compiles them.
pub const EXTENSIONS: &[(&str, &str)] = &[
    ("c", "c"),
    ("cpp", "cpp17"),
    ("cc", "cpp17"),
    ("cxx", "cpp17"),
    ("py", "python3"),
    ("java", "java"),
    ("js", "javascript"),
    ("rs", "rust"),
    ("go", "go"),
];

/// Language ids a file name may carry before its extension (`sum.cpp20.cpp`, `sum.pypy3.py`)
/// to pick a language other than the extension's default.
pub const NAMED_LANGUAGES: &[&str] = &[
    "c",
    "cpp17",
    "cpp20",
    "python3",
    "pypy3",
    "java",
    "javascript",
    "rust",
    "go",
];

/// The language of a source file: a language id before the extension, else the extension's.
pub fn language_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?;
    let default = EXTENSIONS
        .iter()
        .find(|(e, _)| e.eq_ignore_ascii_case(ext))
        .map(|(_, id)| *id)?;
    let named = Path::new(path.file_stem()?)
        .extension()
        .and_then(|inner| inner.to_str())
        .and_then(|inner| NAMED_LANGUAGES.iter().find(|id| **id == inner).copied());
    Some(named.unwrap_or(default))
}

fn find_validator(dir: &Path) -> Result<Option<ValidatorSource>, PackageError> {
    let mut candidates = Vec::new();
    let legacy = dir.join("output_validators");
    if let Ok(entries) = std::fs::read_dir(&legacy) {
        for entry in entries.flatten() {
            if entry.path().is_dir() {
                candidates.push(entry.path());
            }
        }
    }
    let current = dir.join("output_validator");
    if current.is_dir() {
        candidates.push(current);
    }
    candidates.sort();
    let relative = |p: &Path| p.strip_prefix(dir).unwrap_or(p).to_path_buf();
    let validator_dir = match candidates.as_slice() {
        [] => return Ok(None),
        [one] => one.clone(),
        many => {
            return Err(PackageError::new(
                "output_validators",
                format!(
                    "more than one output validator: {}",
                    many.iter()
                        .map(|p| relative(p).display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ))
        }
    };
    let mut sources = Vec::new();
    let mut languages = Vec::new();
    for entry in std::fs::read_dir(&validator_dir)
        .map_err(|e| PackageError::new(relative(&validator_dir), e.to_string()))?
        .flatten()
    {
        let path = entry.path();
        if let Some(language) = language_of(&path) {
            sources.push(path);
            if !languages.contains(&language) {
                languages.push(language);
            }
        } else if matches!(
            path.file_name().and_then(|n| n.to_str()),
            Some("build" | "run")
        ) {
            return Err(PackageError::new(
                relative(&path),
                "build/run scripts are not supported; provide the validator's source files",
            ));
        }
    }
    sources.sort();
    let language = match languages.as_slice() {
        [one] => one.to_string(),
        [] => {
            return Err(PackageError::new(
                relative(&validator_dir),
                "no validator source file (.c, .cpp, .py, ...)",
            ))
        }
        _ => {
            return Err(PackageError::new(
                relative(&validator_dir),
                format!("validator sources in several languages: {languages:?}"),
            ))
        }
    };
    let testlib = sources.iter().any(|s| {
        let named = matches!(
            s.file_stem().and_then(|n| n.to_str()),
            Some("check" | "checker")
        );
        named || std::fs::read_to_string(s).is_ok_and(|text| text.contains("testlib.h"))
    });
    Ok(Some(ValidatorSource {
        dir: validator_dir,
        sources,
        language,
        testlib,
    }))
}

fn find_submissions(dir: &Path) -> Result<Vec<PackageSubmission>, PackageError> {
    let root = dir.join("submissions");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    let mut groups: Vec<_> = entries.flatten().filter(|e| e.path().is_dir()).collect();
    groups.sort_by_key(|e| e.file_name());
    for group in groups {
        let name = group.file_name().to_string_lossy().into_owned();
        let expectation = Expectation::DIRECTORIES
            .iter()
            .find(|(dir, _)| *dir == name)
            .map(|(_, e)| *e)
            .ok_or_else(|| {
                PackageError::new(
                    format!("submissions/{name}"),
                    format!(
                        "unknown expected result; use one of {}",
                        Expectation::DIRECTORIES.map(|(d, _)| d).join(", ")
                    ),
                )
            })?;
        let mut files: Vec<_> = std::fs::read_dir(group.path())
            .map_err(|e| PackageError::new(format!("submissions/{name}"), e.to_string()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for path in files {
            let display = format!(
                "submissions/{name}/{}",
                path.file_name().unwrap().to_string_lossy()
            );
            found.push(PackageSubmission {
                path,
                display,
                expectation,
            });
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml_error(text: &str) -> String {
        parse_problem_yaml(text).unwrap_err().to_string()
    }

    #[test]
    fn legacy_and_current_problem_yaml_parse() {
        let legacy = parse_problem_yaml(
            "name: Hello\ntype: scoring\nvalidation: custom interactive\nvalidator_flags: float_tolerance 1e-6\nlimits:\n  memory: 512\n  time_multiplier: 5\n",
        )
        .unwrap();
        assert_eq!(legacy.name, "Hello");
        assert_eq!(legacy.kind, ProblemKind::Scoring);
        assert_eq!(
            legacy.validation,
            Validation::Custom {
                interactive: true,
                score: false
            }
        );
        assert_eq!(legacy.limits.memory_mib, 512);
        assert_eq!(legacy.time_limit_ms, None);

        let current = parse_problem_yaml(
            "problem_format_version: 2023-07-draft\nname:\n  en: Guess\n  sv: Gissa\ntype: [pass-fail, interactive]\nlimits:\n  time_limit: 1.5\n",
        );
        // Unknown top-level keys are tolerated (forward compatibility); limits are strict.
        let current = current.unwrap();
        assert_eq!(current.name, "Guess");
        assert!(matches!(
            current.validation,
            Validation::Custom {
                interactive: true,
                ..
            }
        ));
        assert_eq!(current.time_limit_ms, Some(1500));

        let empty = parse_problem_yaml("").unwrap();
        assert_eq!(empty.kind, ProblemKind::PassFail);
        assert_eq!(empty.validation, Validation::Default);
        assert_eq!(empty.limits, ProblemLimits::default());
    }

    #[test]
    fn malformed_problem_yaml_names_the_key_and_the_reason() {
        let cases = [
            ("name: [1, 2]", "problem.yaml: key `name`: must be a string"),
            (
                "type: multi-pass",
                "problem.yaml: key `type`: unsupported problem type \"multi-pass\"",
            ),
            (
                "validation: magic",
                "problem.yaml: key `validation`: expected default, custom",
            ),
            (
                "validation: custom sometimes",
                "unknown validation option \"sometimes\"",
            ),
            (
                "limits:\n  memory: -5",
                "problem.yaml: key `limits.memory`: must be a positive number",
            ),
            (
                "limits:\n  memory: 1.5",
                "key `limits.memory`: must be a whole number",
            ),
            ("limits:\n  cpus: 4", "key `limits.cpus`: unknown limit"),
            (
                "limits:\n  validation_time: 1000000000",
                "key `limits.validation_time`: must be at most 300 seconds (this judge's cap)",
            ),
            (
                "limits:\n  output: 1100",
                "key `limits.output`: must be at most 256 MiB",
            ),
            (
                "limits:\n  time_limit: 61",
                "key `limits.time_limit`: must be at most 60",
            ),
            ("limits: 5", "key `limits`: must be a mapping"),
            ("name: [unclosed", "problem.yaml: not valid YAML"),
            (
                &format!("name: {}{}", "[".repeat(40), "]".repeat(40)),
                "problem.yaml: nested deeper than 32 levels",
            ),
            (
                &format!("name: x\nrights: {}", "y".repeat(70_000)),
                "problem.yaml: larger than 65536 bytes",
            ),
            ("- a\n- b", "problem.yaml: must be a mapping of keys"),
        ];
        for (text, expected) in cases {
            let error = yaml_error(text);
            assert!(error.contains(expected), "{text:?} gave {error:?}");
        }
    }

    #[test]
    fn content_hashes_see_every_byte_and_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("data/secret")).unwrap();
        std::fs::write(dir.path().join("problem.yaml"), "name: x\n").unwrap();
        std::fs::write(dir.path().join("data/secret/1.in"), "1\n").unwrap();
        let first = content_hash(dir.path()).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(content_hash(dir.path()).unwrap(), first);
        std::fs::write(dir.path().join("data/secret/1.in"), "2\n").unwrap();
        let changed = content_hash(dir.path()).unwrap();
        assert_ne!(changed, first);
        std::fs::rename(
            dir.path().join("data/secret/1.in"),
            dir.path().join("data/secret/2.in"),
        )
        .unwrap();
        assert_ne!(content_hash(dir.path()).unwrap(), changed);
    }

    #[test]
    fn languages_follow_extensions() {
        assert_eq!(language_of(Path::new("a/b.cpp")), Some("cpp17"));
        assert_eq!(language_of(Path::new("Main.JAVA")), Some("java"));
        assert_eq!(language_of(Path::new("notes.txt")), None);
        assert_eq!(language_of(Path::new("sum.cpp20.cpp")), Some("cpp20"));
        assert_eq!(language_of(Path::new("sum.pypy3.py")), Some("pypy3"));
        assert_eq!(language_of(Path::new("my.solution.py")), Some("python3"));
    }
}
