//! Values on the trusted side: a JSON value checked against its declared type and brought to a
//! canonical form (integers exact, doubles as `f64`, a null structure as `[]`, a tree in level
//! order without trailing nulls), and the comparison modes a problem may choose.
//!
//! The same checks admit test data at upload (strictly: no nulls for structures, every
//! integer in range) and read what a harness reported (leniently where a language's
//! serialisation differs: `2.0` for an integer, `null` for an empty list).

use std::cmp::Ordering;

use serde_json::Value;

use super::types::Type;

/// A value in canonical form.
#[derive(Debug, Clone, PartialEq)]
pub enum Canon {
    /// A hole in a tree's level order, or a void call's result in a design-class answer.
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Canon>),
}

/// Where a value does not fit its type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{reason}", if path.is_empty() { String::new() } else { format!("at {path}: ") })]
pub struct Mismatch {
    /// `[2][0]`; empty for the value itself.
    pub path: String,
    pub reason: String,
}

/// Who wrote the value being checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Test data at upload, or arguments a user typed: nothing is forgiven.
    Data,
    /// A harness's report of a returned value: a null structure is `[]`, an integral
    /// `2.0` is the integer 2, and non-finite doubles are the strings
    /// `"NaN"`, `"Infinity"`, `"-Infinity"`.
    Returned,
}

/// Checks `value` against `ty` and returns its canonical form.
pub fn check(ty: &Type, value: &Value, source: Source) -> Result<Canon, Mismatch> {
    let mut path = String::new();
    check_at(ty, value, source, &mut path)
}

fn mismatch(path: &str, reason: impl Into<String>) -> Mismatch {
    Mismatch {
        path: path.to_string(),
        reason: reason.into(),
    }
}

/// A short description of a JSON value's kind, never its content (hidden data stays hidden).
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a fractional number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The exact integer a JSON number stands for, if it stands for one.
fn integer_of(value: &Value, source: Source) -> Option<i128> {
    let Value::Number(n) = value else {
        return None;
    };
    if let Some(i) = n.as_i64() {
        return Some(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Some(i128::from(u));
    }
    // `2.0` from a language that prints integers as doubles; only where it is exact.
    let f = n.as_f64()?;
    (source == Source::Returned && f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0)
        .then_some(f as i128)
}

fn check_at(
    ty: &Type,
    value: &Value,
    source: Source,
    path: &mut String,
) -> Result<Canon, Mismatch> {
    let expected = |what: &str| mismatch(path, format!("expected {what}, found {}", kind(value)));
    match ty {
        Type::Integer | Type::Long => {
            let (low, high, name, article) = if *ty == Type::Integer {
                (
                    i128::from(i32::MIN),
                    i128::from(i32::MAX),
                    "integer (32-bit)",
                    "an",
                )
            } else {
                (
                    i128::from(i64::MIN),
                    i128::from(i64::MAX),
                    "long (64-bit)",
                    "a",
                )
            };
            match integer_of(value, source) {
                Some(i) if (low..=high).contains(&i) => Ok(Canon::Int(i as i64)),
                Some(_) => Err(mismatch(path, format!("outside the {name} range"))),
                None if matches!(value, Value::Number(_)) => Err(mismatch(
                    path,
                    format!("expected an exact {name}, found a fractional number"),
                )),
                None => Err(expected(&format!("{article} {name}"))),
            }
        }
        Type::Double => match value {
            Value::Number(n) => n
                .as_f64()
                .map(Canon::Float)
                .ok_or_else(|| expected("a double")),
            Value::String(s) if source == Source::Returned => match s.as_str() {
                "NaN" => Ok(Canon::Float(f64::NAN)),
                "Infinity" => Ok(Canon::Float(f64::INFINITY)),
                "-Infinity" => Ok(Canon::Float(f64::NEG_INFINITY)),
                _ => Err(expected("a double")),
            },
            _ => Err(expected("a double")),
        },
        Type::Boolean => match value {
            Value::Bool(b) => Ok(Canon::Bool(*b)),
            _ => Err(expected("a boolean")),
        },
        Type::Character => match value {
            // Test data holds ASCII characters: C++ and Go spell a character as one byte.
            Value::String(s)
                if source == Source::Data && s.chars().count() == 1 && !s.is_ascii() =>
            {
                Err(mismatch(path, "a character in test data must be ASCII"))
            }
            Value::String(s) if s.chars().count() == 1 => Ok(Canon::Str(s.clone())),
            Value::String(_) => Err(mismatch(path, "expected a string of exactly one character")),
            _ => Err(expected("a one-character string")),
        },
        Type::String => match value {
            Value::String(s) => Ok(Canon::Str(s.clone())),
            _ => Err(expected("a string")),
        },
        Type::Void => match value {
            Value::Null => Ok(Canon::Null),
            _ => Err(expected("null (the method returns nothing)")),
        },
        Type::Array { element, .. } => {
            let items = structure_items(value, source, path, "an array")?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(check_at(element, item, source, path)?);
                path.truncate(len);
            }
            Ok(Canon::List(out))
        }
        Type::ListNode => {
            let items = structure_items(value, source, path, "an array (a linked list)")?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(check_at(&Type::Integer, item, source, path)?);
                path.truncate(len);
            }
            Ok(Canon::List(out))
        }
        Type::TreeNode => {
            let items = structure_items(value, source, path, "an array (a tree in level order)")?;
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(match item {
                    Value::Null => Canon::Null,
                    other => check_at(&Type::Integer, other, source, path)?,
                });
                path.truncate(len);
            }
            while out.last() == Some(&Canon::Null) {
                out.pop();
            }
            check_level_order(&out).map_err(|reason| mismatch(path, reason))?;
            Ok(Canon::List(out))
        }
    }
}

/// The items of a structure: a JSON array (or, returned, `null` for none).
fn structure_items<'v>(
    value: &'v Value,
    source: Source,
    path: &str,
    what: &str,
) -> Result<&'v [Value], Mismatch> {
    match value {
        Value::Array(items) => Ok(items),
        Value::Null if source == Source::Returned => Ok(&[]),
        other => Err(mismatch(
            path,
            format!("expected {what}, found {}", kind(other)),
        )),
    }
}

/// A level order describes a tree when its root is not a hole and every node it names has
/// a parent: the i-th non-null node's children are the next two entries.
fn check_level_order(items: &[Canon]) -> Result<(), String> {
    if items.first() == Some(&Canon::Null) {
        return Err("a tree's level order cannot start with null (use [] for no tree)".into());
    }
    // Entries 1.. are consumed two per node in order; each node is an entry already read.
    let nodes = items.iter().filter(|c| **c != Canon::Null).count();
    let slots = 1 + 2 * nodes;
    if items.len() > slots {
        return Err(format!(
            "the level order has {} entries, more than its {nodes} nodes can hold",
            items.len()
        ));
    }
    // A child slot exists only once its parent was read: with k nodes read among the first
    // i entries, entry i needs i <= 2k.
    let mut read = 0usize;
    for (i, item) in items.iter().enumerate() {
        if i > 0 && i > 2 * read {
            return Err(format!("entry {i} of the level order has no parent"));
        }
        if *item != Canon::Null {
            read += 1;
        }
    }
    Ok(())
}

/// How a returned value is compared with the expected one.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompareMode {
    /// Equal values (doubles equal as `f64`, unless a tolerance is configured).
    Exact,
    /// The top-level array in any order (a multiset).
    AnyOrder,
    /// Arrays in any order at every level.
    AnyOrderDeep,
    /// The top-level array as a set: order and duplicates do not matter.
    Set,
    /// Equal, doubles within the tolerance.
    Float,
    /// The package's output validator decides (a trusted program, run in the sandbox).
    Checker,
}

impl CompareMode {
    pub fn parse(text: &str) -> Option<CompareMode> {
        Some(match text {
            "exact" => CompareMode::Exact,
            "any_order" => CompareMode::AnyOrder,
            "any_order_deep" => CompareMode::AnyOrderDeep,
            "set" => CompareMode::Set,
            "float" => CompareMode::Float,
            "checker" => CompareMode::Checker,
            _ => return None,
        })
    }
}

/// A comparison: its mode and the tolerance for doubles.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Compare {
    pub mode: CompareMode,
    /// Absolute and relative tolerance on double-typed positions; `None`: exact.
    pub tolerance: Option<(f64, f64)>,
}

/// The default tolerance of `float` comparisons.
pub const DEFAULT_TOLERANCE: f64 = 1e-5;

impl Compare {
    pub fn exact() -> Self {
        Self {
            mode: CompareMode::Exact,
            tolerance: None,
        }
    }

    /// Whether `actual` is an accepted answer when `expected` is the reference; `Err` names
    /// the first position that differs (never a value: hidden answers stay hidden).
    pub fn judge(&self, expected: &Canon, actual: &Canon) -> Result<(), Difference> {
        let (expected, actual) = match self.mode {
            CompareMode::Exact | CompareMode::Float | CompareMode::Checker => {
                (expected.clone(), actual.clone())
            }
            CompareMode::AnyOrder => (sorted_top(expected, false), sorted_top(actual, false)),
            CompareMode::Set => (sorted_top(expected, true), sorted_top(actual, true)),
            CompareMode::AnyOrderDeep => (sorted_deep(expected), sorted_deep(actual)),
        };
        let mut path = Vec::new();
        self.equal(&expected, &actual, &mut path)
            .map_err(|what| Difference {
                what,
                path,
                any_order: match self.mode {
                    CompareMode::AnyOrder | CompareMode::AnyOrderDeep => " (compared in any order)",
                    CompareMode::Set => " (compared as a set)",
                    _ => "",
                },
            })
    }

    fn equal(
        &self,
        expected: &Canon,
        actual: &Canon,
        path: &mut Vec<usize>,
    ) -> Result<(), &'static str> {
        match (expected, actual) {
            (Canon::List(e), Canon::List(a)) => {
                for (i, (e, a)) in e.iter().zip(a).enumerate() {
                    path.push(i);
                    self.equal(e, a, path)?;
                    path.pop();
                }
                match e.len().cmp(&a.len()) {
                    Ordering::Equal => Ok(()),
                    Ordering::Less => Err("more elements than expected"),
                    Ordering::Greater => Err("fewer elements than expected"),
                }
            }
            (Canon::Float(e), Canon::Float(a)) => {
                if floats_equal(*e, *a, self.tolerance) {
                    Ok(())
                } else {
                    Err("a different number")
                }
            }
            (Canon::Float(e), Canon::Int(a)) | (Canon::Int(a), Canon::Float(e)) => {
                if floats_equal(*e, *a as f64, self.tolerance) {
                    Ok(())
                } else {
                    Err("a different number")
                }
            }
            (e, a) if e == a => Ok(()),
            _ => Err("a different value"),
        }
    }
}

/// Where a returned value first differs from the expected one: what differs and the path
/// of indices to it (never the values themselves).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub what: &'static str,
    pub path: Vec<usize>,
    /// How the comparison ordered the arrays, for the message.
    pub any_order: &'static str,
}

/// `[1][2]`.
pub fn path_text(path: &[usize]) -> String {
    path.iter().map(|i| format!("[{i}]")).collect()
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            write!(f, "{} at the value{}", self.what, self.any_order)
        } else {
            write!(
                f,
                "{} at position {}{}",
                self.what,
                path_text(&self.path),
                self.any_order
            )
        }
    }
}

fn floats_equal(expected: f64, actual: f64, tolerance: Option<(f64, f64)>) -> bool {
    if expected == actual {
        return true;
    }
    let Some((absolute, relative)) = tolerance else {
        return false;
    };
    let difference = (expected - actual).abs();
    difference <= absolute || difference <= relative * expected.abs()
}

/// A total order on canonical values (nulls, booleans, numbers, strings, lists), so that
/// order-insensitive comparisons can sort both sides.
fn order(a: &Canon, b: &Canon) -> Ordering {
    fn rank(c: &Canon) -> u8 {
        match c {
            Canon::Null => 0,
            Canon::Bool(_) => 1,
            Canon::Int(_) | Canon::Float(_) => 2,
            Canon::Str(_) => 3,
            Canon::List(_) => 4,
        }
    }
    match (a, b) {
        (Canon::Bool(x), Canon::Bool(y)) => x.cmp(y),
        (Canon::Int(x), Canon::Int(y)) => x.cmp(y),
        (Canon::Int(x), Canon::Float(y)) => (*x as f64).total_cmp(y),
        (Canon::Float(x), Canon::Int(y)) => x.total_cmp(&(*y as f64)),
        (Canon::Float(x), Canon::Float(y)) => x.total_cmp(y),
        (Canon::Str(x), Canon::Str(y)) => x.cmp(y),
        (Canon::List(x), Canon::List(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = order(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

fn sorted_top(value: &Canon, dedup: bool) -> Canon {
    match value {
        Canon::List(items) => {
            let mut items = items.clone();
            items.sort_by(order);
            if dedup {
                items.dedup_by(|a, b| order(a, b) == Ordering::Equal);
            }
            Canon::List(items)
        }
        other => other.clone(),
    }
}

fn sorted_deep(value: &Canon) -> Canon {
    match value {
        Canon::List(items) => {
            let mut items: Vec<Canon> = items.iter().map(sorted_deep).collect();
            items.sort_by(order);
            Canon::List(items)
        }
        other => other.clone(),
    }
}

impl Canon {
    /// The canonical JSON text (what is shown as "expected" and "actual").
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Canon::Null => out.push_str("null"),
            Canon::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Canon::Int(i) => out.push_str(&i.to_string()),
            Canon::Float(f) if f.is_nan() => out.push_str("\"NaN\""),
            Canon::Float(f) if f.is_infinite() => out.push_str(if *f > 0.0 {
                "\"Infinity\""
            } else {
                "\"-Infinity\""
            }),
            Canon::Float(f) => {
                // Shortest text that reads back as the same double, always with a point.
                let text = format!("{f:?}");
                out.push_str(&text);
            }
            Canon::Str(s) => out.push_str(&Value::String(s.clone()).to_string()),
            Canon::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(s: &str) -> Type {
        Type::parse(s).unwrap()
    }

    #[test]
    fn data_is_checked_strictly_with_the_exact_reason() {
        let cases: Vec<(&str, Value, &str)> = vec![
            (
                "integer",
                json!(2147483648i64),
                "outside the integer (32-bit) range",
            ),
            (
                "integer",
                json!(-2147483649i64),
                "outside the integer (32-bit) range",
            ),
            (
                "integer",
                json!(2.0),
                "expected an exact integer (32-bit), found a fractional number",
            ),
            (
                "integer",
                json!(null),
                "expected an integer (32-bit), found null",
            ),
            (
                "long",
                json!("5"),
                "expected a long (64-bit), found a string",
            ),
            (
                "integer[]",
                json!([1, "2"]),
                "at [1]: expected an integer (32-bit), found a string",
            ),
            ("integer[]", json!(null), "expected an array, found null"),
            (
                "character",
                json!("ab"),
                "expected a string of exactly one character",
            ),
            ("boolean", json!(1), "expected a boolean, found an integer"),
            (
                "TreeNode",
                json!([null, 1]),
                "a tree's level order cannot start with null (use [] for no tree)",
            ),
            (
                "TreeNode",
                json!([1, null, null, 2]),
                "entry 3 of the level order has no parent",
            ),
            (
                "ListNode",
                json!([1, null]),
                "at [1]: expected an integer (32-bit), found null",
            ),
        ];
        for (ty, value, reason) in cases {
            let err = check(&t(ty), &value, Source::Data).unwrap_err();
            assert_eq!(err.to_string(), reason, "{ty} {value}");
        }
    }

    #[test]
    fn returned_values_are_canonicalised() {
        assert_eq!(
            check(&t("integer"), &json!(2.0), Source::Returned).unwrap(),
            Canon::Int(2)
        );
        assert_eq!(
            check(&t("integer[][]"), &json!(null), Source::Returned).unwrap(),
            Canon::List(vec![])
        );
        assert_eq!(
            check(
                &t("TreeNode"),
                &json!([1, null, 2, null, null]),
                Source::Returned
            )
            .unwrap(),
            Canon::List(vec![Canon::Int(1), Canon::Null, Canon::Int(2)])
        );
        let nan = check(&t("double"), &json!("NaN"), Source::Returned).unwrap();
        assert!(matches!(nan, Canon::Float(f) if f.is_nan()));
        assert!(check(&t("double"), &json!("NaN"), Source::Data).is_err());
        assert!(check(&t("string"), &json!(null), Source::Returned).is_err());
    }

    #[test]
    fn level_orders_from_leetcode_are_trees() {
        for tree in [
            json!([]),
            json!([1]),
            json!([3, 9, 20, null, null, 15, 7]),
            json!([1, null, 2, 3]),
            json!([5, 4, 8, 11, null, 13, 4, 7, 2, null, null, null, 1]),
        ] {
            check(&t("TreeNode"), &tree, Source::Data).unwrap();
        }
    }

    #[test]
    fn comparison_modes() {
        let v = |j: Value, ty: &str| check(&t(ty), &j, Source::Data).unwrap();
        let mode = |m| Compare {
            mode: m,
            tolerance: None,
        };
        let a = v(json!([[1, 2], [3]]), "integer[][]");
        let b = v(json!([[3], [1, 2]]), "integer[][]");
        let c = v(json!([[3], [2, 1]]), "integer[][]");
        assert!(mode(CompareMode::Exact).judge(&a, &b).is_err());
        assert!(mode(CompareMode::AnyOrder).judge(&a, &b).is_ok());
        assert!(mode(CompareMode::AnyOrder).judge(&a, &c).is_err());
        assert!(mode(CompareMode::AnyOrderDeep).judge(&a, &c).is_ok());
        let d = v(json!([1, 2, 2]), "integer[]");
        let e = v(json!([2, 1]), "integer[]");
        assert!(mode(CompareMode::Set).judge(&d, &e).is_ok());
        assert!(mode(CompareMode::AnyOrder).judge(&d, &e).is_err());

        let x = v(json!(0.1), "double");
        let y = check(&t("double"), &json!(0.100001), Source::Returned).unwrap();
        assert!(mode(CompareMode::Exact).judge(&x, &y).is_err());
        let float = Compare {
            mode: CompareMode::Float,
            tolerance: Some((DEFAULT_TOLERANCE, DEFAULT_TOLERANCE)),
        };
        assert!(float.judge(&x, &y).is_ok());
        let far = check(&t("double"), &json!(0.2), Source::Returned).unwrap();
        assert_eq!(
            float.judge(&x, &far).unwrap_err().to_string(),
            "a different number at the value"
        );
        let nan = check(&t("double"), &json!("NaN"), Source::Returned).unwrap();
        assert!(float.judge(&x, &nan).is_err());
    }

    #[test]
    fn mismatch_messages_name_positions_only() {
        let expected = check(&t("integer[]"), &json!([10, 20, 30]), Source::Data).unwrap();
        let shorter = check(&t("integer[]"), &json!([10, 20]), Source::Returned).unwrap();
        let other = check(&t("integer[]"), &json!([10, 21, 30]), Source::Returned).unwrap();
        let exact = Compare::exact();
        assert_eq!(
            exact.judge(&expected, &shorter).unwrap_err().to_string(),
            "fewer elements than expected at the value"
        );
        let message = exact.judge(&expected, &other).unwrap_err().to_string();
        assert_eq!(message, "a different value at position [1]");
        assert!(!message.contains("20") && !message.contains("21"));
    }

    #[test]
    fn canonical_json_reads_back() {
        let value = json!([1, -2.5, "a\"b", true, [], [null]]);
        let canon = Canon::List(vec![
            Canon::Int(1),
            Canon::Float(-2.5),
            Canon::Str("a\"b".into()),
            Canon::Bool(true),
            Canon::List(vec![]),
            Canon::List(vec![Canon::Null]),
        ]);
        let text = canon.to_json();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
        assert_eq!(Canon::Float(2.0).to_json(), "2.0");
    }
}
