//! What the editor island needs per language: its highlighting mode and the starter code a
//! new draft begins with (a program that reads the input, so "Run" works at once).

/// The editor mode (a name the island knows) and the starter code of a language id.
pub fn mode_and_starter(language: &str) -> (&'static str, &'static str) {
    match language {
        "c" => ("cpp", "#include <stdio.h>\n\nint main(void) {\n    \n    return 0;\n}\n"),
        id if id.starts_with("cpp") => (
            "cpp",
            "#include <bits/stdc++.h>\nusing namespace std;\n\nint main() {\n    ios::sync_with_stdio(false);\n    cin.tie(nullptr);\n    \n    return 0;\n}\n",
        ),
        "java" => (
            "java",
            "import java.io.*;\nimport java.util.*;\n\npublic class Main {\n    public static void main(String[] args) throws IOException {\n        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));\n        \n    }\n}\n",
        ),
        "python3" | "pypy3" => ("python", "import sys\n\n\ndef main():\n    data = sys.stdin.read().split()\n    \n\n\nmain()\n"),
        "javascript" => (
            "javascript",
            "const data = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/);\n\n",
        ),
        "rust" => (
            "rust",
            "use std::io::{self, Read};\n\nfn main() {\n    let mut input = String::new();\n    io::stdin().read_to_string(&mut input).unwrap();\n    let mut words = input.split_ascii_whitespace();\n    \n}\n",
        ),
        "go" => (
            "go",
            "package main\n\nimport (\n\t\"bufio\"\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tin := bufio.NewReader(os.Stdin)\n\tout := bufio.NewWriter(os.Stdout)\n\tdefer out.Flush()\n\t_ = in\n\tfmt.Fprintln(out)\n}\n",
        ),
        "kotlin" => ("kotlin", "fun main() {\n    val line = readLine()!!\n    \n}\n"),
        "csharp" => (
            "csharp",
            "using System;\n\npublic class Program {\n    public static void Main() {\n        var line = Console.ReadLine();\n        \n    }\n}\n",
        ),
        "scala" => ("scala", "object Main extends App {\n  val lines = scala.io.Source.stdin.getLines()\n  \n}\n"),
        "php" => ("php", "<?php\n$line = trim(fgets(STDIN));\n\n"),
        "ruby" => ("ruby", "line = gets\n\n"),
        "haskell" => ("haskell", "main :: IO ()\nmain = do\n  input <- getContents\n  return ()\n"),
        "ocaml" => ("ocaml", "let () =\n  Scanf.scanf \" %d\" (fun n -> ignore n)\n"),
        "pascal" => ("pascal", "program Main;\nbegin\n  \nend.\n"),
        "d" => ("d", "import std.stdio;\n\nvoid main() {\n    \n}\n"),
        "lua" => ("lua", "local line = io.read(\"l\")\n\n"),
        "erlang" => ("erlang", "-module(main).\n-export([main/0]).\n\nmain() ->\n    ok.\n"),
        "racket" => ("scheme", "#lang racket\n\n"),
        "lisp" => ("commonlisp", "(let ((line (read-line)))\n  )\n"),
        "fortran" => ("fortran", "program main\n  implicit none\n  \nend program main\n"),
        "bash" => ("shell", "read -r line\n"),
        "objectivec" | "objective-c" => ("objectivec", "#import <Foundation/Foundation.h>\n\nint main(void) {\n    return 0;\n}\n"),
        _ => ("", ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_six_main_languages_have_real_modes() {
        for (id, mode) in [
            ("c", "cpp"),
            ("cpp20", "cpp"),
            ("java", "java"),
            ("python3", "python"),
            ("javascript", "javascript"),
            ("rust", "rust"),
            ("go", "go"),
        ] {
            let (m, starter) = mode_and_starter(id);
            assert_eq!(m, mode, "{id}");
            assert!(!starter.is_empty(), "{id}");
        }
        assert_eq!(mode_and_starter("brainfuck"), ("", ""));
    }
}
