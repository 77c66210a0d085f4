//! The types of a function signature, in LeetCode's spelling (`integer`, `long`, `double`,
//! `boolean`, `character`, `string`, `void`, `T[]`, `list<T>`, `ListNode`, `TreeNode`), and
//! how each language's harness and starter code spell them.

use std::fmt;

/// A declared type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Type {
    /// `integer`: a 32-bit signed integer.
    Integer,
    /// `long`: a 64-bit signed integer.
    Long,
    Double,
    Boolean,
    /// `character`: one Unicode scalar (one byte in C++ and Go, as LeetCode has it).
    Character,
    String,
    /// Return type only.
    Void,
    /// `T[]`, or `list<T>` (`list` is true): the same value on the wire; Java spells a list
    /// `List<T>` and an array `T[]`.
    Array {
        element: Box<Type>,
        list: bool,
    },
    /// A singly linked list of integers, an array on the wire (`[]` for none).
    ListNode,
    /// A binary tree of integers, level order on the wire with `null` holes.
    TreeNode,
}

/// A type string that is not one of the above.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown type {0:?} (expected integer, long, double, boolean, character, string, void, ListNode, TreeNode, T[] or list<T>)")]
pub struct UnknownType(pub String);

impl Type {
    /// Parses LeetCode's type strings: `integer[][]`, `list<list<string>>`, `ListNode[]`.
    pub fn parse(text: &str) -> Result<Type, UnknownType> {
        let unknown = || UnknownType(text.to_string());
        let text = text.trim();
        if let Some(inner) = text.strip_suffix("[]") {
            let element = Type::parse(inner).map_err(|_| unknown())?;
            return Type::array_of(element, false).ok_or_else(unknown);
        }
        if let Some(inner) = text
            .strip_prefix("list<")
            .or_else(|| text.strip_prefix("List<"))
            .and_then(|rest| rest.strip_suffix('>'))
        {
            let element = Type::parse(inner).map_err(|_| unknown())?;
            return Type::array_of(element, true).ok_or_else(unknown);
        }
        Ok(match text {
            "integer" | "int" => Type::Integer,
            "long" => Type::Long,
            "double" => Type::Double,
            "boolean" => Type::Boolean,
            "character" | "char" => Type::Character,
            "string" => Type::String,
            "void" => Type::Void,
            "ListNode" => Type::ListNode,
            "TreeNode" => Type::TreeNode,
            _ => return Err(unknown()),
        })
    }

    fn array_of(element: Type, list: bool) -> Option<Type> {
        (element != Type::Void).then(|| Type::Array {
            element: Box::new(element),
            list,
        })
    }

    /// A name made of letters and underscores only, unique per type: the harnesses name
    /// their generated reader and writer functions after it.
    pub fn mangled(&self) -> String {
        match self {
            Type::Array { element, list } => {
                format!("{}_{}", element.mangled(), if *list { "L" } else { "A" })
            }
            other => other.to_string(),
        }
    }

    /// Types whose value is an array on the wire (a null one is `[]`).
    pub fn is_structure(&self) -> bool {
        matches!(self, Type::Array { .. } | Type::ListNode | Type::TreeNode)
    }

    /// Whether this type, or a type inside it, is `t`.
    pub fn mentions(&self, t: &Type) -> bool {
        self == t
            || match self {
                Type::Array { element, .. } => element.mentions(t),
                _ => false,
            }
    }

    /// Whether a `double` sits anywhere in the value (tolerance applies there only).
    pub fn has_double(&self) -> bool {
        self.mentions(&Type::Double)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Integer => f.write_str("integer"),
            Type::Long => f.write_str("long"),
            Type::Double => f.write_str("double"),
            Type::Boolean => f.write_str("boolean"),
            Type::Character => f.write_str("character"),
            Type::String => f.write_str("string"),
            Type::Void => f.write_str("void"),
            Type::Array {
                element,
                list: false,
            } => write!(f, "{element}[]"),
            Type::Array {
                element,
                list: true,
            } => write!(f, "list<{element}>"),
            Type::ListNode => f.write_str("ListNode"),
            Type::TreeNode => f.write_str("TreeNode"),
        }
    }
}

/// How each language spells the types.
pub mod spell {
    use super::Type;

    pub fn cpp(t: &Type) -> String {
        match t {
            Type::Integer => "int".into(),
            Type::Long => "long long".into(),
            Type::Double => "double".into(),
            Type::Boolean => "bool".into(),
            Type::Character => "char".into(),
            Type::String => "string".into(),
            Type::Void => "void".into(),
            Type::Array { element, .. } => format!("vector<{}>", cpp(element)),
            Type::ListNode => "ListNode*".into(),
            Type::TreeNode => "TreeNode*".into(),
        }
    }

    /// A C++ parameter: containers and strings by reference, as LeetCode writes them.
    pub fn cpp_param(t: &Type) -> String {
        match t {
            Type::Array { .. } => format!("{}&", cpp(t)),
            _ => cpp(t),
        }
    }

    pub fn java(t: &Type) -> String {
        match t {
            Type::Integer => "int".into(),
            Type::Long => "long".into(),
            Type::Double => "double".into(),
            Type::Boolean => "boolean".into(),
            Type::Character => "char".into(),
            Type::String => "String".into(),
            Type::Void => "void".into(),
            Type::Array {
                element,
                list: false,
            } => format!("{}[]", java(element)),
            Type::Array {
                element,
                list: true,
            } => format!("List<{}>", java_boxed(element)),
            Type::ListNode => "ListNode".into(),
            Type::TreeNode => "TreeNode".into(),
        }
    }

    /// The reference type Java uses inside generics.
    pub fn java_boxed(t: &Type) -> String {
        match t {
            Type::Integer => "Integer".into(),
            Type::Long => "Long".into(),
            Type::Double => "Double".into(),
            Type::Boolean => "Boolean".into(),
            Type::Character => "Character".into(),
            other => java(other),
        }
    }

    pub fn python(t: &Type) -> String {
        match t {
            Type::Integer | Type::Long => "int".into(),
            Type::Double => "float".into(),
            Type::Boolean => "bool".into(),
            Type::Character | Type::String => "str".into(),
            Type::Void => "None".into(),
            Type::Array { element, .. } => format!("List[{}]", python(element)),
            Type::ListNode => "Optional[ListNode]".into(),
            Type::TreeNode => "Optional[TreeNode]".into(),
        }
    }

    /// JSDoc, as LeetCode's JavaScript starters document parameters.
    pub fn jsdoc(t: &Type) -> String {
        match t {
            Type::Integer | Type::Long | Type::Double => "number".into(),
            Type::Boolean => "boolean".into(),
            Type::Character | Type::String => "string".into(),
            Type::Void => "void".into(),
            Type::Array { element, .. } => format!("{}[]", jsdoc(element)),
            Type::ListNode => "ListNode".into(),
            Type::TreeNode => "TreeNode".into(),
        }
    }

    pub fn go(t: &Type) -> String {
        match t {
            Type::Integer => "int".into(),
            Type::Long => "int64".into(),
            Type::Double => "float64".into(),
            Type::Boolean => "bool".into(),
            Type::Character => "byte".into(),
            Type::String => "string".into(),
            Type::Void => String::new(),
            Type::Array { element, .. } => format!("[]{}", go(element)),
            Type::ListNode => "*ListNode".into(),
            Type::TreeNode => "*TreeNode".into(),
        }
    }

    pub fn rust(t: &Type) -> String {
        match t {
            Type::Integer => "i32".into(),
            Type::Long => "i64".into(),
            Type::Double => "f64".into(),
            Type::Boolean => "bool".into(),
            Type::Character => "char".into(),
            Type::String => "String".into(),
            Type::Void => "()".into(),
            Type::Array { element, .. } => format!("Vec<{}>", rust(element)),
            Type::ListNode => "Option<Box<ListNode>>".into(),
            Type::TreeNode => "Option<Rc<RefCell<TreeNode>>>".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leetcode_type_strings_parse_and_print_back() {
        for text in [
            "integer",
            "long",
            "double",
            "boolean",
            "character",
            "string",
            "void",
            "integer[]",
            "integer[][]",
            "character[][]",
            "list<integer>",
            "list<list<string>>",
            "ListNode",
            "TreeNode",
            "ListNode[]",
            "list<TreeNode>",
        ] {
            let parsed = Type::parse(text).unwrap();
            assert_eq!(parsed.to_string(), text);
        }
        assert_eq!(Type::parse("int").unwrap(), Type::Integer);
        for bad in [
            "",
            "int32",
            "void[]",
            "list<void>",
            "list<integer",
            "Integer",
            "[]",
        ] {
            assert!(Type::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn mangled_names_are_identifiers_and_unique() {
        let types = [
            "integer[][]",
            "list<list<integer>>",
            "list<integer[]>",
            "integer[]",
        ];
        let names: Vec<String> = types
            .iter()
            .map(|t| Type::parse(t).unwrap().mangled())
            .collect();
        for name in &names {
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn languages_spell_types_as_leetcode_does() {
        let t = |s: &str| Type::parse(s).unwrap();
        assert_eq!(spell::cpp_param(&t("integer[]")), "vector<int>&");
        assert_eq!(
            spell::java(&t("list<list<integer>>")),
            "List<List<Integer>>"
        );
        assert_eq!(spell::java(&t("integer[][]")), "int[][]");
        assert_eq!(spell::python(&t("TreeNode")), "Optional[TreeNode]");
        assert_eq!(spell::go(&t("ListNode[]")), "[]*ListNode");
        assert_eq!(spell::rust(&t("TreeNode")), "Option<Rc<RefCell<TreeNode>>>");
        assert_eq!(spell::jsdoc(&t("character[][]")), "string[][]");
    }
}
