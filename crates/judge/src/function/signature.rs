//! A function problem's signature in LeetCode's metadata schema (`function/signature.json`):
//! a function `{name, params: [{name, type}], return: {type}, output_param?}` or a design
//! class `{classname, constructor: {params}, methods: [{name, params, return}]}`.
//!
//! Keys LeetCode adds that mean nothing here (`manual`, `systemdesign`, `languages`,
//! `return.size`, `dealloc`, ...) are ignored. In-place problems name their output
//! parameter as `output_param: "matrix"`, or as LeetCode writes it, `output: {paramindex: 0}`.

use serde::Deserialize;
use serde_json::Value;

use super::types::Type;

/// A parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
}

/// A design class's method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Method {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Type,
}

/// What the user writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Signature {
    /// A method of `class Solution` (a free function in JavaScript and Go).
    Function {
        name: String,
        params: Vec<Param>,
        ret: Type,
        /// The parameter whose value after the call is the answer (in-place problems,
        /// which return `void`).
        output_param: Option<usize>,
    },
    /// A class called with an operation list and an argument list.
    Design {
        class: String,
        constructor: Vec<Param>,
        methods: Vec<Method>,
    },
}

#[derive(Deserialize)]
struct RawParam {
    name: String,
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Deserialize)]
struct RawReturn {
    #[serde(rename = "type")]
    ty: String,
}

#[derive(Deserialize)]
struct RawOutput {
    paramindex: usize,
}

#[derive(Deserialize)]
struct RawConstructor {
    #[serde(default)]
    params: Vec<RawParam>,
}

#[derive(Deserialize)]
struct RawMethod {
    name: String,
    #[serde(default)]
    params: Vec<RawParam>,
    #[serde(rename = "return")]
    ret: Option<RawReturn>,
}

#[derive(Deserialize)]
struct RawSignature {
    name: Option<String>,
    #[serde(default)]
    params: Vec<RawParam>,
    #[serde(rename = "return")]
    ret: Option<RawReturn>,
    output_param: Option<String>,
    output: Option<RawOutput>,
    classname: Option<String>,
    constructor: Option<RawConstructor>,
    #[serde(default)]
    methods: Vec<RawMethod>,
}

/// Words that cannot name a function, class, method or parameter in one of the harness
/// languages (C++, Java, Python, JavaScript, Go, Rust), and the names the harnesses use.
const RESERVED: &[&str] = &[
    // C++
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
    // Java
    "abstract",
    "assert",
    "boolean",
    "byte",
    "extends",
    "final",
    "finally",
    "implements",
    "import",
    "instanceof",
    "interface",
    "native",
    "package",
    "strictfp",
    "super",
    "synchronized",
    "throws",
    "transient",
    "var",
    "record",
    "yield",
    "null",
    // Python
    "False",
    "None",
    "True",
    "as",
    "async",
    "await",
    "def",
    "del",
    "elif",
    "except",
    "from",
    "global",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "pass",
    "raise",
    "with",
    "self",
    // JavaScript
    "debugger",
    "function",
    "let",
    "typeof",
    "arguments",
    "eval",
    "constructor",
    "prototype",
    // Go (and the predeclared types its signatures use)
    "chan",
    "defer",
    "fallthrough",
    "func",
    "go",
    "map",
    "range",
    "select",
    "type",
    "int64",
    "float64",
    "string",
    "init",
    "main",
    "Constructor",
    // Rust
    "crate",
    "fn",
    "impl",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "Self",
    "trait",
    "unsafe",
    "use",
    "where",
    "dyn",
    "become",
    "box",
    "macro",
    "override",
    "priv",
    "unsized",
    "i32",
    "i64",
    "f64",
    "String",
    "Vec",
    "Option",
    "Box",
    "Rc",
    "RefCell",
    // the harnesses' own names
    "Solution",
    "ListNode",
    "TreeNode",
    "Main",
    "List",
];

fn check_identifier(what: &str, name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "{what} {name:?} is not an identifier (ASCII letters, digits and _, not starting with a digit)"
        ));
    }
    if RESERVED.contains(&name) || name.starts_with("uc_") || name.starts_with("UC_") {
        return Err(format!(
            "{what} {name:?} is reserved in one of the harness languages (or by the harness)"
        ));
    }
    Ok(())
}

fn params(raw: Vec<RawParam>, owner: &str) -> Result<Vec<Param>, String> {
    let mut out: Vec<Param> = Vec::with_capacity(raw.len());
    for p in raw {
        check_identifier(&format!("parameter of {owner}"), &p.name)?;
        if out.iter().any(|q| q.name == p.name) {
            return Err(format!("{owner} has two parameters named {:?}", p.name));
        }
        let ty = Type::parse(&p.ty).map_err(|e| format!("parameter {} of {owner}: {e}", p.name))?;
        if ty == Type::Void {
            return Err(format!("parameter {} of {owner} cannot be void", p.name));
        }
        out.push(Param { name: p.name, ty });
    }
    Ok(out)
}

fn return_type(raw: Option<RawReturn>, owner: &str) -> Result<Type, String> {
    match raw {
        None => Ok(Type::Void),
        Some(r) => Type::parse(&r.ty).map_err(|e| format!("the return type of {owner}: {e}")),
    }
}

impl Signature {
    /// Parses and checks `signature.json`; `Err` is the reason, for the package's error.
    pub fn parse(text: &str) -> Result<Signature, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let raw: RawSignature =
            serde_json::from_value(value).map_err(|e| format!("not a signature: {e}"))?;
        match (raw.name, raw.classname) {
            (Some(_), Some(_)) => Err(
                "give either `name` (a function) or `classname` (a design class), not both".into(),
            ),
            (None, None) => {
                Err("missing `name` (a function) or `classname` (a design class)".into())
            }
            (Some(name), None) => {
                check_identifier("function name", &name)?;
                let params = params(raw.params, &name)?;
                let ret = return_type(raw.ret, &name)?;
                let output_param = match (raw.output_param, raw.output) {
                    (Some(_), Some(_)) => {
                        return Err("give `output_param` or `output.paramindex`, not both".into())
                    }
                    (Some(param), None) => Some(
                        params
                            .iter()
                            .position(|p| p.name == param)
                            .ok_or_else(|| format!("output_param {param:?} is not a parameter"))?,
                    ),
                    (None, Some(output)) => {
                        if output.paramindex >= params.len() {
                            return Err(format!(
                                "output.paramindex {} is out of range ({} parameters)",
                                output.paramindex,
                                params.len()
                            ));
                        }
                        Some(output.paramindex)
                    }
                    (None, None) => None,
                };
                match output_param {
                    Some(index) => {
                        if ret != Type::Void {
                            return Err("an in-place function (output_param) returns void".into());
                        }
                        if !matches!(params[index].ty, Type::Array { .. }) {
                            return Err(format!(
                                "output parameter {} must be an array to be changed in place",
                                params[index].name
                            ));
                        }
                    }
                    None if ret == Type::Void => {
                        return Err(
                            "a function returning void needs output_param (the parameter it changes in place)"
                                .into(),
                        )
                    }
                    None => {}
                }
                Ok(Signature::Function {
                    name,
                    params,
                    ret,
                    output_param,
                })
            }
            (None, Some(class)) => {
                check_identifier("class name", &class)?;
                let constructor = params(
                    raw.constructor.map(|c| c.params).unwrap_or_default(),
                    &format!("the constructor of {class}"),
                )?;
                if raw.methods.is_empty() {
                    return Err(format!("design class {class} has no methods"));
                }
                let mut methods: Vec<Method> = Vec::new();
                for m in raw.methods {
                    check_identifier("method name", &m.name)?;
                    if m.name == class || methods.iter().any(|x| x.name == m.name) {
                        return Err(format!("method name {:?} is used twice", m.name));
                    }
                    let owner = format!("{class}.{}", m.name);
                    methods.push(Method {
                        params: params(m.params, &owner)?,
                        ret: return_type(m.ret, &owner)?,
                        name: m.name,
                    });
                }
                Ok(Signature::Design {
                    class,
                    constructor,
                    methods,
                })
            }
        }
    }

    /// Every type the signature mentions, parameters and results.
    pub fn types(&self) -> Vec<&Type> {
        match self {
            Signature::Function { params, ret, .. } => {
                params.iter().map(|p| &p.ty).chain([ret]).collect()
            }
            Signature::Design {
                constructor,
                methods,
                ..
            } => constructor
                .iter()
                .map(|p| &p.ty)
                .chain(
                    methods
                        .iter()
                        .flat_map(|m| m.params.iter().map(|p| &p.ty).chain([&m.ret])),
                )
                .collect(),
        }
    }

    /// Whether the user's code needs the `ListNode` (or `TreeNode`) definition.
    pub fn uses(&self, node: &Type) -> bool {
        self.types().iter().any(|t| t.mentions(node))
    }

    /// The signature in LeetCode's schema, normalised (what the API shows).
    pub fn to_json(&self) -> Value {
        let params = |params: &[Param]| -> Value {
            params
                .iter()
                .map(|p| serde_json::json!({"name": p.name, "type": p.ty.to_string()}))
                .collect()
        };
        match self {
            Signature::Function {
                name,
                params: ps,
                ret,
                output_param,
            } => {
                let mut out = serde_json::json!({
                    "name": name,
                    "params": params(ps),
                    "return": {"type": ret.to_string()},
                });
                if let Some(i) = output_param {
                    out["output_param"] = Value::String(ps[*i].name.clone());
                }
                out
            }
            Signature::Design {
                class,
                constructor,
                methods,
            } => serde_json::json!({
                "classname": class,
                "constructor": {"params": params(constructor)},
                "methods": methods.iter().map(|m| serde_json::json!({
                    "name": m.name,
                    "params": params(&m.params),
                    "return": {"type": m.ret.to_string()},
                })).collect::<Vec<_>>(),
            }),
        }
    }

    pub fn method(&self, name: &str) -> Option<&Method> {
        match self {
            Signature::Design { methods, .. } => methods.iter().find(|m| m.name == name),
            Signature::Function { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leetcode_metadata_parses() {
        let two_sum = r#"{"name": "twoSum", "params": [{"name": "nums", "type": "integer[]"},
            {"name": "target", "type": "integer"}], "return": {"type": "integer[]", "size": 2},
            "manual": false}"#;
        let Signature::Function { name, params, .. } = Signature::parse(two_sum).unwrap() else {
            panic!("a function")
        };
        assert_eq!(name, "twoSum");
        assert_eq!(params[1].ty, Type::Integer);

        let rotate = r#"{"name": "rotate", "params": [{"name": "matrix", "type": "integer[][]"}],
            "return": {"type": "void"}, "output": {"paramindex": 0}}"#;
        assert!(matches!(
            Signature::parse(rotate).unwrap(),
            Signature::Function {
                output_param: Some(0),
                ..
            }
        ));

        let lru = r#"{"classname": "LRUCache", "constructor": {"params": [{"name": "capacity",
            "type": "integer"}]}, "methods": [{"name": "get", "params": [{"name": "key",
            "type": "integer"}], "return": {"type": "integer"}}, {"name": "put", "params":
            [{"name": "key", "type": "integer"}, {"name": "value", "type": "integer"}],
            "return": {"type": "void"}}], "return": {"type": "boolean"}, "systemdesign": true}"#;
        let sig = Signature::parse(lru).unwrap();
        assert_eq!(sig.method("put").unwrap().ret, Type::Void);
        // The normalised form reads back as the same signature.
        for text in [two_sum, rotate, lru] {
            let sig = Signature::parse(text).unwrap();
            assert_eq!(Signature::parse(&sig.to_json().to_string()).unwrap(), sig);
        }
    }

    #[test]
    fn bad_signatures_are_refused_with_the_reason() {
        let cases = [
            (r#"{"params": []}"#, "missing `name`"),
            (r#"{"name": "f", "classname": "C"}"#, "not both"),
            (
                r#"{"name": "1f", "return": {"type": "integer"}}"#,
                "is not an identifier",
            ),
            (
                r#"{"name": "f", "params": [{"name": "type", "type": "integer"}], "return": {"type": "integer"}}"#,
                "reserved",
            ),
            (
                r#"{"name": "f", "params": [{"name": "a", "type": "int32"}], "return": {"type": "integer"}}"#,
                "unknown type",
            ),
            (
                r#"{"name": "f", "params": [{"name": "a", "type": "integer"}], "return": {"type": "void"}}"#,
                "needs output_param",
            ),
            (
                r#"{"name": "f", "params": [{"name": "a", "type": "integer"}], "return": {"type": "void"}, "output_param": "a"}"#,
                "must be an array",
            ),
            (
                r#"{"name": "f", "params": [{"name": "a", "type": "integer"}, {"name": "a", "type": "integer"}], "return": {"type": "integer"}}"#,
                "two parameters named",
            ),
            (r#"{"classname": "C", "methods": []}"#, "has no methods"),
            (
                r#"{"classname": "C", "methods": [{"name": "get"}, {"name": "get"}]}"#,
                "used twice",
            ),
            ("[1, 2", "not JSON"),
        ];
        for (text, reason) in cases {
            let err = Signature::parse(text).unwrap_err();
            assert!(err.contains(reason), "{text}: {err}");
        }
    }
}
