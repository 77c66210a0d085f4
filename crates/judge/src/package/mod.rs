//! Problem packages in the ICPC/Kattis problem package format.
//!
//! Supported: `problem.yaml` (legacy keys, plus the 2023+ `type` list and `limits.time_limit`),
//! a DOMjudge-style `.timelimit` file, `data/` with `.in`/`.ans` pairs and nested test groups
//! configured by `testdata.yaml`, `output_validators/<name>/` (or `output_validator/`), and
//! `submissions/<expected result>/`. Every malformed input is a [`PackageError`] naming the
//! file, the key and the reason.

pub mod archive;
mod config;
mod submissions;
mod testdata;
mod validators;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::checker::default::DefaultFlags;
use crate::verdict::Verdict;

pub(crate) use config::parse_yaml;
pub use config::{Constants, FormatVersion};
pub use submissions::{
    default_rule, format_verdict, glob_matches, PackageSubmission, Rule, TimeLimitUse,
};
pub use testdata::{
    Aggregation, GroupSettings, OnReject, StaticValidation, TestCase, TestGroup, TestItem,
    VerdictMode, STATIC_CASE,
};
pub use validators::{InputValidator, InputValidatorKind, ValidatorSource, SCRIPTS};

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

/// Something the reference tools only warn about (an unknown key, a file in `submissions/`
/// that is not a program): the package loads, and `problem verify` prints it.
pub type PackageWarning = PackageError;

impl PackageError {
    pub fn new(file: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
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
    /// Largest source accepted, in KiB.
    pub code_kib: u64,
    /// `time_multipliers.ac_to_time_limit` (legacy `time_multiplier`): the time limit is at
    /// least the slowest accepted submission's time × this.
    pub ac_to_time_limit: f64,
    /// `time_multipliers.time_limit_to_tle` (legacy `time_safety_margin`): a submission
    /// expected to time out must still time out at the time limit × this; one expected to pass
    /// that needs more than the limit but less than this margin passes "with extra time".
    pub time_limit_to_tle: f64,
    /// A derived time limit is a multiple of this many seconds.
    pub time_resolution_s: f64,
    /// Most runs of one multi-pass test.
    pub validation_passes: u64,
}

impl Default for ProblemLimits {
    /// The format's defaults (2025-09), except the time limit (the format derives it from the
    /// submissions; one second is the fallback before they have run).
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
            code_kib: 128,
            ac_to_time_limit: 2.0,
            time_limit_to_tle: 1.5,
            time_resolution_s: 1.0,
            validation_passes: 2,
        }
    }
}

impl ProblemLimits {
    /// The defaults of a format version (the legacy multipliers are 5 and 2).
    pub fn for_version(version: FormatVersion) -> Self {
        match version {
            FormatVersion::Modern => Self::default(),
            FormatVersion::Legacy => Self {
                ac_to_time_limit: 5.0,
                time_limit_to_tle: 2.0,
                ..Self::default()
            },
        }
    }
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
    /// `rejected` (2025-09): at least one test is not accepted.
    Rejected,
    /// `brute_force` (2025-09): never a wrong answer, but a run-time error or a timeout on at
    /// least one test.
    BruteForce,
    /// Only what `submissions.yaml` requires (a directory it describes or redefines).
    Custom,
}

impl Expectation {
    /// The directory names of `submissions/` and what they expect.
    pub const DIRECTORIES: [(&'static str, Expectation); 10] = [
        ("accepted", Expectation::Accepted),
        ("wrong_answer", Expectation::Verdict(Verdict::WA)),
        ("time_limit_exceeded", Expectation::Verdict(Verdict::TLE)),
        ("run_time_error", Expectation::Verdict(Verdict::RE)),
        ("memory_limit_exceeded", Expectation::Verdict(Verdict::MLE)),
        ("output_limit_exceeded", Expectation::Verdict(Verdict::OLE)),
        ("compile_error", Expectation::Verdict(Verdict::CE)),
        ("partially_accepted", Expectation::PartialScore),
        ("rejected", Expectation::Rejected),
        ("brute_force", Expectation::BruteForce),
    ];

    pub fn describe(self) -> String {
        match self {
            Expectation::Accepted => "AC".into(),
            Expectation::Verdict(v) => v.to_string(),
            Expectation::PartialScore => "partial score".into(),
            Expectation::Rejected => "not AC".into(),
            Expectation::BruteForce => "RE or TLE".into(),
            Expectation::Custom => "as described".into(),
        }
    }
}

/// A loaded problem package.
#[derive(Debug, Clone)]
pub struct Problem {
    pub dir: PathBuf,
    pub version: FormatVersion,
    pub name: String,
    /// The name in each language of `problem.yaml` (`[("en", "Guess"), ("sv", "Gissa")]`).
    pub names: Vec<(String, String)>,
    pub kind: ProblemKind,
    pub validation: Validation,
    /// `validator_flags`: the default validator's flags, or extra arguments of a custom one.
    pub validator_flags: String,
    pub limits: ProblemLimits,
    pub validator: Option<ValidatorSource>,
    /// `static_validator/` (2025-09): judges the submission's files for the static
    /// validation test cases.
    pub static_validator: Option<ValidatorSource>,
    /// The root group (`data/`), with `sample` and `secret` below it.
    pub data: TestGroup,
    pub submissions: Vec<PackageSubmission>,
    /// Whether the time limit is the package's own (`limits.time_limit`, `.timelimit`);
    /// otherwise `problem verify` derives it from the accepted submissions.
    pub time_limit_fixed: bool,
    /// `allow_file_writing`: submissions may write in their working directory.
    pub allow_file_writing: bool,
    /// Each test runs again on the input its validator writes (`nextpass.in`).
    pub multi_pass: bool,
    /// `submit-answer`: a submission is the answers (outputs) themselves, one file per test
    /// (see [`crate::Answers`]); nothing is compiled or run.
    pub submit_answer: bool,
    /// `languages`: the format's language codes submissions may use; `None`: all.
    pub languages: Option<Vec<String>>,
    pub constants: Constants,
    /// `input_validators/`: run on every test input by `problem verify`.
    pub input_validators: Vec<InputValidator>,
    /// `data/invalid_input/**.in` (2025-09): inputs some input validator must reject.
    pub invalid_inputs: Vec<PathBuf>,
    /// `data/valid_output/` and `data/invalid_output/` (2025-09): each `.in` with its `.ans`
    /// and an `.out` the output validator must accept (`true`) or reject (`false`).
    pub output_cases: Vec<(PathBuf, bool)>,
    /// `function/`: a function-signature problem (see [`crate::function`]).
    pub function: Option<crate::function::FunctionSpec>,
    pub warnings: Vec<PackageWarning>,
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
        let config = config::parse_problem_yaml(&text)?;
        let mut warnings = config.warnings;
        let mut limits = config.limits;
        let fixed = match config.time_limit_ms {
            Some(ms) => Some(ms),
            None => read_timelimit_file(&dir)?,
        };
        limits.time_limit_ms = fixed.unwrap_or(limits.time_limit_ms);
        let validator = validators::find_output_validator(&dir)?;
        let input_validators = validators::find_input_validators(&dir, &mut warnings)?;
        let invalid_inputs = validators::invalid_inputs(&dir);
        let output_cases = validators::output_cases(&dir);
        let mut validation = config.validation;
        // 2025-09 has no `validation` key: an output validator, when there is one, judges.
        if config.version == FormatVersion::Modern && validator.is_some() {
            if let Validation::Default = validation {
                validation = Validation::Custom {
                    interactive: false,
                    score: config.kind == ProblemKind::Scoring,
                };
            }
        }
        if config.multi_pass && validation == Validation::Default {
            return Err(PackageError::key(
                "problem.yaml",
                "type",
                "a multi-pass problem needs an output validator (it writes nextpass.in)",
            ));
        }
        match (&validation, &validator) {
            (Validation::Custom { .. }, None) => {
                return Err(PackageError::key(
                    "problem.yaml",
                    if config.version == FormatVersion::Modern { "type" } else { "validation" },
                    "custom validation needs a validator in output_validator/ (or the legacy output_validators/)",
                ))
            }
            (Validation::Default, _) => {
                DefaultFlags::parse(&config.validator_flags)
                    .map_err(|e| PackageError::key("problem.yaml", "validator_flags", e))?;
            }
            _ => {}
        }
        let data = testdata::load(&dir, config.kind, config.version, &mut warnings)?;
        let static_validator = validators::find_static_validator(&dir)?;
        let static_cases = data
            .cases_in_order()
            .iter()
            .any(|case| case.static_validation.is_some());
        match (&static_validator, static_cases) {
            (Some(_), _) if config.submit_answer => return Err(PackageError::new(
                "static_validator",
                "a submit-answer problem has no static validator (its submissions are no programs)",
            )),
            (None, true) => {
                return Err(PackageError::key(
                    "data",
                    "static_validation_score",
                    "static validation test cases need a static validator in static_validator/",
                ))
            }
            _ => {}
        }
        let submissions = submissions::find(&dir, config.submit_answer, &mut warnings)?;
        let function = crate::function::FunctionSpec::load(&dir)?;
        if let Some(spec) = &function {
            check_function_problem(
                spec,
                (config.submit_answer, config.multi_pass),
                &validation,
                &data,
                &dir,
            )?;
        }
        Ok(Problem {
            dir,
            version: config.version,
            name: config.name,
            names: config.names,
            kind: config.kind,
            validation,
            validator_flags: config.validator_flags,
            limits,
            validator,
            static_validator,
            data,
            submissions,
            time_limit_fixed: fixed.is_some(),
            allow_file_writing: config.allow_file_writing,
            multi_pass: config.multi_pass,
            submit_answer: config.submit_answer,
            languages: config.languages,
            constants: config.constants,
            input_validators,
            invalid_inputs,
            output_cases,
            function,
            warnings,
        })
    }

    /// Whether submissions in `language_id` (one of ours) may be judged: `languages` names
    /// its code, or says nothing.
    pub fn allows_language(&self, language_id: &str) -> Result<(), String> {
        let code = crate::program::language_code(language_id);
        match &self.languages {
            Some(codes) if !codes.iter().any(|c| c == code) => Err(format!(
                "{code} is not one of this problem's languages ({})",
                codes.join(", ")
            )),
            _ => Ok(()),
        }
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

    /// Every test case with data (an input and an answer) in judging order; static
    /// validation test cases are judged too but have none.
    pub fn test_cases(&self) -> Vec<&TestCase> {
        let mut cases = self.data.cases_in_order();
        cases.retain(|case| case.static_validation.is_none());
        cases
    }

    /// The files `include/` adds to every submission in a language: those of
    /// `include/<language code>/` if it exists, else those of `include/default/`, with the
    /// package's constants filled in.
    pub fn included_files(&self, language_id: &str) -> std::io::Result<Vec<(String, Vec<u8>)>> {
        let include = self.dir.join("include");
        let own = include.join(crate::program::language_code(language_id));
        let dir = if own.is_dir() {
            own
        } else {
            include.join("default")
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Ok(Vec::new());
        };
        let mut files = Vec::new();
        for entry in entries.flatten() {
            if entry.path().is_file() {
                let bytes = std::fs::read(entry.path())?;
                files.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    self.constants.substitute(&bytes),
                ));
            }
        }
        files.sort();
        Ok(files)
    }
}

/// A function problem is judged by comparing values: it cannot also be interactive,
/// multi-pass or submit-answer, its `checker` comparison needs the output validator (and the
/// validator needs that comparison), and every test case must fit the signature.
fn check_function_problem(
    spec: &crate::function::FunctionSpec,
    (submit_answer, multi_pass): (bool, bool),
    validation: &Validation,
    data: &TestGroup,
    dir: &Path,
) -> Result<(), PackageError> {
    use crate::function::CompareMode;
    let conflict = if submit_answer {
        Some("submit-answer")
    } else if multi_pass {
        Some("multi-pass")
    } else if matches!(
        validation,
        Validation::Custom {
            interactive: true,
            ..
        }
    ) {
        Some("interactive")
    } else {
        None
    };
    if let Some(kind) = conflict {
        return Err(PackageError::new(
            "function",
            format!("a function problem cannot be {kind}"),
        ));
    }
    let checker = spec.compare.mode == CompareMode::Checker;
    match (checker, validation) {
        (true, Validation::Default) => {
            return Err(PackageError::key(
                "function/config.yaml",
                "compare",
                "the checker comparison needs an output validator (custom validation)",
            ))
        }
        (false, Validation::Custom { .. }) => {
            return Err(PackageError::key(
                "function/config.yaml",
                "compare",
                "the package has an output validator: set compare: checker to use it",
            ))
        }
        _ => {}
    }
    for case in data.cases_in_order() {
        if case.static_validation.is_some() {
            return Err(PackageError::new(
                "data",
                "a function problem has no static validation",
            ));
        }
        spec.check_case(&case.input, &case.answer, dir)?;
    }
    Ok(())
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
    ("c++", "cpp17"),
    ("py3", "python3"),
    ("cs", "csharp"),
    ("d", "d"),
    ("hs", "haskell"),
    ("kt", "kotlin"),
    ("lisp", "lisp"),
    ("cl", "lisp"),
    ("lua", "lua"),
    ("nim", "nim"),
    ("m", "objectivec"),
    ("ml", "ocaml"),
    ("pas", "pascal"),
    ("php", "php"),
    ("pl", "prolog"),
    ("rb", "ruby"),
    ("scala", "scala"),
    ("f90", "fortran"),
    ("adb", "ada"),
    ("ads", "ada"),
    ("erl", "erlang"),
    ("ex", "elixir"),
    ("exs", "elixir"),
    ("rkt", "racket"),
    ("sh", "bash"),
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

#[cfg(test)]
mod tests {
    use super::*;

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
