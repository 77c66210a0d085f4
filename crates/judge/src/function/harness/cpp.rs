//! C++: one file, `main.cpp` = the runtime, the user's code under `#line 1 "solution.cpp"`,
//! and the generated call site and `main` after it.

use std::fmt::Write;

use super::{sections, Signature};
use crate::function::signature::Param;
use crate::function::types::{spell, Type};
use crate::program::ProgramFiles;

pub(super) fn program(signature: &Signature, source: &[u8]) -> ProgramFiles {
    let mut text = sections(include_str!("runtime.hpp"), signature).into_bytes();
    text.extend_from_slice(b"#line 1 \"solution.cpp\"\n");
    text.extend_from_slice(source);
    text.extend_from_slice(b"\n#line 1 \"ulticode_harness.cpp\"\n");
    text.extend_from_slice(call_site(signature).as_bytes());
    ProgramFiles {
        files: vec![("main.cpp".into(), text)],
        entry: "main.cpp".into(),
        main_class: "main.cpp".into(),
    }
}

/// Declares and reads `prefix0, prefix1, ...` from `uc_r`, the arguments separated by commas.
fn read_args(out: &mut String, params: &[Param], prefix: &str) {
    super::read_args(out, params, "    ", "uc_r.expect(',');", |i, p| {
        format!(
            "{} {prefix}{i}{{}}; uc::read(uc_r, {prefix}{i});",
            spell::cpp(&p.ty)
        )
    });
}

fn args(params: &[Param], prefix: &str) -> String {
    super::numbered(prefix, params.len())
}

const CATCHES: &str = "    } catch (const uc::Invalid& uc_e) {
        uc::invalid(uc_k, uc_e.why);
        return;
    } catch (const std::exception& uc_e) {
        uc::error(uc_k, uc::demangle(typeid(uc_e).name()), uc_e.what(), CALL);
        return;
    } catch (...) {
        uc::error(uc_k, \"unknown exception\", \"\", CALL);
        return;
    }
";

fn call_site(signature: &Signature) -> String {
    let mut out = String::from("static void uc_case(uc::Reader& uc_r, int uc_k) {\n");
    match signature {
        Signature::Function {
            name,
            params,
            ret,
            output_param,
        } => {
            out.push_str("    uc_r.expect('[');\n");
            read_args(&mut out, params, "uc_a");
            out.push_str("    uc_r.expect(']');\n    uc::begin(uc_k);\n    uc::Writer uc_w;\n    try {\n        Solution* uc_s = new Solution();\n");
            let call = format!("uc_s->{name}({})", args(params, "uc_a"));
            match output_param {
                Some(i) => {
                    let _ = writeln!(out, "        {call};\n        uc::write(uc_w, uc_a{i});");
                }
                None => {
                    let _ = writeln!(
                        out,
                        "        {} uc_v = {call};\n        uc::write(uc_w, uc_v);",
                        spell::cpp(ret)
                    );
                }
            }
            out.push_str("        delete uc_s;\n");
            out.push_str(&CATCHES.replace("CALL", "-1"));
            out.push_str("    uc::value(uc_k, uc_w.s);\n}\n");
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            out.push_str(
                "    uc_r.expect('[');\n    std::vector<std::string> uc_ops; uc::read(uc_r, uc_ops);\n    uc_r.expect(',');\n    uc_r.expect('[');\n    uc::begin(uc_k);\n    uc::Writer uc_w;\n    uc_w.s += '[';\n    int uc_call = 0;\n    try {\n        uc_r.expect('[');\n",
            );
            read_args(&mut out, constructor, "uc_a");
            let _ = writeln!(
                out,
                "        uc_r.expect(']');\n        {class}* uc_o = new {class}({});\n        uc_w.s += \"null\";",
                args(constructor, "uc_a")
            );
            out.push_str("        for (uc_call = 1; uc_call < (int)uc_ops.size(); ++uc_call) {\n            uc_r.expect(',');\n            uc_r.expect('[');\n            uc_w.s += ',';\n            const std::string& uc_op = uc_ops[uc_call];\n            if (false) {\n");
            for m in methods {
                let _ = writeln!(out, "            }} else if (uc_op == \"{}\") {{", m.name);
                read_args(&mut out, &m.params, "uc_b");
                out.push_str("            uc_r.expect(']');\n");
                let call = format!("uc_o->{}({})", m.name, args(&m.params, "uc_b"));
                if m.ret == Type::Void {
                    let _ = writeln!(out, "            {call};\n            uc_w.s += \"null\";");
                } else {
                    let _ = writeln!(
                        out,
                        "            {} uc_v = {call};\n            uc::write(uc_w, uc_v);",
                        spell::cpp(&m.ret)
                    );
                }
            }
            out.push_str("            } else {\n                uc::malformed(\"operation\");\n            }\n        }\n        uc_r.expect(']');\n        uc_w.s += ']';\n");
            out.push_str(&CATCHES.replace("CALL", "uc_call"));
            out.push_str("    uc::value(uc_k, uc_w.s);\n}\n");
        }
    }
    out.push_str(
        "int main() {\n    std::vector<std::string> uc_lines = uc::cases();\n    for (size_t uc_k = 0; uc_k < uc_lines.size(); ++uc_k) {\n        uc::Reader uc_r{uc_lines[uc_k].data(), uc_lines[uc_k].data() + uc_lines[uc_k].size()};\n        uc_case(uc_r, (int)uc_k);\n    }\n    std::cout.flush();\n    std::fflush(stdout);\n    _exit(0);\n}\n",
    );
    out
}

fn param_list(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| format!("{} {}", spell::cpp_param(&p.ty), p.name))
        .collect::<Vec<_>>()
        .join(", ")
}

const LIST_COMMENT: &str = "/**
 * Definition for singly-linked list.
 * struct ListNode {
 *     int val;
 *     ListNode *next;
 *     ListNode() : val(0), next(nullptr) {}
 *     ListNode(int x) : val(x), next(nullptr) {}
 *     ListNode(int x, ListNode *next) : val(x), next(next) {}
 * };
 */
";

const TREE_COMMENT: &str = "/**
 * Definition for a binary tree node.
 * struct TreeNode {
 *     int val;
 *     TreeNode *left;
 *     TreeNode *right;
 *     TreeNode() : val(0), left(nullptr), right(nullptr) {}
 *     TreeNode(int x) : val(x), left(nullptr), right(nullptr) {}
 *     TreeNode(int x, TreeNode *left, TreeNode *right) : val(x), left(left), right(right) {}
 * };
 */
";

pub(super) fn starter(signature: &Signature) -> String {
    let mut out = String::new();
    if signature.uses(&Type::ListNode) {
        out.push_str(LIST_COMMENT);
    }
    if signature.uses(&Type::TreeNode) {
        out.push_str(TREE_COMMENT);
    }
    match signature {
        Signature::Function {
            name, params, ret, ..
        } => {
            let _ = write!(
                out,
                "class Solution {{\npublic:\n    {} {name}({}) {{\n        \n    }}\n}};\n",
                spell::cpp(ret),
                param_list(params)
            );
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            let _ = write!(
                out,
                "class {class} {{\npublic:\n    {class}({}) {{\n        \n    }}\n",
                param_list(constructor)
            );
            for m in methods {
                let _ = write!(
                    out,
                    "    \n    {} {}({}) {{\n        \n    }}\n",
                    spell::cpp(&m.ret),
                    m.name,
                    param_list(&m.params)
                );
            }
            let _ = write!(
                out,
                "}};\n\n/**\n * Your {class} object will be instantiated and called as such:\n * {class}* obj = new {class}({});\n */\n",
                constructor
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            );
        }
    }
    out
}
