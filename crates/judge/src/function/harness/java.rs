//! Java: the user's class in `Solution.java` (or `<Class>.java` for a design class), with
//! the imports LeetCode users expect on its first line (so line numbers stay the user's),
//! and `UltiCodeHarness.java`: the runtime, typed readers and writers for every array type
//! of the signature, and the call site.

use std::fmt::Write;

use super::{array_types, sections, Signature};
use crate::function::signature::Param;
use crate::function::types::{spell, Type};
use crate::program::ProgramFiles;

/// Imports added in front of the user's first line.
const IMPORTS: &str = "import java.util.*; import java.util.function.*; import java.util.stream.*; import java.math.*; ";

/// The class the user writes.
pub(super) fn user_class(signature: &Signature) -> &str {
    match signature {
        Signature::Function { .. } => "Solution",
        Signature::Design { class, .. } => class,
    }
}

pub(super) fn program(signature: &Signature, source: &[u8]) -> ProgramFiles {
    let mut user = IMPORTS.as_bytes().to_vec();
    user.extend_from_slice(source);
    let mut harness = sections(include_str!("UltiCodeHarness.java"), signature);
    harness.push_str(&main_class(signature));
    super::two_files(
        (&format!("{}.java", user_class(signature)), user),
        ("UltiCodeHarness.java", harness),
        "UltiCodeHarness",
    )
}

/// An expression reading a value of `t` from `r`.
fn read(t: &Type) -> String {
    match t {
        Type::Integer => "(int) r.integer()".into(),
        Type::Long => "r.integer()".into(),
        Type::Double => "r.number()".into(),
        Type::Boolean => "r.bool()".into(),
        Type::Character => "r.chr()".into(),
        Type::String => "r.str()".into(),
        Type::ListNode => "r.list()".into(),
        Type::TreeNode => "r.tree()".into(),
        Type::Array { .. } => format!("uc_r_{}(r)", t.mangled()),
        Type::Void => "null".into(),
    }
}

/// A statement writing `value` (of `t`) to the StringBuilder `w`.
fn write(t: &Type, value: &str) -> String {
    match t {
        Type::Integer | Type::Long | Type::Boolean => format!("w.append({value});"),
        Type::Double => format!("UcWriter.dbl(w, {value});"),
        Type::Character => format!("UcWriter.str(w, String.valueOf({value}));"),
        Type::String => format!("UcWriter.str(w, {value});"),
        Type::ListNode => format!("UcWriter.list(w, {value});"),
        Type::TreeNode => format!("UcWriter.tree(w, {value});"),
        Type::Array { .. } => format!("uc_w_{}(w, {value});", t.mangled()),
        Type::Void => "w.append(\"null\");".into(),
    }
}

/// `new int[n][]` for an array of `int[]`: the erased element type with the dimension first.
fn new_array(element: &Type, size: &str) -> String {
    let mut dims = 0;
    let mut base = element;
    while let Type::Array {
        element: inner,
        list: false,
    } = base
    {
        dims += 1;
        base = inner;
    }
    let base = match base {
        Type::Array { list: true, .. } => "List".to_string(),
        other => spell::java(other),
    };
    format!("new {base}[{size}]{}", "[]".repeat(dims))
}

/// Readers and writers of each array type, in an order where inner types come first.
fn array_methods(signature: &Signature) -> String {
    let mut out = String::new();
    for t in array_types(signature.types()) {
        let Type::Array { element, list } = &t else {
            continue;
        };
        let name = t.mangled();
        let jt = spell::java(&t);
        if *list {
            let boxed = spell::java_boxed(element);
            let _ = write!(
                out,
                "    static {jt} uc_r_{name}(UcReader r) {{\n        ArrayList<{boxed}> a = new ArrayList<>();\n        if (r.open()) {{ do {{ a.add({}); }} while (r.next()); }}\n        return a;\n    }}\n",
                read(element)
            );
            let _ = write!(
                out,
                "    static void uc_w_{name}(StringBuilder w, {jt} v) {{\n        if (v == null) {{ w.append(\"null\"); return; }}\n        w.append('[');\n        boolean first = true;\n        for ({boxed} x : v) {{\n            if (!first) w.append(',');\n            first = false;\n            {}\n        }}\n        w.append(']');\n    }}\n",
                write(element, "x")
            );
        } else {
            let _ = write!(
                out,
                "    @SuppressWarnings(\"unchecked\")\n    static {jt} uc_r_{name}(UcReader r) {{\n        {jt} a = {};\n        int n = 0;\n        if (r.open()) {{ do {{ if (n == a.length) a = Arrays.copyOf(a, n * 2); a[n++] = {}; }} while (r.next()); }}\n        return Arrays.copyOf(a, n);\n    }}\n",
                new_array(element, "16"),
                read(element)
            );
            let _ = write!(
                out,
                "    static void uc_w_{name}(StringBuilder w, {jt} v) {{\n        if (v == null) {{ w.append(\"null\"); return; }}\n        w.append('[');\n        for (int i = 0; i < v.length; i++) {{\n            if (i > 0) w.append(',');\n            {}\n        }}\n        w.append(']');\n    }}\n",
                write(element, "v[i]")
            );
        }
    }
    out
}

/// Declares and reads `prefix0, prefix1, ...`.
fn read_args(out: &mut String, params: &[Param], prefix: &str, indent: &str) {
    super::read_args(out, params, indent, "r.expect(',');", |i, p| {
        format!("{} {prefix}{i} = {};", spell::java(&p.ty), read(&p.ty))
    });
}

fn args(params: &[Param], prefix: &str) -> String {
    super::numbered(prefix, params.len())
}

fn case_method(signature: &Signature) -> String {
    let user_file = format!("{}.java", user_class(signature));
    let mut out = String::from("    static void uc_case(int k, UcReader r) {\n");
    match signature {
        Signature::Function {
            name,
            params,
            ret,
            output_param,
        } => {
            out.push_str("        r.expect('[');\n");
            read_args(&mut out, params, "a", "        ");
            out.push_str("        r.expect(']');\n        UcChannel.begin(k);\n        StringBuilder w = new StringBuilder();\n        try {\n");
            let call = format!("new Solution().{name}({})", args(params, "a"));
            match output_param {
                Some(i) => {
                    let _ = writeln!(
                        out,
                        "            {call};\n            {}",
                        write(&params[*i].ty, &format!("a{i}"))
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "            {} v = {call};\n            {}",
                        spell::java(ret),
                        write(ret, "v")
                    );
                }
            }
            let _ = write!(
                out,
                "        }} catch (UcMalformed e) {{\n            throw e;\n        }} catch (UcInvalid e) {{\n            UcChannel.end(k, \"invalid\", UcChannel.quoted(e.getMessage()));\n            return;\n        }} catch (Throwable e) {{\n            UcChannel.error(k, e, \"{user_file}\", -1);\n            return;\n        }}\n        UcChannel.end(k, \"value\", w.toString());\n    }}\n"
            );
        }
        Signature::Design {
            class,
            constructor,
            methods,
        } => {
            out.push_str("        r.expect('[');\n        ArrayList<String> ops = r.strings();\n        r.expect(',');\n        r.expect('[');\n        UcChannel.begin(k);\n        StringBuilder w = new StringBuilder(\"[\");\n        int call = 0;\n        try {\n            r.expect('[');\n");
            read_args(&mut out, constructor, "a", "            ");
            let _ = writeln!(
                out,
                "            r.expect(']');\n            {class} o = new {class}({});\n            w.append(\"null\");",
                args(constructor, "a")
            );
            out.push_str("            for (call = 1; call < ops.size(); call++) {\n                r.expect(',');\n                r.expect('[');\n                w.append(',');\n                switch (ops.get(call)) {\n");
            for m in methods {
                let _ = writeln!(out, "                    case \"{}\": {{", m.name);
                read_args(&mut out, &m.params, "b", "                        ");
                out.push_str("                        r.expect(']');\n");
                let call = format!("o.{}({})", m.name, args(&m.params, "b"));
                if m.ret == Type::Void {
                    let _ = writeln!(out, "                        {call};\n                        w.append(\"null\");");
                } else {
                    let _ = writeln!(
                        out,
                        "                        {} v = {call};\n                        {}",
                        spell::java(&m.ret),
                        write(&m.ret, "v")
                    );
                }
                out.push_str("                        break;\n                    }\n");
            }
            let _ = write!(
                out,
                "                    default:\n                        throw new UcMalformed(\"operation\");\n                }}\n            }}\n            w.append(']');\n        }} catch (UcMalformed e) {{\n            throw e;\n        }} catch (UcInvalid e) {{\n            UcChannel.end(k, \"invalid\", UcChannel.quoted(e.getMessage()));\n            return;\n        }} catch (Throwable e) {{\n            UcChannel.error(k, e, \"{user_file}\", call);\n            return;\n        }}\n        UcChannel.end(k, \"value\", w.toString());\n    }}\n"
            );
        }
    }
    out
}

fn main_class(signature: &Signature) -> String {
    let mut out = String::from(
        "
public class UltiCodeHarness {
    public static void main(String[] args) throws Exception {
        byte[] input = System.in.readAllBytes();
        // The harness's own first-use costs (class loading, the file channels of the output
        // offsets) are paid here, before any case's clock runs.
        UcChannel.offsets();
        UcChannel.quoted(\"warm\\u0001up\");
        UcWriter.dbl(new StringBuilder(), 0.5);
        Throwable[] failure = new Throwable[1];
        Thread thread = new Thread(null, () -> {
            try {
                run(input);
            } catch (Throwable e) {
                failure[0] = e;
            }
        }, \"main\", 512L << 20);
        thread.start();
        thread.join();
        UcChannel.offsets();
        if (failure[0] != null) {
            failure[0].printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(3);
        }
        Runtime.getRuntime().halt(0);
    }

    static void run(byte[] input) {
        int k = 0, start = 0;
        for (int i = 0; i <= input.length; i++) {
            if (i == input.length || input[i] == '\\n') {
                if (i > start) uc_case(k++, new UcReader(input, start, i));
                start = i + 1;
            }
        }
    }

",
    );
    out.push_str(&array_methods(signature));
    out.push_str(&case_method(signature));
    out.push_str("}\n");
    out
}

fn param_list(params: &[Param]) -> String {
    params
        .iter()
        .map(|p| format!("{} {}", spell::java(&p.ty), p.name))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn starter(signature: &Signature) -> String {
    let mut out = String::new();
    if signature.uses(&Type::ListNode) {
        out.push_str("/**\n * Definition for singly-linked list.\n * public class ListNode {\n *     int val;\n *     ListNode next;\n *     ListNode() {}\n *     ListNode(int val) { this.val = val; }\n *     ListNode(int val, ListNode next) { this.val = val; this.next = next; }\n * }\n */\n");
    }
    if signature.uses(&Type::TreeNode) {
        out.push_str("/**\n * Definition for a binary tree node.\n * public class TreeNode {\n *     int val;\n *     TreeNode left;\n *     TreeNode right;\n *     TreeNode() {}\n *     TreeNode(int val) { this.val = val; }\n *     TreeNode(int val, TreeNode left, TreeNode right) {\n *         this.val = val;\n *         this.left = left;\n *         this.right = right;\n *     }\n * }\n */\n");
    }
    match signature {
        Signature::Function {
            name, params, ret, ..
        } => {
            let _ = write!(
                out,
                "class Solution {{\n    public {} {name}({}) {{\n        \n    }}\n}}\n",
                spell::java(ret),
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
                "class {class} {{\n\n    public {class}({}) {{\n        \n    }}\n",
                param_list(constructor)
            );
            for m in methods {
                let _ = write!(
                    out,
                    "    \n    public {} {}({}) {{\n        \n    }}\n",
                    spell::java(&m.ret),
                    m.name,
                    param_list(&m.params)
                );
            }
            out.push_str("}\n");
        }
    }
    out
}
