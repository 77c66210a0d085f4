//! JavaScript: `solution.js` (the user's code, unchanged: a function `var twoSum =
//! function(...)` or a class, as LeetCode writes them) and `main.js` (the runtime and the
//! generated call site).

use std::fmt::Write;

use super::Signature;
use crate::function::signature::Param;
use crate::function::types::{spell, Type};
use crate::program::ProgramFiles;

pub(super) fn program(signature: &Signature, source: &[u8]) -> ProgramFiles {
    let mut main = String::from(include_str!("runtime.js"));
    main.push_str(&call_site(signature));
    super::two_files(
        ("solution.js", source.to_vec()),
        ("main.js", main),
        "main.js",
    )
}

/// The runtime's type descriptor (see `runtime.js`).
fn descriptor(t: &Type) -> String {
    super::descriptor(t, ("[", "]"), "null")
}

fn converted_args(params: &[Param], source: &str) -> String {
    params
        .iter()
        .enumerate()
        .map(|(i, p)| format!("uc_in({}, {source}[{i}])", descriptor(&p.ty)))
        .collect::<Vec<_>>()
        .join(", ")
}

const CATCH: &str = "    } catch (e) {
        if (e instanceof UcInvalid) uc_end(k, \"invalid\", JSON.stringify(e.message));
        else uc_end(k, \"error\", uc_describe(e, CALL));
        return;
    }
";

fn call_site(signature: &Signature) -> String {
    let mut out = String::new();
    match signature {
        Signature::Function {
            name,
            params,
            ret,
            output_param,
        } => {
            out.push_str(
                "\nfunction uc_case(k, line, uc_fn) {\n    const args = JSON.parse(line);\n",
            );
            for (i, p) in params.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "    const a{i} = uc_in({}, args[{i}]);",
                    descriptor(&p.ty)
                );
            }
            let call_args = (0..params.len())
                .map(|i| format!("a{i}"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push_str("    uc_begin(k);\n    let text;\n    try {\n");
            let _ = writeln!(out, "        const result = uc_fn({call_args});");
            match output_param {
                Some(i) => {
                    let _ = writeln!(
                        out,
                        "        text = uc_out({}, a{i});",
                        descriptor(&params[*i].ty)
                    );
                }
                None => {
                    let _ = writeln!(out, "        text = uc_out({}, result);", descriptor(ret));
                }
            }
            out.push_str(&CATCH.replace("CALL", "undefined"));
            out.push_str("    uc_end(k, \"value\", text);\n}\n");
            let _ = writeln!(out, "\nuc_run(\"{name}\", uc_case);");
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            out.push_str("\nfunction uc_case(k, line, Uc_Class) {\n    const [ops, arglists] = JSON.parse(line);\n    uc_begin(k);\n    const results = [\"null\"];\n    let call = 0;\n    try {\n");
            let _ = writeln!(
                out,
                "        const obj = new Uc_Class({});",
                converted_args(constructor, "arglists[0]")
            );
            out.push_str("        for (call = 1; call < ops.length; call++) {\n            const a = arglists[call];\n            switch (ops[call]) {\n");
            for m in methods {
                let call = format!("obj.{}({})", m.name, converted_args(&m.params, "a"));
                if m.ret == Type::Void {
                    let _ = writeln!(
                        out,
                        "                case \"{}\":\n                    {call};\n                    results.push(\"null\");\n                    break;",
                        m.name
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "                case \"{}\":\n                    results.push(uc_out({}, {call}));\n                    break;",
                        m.name,
                        descriptor(&m.ret)
                    );
                }
            }
            out.push_str("                default:\n                    process.exit(3);\n            }\n        }\n");
            out.push_str(&CATCH.replace("CALL", "call"));
            out.push_str("    uc_end(k, \"value\", \"[\" + results.join(\",\") + \"]\");\n}\n");
            let _ = writeln!(out, "\nuc_run(\"{class}\", uc_case);");
        }
    }
    out
}

fn jsdoc(params: &[Param], ret: Option<&Type>) -> String {
    let mut out = String::from("/**\n");
    for p in params {
        let _ = writeln!(out, " * @param {{{}}} {}", spell::jsdoc(&p.ty), p.name);
    }
    if let Some(ret) = ret {
        let _ = writeln!(out, " * @return {{{}}}", spell::jsdoc(ret));
    }
    out.push_str(" */\n");
    out
}

fn names(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn starter(signature: &Signature) -> String {
    let mut out = String::new();
    if signature.uses(&Type::ListNode) {
        out.push_str("/**\n * Definition for singly-linked list.\n * function ListNode(val, next) {\n *     this.val = (val===undefined ? 0 : val)\n *     this.next = (next===undefined ? null : next)\n * }\n */\n");
    }
    if signature.uses(&Type::TreeNode) {
        out.push_str("/**\n * Definition for a binary tree node.\n * function TreeNode(val, left, right) {\n *     this.val = (val===undefined ? 0 : val)\n *     this.left = (left===undefined ? null : left)\n *     this.right = (right===undefined ? null : right)\n * }\n */\n");
    }
    match signature {
        Signature::Function {
            name, params, ret, ..
        } => {
            out.push_str(&jsdoc(params, Some(ret)));
            let _ = write!(
                out,
                "var {name} = function({}) {{\n    \n}};\n",
                names(params)
            );
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            out.push_str(&jsdoc(constructor, None));
            let _ = write!(
                out,
                "var {class} = function({}) {{\n    \n}};\n",
                names(constructor)
            );
            for m in methods {
                out.push('\n');
                out.push_str(&jsdoc(&m.params, Some(&m.ret)));
                let _ = write!(
                    out,
                    "{class}.prototype.{} = function({}) {{\n    \n}};\n",
                    m.name,
                    names(&m.params)
                );
            }
        }
    }
    out
}
