//! Python: `solution.py` (the user's code, unchanged) and `main.py` (the runtime and the
//! generated call site), which runs the user's code in a namespace of its own.

use std::fmt::Write;

use super::Signature;
use crate::function::signature::Param;
use crate::function::types::{spell, Type};
use crate::program::ProgramFiles;

pub(super) fn program(signature: &Signature, source: &[u8]) -> ProgramFiles {
    let mut main = String::from(include_str!("runtime.py"));
    main.push_str(&call_site(signature));
    super::two_files(
        ("solution.py", source.to_vec()),
        ("main.py", main),
        "main.py",
    )
}

/// The runtime's type descriptor (see `runtime.py`).
fn descriptor(t: &Type) -> String {
    super::descriptor(t, ("(", ")"), "None")
}

fn converted_args(params: &[Param], source: &str) -> String {
    params
        .iter()
        .enumerate()
        .map(|(i, p)| format!("_uc_in({}, {source}[{i}])", descriptor(&p.ty)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn call_site(signature: &Signature) -> String {
    let mut out = String::new();
    match signature {
        Signature::Function {
            name,
            params,
            ret,
            output_param,
        } => {
            let _ = writeln!(
                out,
                "\n\ndef _uc_case(k, line):\n    args = json.loads(line)"
            );
            for (i, p) in params.iter().enumerate() {
                let _ = writeln!(out, "    a{i} = _uc_in({}, args[{i}])", descriptor(&p.ty));
            }
            let call_args = (0..params.len())
                .map(|i| format!("a{i}"))
                .collect::<Vec<_>>()
                .join(", ");
            out.push_str("    _uc_begin(k)\n    try:\n");
            let _ = writeln!(
                out,
                "        result = _uc_ns[\"Solution\"]().{name}({call_args})"
            );
            match output_param {
                Some(i) => {
                    let _ = writeln!(
                        out,
                        "        text = _uc_out({}, a{i})",
                        descriptor(&params[*i].ty)
                    );
                }
                None => {
                    let _ = writeln!(out, "        text = _uc_out({}, result)", descriptor(ret));
                }
            }
            out.push_str(
                "    except _UcInvalid as e:\n        _uc_end(k, \"invalid\", json.dumps(str(e)))\n        return\n    except BaseException as e:\n        _uc_end(k, \"error\", _uc_describe(e))\n        return\n    _uc_end(k, \"value\", text)\n",
            );
            out.push_str("\n\n_uc_run(\"Solution\")\n");
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            let _ = writeln!(
                out,
                "\n\ndef _uc_case(k, line):\n    ops, arglists = json.loads(line)\n    _uc_begin(k)\n    results = [\"null\"]\n    call = 0\n    try:\n        obj = _uc_ns[\"{class}\"]({})",
                converted_args(constructor, "arglists[0]")
            );
            out.push_str("        for call in range(1, len(ops)):\n            op, a = ops[call], arglists[call]\n");
            for (i, m) in methods.iter().enumerate() {
                let keyword = if i == 0 { "if" } else { "elif" };
                let call = format!("obj.{}({})", m.name, converted_args(&m.params, "a"));
                if m.ret == Type::Void {
                    let _ = writeln!(
                        out,
                        "            {keyword} op == \"{}\":\n                {call}\n                results.append(\"null\")",
                        m.name
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "            {keyword} op == \"{}\":\n                results.append(_uc_out({}, {call}))",
                        m.name,
                        descriptor(&m.ret)
                    );
                }
            }
            out.push_str(
                "            else:\n                os._exit(3)\n    except _UcInvalid as e:\n        _uc_end(k, \"invalid\", json.dumps(str(e)))\n        return\n    except BaseException as e:\n        _uc_end(k, \"error\", _uc_describe(e, call))\n        return\n    _uc_end(k, \"value\", \"[\" + \",\".join(results) + \"]\")\n",
            );
            let _ = writeln!(out, "\n\n_uc_run(\"{class}\")");
        }
    }
    out
}

fn param_list(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| format!(", {}: {}", p.name, spell::python(&p.ty)))
        .collect()
}

pub(super) fn starter(signature: &Signature) -> String {
    let mut out = String::new();
    if signature.uses(&Type::ListNode) {
        out.push_str("# Definition for singly-linked list.\n# class ListNode:\n#     def __init__(self, val=0, next=None):\n#         self.val = val\n#         self.next = next\n");
    }
    if signature.uses(&Type::TreeNode) {
        out.push_str("# Definition for a binary tree node.\n# class TreeNode:\n#     def __init__(self, val=0, left=None, right=None):\n#         self.val = val\n#         self.left = left\n#         self.right = right\n");
    }
    match signature {
        Signature::Function {
            name, params, ret, ..
        } => {
            let _ = write!(
                out,
                "class Solution:\n    def {name}(self{}) -> {}:\n        ",
                param_list(params),
                spell::python(ret)
            );
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            let _ = write!(
                out,
                "class {class}:\n\n    def __init__(self{}):\n        \n",
                param_list(constructor)
            );
            for m in methods {
                let _ = write!(
                    out,
                    "\n    def {}(self{}) -> {}:\n        \n",
                    m.name,
                    param_list(&m.params),
                    spell::python(&m.ret)
                );
            }
        }
    }
    out.push('\n');
    out
}
