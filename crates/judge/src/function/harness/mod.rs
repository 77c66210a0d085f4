//! Harnesses and starter code, generated from a signature for C++, Java, Python,
//! JavaScript, Go and Rust.
//!
//! Each harness is a fixed runtime (a reader of the argument lines, a writer of values as
//! JSON, the report channel) plus a generated, typed call site: the signature names the
//! function or class and its methods, so nothing is found by reflection or by reading the
//! user's source. The user's code stays in a file of its own, so compiler errors and stack
//! traces name its lines.
//!
//! The protocol, per test case (one line of stdin each, see `FunctionSpec::parse_input`):
//! the harness parses the arguments, writes `{"begin":k}` on descriptor 3, calls the user's
//! code, then writes one line: `{"case":k,"stdout":o,"stderr":e,"value":V}`, or
//! `{"case":k,...,"error":{"type","message","frames":[{"line","function"}],"call"?}}` for an
//! exception, or `{"case":k,...,"invalid":"why"}` when the result cannot be written (a
//! cyclic list). `o` and `e` are the offsets of the user's stdout and stderr files after
//! the call. A harness that cannot load the user's code says so once:
//! `{"load_error":{"kind":"missing"|"exception",...}}`.

mod cpp;
mod go;
mod java;
mod javascript;
mod python;
mod rust;

use super::signature::{Param, Signature};
use super::types::Type;
use crate::language::LanguageConfig;
use crate::program::ProgramFiles;

/// A language a function problem can be solved in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HarnessLanguage {
    Cpp,
    Java,
    Python,
    JavaScript,
    Go,
    Rust,
}

impl HarnessLanguage {
    pub const ALL: [HarnessLanguage; 6] = [
        HarnessLanguage::Cpp,
        HarnessLanguage::Java,
        HarnessLanguage::Python,
        HarnessLanguage::JavaScript,
        HarnessLanguage::Go,
        HarnessLanguage::Rust,
    ];

    /// The harness for one of our language ids (`cpp17`, `pypy3`, ...).
    pub fn of(language_id: &str) -> Option<HarnessLanguage> {
        let code = crate::program::language_code(language_id);
        Self::ALL.into_iter().find(|l| l.code() == code)
    }

    /// The package format's language code.
    pub fn code(self) -> &'static str {
        match self {
            HarnessLanguage::Cpp => "cpp",
            HarnessLanguage::Java => "java",
            HarnessLanguage::Python => "python3",
            HarnessLanguage::JavaScript => "javascript",
            HarnessLanguage::Go => "go",
            HarnessLanguage::Rust => "rust",
        }
    }

    /// Our language ids this harness serves.
    pub fn language_ids(self) -> &'static [&'static str] {
        match self {
            HarnessLanguage::Cpp => &["cpp17", "cpp20"],
            HarnessLanguage::Java => &["java"],
            HarnessLanguage::Python => &["python3", "pypy3"],
            HarnessLanguage::JavaScript => &["javascript"],
            HarnessLanguage::Go => &["go"],
            HarnessLanguage::Rust => &["rust"],
        }
    }

    /// The file name of a package's own starter code (`function/starter/<name>`).
    pub fn starter_file(self) -> &'static str {
        match self {
            HarnessLanguage::Cpp => "cpp.cpp",
            HarnessLanguage::Java => "java.java",
            HarnessLanguage::Python => "python3.py",
            HarnessLanguage::JavaScript => "javascript.js",
            HarnessLanguage::Go => "go.go",
            HarnessLanguage::Rust => "rust.rs",
        }
    }

    /// The file the user's code is stored in (stack traces and compiler errors name it).
    pub fn user_file(self, signature: &Signature) -> String {
        match self {
            HarnessLanguage::Cpp => "solution.cpp".into(),
            HarnessLanguage::Java => format!("{}.java", java::user_class(signature)),
            HarnessLanguage::Python => "solution.py".into(),
            HarnessLanguage::JavaScript => "solution.js".into(),
            HarnessLanguage::Go => "solution.go".into(),
            HarnessLanguage::Rust => "solution.rs".into(),
        }
    }
}

/// The harness program around the user's `source`.
pub(crate) fn program(
    language: HarnessLanguage,
    signature: &Signature,
    source: &[u8],
) -> ProgramFiles {
    match language {
        HarnessLanguage::Cpp => cpp::program(signature, source),
        HarnessLanguage::Java => java::program(signature, source),
        HarnessLanguage::Python => python::program(signature, source),
        HarnessLanguage::JavaScript => javascript::program(signature, source),
        HarnessLanguage::Go => go::program(signature, source),
        HarnessLanguage::Rust => rust::program(signature, source),
    }
}

/// The language's configuration for a harness program: the same toolchain, with the
/// syntax check of the interpreted languages pointed at the user's file too.
pub(crate) fn language_config(language: HarnessLanguage, base: &LanguageConfig) -> LanguageConfig {
    let mut config = base.clone();
    match language {
        HarnessLanguage::Python => {
            let interpreter = base.run.first().cloned().unwrap_or_default();
            config.compile = Some(vec![
                interpreter,
                "-c".into(),
                "import py_compile, sys\nfor f in sys.argv[1:]: py_compile.compile(f, cfile='/tmp/check.pyc', doraise=True)".into(),
                "/job/solution.py".into(),
                "/job/main.py".into(),
            ]);
        }
        HarnessLanguage::JavaScript => {
            let node = base.run.first().cloned().unwrap_or_default();
            config.compile = Some(vec![node, "--check".into(), "/job/solution.js".into()]);
        }
        HarnessLanguage::Java => {
            // String concatenation compiled to StringBuilder calls rather than
            // `invokedynamic`: a call site's first use would otherwise bootstrap inside the
            // first case's clock (tens of milliseconds).
            if let Some(command) = config.compile.as_mut() {
                command.insert(1, "-XDstringConcat=inline".into());
            }
        }
        HarnessLanguage::Cpp | HarnessLanguage::Go | HarnessLanguage::Rust => {}
    }
    config
}

/// Starter code: the signature in the language's own terms, with an empty body.
pub(crate) fn starter(language: HarnessLanguage, signature: &Signature) -> String {
    match language {
        HarnessLanguage::Cpp => cpp::starter(signature),
        HarnessLanguage::Java => java::starter(signature),
        HarnessLanguage::Python => python::starter(signature),
        HarnessLanguage::JavaScript => javascript::starter(signature),
        HarnessLanguage::Go => go::starter(signature),
        HarnessLanguage::Rust => rust::starter(signature),
    }
}

/// Keeps the runtime's `ListNode` and `TreeNode` sections (between `@list-begin` /
/// `@list-end` and `@tree-begin` / `@tree-end` marker lines) only when the signature uses
/// them: a user's code may define the classes itself when the problem does not.
fn sections(runtime: &str, signature: &Signature) -> String {
    let keep_list = signature.uses(&Type::ListNode);
    let keep_tree = signature.uses(&Type::TreeNode);
    let mut out = String::with_capacity(runtime.len());
    let mut keeping = true;
    for line in runtime.lines() {
        let marker = line.trim();
        if marker.ends_with("@list-begin") {
            keeping = keep_list;
        } else if marker.ends_with("@tree-begin") {
            keeping = keep_tree;
        } else if marker.ends_with("@list-end") || marker.ends_with("@tree-end") {
            keeping = true;
        } else if keeping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Declares and reads one variable per parameter (`prefix0`, `prefix1`, ...), a statement
/// `separator` between two (the reader's comma): `declare(i, param)` is a declaration.
fn read_args(
    out: &mut String,
    params: &[Param],
    indent: &str,
    separator: &str,
    declare: impl Fn(usize, &Param) -> String,
) {
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push_str(indent);
            out.push_str(separator);
            out.push('\n');
        }
        out.push_str(indent);
        out.push_str(&declare(i, p));
        out.push('\n');
    }
}

/// `prefix0, prefix1, ...` for `count` arguments.
fn numbered(prefix: &str, count: usize) -> String {
    (0..count)
        .map(|i| format!("{prefix}{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A harness of two files: the user's code under its own name, and the harness (the entry).
fn two_files(user: (&str, Vec<u8>), harness: (&str, String), main_class: &str) -> ProgramFiles {
    ProgramFiles {
        files: vec![
            (user.0.to_string(), user.1),
            (harness.0.to_string(), harness.1.into_bytes()),
        ],
        entry: harness.0.to_string(),
        main_class: main_class.to_string(),
    }
}

/// The type descriptor of the dynamic languages' runtimes: `"i"` integer or long, `"d"`,
/// `"b"`, `"c"`, `"s"`, `"L"` ListNode, `"T"` TreeNode, and `(open)"a", element(close)` an
/// array (a Python tuple, a JavaScript array).
fn descriptor(t: &Type, (open, close): (&str, &str), void: &str) -> String {
    match t {
        Type::Integer | Type::Long => "\"i\"".into(),
        Type::Double => "\"d\"".into(),
        Type::Boolean => "\"b\"".into(),
        Type::Character => "\"c\"".into(),
        Type::String => "\"s\"".into(),
        Type::Void => void.into(),
        Type::ListNode => "\"L\"".into(),
        Type::TreeNode => "\"T\"".into(),
        Type::Array { element, .. } => {
            format!(
                "{open}\"a\", {}{close}",
                descriptor(element, (open, close), void)
            )
        }
    }
}

/// `twoSum` → `two_sum` (Rust's names).
fn snake_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 && !out.ends_with('_') {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `get` → `Get` (Go's exported methods).
fn capitalized(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// The distinct array types among `types` and everything inside them, innermost first (each
/// harness that generates per-type readers and writers needs every one of them).
fn array_types<'t>(types: impl IntoIterator<Item = &'t Type>) -> Vec<Type> {
    fn visit(t: &Type, out: &mut Vec<Type>) {
        if let Type::Array { element, .. } = t {
            visit(element, out);
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
    }
    let mut out = Vec::new();
    for t in types {
        visit(t, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_each_language() {
        assert_eq!(snake_case("twoSum"), "two_sum");
        assert_eq!(snake_case("getRandom"), "get_random");
        assert_eq!(snake_case("get"), "get");
        assert_eq!(capitalized("get"), "Get");
        assert_eq!(HarnessLanguage::of("cpp20"), Some(HarnessLanguage::Cpp));
        assert_eq!(HarnessLanguage::of("pypy3"), Some(HarnessLanguage::Python));
        assert_eq!(HarnessLanguage::of("c"), None);
    }

    #[test]
    fn node_sections_are_kept_only_when_used() {
        let runtime =
            "a\n// @list-begin\nlist\n// @list-end\n// @tree-begin\ntree\n// @tree-end\nb\n";
        let sig = Signature::parse(
            r#"{"name": "f", "params": [{"name": "head", "type": "ListNode"}], "return": {"type": "integer"}}"#,
        )
        .unwrap();
        assert_eq!(sections(runtime, &sig), "a\nlist\nb\n");
    }

    #[test]
    fn array_types_come_innermost_first() {
        let t = Type::parse("list<integer[]>").unwrap();
        let found: Vec<String> = array_types([&t]).iter().map(|t| t.to_string()).collect();
        assert_eq!(found, ["integer[]", "list<integer[]>"]);
    }
}
