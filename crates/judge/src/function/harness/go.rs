//! Go: `solution.go` (the user's code; `package main` is added on its first line when it
//! has none, so line numbers stay the user's) and `main.go`: the runtime, typed readers and
//! writers for every array type of the signature, and the call site. Functions keep their
//! names (`twoSum`); a design class is built by `Constructor` and its methods are exported
//! (`Get`), as LeetCode has them.

use std::fmt::Write;

use super::{array_types, capitalized, sections, Signature};
use crate::function::signature::Param;
use crate::function::types::{spell, Type};
use crate::program::ProgramFiles;

pub(super) fn program(signature: &Signature, source: &[u8]) -> ProgramFiles {
    let text = String::from_utf8_lossy(source);
    let has_package = text
        .lines()
        .any(|line| line.trim_start().starts_with("package "));
    let mut user = Vec::with_capacity(source.len() + 16);
    if !has_package {
        user.extend_from_slice(b"package main; ");
    }
    user.extend_from_slice(source);
    let mut main = sections(include_str!("runtime.go"), signature);
    main.push_str(&generated(signature));
    super::two_files(("solution.go", user), ("main.go", main), "main.go")
}

fn read(t: &Type) -> String {
    match t {
        Type::Integer => "int(r.integer())".into(),
        Type::Long => "r.integer()".into(),
        Type::Double => "r.number()".into(),
        Type::Boolean => "r.boolean()".into(),
        Type::Character => "r.char()".into(),
        Type::String => "r.str()".into(),
        Type::ListNode => "r.list()".into(),
        Type::TreeNode => "r.tree()".into(),
        Type::Array { .. } => format!("uc_r_{}(r)", t.mangled()),
        Type::Void => "nil".into(),
    }
}

/// An expression appending `value` (of `t`) to the byte slice `w`.
fn write(t: &Type, value: &str) -> String {
    match t {
        Type::Integer => format!("strconv.AppendInt(w, int64({value}), 10)"),
        Type::Long => format!("strconv.AppendInt(w, {value}, 10)"),
        Type::Double => format!("uc_double(w, {value})"),
        Type::Boolean => format!("strconv.AppendBool(w, {value})"),
        Type::Character => format!("uc_str(w, string([]byte{{{value}}}))"),
        Type::String => format!("uc_str(w, {value})"),
        Type::ListNode => format!("uc_list_out(w, {value})"),
        Type::TreeNode => format!("uc_tree_out(w, {value})"),
        Type::Array { .. } => format!("uc_w_{}(w, {value})", t.mangled()),
        Type::Void => "append(w, \"null\"...)".into(),
    }
}

fn array_functions(signature: &Signature) -> String {
    let mut out = String::new();
    for t in array_types(signature.types()) {
        let Type::Array { element, .. } = &t else {
            continue;
        };
        let name = t.mangled();
        let gt = spell::go(&t);
        let _ = write!(
            out,
            "func uc_r_{name}(r *uc_reader) {gt} {{\n\tv := {gt}{{}}\n\tif r.open() {{\n\t\tfor {{\n\t\t\tv = append(v, {})\n\t\t\tif !r.next() {{\n\t\t\t\tbreak\n\t\t\t}}\n\t\t}}\n\t}}\n\treturn v\n}}\n\n",
            read(element)
        );
        let _ = write!(
            out,
            "func uc_w_{name}(w []byte, v {gt}) []byte {{\n\tif v == nil {{\n\t\treturn append(w, \"null\"...)\n\t}}\n\tw = append(w, '[')\n\tfor i, x := range v {{\n\t\tif i > 0 {{\n\t\t\tw = append(w, ',')\n\t\t}}\n\t\tw = {}\n\t}}\n\treturn append(w, ']')\n}}\n\n",
            write(element, "x")
        );
    }
    out
}

fn read_args(out: &mut String, params: &[Param], prefix: &str, indent: &str) {
    super::read_args(out, params, indent, "r.expect(',')", |i, p| {
        format!("{prefix}{i} := {}", read(&p.ty))
    });
}

fn args(params: &[Param], prefix: &str) -> String {
    super::numbered(prefix, params.len())
}

fn generated(signature: &Signature) -> String {
    let mut out = array_functions(signature);
    out.push_str("func uc_case(k int, r *uc_reader) {\n");
    match signature {
        Signature::Function {
            name,
            params,
            output_param,
            ..
        } => {
            out.push_str("\tr.expect('[')\n");
            read_args(&mut out, params, "a", "\t");
            out.push_str(
                "\tr.expect(']')\n\tuc_begin(k)\n\tvar w []byte\n\tif uc_guard(k, nil, func() {\n",
            );
            let call = format!("{name}({})", args(params, "a"));
            match output_param {
                Some(i) => {
                    let _ = writeln!(
                        out,
                        "\t\t{call}\n\t\tw = {}",
                        write(&params[*i].ty, &format!("a{i}"))
                    );
                }
                None => {
                    let ret = match signature {
                        Signature::Function { ret, .. } => ret,
                        Signature::Design { .. } => unreachable!("a function"),
                    };
                    let _ = writeln!(out, "\t\tv := {call}\n\t\tw = {}", write(ret, "v"));
                }
            }
            out.push_str("\t}) {\n\t\tuc_end(k, \"value\", w)\n\t}\n}\n");
        }
        Signature::Design {
            constructor,
            methods,
            ..
        } => {
            out.push_str("\tr.expect('[')\n\tops := r.strings()\n\tr.expect(',')\n\tr.expect('[')\n\tuc_begin(k)\n\tw := []byte{'['}\n\tcall := 0\n\tif uc_guard(k, &call, func() {\n\t\tr.expect('[')\n");
            read_args(&mut out, constructor, "a", "\t\t");
            let _ = writeln!(
                out,
                "\t\tr.expect(']')\n\t\to := Constructor({})\n\t\tw = append(w, \"null\"...)",
                args(constructor, "a")
            );
            out.push_str("\t\tfor call = 1; call < len(ops); call++ {\n\t\t\tr.expect(',')\n\t\t\tr.expect('[')\n\t\t\tw = append(w, ',')\n\t\t\tswitch ops[call] {\n");
            for m in methods {
                let _ = writeln!(out, "\t\t\tcase \"{}\":", m.name);
                read_args(&mut out, &m.params, "b", "\t\t\t\t");
                out.push_str("\t\t\t\tr.expect(']')\n");
                let call = format!("o.{}({})", capitalized(&m.name), args(&m.params, "b"));
                if m.ret == Type::Void {
                    let _ = writeln!(out, "\t\t\t\t{call}\n\t\t\t\tw = append(w, \"null\"...)");
                } else {
                    let _ = writeln!(
                        out,
                        "\t\t\t\tv := {call}\n\t\t\t\tw = {}",
                        write(&m.ret, "v")
                    );
                }
            }
            out.push_str("\t\t\tdefault:\n\t\t\t\tpanic(uc_malformed{\"operation\"})\n\t\t\t}\n\t\t}\n\t\tw = append(w, ']')\n\t}) {\n\t\tuc_end(k, \"value\", w)\n\t}\n}\n");
        }
    }
    out
}

fn param_list(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| format!("{} {}", p.name, spell::go(&p.ty)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn returns(t: &Type) -> String {
    match t {
        Type::Void => String::new(),
        other => format!(" {}", spell::go(other)),
    }
}

pub(super) fn starter(signature: &Signature) -> String {
    let mut out = String::new();
    if signature.uses(&Type::ListNode) {
        out.push_str("/**\n * Definition for singly-linked list.\n * type ListNode struct {\n *     Val int\n *     Next *ListNode\n * }\n */\n");
    }
    if signature.uses(&Type::TreeNode) {
        out.push_str("/**\n * Definition for a binary tree node.\n * type TreeNode struct {\n *     Val int\n *     Left *TreeNode\n *     Right *TreeNode\n * }\n */\n");
    }
    match signature {
        Signature::Function {
            name, params, ret, ..
        } => {
            let _ = write!(
                out,
                "func {name}({}){} {{\n    \n}}\n",
                param_list(params),
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
                "type {class} struct {{\n    \n}}\n\n\nfunc Constructor({}) {class} {{\n    \n}}\n",
                param_list(constructor)
            );
            for m in methods {
                let _ = write!(
                    out,
                    "\n\nfunc (this *{class}) {}({}){} {{\n    \n}}\n",
                    capitalized(&m.name),
                    param_list(&m.params),
                    returns(&m.ret)
                );
            }
        }
    }
    out
}
