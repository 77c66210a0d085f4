//! `problem.yaml`: the format version, the problem's type, validation and limits.
//!
//! The version is `problem_format_version` (absent: `legacy`). `legacy` and `legacy-icpc` read
//! the legacy keys (`validation`, `validator_flags`, `grading`, `limits.time_multiplier`,
//! `limits.time_safety_margin`); `2023-07`, `2025-09` and their drafts (the 2023-07 draft
//! became 2025-09) read the `type` list and `limits.time_multipliers`. Unknown keys are
//! warnings, as the reference tools treat them; a known key with a wrong value, or a feature
//! this judge cannot honour, refuses the package with the key and the reason.

use serde_yaml_ng::{Mapping, Value};

use super::{PackageError, PackageWarning, ProblemKind, ProblemLimits, Validation};

/// Which version of the package format a package follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FormatVersion {
    /// `legacy` (also the ICPC subset `legacy-icpc`), or no `problem_format_version`.
    Legacy,
    /// `2023-07`, `2025-09`, their drafts, or `draft`.
    Modern,
}

impl FormatVersion {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "legacy" | "legacy-icpc" => Some(FormatVersion::Legacy),
            "2023-07" | "2023-07-draft" | "2025-09" | "2025-09-draft" | "draft" => {
                Some(FormatVersion::Modern)
            }
            _ => None,
        }
    }
}

/// The largest value a package may give each limit. A setter's package must not hold a judge
/// worker for hours (`validation_time: 1e9`) or make the judge keep gigabytes of output;
/// beyond these the package is refused with the reason (the format says a system that cannot
/// honour a limit must reject the package).
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

/// Keys of `problem.yaml` that carry metadata only (never a reason to refuse or to warn).
const METADATA_KEYS: &[&str] = &[
    "name",
    "uuid",
    "version",
    "author",
    "credits",
    "source",
    "source_url",
    "license",
    "rights_owner",
    "embargo_until",
    "keywords",
];

/// What `problem.yaml` says.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ProblemConfig {
    pub(super) version: FormatVersion,
    pub(super) name: String,
    /// Every name by language (`en`: the English one), for a localised problem page.
    pub(super) names: Vec<(String, String)>,
    pub(super) kind: ProblemKind,
    pub(super) validation: Validation,
    pub(super) validator_flags: String,
    pub(super) limits: ProblemLimits,
    pub(super) time_limit_ms: Option<u64>,
    pub(super) allow_file_writing: bool,
    pub(super) multi_pass: bool,
    pub(super) submit_answer: bool,
    /// `languages`: the language codes submissions may use; `None` is `all`.
    pub(super) languages: Option<Vec<String>>,
    pub(super) constants: Constants,
    pub(super) warnings: Vec<PackageWarning>,
}

/// `constants` (2025-09): `{{name}}` and `{{name.variant}}` in validators, included files,
/// example submissions and `test_group.yaml` stand for these values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Constants(Vec<(String, String)>);

impl Constants {
    fn parse(value: &Value) -> Result<Self, PackageError> {
        let Value::Mapping(map) = value else {
            return Err(PackageError::key(FILE, "constants", "must be a mapping"));
        };
        let scalar = |value: &Value| match value {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let mut found = Vec::new();
        for (name, value) in map {
            let name = name.as_str().unwrap_or_default();
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let key = format!("constants.{name}");
            if !valid {
                return Err(PackageError::key(
                    FILE,
                    &key,
                    "is not a valid constant name",
                ));
            }
            let wrong = || {
                PackageError::key(
                    FILE,
                    &key,
                    "must be a number, a string or a mapping with a value",
                )
            };
            match value {
                Value::Mapping(variants) => {
                    let value = variants
                        .get(Value::String("value".into()))
                        .and_then(scalar)
                        .ok_or_else(wrong)?;
                    found.push((name.to_string(), value.clone()));
                    found.push((format!("{name}.value"), value));
                    for (variant, text) in variants {
                        let variant = variant.as_str().unwrap_or_default();
                        if variant != "value" {
                            found.push((
                                format!("{name}.{variant}"),
                                scalar(text).ok_or_else(wrong)?,
                            ));
                        }
                    }
                }
                other => {
                    let value = scalar(other).ok_or_else(wrong)?;
                    found.push((name.to_string(), value.clone()));
                    found.push((format!("{name}.value"), value));
                }
            }
        }
        Ok(Self(found))
    }

    /// Replaces LaTeX's `\constant{name}` (and `{name.variant}`) by its value.
    pub fn substitute_latex(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (name, value) in &self.0 {
            text = text.replace(&format!("\\constant{{{name}}}"), value);
        }
        text
    }

    /// Replaces every `{{name}}` and `{{name.variant}}` that names a constant; others stay.
    pub fn substitute(&self, bytes: &[u8]) -> Vec<u8> {
        if self.0.is_empty() || !bytes.windows(2).any(|w| w == b"{{") {
            return bytes.to_vec();
        }
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = bytes;
        while let Some(start) = rest.windows(2).position(|w| w == b"{{") {
            out.extend_from_slice(&rest[..start]);
            let after = &rest[start + 2..];
            let replaced = after.windows(2).position(|w| w == b"}}").and_then(|end| {
                let name = std::str::from_utf8(&after[..end]).ok()?;
                let value = self.0.iter().find(|(n, _)| n == name.trim())?;
                Some((value.1.as_bytes(), end + 2))
            });
            match replaced {
                Some((value, consumed)) => {
                    out.extend_from_slice(value);
                    rest = &after[consumed..];
                }
                None => {
                    out.extend_from_slice(b"{{");
                    rest = after;
                }
            }
        }
        out.extend_from_slice(rest);
        out
    }
}

const FILE: &str = "problem.yaml";

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

pub(super) fn parse_problem_yaml(text: &str) -> Result<ProblemConfig, PackageError> {
    let value: Value = parse_yaml(text).map_err(|e| PackageError::new(FILE, e))?;
    let map = match &value {
        Value::Mapping(map) => map.clone(),
        Value::Null => Default::default(),
        _ => return Err(PackageError::new(FILE, "must be a mapping of keys")),
    };
    let get = |key: &str| map.get(Value::String(key.into()));
    let version = match get("problem_format_version") {
        None => FormatVersion::Legacy,
        Some(value) => {
            let text = scalar_text(value).unwrap_or_default();
            FormatVersion::parse(&text).ok_or_else(|| {
                PackageError::key(
                    FILE,
                    "problem_format_version",
                    format!(
                        "unknown version {text:?} (known: legacy, legacy-icpc, 2023-07, 2023-07-draft, 2025-09, 2025-09-draft, draft)"
                    ),
                )
            })?
        }
    };
    let (name, names) = parse_name(get("name"))?;
    let mut config = ProblemConfig {
        version,
        name,
        names,
        kind: ProblemKind::PassFail,
        validation: Validation::Default,
        validator_flags: String::new(),
        limits: ProblemLimits::for_version(version),
        time_limit_ms: None,
        allow_file_writing: false,
        multi_pass: false,
        submit_answer: false,
        languages: None,
        constants: Constants::default(),
        warnings: Vec::new(),
    };
    let mut interactive_type = false;
    for (key, value) in &map {
        let Some(key) = key.as_str() else {
            return Err(PackageError::new(FILE, "keys must be strings"));
        };
        match key {
            "problem_format_version" => {}
            k if METADATA_KEYS.contains(&k) => {}
            "type" => {
                let types = parse_type(value)?;
                config.kind = types.kind;
                interactive_type = types.interactive;
                config.multi_pass = types.multi_pass;
                config.submit_answer = types.submit_answer;
            }
            "languages" => config.languages = parse_languages(value)?,
            "validation" => {
                let multi_pass;
                (config.validation, multi_pass) = parse_validation(value)?;
                config.multi_pass |= multi_pass;
            }
            "validator_flags" => {
                config.validator_flags = scalar_text(value)
                    .ok_or_else(|| PackageError::key(FILE, "validator_flags", "must be a string"))?
            }
            "limits" => parse_limits(value, &mut config)?,
            "grading" => parse_legacy_grading(value, &mut config)?,
            "constants" => config.constants = Constants::parse(value)?,
            "allow_file_writing" | "allow_writing_files" => {
                config.allow_file_writing = value
                    .as_bool()
                    .ok_or_else(|| PackageError::key(FILE, key, "must be true or false"))?
            }
            other => config
                .warnings
                .push(PackageError::key(FILE, other, "unknown key (ignored)")),
        }
    }
    if interactive_type {
        config.validation = match config.validation {
            Validation::Custom { score, .. } => Validation::Custom {
                interactive: true,
                score,
            },
            Validation::Default => Validation::Custom {
                interactive: true,
                score: false,
            },
        };
    }
    if version == FormatVersion::Modern && config.kind == ProblemKind::Scoring {
        // A modern scoring problem's validator may report scores (score.txt).
        if let Validation::Custom { interactive, .. } = config.validation {
            config.validation = Validation::Custom {
                interactive,
                score: true,
            };
        }
    }
    Ok(config)
}

/// A string, or a number written where a string is expected (`validator_flags: 1e-6`).
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The name (English if there are several) and every name by language.
fn parse_name(value: Option<&Value>) -> Result<(String, Vec<(String, String)>), PackageError> {
    Ok(match value {
        None => (String::new(), Vec::new()),
        Some(Value::String(s)) => (s.clone(), vec![("en".into(), s.clone())]),
        Some(Value::Mapping(map)) => {
            let names: Vec<(String, String)> = map
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_string(), v.as_str()?.to_string())))
                .collect();
            let name = names
                .iter()
                .find(|(language, _)| language == "en")
                .or_else(|| names.first())
                .map(|(_, name)| name.clone())
                .unwrap_or_default();
            (name, names)
        }
        Some(_) => return Err(PackageError::key(FILE, "name", "must be a string")),
    })
}

/// `languages`: `all`, or language codes (a list, or a string of them).
fn parse_languages(value: &Value) -> Result<Option<Vec<String>>, PackageError> {
    let codes: Vec<String> = match value {
        Value::String(text) => text.split_whitespace().map(str::to_string).collect(),
        Value::Sequence(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(|| PackageError::key(FILE, "languages", "must be language codes"))?,
        _ => {
            return Err(PackageError::key(
                FILE,
                "languages",
                "must be `all` or a list of language codes",
            ))
        }
    };
    match codes.as_slice() {
        [] => Err(PackageError::key(FILE, "languages", "must not be empty")),
        [all] if all == "all" => Ok(None),
        _ => Ok(Some(codes)),
    }
}

/// What `type` says.
struct Types {
    kind: ProblemKind,
    interactive: bool,
    multi_pass: bool,
    submit_answer: bool,
}

/// `type`: a string (legacy) or a list (2023+).
fn parse_type(value: &Value) -> Result<Types, PackageError> {
    let wrong = || PackageError::key(FILE, "type", "must be a string or a list of strings");
    let types: Vec<String> = match value {
        Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        Value::Sequence(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()
            .ok_or_else(wrong)?,
        _ => return Err(wrong()),
    };
    let mut kind = ProblemKind::PassFail;
    let mut interactive = false;
    let mut multi_pass = false;
    let mut submit_answer = false;
    for t in &types {
        match t.as_str() {
            "pass-fail" => kind = ProblemKind::PassFail,
            "scoring" => kind = ProblemKind::Scoring,
            "interactive" => interactive = true,
            "multi-pass" => multi_pass = true,
            "submit-answer" => submit_answer = true,
            other => {
                return Err(PackageError::key(
                    FILE,
                    "type",
                    format!("unknown problem type {other:?} (expected pass-fail, scoring, interactive, multi-pass or submit-answer)"),
                ))
            }
        }
    }
    if submit_answer && (interactive || multi_pass) {
        return Err(PackageError::key(
            FILE,
            "type",
            "a submit-answer problem cannot be interactive or multi-pass",
        ));
    }
    Ok(Types {
        kind,
        interactive,
        multi_pass,
        submit_answer,
    })
}

/// Legacy `validation`: how outputs are judged, and whether it is multi-pass.
fn parse_validation(value: &Value) -> Result<(Validation, bool), PackageError> {
    let Some(s) = value.as_str() else {
        return Err(PackageError::key(FILE, "validation", "must be a string"));
    };
    let words: Vec<&str> = s.split_whitespace().collect();
    match words.split_first() {
        Some((&"default", [])) => Ok((Validation::Default, false)),
        Some((&"custom", rest)) => {
            let mut interactive = false;
            let mut score = false;
            let mut multi_pass = false;
            for word in rest {
                match *word {
                    "interactive" => interactive = true,
                    "score" => score = true,
                    "multi-pass" => multi_pass = true,
                    other => {
                        return Err(PackageError::key(
                            FILE,
                            "validation",
                            format!("unknown validation option {other:?}"),
                        ))
                    }
                }
            }
            Ok((Validation::Custom { interactive, score }, multi_pass))
        }
        _ => Err(PackageError::key(
            FILE,
            "validation",
            format!("expected default, custom, custom interactive or custom score; got {s:?}"),
        )),
    }
}

/// Legacy `grading:` (objective, show_test_data_groups, on_reject): metadata for this judge,
/// except that a mapping is required.
fn parse_legacy_grading(value: &Value, config: &mut ProblemConfig) -> Result<(), PackageError> {
    let Value::Mapping(map) = value else {
        return Err(PackageError::key(FILE, "grading", "must be a mapping"));
    };
    for key in map.keys() {
        match key.as_str() {
            Some("objective" | "show_test_data_groups" | "on_reject") => {}
            other => config.warnings.push(PackageError::key(
                FILE,
                &format!("grading.{}", other.unwrap_or("?")),
                "unknown key (ignored)",
            )),
        }
    }
    Ok(())
}

fn positive(value: &Value, key: &str) -> Result<f64, PackageError> {
    value
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or_else(|| PackageError::key(FILE, key, "must be a positive number"))
}

fn parse_limits(value: &Value, config: &mut ProblemConfig) -> Result<(), PackageError> {
    let map: &Mapping = match value {
        Value::Mapping(map) => map,
        Value::Null => return Ok(()),
        _ => return Err(PackageError::key(FILE, "limits", "must be a mapping")),
    };
    let limits = &mut config.limits;
    for (key, value) in map {
        let key = key
            .as_str()
            .ok_or_else(|| PackageError::key(FILE, "limits", "keys must be strings"))?;
        let full = format!("limits.{key}");
        if key == "time_multipliers" {
            parse_time_multipliers(value, limits, &mut config.warnings)?;
            continue;
        }
        let known = matches!(
            key,
            "time_limit"
                | "memory"
                | "output"
                | "code"
                | "compilation_time"
                | "compilation_memory"
                | "validation_time"
                | "validation_memory"
                | "validation_output"
                | "validation_passes"
                | "time_multiplier"
                | "time_safety_margin"
                | "time_resolution"
        );
        if !known {
            config
                .warnings
                .push(PackageError::key(FILE, &full, "unknown limit (ignored)"));
            continue;
        }
        let number = positive(value, &full)?;
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
            "time_limit" => config.time_limit_ms = Some((number * 1000.0).round() as u64),
            "memory" => limits.memory_mib = whole()?,
            "output" => limits.output_mib = whole()?,
            "code" => limits.code_kib = whole()?,
            "compilation_time" => limits.compilation_time_s = whole()?,
            "compilation_memory" => limits.compilation_memory_mib = whole()?,
            "validation_time" => limits.validation_time_s = whole()?,
            "validation_memory" => limits.validation_memory_mib = whole()?,
            "validation_output" => limits.validation_output_mib = whole()?,
            "validation_passes" => {
                limits.validation_passes = whole()?;
                if limits.validation_passes < 2 {
                    return Err(PackageError::key(FILE, &full, "must be at least 2"));
                }
            }
            "time_resolution" => limits.time_resolution_s = number,
            // Legacy names of the two multipliers (`time_limit = slowest AC × multiplier`,
            // TLE margin = `safety_margin`).
            "time_multiplier" => limits.ac_to_time_limit = number,
            "time_safety_margin" => limits.time_limit_to_tle = number,
            _ => unreachable!("known limits are matched above"),
        }
    }
    Ok(())
}

fn parse_time_multipliers(
    value: &Value,
    limits: &mut ProblemLimits,
    warnings: &mut Vec<PackageWarning>,
) -> Result<(), PackageError> {
    let Value::Mapping(map) = value else {
        return Err(PackageError::key(
            FILE,
            "limits.time_multipliers",
            "must be a mapping (ac_to_time_limit, time_limit_to_tle)",
        ));
    };
    for (key, value) in map {
        let key = key.as_str().unwrap_or("?");
        let full = format!("limits.time_multipliers.{key}");
        let at_least_one = || {
            value
                .as_f64()
                .filter(|n| n.is_finite() && *n >= 1.0)
                .ok_or_else(|| PackageError::key(FILE, &full, "must be a number of at least 1"))
        };
        match key {
            "ac_to_time_limit" => limits.ac_to_time_limit = at_least_one()?,
            "time_limit_to_tle" => limits.time_limit_to_tle = at_least_one()?,
            _ => warnings.push(PackageError::key(FILE, &full, "unknown key (ignored)")),
        }
    }
    Ok(())
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
        assert_eq!(empty.version, FormatVersion::Legacy);
        assert_eq!(empty.kind, ProblemKind::PassFail);
        assert_eq!(empty.validation, Validation::Default);
        // Legacy multipliers: 5 and 2.
        assert_eq!(
            empty.limits,
            ProblemLimits::for_version(FormatVersion::Legacy)
        );
        assert_eq!(empty.limits.ac_to_time_limit, 5.0);
    }

    #[test]
    fn newer_versions_read_their_keys_and_warn_about_unknown_ones() {
        let config = parse_problem_yaml(
            "problem_format_version: 2025-09
name: Sum
uuid: 8ee7605a-ab1a-8226-1d71-e346ab1e688d
type: scoring
credits:
  authors: Ada
limits:
  time_multipliers:
    ac_to_time_limit: 3
    time_limit_to_tle: 1.2
  time_resolution: 0.5
  code: 64
  gpus: 1
allow_file_writing: true
mystery: 1
",
        )
        .unwrap();
        assert_eq!(config.version, FormatVersion::Modern);
        assert_eq!(config.kind, ProblemKind::Scoring);
        assert_eq!(config.limits.ac_to_time_limit, 3.0);
        assert_eq!(config.limits.time_limit_to_tle, 1.2);
        assert_eq!(config.limits.time_resolution_s, 0.5);
        assert_eq!(config.limits.code_kib, 64);
        assert!(config.allow_file_writing);
        let warned: Vec<String> = config.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warned,
            [
                "problem.yaml: key `limits.gpus`: unknown limit (ignored)",
                "problem.yaml: key `mystery`: unknown key (ignored)",
            ]
        );
        // The modern defaults: 2 and 1.5.
        let modern = parse_problem_yaml(
            "problem_format_version: 2023-07-draft
",
        )
        .unwrap();
        assert_eq!(modern.limits.ac_to_time_limit, 2.0);
        assert_eq!(modern.limits.time_limit_to_tle, 1.5);
        // Legacy spellings of the multipliers.
        let legacy =
            parse_problem_yaml("limits:\n  time_multiplier: 3\n  time_safety_margin: 4\n").unwrap();
        assert_eq!(legacy.limits.ac_to_time_limit, 3.0);
        assert_eq!(legacy.limits.time_limit_to_tle, 4.0);
    }

    #[test]
    fn malformed_problem_yaml_names_the_key_and_the_reason() {
        let cases = [
            ("name: [1, 2]", "problem.yaml: key `name`: must be a string"),
            (
                "type: [submit-answer, interactive]",
                "problem.yaml: key `type`: a submit-answer problem cannot be interactive or multi-pass",
            ),
            (
                "languages: []",
                "problem.yaml: key `languages`: must not be empty",
            ),
            (
                "type: [pass-fail, puzzle]",
                "problem.yaml: key `type`: unknown problem type \"puzzle\"",
            ),
            (
                "problem_format_version: 1999-01",
                "key `problem_format_version`: unknown version \"1999-01\"",
            ),
            (
                "limits:\n  time_multipliers: 2",
                "key `limits.time_multipliers`: must be a mapping",
            ),
            (
                "limits:\n  time_multipliers:\n    ac_to_time_limit: 0.5",
                "key `limits.time_multipliers.ac_to_time_limit`: must be a number of at least 1",
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
    fn constants_replace_their_sequences_and_leave_the_rest() {
        let config = parse_problem_yaml(
            "problem_format_version: 2025-09\nconstants:\n  max_n: 2000\n  k:\n    value: 5000000\n    tex: 5,000,000\n",
        )
        .unwrap();
        let constants = &config.constants;
        let cases: [(&str, &str); 5] = [
            ("n <= {{max_n}}", "n <= 2000"),
            ("{{k}} {{k.value}} {{k.tex}}", "5000000 5000000 5,000,000"),
            ("{{unknown}} stays", "{{unknown}} stays"),
            ("no template", "no template"),
            ("{{ max_n }} and {{open", "2000 and {{open"),
        ];
        for (text, expected) in cases {
            assert_eq!(
                String::from_utf8(constants.substitute(text.as_bytes())).unwrap(),
                expected
            );
        }
        let bad = parse_problem_yaml("constants:\n  9lives: 1\n").unwrap_err();
        assert!(
            bad.to_string().contains("not a valid constant name"),
            "{bad}"
        );
    }
}
