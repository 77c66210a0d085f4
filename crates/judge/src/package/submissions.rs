//! The reference submissions under `submissions/` and what each must achieve.
//!
//! Every file or directory in a known directory (the defaults of both format versions, plus
//! this judge's `memory_limit_exceeded`, `output_limit_exceeded`, `compile_error`) is one
//! submission; a directory is a multi-file program. `submissions/submissions.yaml` (2025-09)
//! maps glob patterns to metadata (`language`, `entrypoint`) and to extra requirements
//! (`permitted`, `required`, `score`, `message`, optionally per test group); a pattern that is
//! exactly a default directory's name replaces that directory's default, and patterns may give
//! directories of their own a meaning. Unknown directories, files of no known language and
//! unknown keys are warnings, as the reference tools treat them.

use std::path::{Path, PathBuf};

use serde_yaml_ng::Value;

use super::{language_of, parse_yaml, Expectation, PackageError, PackageWarning};
use crate::verdict::Verdict;

/// A reference submission of the package.
#[derive(Debug, Clone, PartialEq)]
pub struct PackageSubmission {
    /// Absolute path of the source file, or of the directory of a multi-file program.
    pub path: PathBuf,
    /// `submissions/<dir>/<name>`, for display.
    pub display: String,
    pub expectation: Expectation,
    /// `language` from `submissions.yaml` (a language code of the format, such as `cpp`).
    pub language: Option<String>,
    /// `entrypoint` from `submissions.yaml`.
    pub entrypoint: Option<String>,
    /// Requirements from `submissions.yaml`, all of which must hold as well.
    pub rules: Vec<Rule>,
}

/// One requirement of `submissions.yaml`, on every test or on those of one test group.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// A glob of test groups or cases (relative to `data/`); `None`: every test.
    pub tests: Option<String>,
    /// Verdicts (`AC`, `WA`, `TLE`, `RTE`) every test must have.
    pub permitted: Option<Vec<String>>,
    /// Verdicts one test at least must have.
    pub required: Option<Vec<String>>,
    /// The submission's score: inclusive bounds.
    pub score: Option<(f64, f64)>,
    /// A text one validator message must contain.
    pub message: Option<String>,
    /// `use_for_time_limit`: how the submission's run times bound a derived time limit.
    pub use_for_time_limit: Option<TimeLimitUse>,
}

/// `use_for_time_limit`: `false`, `lower` or `upper` (`true` is the default: no entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeLimitUse {
    No,
    Lower,
    Upper,
}

const FORMAT_VERDICTS: [&str; 4] = ["AC", "WA", "TLE", "RTE"];

/// The defaults of the 2025-09 directories as rules (for a directory `submissions.yaml`
/// redefines, whose unspecified keys are inherited from these).
pub fn default_rule(dir: &str) -> Option<Rule> {
    let rule = |permitted: &[&str], required: &[&str]| Rule {
        tests: None,
        permitted: Some(permitted.iter().map(|s| s.to_string()).collect()),
        required: (!required.is_empty()).then(|| required.iter().map(|s| s.to_string()).collect()),
        score: None,
        message: None,
        use_for_time_limit: None,
    };
    Some(match dir {
        "accepted" => rule(&["AC"], &[]),
        "rejected" => rule(&FORMAT_VERDICTS, &["RTE", "TLE", "WA"]),
        "wrong_answer" => rule(&["AC", "WA"], &["WA"]),
        "time_limit_exceeded" => rule(&["AC", "TLE"], &["TLE"]),
        "run_time_error" => rule(&["AC", "RTE"], &["RTE"]),
        "brute_force" => rule(&["AC", "RTE", "TLE"], &["RTE", "TLE"]),
        _ => return None,
    })
}

/// Finds the package's submissions and reads `submissions.yaml`; `answers`: they are answer
/// files (submit-answer), not programs.
pub(super) fn find(
    dir: &Path,
    answers: bool,
    warnings: &mut Vec<PackageWarning>,
) -> Result<Vec<PackageSubmission>, PackageError> {
    let root = dir.join("submissions");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Ok(Vec::new());
    };
    let patterns = match std::fs::read_to_string(root.join("submissions.yaml")) {
        Ok(text) => parse_submissions_yaml(&text, warnings)?,
        Err(_) => Vec::new(),
    };
    let hidden = |name: &str| name.starts_with('.');
    let mut found = Vec::new();
    let mut groups: Vec<_> = entries.flatten().filter(|e| e.path().is_dir()).collect();
    groups.sort_by_key(|e| e.file_name());
    for group in groups {
        let name = group.file_name().to_string_lossy().into_owned();
        if hidden(&name) {
            continue;
        }
        let known = Expectation::DIRECTORIES
            .iter()
            .find(|(dir, _)| *dir == name)
            .map(|(_, e)| *e);
        let described = patterns.iter().any(|p| glob_matches(&p.glob, &name));
        let expectation = match (known, described) {
            (Some(expectation), _) => expectation,
            (None, true) => Expectation::Custom,
            (None, false) => {
                warnings.push(PackageError::new(
                    format!("submissions/{name}"),
                    format!(
                        "unknown directory, its submissions are not judged (known: {}; or describe it in submissions.yaml)",
                        Expectation::DIRECTORIES.map(|(d, _)| d).join(", ")
                    ),
                ));
                continue;
            }
        };
        let mut paths: Vec<_> = std::fs::read_dir(group.path())
            .map_err(|e| PackageError::new(format!("submissions/{name}"), e.to_string()))?
            .flatten()
            .map(|e| e.path())
            .collect();
        paths.sort();
        for path in paths {
            let file_name = path.file_name().unwrap().to_string_lossy().into_owned();
            if hidden(&file_name) {
                continue;
            }
            let relative = format!("{name}/{file_name}");
            let display = format!("submissions/{relative}");
            let matching: Vec<&Pattern> = patterns
                .iter()
                .filter(|p| glob_matches(&p.glob, &relative))
                .collect();
            let language = matching.iter().rev().find_map(|p| p.language.clone());
            let entrypoint = matching.iter().rev().find_map(|p| p.entrypoint.clone());
            if !answers && path.is_file() && language.is_none() && language_of(&path).is_none() {
                warnings.push(PackageError::new(
                    display,
                    "not a source file of a known language (skipped)",
                ));
                continue;
            }
            let mut expectation = expectation;
            let mut rules: Vec<Rule> = Vec::new();
            for pattern in &matching {
                // The directory's own name replaces its default rule.
                if pattern.glob == name {
                    if let Some(default) = default_rule(&name) {
                        expectation = Expectation::Custom;
                        rules.extend(pattern.rules.iter().map(|r| inherit(r, &default)));
                        continue;
                    }
                }
                rules.extend(pattern.rules.iter().cloned());
            }
            if expectation == Expectation::Custom && rules.is_empty() {
                rules.extend(default_rule(&name));
            }
            found.push(PackageSubmission {
                path,
                display,
                expectation,
                language,
                entrypoint,
                rules,
            });
        }
    }
    Ok(found)
}

/// A rule redefining a default directory: what it leaves out comes from the default.
fn inherit(rule: &Rule, default: &Rule) -> Rule {
    Rule {
        tests: rule.tests.clone(),
        permitted: rule.permitted.clone().or_else(|| default.permitted.clone()),
        required: rule.required.clone().or_else(|| default.required.clone()),
        score: rule.score,
        message: rule.message.clone(),
        use_for_time_limit: rule.use_for_time_limit,
    }
}

/// One top-level entry of `submissions.yaml`.
#[derive(Debug)]
struct Pattern {
    glob: String,
    language: Option<String>,
    entrypoint: Option<String>,
    rules: Vec<Rule>,
}

const FILE: &str = "submissions/submissions.yaml";

const REQUIREMENT_KEYS: [&str; 5] = [
    "permitted",
    "required",
    "score",
    "message",
    "use_for_time_limit",
];

fn parse_submissions_yaml(
    text: &str,
    warnings: &mut Vec<PackageWarning>,
) -> Result<Vec<Pattern>, PackageError> {
    let value = parse_yaml(text).map_err(|e| PackageError::new(FILE, e))?;
    let map = match value {
        Value::Mapping(map) => map,
        Value::Null => return Ok(Vec::new()),
        _ => {
            return Err(PackageError::new(
                FILE,
                "must be a mapping of glob patterns",
            ))
        }
    };
    let mut patterns = Vec::new();
    for (glob, body) in &map {
        let glob = glob
            .as_str()
            .ok_or_else(|| PackageError::new(FILE, "patterns must be strings"))?
            .trim_end_matches('/')
            .to_string();
        let Value::Mapping(body) = body else {
            return Err(PackageError::key(FILE, &glob, "must be a mapping"));
        };
        let mut pattern = Pattern {
            glob: glob.clone(),
            language: None,
            entrypoint: None,
            rules: Vec::new(),
        };
        let mut whole = Rule::empty(None);
        for (key, value) in body {
            let key = key.as_str().unwrap_or_default();
            let full = format!("{glob}.{key}");
            match key {
                "language" => pattern.language = Some(string(value, &full)?),
                "entrypoint" => pattern.entrypoint = Some(string(value, &full)?),
                "authors" | "model_solution" => {}
                k if REQUIREMENT_KEYS.contains(&k) => whole.set(k, value, &full)?,
                // Any other key names test groups or cases: requirements on those only.
                tests => {
                    let Value::Mapping(inner) = value else {
                        warnings.push(PackageError::key(FILE, &full, "unknown key (ignored)"));
                        continue;
                    };
                    let mut rule = Rule::empty(Some(tests.to_string()));
                    for (inner_key, inner_value) in inner {
                        let inner_key = inner_key.as_str().unwrap_or_default();
                        let inner_full = format!("{full}.{inner_key}");
                        if REQUIREMENT_KEYS.contains(&inner_key) {
                            rule.set(inner_key, inner_value, &inner_full)?;
                        } else {
                            warnings.push(PackageError::key(
                                FILE,
                                &inner_full,
                                "unknown key (ignored)",
                            ));
                        }
                    }
                    pattern.rules.push(rule);
                }
            }
        }
        if whole.is_given() {
            pattern.rules.insert(0, whole);
        }
        patterns.push(pattern);
    }
    Ok(patterns)
}

fn string(value: &Value, key: &str) -> Result<String, PackageError> {
    value
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| PackageError::key(FILE, key, "must be a string"))
}

impl Rule {
    fn empty(tests: Option<String>) -> Self {
        Self {
            tests,
            permitted: None,
            required: None,
            score: None,
            message: None,
            use_for_time_limit: None,
        }
    }

    fn is_given(&self) -> bool {
        self.permitted.is_some()
            || self.required.is_some()
            || self.score.is_some()
            || self.message.is_some()
            || self.use_for_time_limit.is_some()
    }

    fn set(&mut self, key: &str, value: &Value, full: &str) -> Result<(), PackageError> {
        let verdicts = || -> Result<Vec<String>, PackageError> {
            let Value::Sequence(items) = value else {
                return Err(PackageError::key(FILE, full, "must be a list of verdicts"));
            };
            items
                .iter()
                .map(|item| match item.as_str() {
                    Some(v) if FORMAT_VERDICTS.contains(&v) => Ok(v.to_string()),
                    _ => Err(PackageError::key(
                        FILE,
                        full,
                        format!("verdicts are {}", FORMAT_VERDICTS.join(", ")),
                    )),
                })
                .collect()
        };
        match key {
            "permitted" => self.permitted = Some(verdicts()?),
            "required" => self.required = Some(verdicts()?),
            "message" => self.message = Some(string(value, full)?),
            "use_for_time_limit" => {
                self.use_for_time_limit = match value {
                    Value::Bool(false) => Some(TimeLimitUse::No),
                    Value::Bool(true) => None,
                    Value::String(text) if text == "lower" => Some(TimeLimitUse::Lower),
                    Value::String(text) if text == "upper" => Some(TimeLimitUse::Upper),
                    _ => {
                        return Err(PackageError::key(
                            FILE,
                            full,
                            "must be true, false, lower or upper",
                        ))
                    }
                }
            }
            "score" => {
                let bounds = match value {
                    Value::Sequence(items) => match items.as_slice() {
                        [low, high] => low.as_f64().zip(high.as_f64()),
                        _ => None,
                    },
                    other => other.as_f64().map(|v| (v, v)),
                };
                self.score = Some(bounds.filter(|(l, h)| l <= h).ok_or_else(|| {
                    PackageError::key(FILE, full, "must be a number or [low, high]")
                })?);
            }
            // Every key of REQUIREMENT_KEYS is handled above.
            _ => {}
        }
        Ok(())
    }

    /// Whether a test (`secret/group1/03`) falls under this rule.
    pub fn covers(&self, test: &str) -> bool {
        self.tests
            .as_deref()
            .is_none_or(|glob| glob_matches(glob, test))
    }

    /// Checks the rule against each test's format verdict (`AC`, `WA`, `TLE`, `RTE`) and
    /// message, and the submission's score; a rule for test groups checks the score of each
    /// group it matches (`group_scores`: path below `data/` → score).
    pub fn check(
        &self,
        tests: &[(String, &str, String)],
        score: Option<f64>,
        group_scores: &[(String, f64)],
    ) -> Result<(), String> {
        let covered: Vec<&(String, &str, String)> = tests
            .iter()
            .filter(|(name, ..)| self.covers(name))
            .collect();
        let scope = self
            .tests
            .as_deref()
            .map_or(String::new(), |t| format!(" in {t}"));
        if let Some(permitted) = &self.permitted {
            if let Some((name, verdict, message)) = covered
                .iter()
                .find(|(_, v, _)| !permitted.iter().any(|p| p == v))
            {
                let message = match message.as_str() {
                    "" => String::new(),
                    text => format!(": {text}"),
                };
                return Err(format!(
                    "{verdict} on {name}{message} (permitted{scope}: {})",
                    permitted.join(", ")
                ));
            }
        }
        if let Some(required) = &self.required {
            if !covered
                .iter()
                .any(|(_, v, _)| required.iter().any(|r| r == v))
            {
                return Err(format!("no test{scope} got {}", required.join(" or ")));
            }
        }
        if let Some((low, high)) = self.score {
            let outside = |score: f64| score < low - 1e-9 || score > high + 1e-9;
            match &self.tests {
                None => {
                    if let Some(score) = score.filter(|s| outside(*s)) {
                        return Err(format!("score {score} is not in [{low}, {high}]"));
                    }
                }
                Some(glob) => {
                    let groups: Vec<&(String, f64)> = group_scores
                        .iter()
                        .filter(|(group, _)| glob_matches(glob, group))
                        .collect();
                    if groups.is_empty() {
                        return Err(format!("no test group matches {glob} (for its score)"));
                    }
                    if let Some((group, score)) = groups.into_iter().find(|(_, s)| outside(*s)) {
                        return Err(format!(
                            "score {score} of {group} is not in [{low}, {high}]"
                        ));
                    }
                }
            }
        }
        if let Some(message) = &self.message {
            if !covered.iter().any(|(_, _, m)| m.contains(message.as_str())) {
                return Err(format!("no validator message{scope} contains {message:?}"));
            }
        }
        Ok(())
    }
}

/// The format's name for a verdict (memory and output overruns are run-time errors there).
pub fn format_verdict(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::AC => "AC",
        Verdict::WA | Verdict::PE => "WA",
        Verdict::TLE => "TLE",
        Verdict::RE | Verdict::MLE | Verdict::OLE => "RTE",
        Verdict::CE => "CE",
        Verdict::SE => "JE",
    }
}

/// Whether `path` (`accepted/sum.py`, `secret/g1/03`) or one of its parents matches `glob`:
/// `*` stands for any part of one name (never `/`), `{a,b}` for alternatives.
pub fn glob_matches(glob: &str, path: &str) -> bool {
    let segments: Vec<&str> = path.split('/').collect();
    expand_braces(glob).iter().any(|alternative| {
        let parts: Vec<&str> = alternative.split('/').collect();
        parts.len() <= segments.len()
            && parts
                .iter()
                .zip(&segments)
                .all(|(part, segment)| wildcard(part.as_bytes(), segment.as_bytes()))
    })
}

fn expand_braces(glob: &str) -> Vec<String> {
    let Some(open) = glob.find('{') else {
        return vec![glob.to_string()];
    };
    let Some(close) = glob[open..].find('}').map(|c| open + c) else {
        return vec![glob.to_string()];
    };
    let (head, tail) = (&glob[..open], &glob[close + 1..]);
    glob[open + 1..close]
        .split(',')
        .flat_map(|choice| expand_braces(&format!("{head}{choice}{tail}")))
        .collect()
}

fn wildcard(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'*', rest)) => (0..=text.len()).any(|skip| wildcard(rest, &text[skip..])),
        Some((c, rest)) => text.first() == Some(c) && wildcard(rest, &text[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_their_parents_and_alternatives() {
        let cases = [
            ("accepted", "accepted/sum.py", true),
            ("accepted/*", "accepted/sum.py", true),
            ("accepted/*.py", "accepted/sum.cpp", false),
            ("*/sum.py", "wrong_answer/sum.py", true),
            ("accepted/{a,b}.py", "accepted/b.py", true),
            ("accepted/{a,b}.py", "accepted/c.py", false),
            ("secret/*-easy", "secret/01-easy/1", true),
            ("secret/*-easy", "secret/01-hard/1", false),
            ("accepted/sum.py", "accepted", false),
            ("acc*", "accepted/x", true),
        ];
        for (glob, path, expected) in cases {
            assert_eq!(glob_matches(glob, path), expected, "{glob} ~ {path}");
        }
    }

    #[test]
    fn submissions_yaml_gives_metadata_rules_and_redefinitions() {
        let mut warnings = Vec::new();
        let patterns = parse_submissions_yaml(
            "accepted/sum.py:\n  language: python3\n  authors: Ada\nrun_time_error/multi:\n  entrypoint: main.py\ntime_limit_exceeded:\n  permitted: [AC, WA, TLE]\nsolves_easy.py:\n  secret/*-easy:\n    permitted: [AC]\n  secret/*-hard:\n    required: [TLE]\n    score: 5\n  colour: red\n",
            &mut warnings,
        )
        .unwrap();
        assert_eq!(patterns[0].language.as_deref(), Some("python3"));
        assert_eq!(patterns[1].entrypoint.as_deref(), Some("main.py"));
        assert_eq!(
            patterns[2].rules[0].permitted,
            Some(vec!["AC".into(), "WA".into(), "TLE".into()])
        );
        let redefined = inherit(
            &patterns[2].rules[0],
            &default_rule("time_limit_exceeded").unwrap(),
        );
        assert_eq!(redefined.required, Some(vec!["TLE".to_string()]));
        assert_eq!(patterns[3].rules.len(), 2);
        assert_eq!(patterns[3].rules[1].tests.as_deref(), Some("secret/*-hard"));
        let warned: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(warned.len(), 1, "{warned:?}");
        assert!(warned[0].contains("solves_easy.py.colour"));
        assert_eq!(patterns[3].rules[1].score, Some((5.0, 5.0)));

        let bad = parse_submissions_yaml("x:\n  permitted: [OK]\n", &mut Vec::new()).unwrap_err();
        assert!(
            bad.to_string().contains("verdicts are AC, WA, TLE, RTE"),
            "{bad}"
        );
    }

    #[test]
    fn rules_check_the_tests_they_cover() {
        let tests = [
            ("secret/01-easy/1".to_string(), "AC", String::new()),
            (
                "secret/02-hard/1".to_string(),
                "TLE",
                "too slow".to_string(),
            ),
        ];
        let mut easy = Rule::empty(Some("secret/*-easy".into()));
        easy.permitted = Some(vec!["AC".into()]);
        assert_eq!(easy.check(&tests, None, &[]), Ok(()));
        let mut all = Rule::empty(None);
        all.permitted = Some(vec!["AC".into()]);
        assert!(all
            .check(&tests, None, &[])
            .unwrap_err()
            .contains("TLE on secret/02-hard/1"));
        let mut required = Rule::empty(Some("secret/*-hard".into()));
        required.required = Some(vec!["WA".into()]);
        assert!(required
            .check(&tests, None, &[])
            .unwrap_err()
            .contains("no test in secret/*-hard got WA"));
        let mut scored = Rule::empty(None);
        scored.score = Some((10.0, 20.0));
        assert!(scored.check(&tests, Some(30.0), &[]).is_err());
        assert!(scored.check(&tests, Some(15.0), &[]).is_ok());
        // A test group's score: every group the glob matches.
        let mut hard = Rule::empty(Some("secret/*-hard".into()));
        hard.score = Some((0.0, 5.0));
        let groups = [
            ("secret/01-easy".to_string(), 50.0),
            ("secret/02-hard".to_string(), 5.0),
            ("secret/03-hard".to_string(), 7.0),
        ];
        assert_eq!(
            hard.check(&tests, Some(62.0), &groups),
            Err("score 7 of secret/03-hard is not in [0, 5]".into())
        );
        assert!(hard.check(&tests, Some(62.0), &groups[..2]).is_ok());
        assert!(hard
            .check(&tests, Some(62.0), &groups[..1])
            .unwrap_err()
            .contains("no test group matches secret/*-hard"));
        let mut message = Rule::empty(None);
        message.message = Some("slow".into());
        assert!(message.check(&tests, None, &[]).is_ok());
    }
}
