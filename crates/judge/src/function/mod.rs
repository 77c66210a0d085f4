//! Function-signature problems (LeetCode's form, the seed's "D-form"): the user writes a
//! method of `class Solution` (or a design class), a harness generated from the signature
//! calls it on each test case's arguments, and the judge compares the returned values on the
//! trusted side.
//!
//! A function problem is a Kattis-format package with a `function/` directory:
//!
//! - `function/signature.json`: the signature in LeetCode's metadata schema ([`Signature`]);
//! - `function/config.yaml` (optional): `compare` (`exact`, `any_order`, `any_order_deep`,
//!   `set`, `float`, `checker`), `absolute_tolerance` and `relative_tolerance`;
//! - `function/starter/<language code>.<ext>` (optional): starter code replacing the
//!   generated one (`cpp.cpp`, `java.java`, `python3.py`, `javascript.js`, `go.go`, `rust.rs`);
//! - each test case's `.in` holds one JSON value per line, one line per parameter (LeetCode's
//!   test case format), or, for a design class, two lines: the operations and their
//!   arguments; its `.ans` holds the expected value (for a design class, the array of every
//!   call's result, `null` for the constructor and `void` methods).
//!
//! The trust boundary: the sandbox receives only the arguments. The harness reports each
//! returned value on a channel of its own (descriptor 3), the supervisor stamps each report
//! with the kernel's CPU accounting, and the value is parsed against the declared type and
//! compared here, outside the sandbox. See `judging` for the protocol.

mod execute;
mod harness;
pub(crate) mod judging;
mod pch;
pub mod signature;
pub mod types;
pub mod value;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

pub use execute::{FunctionExecution, MAX_CASES};
pub use harness::HarnessLanguage;
pub use signature::{Method, Param, Signature};
pub use types::Type;
pub use value::{Canon, Compare, CompareMode, Difference, Mismatch, Source};

use crate::package::PackageError;

/// A function problem's configuration, loaded from its package.
#[derive(Debug, Clone)]
pub struct FunctionSpec {
    pub signature: Signature,
    pub compare: Compare,
    /// Starter code the package gives instead of the generated one, by language code.
    pub starters: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    compare: Option<String>,
    absolute_tolerance: Option<f64>,
    relative_tolerance: Option<f64>,
}

/// One test case's arguments, as the harness reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseInput {
    /// One line of JSON: `[arg0,arg1,...]`, or `[[operations],[[args],...]]` for a design
    /// class.
    pub line: String,
    /// A design class's operations (their results' types follow from them).
    pub operations: Vec<String>,
}

impl FunctionSpec {
    /// The `function/` directory of a package, if it has one.
    pub fn load(package: &Path) -> Result<Option<FunctionSpec>, PackageError> {
        let dir = package.join("function");
        if !dir.exists() {
            return Ok(None);
        }
        let signature_path = "function/signature.json";
        let text = std::fs::read_to_string(dir.join("signature.json"))
            .map_err(|e| PackageError::new(signature_path, format!("cannot read: {e}")))?;
        let signature =
            Signature::parse(&text).map_err(|reason| PackageError::new(signature_path, reason))?;
        let compare = match std::fs::read_to_string(dir.join("config.yaml")) {
            Ok(text) => compare_of(&text, &signature)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Compare::exact(),
            Err(e) => {
                return Err(PackageError::new(
                    "function/config.yaml",
                    format!("cannot read: {e}"),
                ))
            }
        };
        let mut starters = BTreeMap::new();
        if let Ok(entries) = std::fs::read_dir(dir.join("starter")) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let file = format!("function/starter/{name}");
                let language = HarnessLanguage::ALL
                    .into_iter()
                    .find(|l| l.starter_file() == name)
                    .ok_or_else(|| {
                        let names: Vec<&str> = HarnessLanguage::ALL
                            .iter()
                            .map(|l| l.starter_file())
                            .collect();
                        PackageError::new(
                            &file,
                            format!("not a starter file (expected one of {})", names.join(", ")),
                        )
                    })?;
                let text = std::fs::read_to_string(entry.path())
                    .map_err(|e| PackageError::new(&file, format!("cannot read: {e}")))?;
                starters.insert(language.code().to_string(), text);
            }
        }
        Ok(Some(FunctionSpec {
            signature,
            compare,
            starters,
        }))
    }

    /// The starter code shown in the editor for `language` (one of the harness languages).
    pub fn starter(&self, language: HarnessLanguage) -> String {
        self.starters
            .get(language.code())
            .cloned()
            .unwrap_or_else(|| harness::starter(language, &self.signature))
    }

    /// Parses a test case's `.in` text (or arguments a user typed) against the signature.
    pub fn parse_input(&self, text: &str) -> Result<CaseInput, String> {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let parse = |line: &str, what: &str| -> Result<Value, String> {
            serde_json::from_str(line).map_err(|e| format!("{what}: not one JSON value: {e}"))
        };
        match &self.signature {
            Signature::Function { params, .. } => {
                if lines.len() != params.len() {
                    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                    return Err(format!(
                        "expected {} line(s), one JSON value per parameter ({}), found {}",
                        params.len(),
                        names.join(", "),
                        lines.len()
                    ));
                }
                let mut args = Vec::with_capacity(params.len());
                for (i, (line, param)) in lines.iter().zip(params).enumerate() {
                    let what = format!("line {} ({})", i + 1, param.name);
                    let value = parse(line, &what)?;
                    value::check(&param.ty, &value, Source::Data)
                        .map_err(|m| format!("{what}: {m}"))?;
                    args.push(value);
                }
                Ok(CaseInput {
                    line: Value::Array(args).to_string(),
                    operations: Vec::new(),
                })
            }
            Signature::Design {
                class, constructor, ..
            } => {
                let [ops_line, args_line] = lines.as_slice() else {
                    return Err(format!(
                        "expected 2 lines (the operations, then their arguments), found {}",
                        lines.len()
                    ));
                };
                let ops = parse(ops_line, "line 1 (operations)")?;
                let args = parse(args_line, "line 2 (arguments)")?;
                let operations: Vec<String> = match &ops {
                    Value::Array(items) => items
                        .iter()
                        .map(|item| item.as_str().map(str::to_string))
                        .collect::<Option<_>>()
                        .ok_or("line 1 (operations): expected an array of strings")?,
                    _ => return Err("line 1 (operations): expected an array of strings".into()),
                };
                let Value::Array(arg_lists) = &args else {
                    return Err("line 2 (arguments): expected an array of argument arrays".into());
                };
                if operations.len() != arg_lists.len() {
                    return Err(format!(
                        "{} operations but {} argument lists",
                        operations.len(),
                        arg_lists.len()
                    ));
                }
                if operations.first() != Some(class) {
                    return Err(format!(
                        "the first operation must be the constructor {class:?}"
                    ));
                }
                for (i, (op, list)) in operations.iter().zip(arg_lists).enumerate() {
                    let params = if i == 0 {
                        constructor
                    } else {
                        &self
                            .signature
                            .method(op)
                            .ok_or_else(|| {
                                format!("operation {i} ({op:?}) is not a method of {class}")
                            })?
                            .params
                    };
                    let Value::Array(values) = list else {
                        return Err(format!(
                            "arguments of operation {i} ({op}): expected an array"
                        ));
                    };
                    if values.len() != params.len() {
                        return Err(format!(
                            "operation {i} ({op}) takes {} argument(s), found {}",
                            params.len(),
                            values.len()
                        ));
                    }
                    for (value, param) in values.iter().zip(params) {
                        value::check(&param.ty, value, Source::Data).map_err(|m| {
                            format!("operation {i} ({op}), argument {}: {m}", param.name)
                        })?;
                    }
                }
                Ok(CaseInput {
                    line: Value::Array(vec![ops, args]).to_string(),
                    operations,
                })
            }
        }
    }

    /// Checks a value against what `case` returns: the answer file at upload
    /// ([`Source::Data`]), or what a harness reported ([`Source::Returned`]).
    pub fn check_result(
        &self,
        case: &CaseInput,
        value: &Value,
        source: Source,
    ) -> Result<Canon, Mismatch> {
        match &self.signature {
            Signature::Function {
                params,
                ret,
                output_param,
                ..
            } => {
                let ty = output_param.map_or(ret, |i| &params[i].ty);
                value::check(ty, value, source)
            }
            Signature::Design { .. } => {
                let results = match value {
                    Value::Array(items) if items.len() == case.operations.len() => items,
                    Value::Array(items) => {
                        return Err(Mismatch {
                            path: String::new(),
                            reason: format!(
                                "expected {} results (one per operation), found {}",
                                case.operations.len(),
                                items.len()
                            ),
                        })
                    }
                    _ => {
                        return Err(Mismatch {
                            path: String::new(),
                            reason: "expected an array of results".into(),
                        })
                    }
                };
                let mut out = Vec::with_capacity(results.len());
                for (i, (op, result)) in case.operations.iter().zip(results).enumerate() {
                    let ty = match self.signature.method(op) {
                        Some(method) if i > 0 => &method.ret,
                        _ => &Type::Void,
                    };
                    out.push(value::check(ty, result, source).map_err(|m| Mismatch {
                        path: format!("[{i}]{}", m.path),
                        reason: m.reason,
                    })?);
                }
                Ok(Canon::List(out))
            }
        }
    }

    /// Compares a returned value with the expected one; `Err` says where they differ (for a
    /// design class, in which call: `call 5 (get)`).
    pub fn compare(
        &self,
        case: &CaseInput,
        expected: &Canon,
        actual: &Canon,
    ) -> Result<(), String> {
        self.compare.judge(expected, actual).map_err(|difference| {
            match (&self.signature, difference.path.split_first()) {
                (Signature::Design { .. }, Some((&call, rest))) => {
                    let op = case.operations.get(call).map_or("", String::as_str);
                    let inside = if rest.is_empty() {
                        String::new()
                    } else {
                        format!(", position {}", value::path_text(rest))
                    };
                    format!(
                        "{} in the result of call {call} ({op}){inside}",
                        difference.what
                    )
                }
                _ => difference.to_string(),
            }
        })
    }

    /// Checks one test case of the package: its input and its answer.
    pub fn check_case(
        &self,
        input: &Path,
        answer: &Path,
        package: &Path,
    ) -> Result<(CaseInput, Canon), PackageError> {
        let relative = |path: &Path| path.strip_prefix(package).unwrap_or(path).to_path_buf();
        let text = std::fs::read_to_string(input)
            .map_err(|e| PackageError::new(relative(input), format!("cannot read: {e}")))?;
        let case = self
            .parse_input(&text)
            .map_err(|reason| PackageError::new(relative(input), reason))?;
        let expected = std::fs::read_to_string(answer)
            .map_err(|e| PackageError::new(relative(answer), format!("cannot read: {e}")))?;
        let value: Value = serde_json::from_str(&expected)
            .map_err(|e| PackageError::new(relative(answer), format!("not one JSON value: {e}")))?;
        let canon = self
            .check_result(&case, &value, Source::Data)
            .map_err(|m| PackageError::new(relative(answer), m.to_string()))?;
        Ok((case, canon))
    }
}

fn compare_of(text: &str, signature: &Signature) -> Result<Compare, PackageError> {
    let file = "function/config.yaml";
    let config: Config = serde_yaml_ng::from_str(text)
        .map_err(|e| PackageError::new(file, format!("not a function configuration: {e}")))?;
    let mode = match config.compare.as_deref() {
        None => CompareMode::Exact,
        Some(text) => CompareMode::parse(text).ok_or_else(|| {
            PackageError::key(
                file,
                "compare",
                format!(
                    "{text:?} is not one of exact, any_order, any_order_deep, set, float, checker"
                ),
            )
        })?,
    };
    if matches!(signature, Signature::Design { .. })
        && matches!(
            mode,
            CompareMode::AnyOrder | CompareMode::AnyOrderDeep | CompareMode::Set
        )
    {
        return Err(PackageError::key(
            file,
            "compare",
            "a design class's results are one per call, in order: only exact, float or checker",
        ));
    }
    for (key, value) in [
        ("absolute_tolerance", config.absolute_tolerance),
        ("relative_tolerance", config.relative_tolerance),
    ] {
        if value.is_some_and(|v| !(v.is_finite() && v >= 0.0)) {
            return Err(PackageError::key(file, key, "must be a finite number ≥ 0"));
        }
    }
    let configured = config.absolute_tolerance.is_some() || config.relative_tolerance.is_some();
    let tolerance = if mode == CompareMode::Float || configured {
        Some((
            config
                .absolute_tolerance
                .unwrap_or(value::DEFAULT_TOLERANCE),
            config
                .relative_tolerance
                .unwrap_or(value::DEFAULT_TOLERANCE),
        ))
    } else {
        None
    };
    Ok(Compare { mode, tolerance })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(signature: &str) -> FunctionSpec {
        FunctionSpec {
            signature: Signature::parse(signature).unwrap(),
            compare: Compare::exact(),
            starters: BTreeMap::new(),
        }
    }

    const TWO_SUM: &str = r#"{"name": "twoSum", "params": [{"name": "nums", "type": "integer[]"},
        {"name": "target", "type": "integer"}], "return": {"type": "integer[]"}}"#;
    const LRU: &str = r#"{"classname": "LRUCache", "constructor": {"params": [{"name": "capacity",
        "type": "integer"}]}, "methods": [{"name": "get", "params": [{"name": "key", "type":
        "integer"}], "return": {"type": "integer"}}, {"name": "put", "params": [{"name": "key",
        "type": "integer"}, {"name": "value", "type": "integer"}], "return": {"type": "void"}}]}"#;

    #[test]
    fn function_cases_are_one_value_per_line() {
        let spec = spec(TWO_SUM);
        let case = spec.parse_input("[2,7,11,15]\n9\n").unwrap();
        assert_eq!(case.line, "[[2,7,11,15],9]");
        let cases = [
            (
                "[2,7]\n",
                "expected 2 line(s), one JSON value per parameter (nums, target), found 1",
            ),
            ("[2,7]\n9\n1\n", "found 3"),
            (
                "[2,7]\n2147483648\n",
                "line 2 (target): outside the integer (32-bit) range",
            ),
            (
                "[2,7]\nnull\n",
                "line 2 (target): expected an integer (32-bit), found null",
            ),
            ("[2,7\n9\n", "line 1 (nums): not one JSON value"),
        ];
        for (text, reason) in cases {
            let err = spec.parse_input(text).unwrap_err();
            assert!(err.contains(reason), "{text:?}: {err}");
        }
    }

    #[test]
    fn design_cases_name_the_operation_at_fault() {
        let spec = spec(LRU);
        let case = spec
            .parse_input("[\"LRUCache\",\"put\",\"get\"]\n[[2],[1,1],[1]]\n")
            .unwrap();
        assert_eq!(case.operations, ["LRUCache", "put", "get"]);
        let expected: Value = serde_json::from_str("[null,null,1]").unwrap();
        spec.check_result(&case, &expected, Source::Data).unwrap();
        let wrong: Value = serde_json::from_str("[null,1,1]").unwrap();
        assert_eq!(
            spec.check_result(&case, &wrong, Source::Data)
                .unwrap_err()
                .to_string(),
            "at [1]: expected null (the method returns nothing), found an integer"
        );
        let cases = [
            (
                "[\"put\"]\n[[1,1]]",
                "the first operation must be the constructor",
            ),
            (
                "[\"LRUCache\",\"del\"]\n[[2],[1]]",
                "operation 1 (\"del\") is not a method",
            ),
            (
                "[\"LRUCache\",\"put\"]\n[[2],[1]]",
                "operation 1 (put) takes 2 argument(s), found 1",
            ),
            (
                "[\"LRUCache\"]\n[[2],[1]]",
                "1 operations but 2 argument lists",
            ),
            (
                "[\"LRUCache\"]\n[[true]]",
                "argument capacity: expected an integer",
            ),
        ];
        for (text, reason) in cases {
            let err = spec.parse_input(text).unwrap_err();
            assert!(err.contains(reason), "{text:?}: {err}");
        }
    }

    #[test]
    fn packages_may_replace_the_generated_starters() {
        let dir = tempfile::tempdir().unwrap();
        let function = dir.path().join("function");
        std::fs::create_dir_all(function.join("starter")).unwrap();
        std::fs::write(function.join("signature.json"), TWO_SUM).unwrap();
        std::fs::write(function.join("starter/python3.py"), "# ours\n").unwrap();
        let spec = FunctionSpec::load(dir.path()).unwrap().unwrap();
        assert_eq!(spec.starter(HarnessLanguage::Python), "# ours\n");
        assert!(spec
            .starter(HarnessLanguage::Go)
            .contains("func twoSum(nums []int, target int) []int {"));
        std::fs::write(function.join("starter/python.py"), "").unwrap();
        let err = FunctionSpec::load(dir.path()).unwrap_err();
        assert_eq!(err.file, std::path::Path::new("function/starter/python.py"));
        assert!(err.reason.contains("python3.py"), "{err}");
        assert!(FunctionSpec::load(&dir.path().join("nowhere"))
            .unwrap()
            .is_none());
    }

    #[test]
    fn comparison_settings() {
        let sig = Signature::parse(TWO_SUM).unwrap();
        assert_eq!(
            compare_of("compare: float\n", &sig).unwrap().tolerance,
            Some((1e-5, 1e-5))
        );
        assert_eq!(
            compare_of("compare: exact\nabsolute_tolerance: 0.5\n", &sig)
                .unwrap()
                .tolerance,
            Some((0.5, 1e-5))
        );
        assert!(compare_of("compare: sorted\n", &sig).is_err());
        assert!(compare_of("comparison: exact\n", &sig).is_err());
        assert!(compare_of("compare: float\nabsolute_tolerance: -1\n", &sig).is_err());
        let lru = Signature::parse(LRU).unwrap();
        assert!(compare_of("compare: any_order\n", &lru).is_err());
    }
}
