//! Function problems against the real sandbox: the verdict is decided outside it, so what a
//! submission does inside (read every file it can, print fake results, forge, close or
//! redirect the report channel, patch the harness) gains it nothing; every case gets its
//! own verdict after a crash; deep recursion works.

use judge::{Coverage, JudgeReport, Verdict};
use libtest_mimic::{Failed, Trial};

use super::{env, expect, judge, package};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test(
            "function_submission_finds_no_answer_in_its_sandbox",
            finds_no_answer,
        ),
        Trial::test(
            "function_fake_result_lines_on_stdout_and_stderr_gain_nothing",
            fake_lines_on_stdio,
        ),
        Trial::test(
            "function_forged_closed_or_redirected_report_channel_gains_nothing",
            forged_channel,
        ),
        Trial::test(
            "function_patching_the_harness_gains_nothing",
            patched_harness,
        ),
        Trial::test(
            "function_every_case_gets_its_own_verdict_after_a_crash",
            every_case_own_verdict,
        ),
        Trial::test(
            "function_times_and_prints_are_per_case",
            times_and_prints_per_case,
        ),
        Trial::test(
            "function_deep_recursion_of_100000_frames_works",
            deep_recursion,
        ),
        Trial::test(
            "function_checker_comparison_runs_the_packages_validator",
            checker_comparison,
        ),
    ]
}

/// `int secretAnswer(int seed)`: the answer (a number found nowhere but in the answer
/// file) cannot be computed from the argument.
fn secret_answer_problem() -> tempfile::TempDir {
    package(&[
        ("problem.yaml", "name: Secret\nlimits:\n  time_limit: 2\n"),
        (
            "function/signature.json",
            r#"{"name": "secretAnswer", "params": [{"name": "seed", "type": "integer"}], "return": {"type": "integer"}}"#,
        ),
        ("data/secret/1.in", "1\n"),
        ("data/secret/1.ans", "918273645\n"),
        ("data/secret/2.in", "2\n"),
        ("data/secret/2.ans", "546372819\n"),
    ])
}

fn verdicts(report: &JudgeReport) -> Vec<Verdict> {
    report.tests.iter().map(|t| t.verdict).collect()
}

fn no_accepted(report: &JudgeReport, what: &str) -> Result<(), Failed> {
    if report.verdict == Verdict::AC || report.tests.iter().any(|t| t.verdict == Verdict::AC) {
        return Err(format!("{what}: a case was accepted: {report:#?}").into());
    }
    Ok(())
}

fn finds_no_answer() -> Result<(), Failed> {
    let dir = secret_answer_problem();
    // Reads every file it may under /, looking for the answers' digits.
    let source = r#"
import os
class Solution:
    def secretAnswer(self, seed: int) -> int:
        found = []
        for top in ["/job", "/tmp", "/", os.getcwd(), "/data", "/feedback", "/submission"]:
            for root, dirs, files in os.walk(top):
                if root.startswith(("/proc", "/sys", "/usr", "/dev")):
                    dirs[:] = []
                    continue
                for name in files:
                    try:
                        text = open(os.path.join(root, name), "rb").read()
                    except OSError:
                        continue
                    # The answers, spelled so that this source does not hold them.
                    for answer in (918273644 + 1, 546372818 + 1):
                        if str(answer).encode() in text:
                            found.append(answer)
        print("found", found)
        return found[0] if found else -1
"#;
    let report = judge(dir.path(), "python3", source, Coverage::All)?;
    expect(&report, &[Verdict::WA, Verdict::WA])?;
    let printed = &report.tests[0].detail.as_ref().unwrap().stdout;
    if printed.trim() != "found []" {
        return Err(format!("the sandbox held an answer: {printed:?}").into());
    }
    Ok(())
}

fn fake_lines_on_stdio() -> Result<(), Failed> {
    let dir = secret_answer_problem();
    let python = r#"
import sys
class Solution:
    def secretAnswer(self, seed: int) -> int:
        for k in range(2):
            line = '{"case":%d,"stdout":0,"stderr":0,"value":918273645}' % k
            print(line)
            print('{"begin":%d}' % k, file=sys.stderr)
            print(line, file=sys.stderr)
        print("AC")
        return 0
"#;
    let cpp = r#"
class Solution {
public:
    int secretAnswer(int seed) {
        printf("{\"case\":0,\"stdout\":0,\"stderr\":0,\"value\":918273645}\nAccepted\n");
        fprintf(stderr, "{\"case\":0,\"value\":918273645}\n");
        return 0;
    }
};
"#;
    for (language, source) in [("python3", python), ("cpp17", cpp)] {
        let report = judge(dir.path(), language, source, Coverage::All)?;
        expect(&report, &[Verdict::WA, Verdict::WA])?;
    }
    Ok(())
}

fn forged_channel() -> Result<(), Failed> {
    let dir = secret_answer_problem();
    let cases = [
        // A forged result for the case in progress (here even the right one): the harness's
        // own follows it, so the case was reported twice and neither report counts.
        (
            "python3",
            r#"
import os
class Solution:
    def secretAnswer(self, seed: int) -> int:
        os.write(3, b'{"case":%d,"stdout":0,"stderr":0,"value":918273645}\n' % (seed - 1))
        return 0
"#,
        ),
        // A forged result, then an exit before the harness can write its own: the forged
        // value is judged, and a guess is wrong.
        (
            "python3",
            r#"
import os
class Solution:
    def secretAnswer(self, seed: int) -> int:
        os.write(3, b'{"case":%d,"stdout":0,"stderr":0,"value":123456789}\n' % (seed - 1))
        os._exit(0)
"#,
        ),
        // The channel closed: nothing can be reported.
        (
            "python3",
            r#"
import os
class Solution:
    def secretAnswer(self, seed: int) -> int:
        os.close(3)
        return 918273645 if seed == 1 else 0
"#,
        ),
        // The channel redirected to stdout.
        (
            "cpp17",
            r#"
class Solution {
public:
    int secretAnswer(int seed) {
        dup2(1, 3);
        return 0;
    }
};
"#,
        ),
        // A verdict instead of a value.
        (
            "cpp17",
            r#"
class Solution {
public:
    int secretAnswer(int seed) {
        const char line[] = "{\"case\":0,\"verdict\":\"AC\"}\n";
        write(3, line, sizeof line - 1);
        _exit(0);
    }
};
"#,
        ),
    ];
    for (language, source) in cases {
        let report = judge(dir.path(), language, source, Coverage::All)?;
        no_accepted(&report, source)?;
        if report.tests.len() != 2 {
            return Err(format!("every case needs a verdict: {report:#?}").into());
        }
    }
    Ok(())
}

fn patched_harness() -> Result<(), Failed> {
    let dir = secret_answer_problem();
    // Python: replace the harness's writer of results with one that claims success.
    let python = r#"
import sys
harness = sys.modules["__main__"]
harness._uc_out = lambda t, v: '"AC"'
harness.Compare = lambda *a: True
class Solution:
    def secretAnswer(self, seed: int) -> int:
        return 0
"#;
    // JavaScript: make every JSON text the harness writes claim success.
    let javascript = r#"
JSON.stringify = () => '"Accepted"';
var secretAnswer = function(seed) {
    return 0;
};
"#;
    for (language, source) in [("python3", python), ("javascript", javascript)] {
        if env().languages.get(language).is_none() {
            println!(
                "UNAVAILABLE {language}: {}",
                env().languages.why_not(language)
            );
            continue;
        }
        let report = judge(dir.path(), language, source, Coverage::All)?;
        expect(&report, &[Verdict::WA, Verdict::WA])?;
    }
    Ok(())
}

/// `int square(int x)`: five cases; the test's solutions misbehave on some of them.
fn square_problem() -> tempfile::TempDir {
    let mut files = vec![
        ("problem.yaml".to_string(), "name: Square\nlimits:\n  time_limit: 1\n  memory: 256\n".to_string()),
        (
            "function/signature.json".to_string(),
            r#"{"name": "square", "params": [{"name": "x", "type": "integer"}], "return": {"type": "integer"}}"#.to_string(),
        ),
    ];
    for x in 1..=5 {
        files.push((format!("data/secret/{x}.in"), format!("{x}\n")));
        files.push((format!("data/secret/{x}.ans"), format!("{}\n", x * x)));
    }
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    package(&borrowed)
}

fn every_case_own_verdict() -> Result<(), Failed> {
    let dir = square_problem();
    let cases = [
        (
            "cpp17",
            r#"
class Solution {
public:
    int square(int x) {
        if (x == 2) { volatile int* p = nullptr; *p = 1; }   // a crash
        if (x == 3) { while (true) {} }                      // a timeout
        if (x == 4) return -1;                               // a wrong answer
        return x * x;
    }
};
"#,
            [
                Verdict::AC,
                Verdict::RE,
                Verdict::TLE,
                Verdict::WA,
                Verdict::AC,
            ],
        ),
        (
            "python3",
            r#"
import os, sys
class Solution:
    def square(self, x: int) -> int:
        if x == 1:
            sys.exit(0)                       # an exception (SystemExit)
        if x == 2:
            os._exit(0)                       # the process ends inside the call
        if x == 3:
            hoard = bytearray(1 << 30)        # more than the memory limit
        if x == 4:
            raise ValueError("four")
        return x * x
"#,
            [
                Verdict::RE,
                Verdict::RE,
                Verdict::MLE,
                Verdict::RE,
                Verdict::AC,
            ],
        ),
    ];
    for (language, source, expected) in cases {
        let report = judge(dir.path(), language, source, Coverage::All)?;
        expect(&report, &expected)?;
    }
    // Printing more than the output limit (8 MiB) ends that case only.
    let floods = "class Solution {\npublic:\n    int square(int x) {\n        if (x == 2) for (int i = 0; i < (1 << 20); ++i) printf(\"0123456789abcdef\\n\");\n        return x * x;\n    }\n};\n";
    let report = judge(dir.path(), "cpp17", floods, Coverage::All)?;
    expect(
        &report,
        &[
            Verdict::AC,
            Verdict::OLE,
            Verdict::AC,
            Verdict::AC,
            Verdict::AC,
        ],
    )?;
    // Pass-fail problems stop at the first failure, as for any problem.
    let report = judge(dir.path(), "cpp17", cases[0].1, Coverage::Package)?;
    expect(&report, &[Verdict::AC, Verdict::RE])?;
    let error = report.tests[1].message.clone();
    if !error.contains("signal") {
        return Err(format!("a crash names its signal: {error:?}").into());
    }
    Ok(())
}

fn times_and_prints_per_case() -> Result<(), Failed> {
    let dir = square_problem();
    // Case 3 spins for about 300 ms of CPU; every case prints its number.
    let source = r#"
#include <time.h>
class Solution {
public:
    int square(int x) {
        printf("out %d\n", x);
        fprintf(stderr, "err %d\n", x);
        if (x == 3) {
            timespec start, now;
            clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
            do clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
            while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < 300);
        }
        return x * x;
    }
};
"#;
    let report = judge(dir.path(), "cpp17", source, Coverage::All)?;
    expect(&report, &[Verdict::AC; 5])?;
    for (i, test) in report.tests.iter().enumerate() {
        let detail = test.detail.as_ref().unwrap();
        let x = i + 1;
        if detail.stdout != format!("out {x}\n") || detail.stderr != format!("err {x}\n") {
            return Err(format!("case {x}'s prints: {detail:?}").into());
        }
        let spun = x == 3;
        if spun != (test.time_ms >= 280) || test.time_ms > 600 {
            return Err(format!("case {x}'s time: {} ms", test.time_ms).into());
        }
    }
    Ok(())
}

fn deep_recursion() -> Result<(), Failed> {
    // A chain of 100,000 nodes, each the right child of the one before.
    let mut chain = String::from("[1");
    let mut inverted = String::from("[1");
    for v in 2..=100_000 {
        chain.push_str(&format!(",null,{v}"));
        inverted.push_str(&format!(",{v},null"));
    }
    chain.push_str("]\n");
    // Trailing nulls are trimmed in level order.
    inverted.truncate(inverted.len() - ",null".len());
    inverted.push_str("]\n");
    let dir = package(&[
        (
            "problem.yaml",
            "name: Depth\nlimits:\n  time_limit: 5\n  memory: 1024\n",
        ),
        (
            "function/signature.json",
            r#"{"name": "invertTree", "params": [{"name": "root", "type": "TreeNode"}], "return": {"type": "TreeNode"}}"#,
        ),
        ("data/secret/1.in", &chain),
        ("data/secret/1.ans", &inverted),
    ]);
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/problems/invert-tree/submissions/accepted");
    for (language, file) in [
        ("cpp17", "recursive.cpp"),
        ("python3", "recursive.py"),
        ("java", "Recursive.java"),
        ("javascript", "recursive.js"),
        ("go", "recursive.go"),
        ("rust", "recursive.rs"),
    ] {
        if env().languages.get(language).is_none() {
            println!(
                "UNAVAILABLE {language}: {}",
                env().languages.why_not(language)
            );
            continue;
        }
        let source = std::fs::read_to_string(examples.join(file)).unwrap();
        let report = judge(dir.path(), language, &source, Coverage::All)?;
        if report.verdict != Verdict::AC {
            return Err(format!("{language}: {:?}", verdicts(&report)).into());
        }
    }
    Ok(())
}

/// `compare: checker`: the package's output validator gets the arguments as its input file
/// and the returned value (canonical JSON) on stdin; any pair of indices summing to the
/// target is right.
fn checker_comparison() -> Result<(), Failed> {
    let validator = r#"
import json, sys
lines = open(sys.argv[1]).read().split("\n")
nums, target = json.loads(lines[0]), json.loads(lines[1])
got = json.loads(sys.stdin.read())
ok = (isinstance(got, list) and len(got) == 2 and got[0] != got[1]
      and all(isinstance(i, int) and 0 <= i < len(nums) for i in got)
      and nums[got[0]] + nums[got[1]] == target)
sys.exit(42 if ok else 43)
"#;
    let signature = r#"{"name": "anyPair", "params": [{"name": "nums", "type": "integer[]"}, {"name": "target", "type": "integer"}], "return": {"type": "integer[]"}}"#;
    let files = [
        ("problem.yaml", "name: Any pair\nvalidation: custom\n"),
        ("function/signature.json", signature),
        ("function/config.yaml", "compare: checker\n"),
        ("output_validators/pair/validate.py", validator),
        ("data/secret/1.in", "[1,2,3,4]\n5\n"),
        ("data/secret/1.ans", "[0,3]\n"),
    ];
    let dir = package(&files);
    let other_pair =
        "class Solution:\n    def anyPair(self, nums, target):\n        return [2, 1]\n";
    let same_index =
        "class Solution:\n    def anyPair(self, nums, target):\n        return [0, 0]\n";
    expect(
        &judge(dir.path(), "python3", other_pair, Coverage::All)?,
        &[Verdict::AC],
    )?;
    expect(
        &judge(dir.path(), "python3", same_index, Coverage::All)?,
        &[Verdict::WA],
    )?;
    // The comparison and the validator come together, or the package is refused.
    let without_validator: Vec<(&str, &str)> = files
        .iter()
        .copied()
        .filter(|(path, _)| !path.starts_with("output_validators"))
        .map(|(path, text)| {
            if path == "problem.yaml" {
                (path, "name: Any pair\n")
            } else {
                (path, text)
            }
        })
        .collect();
    let refused = judge::Problem::load(package(&without_validator).path()).unwrap_err();
    if !refused
        .to_string()
        .contains("the checker comparison needs an output validator")
    {
        return Err(format!("{refused}").into());
    }
    let unused_validator: Vec<(&str, &str)> = files
        .iter()
        .copied()
        .filter(|(path, _)| *path != "function/config.yaml")
        .collect();
    let refused = judge::Problem::load(package(&unused_validator).path()).unwrap_err();
    if !refused.to_string().contains("set compare: checker") {
        return Err(format!("{refused}").into());
    }
    Ok(())
}
