//! Rust: `main.rs` holds the runtime, `include!`s `solution.rs` (the user's code, so
//! compiler errors and panics name its lines) and the generated call site. Functions and
//! methods are called by their snake_case names (`Solution::two_sum`, `obj.get`) and a
//! design class is built by `new`, as LeetCode has them.

use std::fmt::Write;

use super::{sections, snake_case, Signature};
use crate::function::signature::Param;
use crate::function::types::{spell, Type};
use crate::program::ProgramFiles;

pub(super) fn program(signature: &Signature, source: &[u8]) -> ProgramFiles {
    let mut main = sections(include_str!("runtime.rs"), signature);
    main.push_str(&call_site(signature));
    super::two_files(
        ("solution.rs", source.to_vec()),
        ("main.rs", main),
        "main.rs",
    )
}

fn read_args(out: &mut String, params: &[Param], prefix: &str, indent: &str) {
    super::read_args(out, params, indent, "r.expect(b',');", |i, p| {
        format!(
            "let mut {prefix}{i}: {} = UcJson::uc_read(r);",
            spell::rust(&p.ty)
        )
    });
}

fn args(params: &[Param], prefix: &str, by_reference: Option<usize>) -> String {
    (0..params.len())
        .map(|i| {
            if by_reference == Some(i) {
                format!("&mut {prefix}{i}")
            } else {
                format!("{prefix}{i}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn call_site(signature: &Signature) -> String {
    let mut out = String::from(
        "\nuse uc_harness::UcJson;\n\nfn uc_case(k: usize, r: &mut uc_harness::Reader) {\n",
    );
    match signature {
        Signature::Function {
            name,
            params,
            ret,
            output_param,
        } => {
            out.push_str("    r.expect(b'[');\n");
            read_args(&mut out, params, "a", "    ");
            out.push_str("    r.expect(b']');\n    uc_harness::begin(k);\n    uc_harness::guard(k, None, move || {\n        let mut w = String::new();\n");
            let call = format!(
                "Solution::{}({})",
                snake_case(name),
                args(params, "a", *output_param)
            );
            match output_param {
                Some(i) => {
                    let _ = writeln!(out, "        {call};\n        a{i}.uc_write(&mut w)?;");
                }
                None => {
                    let _ = writeln!(
                        out,
                        "        let v: {} = {call};\n        v.uc_write(&mut w)?;",
                        spell::rust(ret)
                    );
                }
            }
            out.push_str("        Ok(w)\n    });\n}\n");
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            out.push_str("    r.expect(b'[');\n    let ops: Vec<String> = UcJson::uc_read(r);\n    r.expect(b',');\n    r.expect(b'[');\n    uc_harness::begin(k);\n    let call = std::cell::Cell::new(0usize);\n    uc_harness::guard(k, Some(&call), || {\n        let mut w = String::from(\"[\");\n        r.expect(b'[');\n");
            read_args(&mut out, constructor, "a", "        ");
            let _ = writeln!(
                out,
                "        r.expect(b']');\n        let mut o = {class}::new({});\n        w.push_str(\"null\");",
                args(constructor, "a", None)
            );
            out.push_str("        for i in 1..ops.len() {\n            call.set(i);\n            r.expect(b',');\n            r.expect(b'[');\n            w.push(',');\n            match ops[i].as_str() {\n");
            for m in methods {
                let _ = writeln!(out, "                \"{}\" => {{", m.name);
                read_args(&mut out, &m.params, "b", "                    ");
                out.push_str("                    r.expect(b']');\n");
                let call = format!("o.{}({})", snake_case(&m.name), args(&m.params, "b", None));
                if m.ret == Type::Void {
                    let _ = writeln!(
                        out,
                        "                    {call};\n                    w.push_str(\"null\");"
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "                    let v: {} = {call};\n                    v.uc_write(&mut w)?;",
                        spell::rust(&m.ret)
                    );
                }
                out.push_str("                }\n");
            }
            out.push_str("                _ => std::process::exit(3),\n            }\n        }\n        w.push(']');\n        Ok(w)\n    });\n}\n");
        }
    }
    out.push_str("\nfn main() {\n    uc_harness::main(uc_case);\n}\n");
    out
}

fn param_list(params: &[Param], by_reference: Option<usize>) -> String {
    params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let ty = spell::rust(&p.ty);
            if by_reference == Some(i) {
                format!("{}: &mut {ty}", snake_case(&p.name))
            } else {
                format!("{}: {ty}", snake_case(&p.name))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn returns(t: &Type) -> String {
    match t {
        Type::Void => String::new(),
        other => format!(" -> {}", spell::rust(other)),
    }
}

pub(super) fn starter(signature: &Signature) -> String {
    let mut out = String::new();
    if signature.uses(&Type::ListNode) {
        out.push_str("// Definition for singly-linked list.\n// #[derive(PartialEq, Eq, Clone, Debug)]\n// pub struct ListNode {\n//   pub val: i32,\n//   pub next: Option<Box<ListNode>>\n// }\n//\n// impl ListNode {\n//   #[inline]\n//   fn new(val: i32) -> Self {\n//     ListNode {\n//       next: None,\n//       val\n//     }\n//   }\n// }\n");
    }
    if signature.uses(&Type::TreeNode) {
        out.push_str("// Definition for a binary tree node.\n// #[derive(Debug, PartialEq, Eq)]\n// pub struct TreeNode {\n//   pub val: i32,\n//   pub left: Option<Rc<RefCell<TreeNode>>>,\n//   pub right: Option<Rc<RefCell<TreeNode>>>,\n// }\n//\n// impl TreeNode {\n//   #[inline]\n//   pub fn new(val: i32) -> Self {\n//     TreeNode {\n//       val,\n//       left: None,\n//       right: None\n//     }\n//   }\n// }\n");
        out.push_str("use std::rc::Rc;\nuse std::cell::RefCell;\n");
    }
    match signature {
        Signature::Function {
            name,
            params,
            ret,
            output_param,
        } => {
            let _ = write!(
                out,
                "impl Solution {{\n    pub fn {}({}){} {{\n        \n    }}\n}}\n",
                snake_case(name),
                param_list(params, *output_param),
                returns(ret)
            );
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            let _ = write!(
                out,
                "struct {class} {{\n\n}}\n\n\n/**\n * `&self` means the method does not change the object; write `&mut self` where it does.\n */\nimpl {class} {{\n\n    fn new({}) -> Self {{\n        \n    }}\n",
                param_list(constructor, None)
            );
            for m in methods {
                let params = param_list(&m.params, None);
                let separator = if params.is_empty() { "" } else { ", " };
                let _ = write!(
                    out,
                    "    \n    fn {}(&self{separator}{params}){} {{\n        \n    }}\n",
                    snake_case(&m.name),
                    returns(&m.ret)
                );
            }
            out.push_str("}\n");
        }
    }
    out
}
