//! The judge against the real sandbox, on small packages written by each test: checker
//! conventions, validator failures that must never be blamed on the user, interactive edge
//! cases. (The example problems are verified through the CLI in the `ulticode` crate.)
//!
//! The test binary is its own sandbox supervisor.

mod function;
mod jobs;

use std::path::Path;
use std::sync::OnceLock;

use judge::{
    default_languages, Coverage, Judge, JudgeError, JudgeOptions, JudgeReport, Languages, Problem,
    Verdict,
};
use libtest_mimic::{Arguments, Failed, Trial};
use sandbox::{NativeSandbox, SupervisorCommand};

fn main() {
    if std::env::args_os().nth(1).as_deref() == Some(sandbox::SUPERVISOR_ARG.as_ref()) {
        sandbox::supervisor_main();
    }
    let args = Arguments::from_args();
    let trials = vec![
        Trial::test("testlib_checker_exit_codes", testlib_checker_exit_codes),
        Trial::test(
            "icpc_validator_feedback_and_scores",
            icpc_validator_feedback_and_scores,
        ),
        Trial::test(
            "a_crashing_validator_is_a_system_error",
            crashing_validator_is_system_error,
        ),
        Trial::test(
            "a_validator_that_does_not_compile_stops_judging",
            validator_compile_failure,
        ),
        Trial::test(
            "interactive_submission_that_stalls_is_tle",
            interactive_stall_is_tle,
        ),
        Trial::test(
            "interactive_crash_before_the_validator_decides_is_rte_every_time",
            interactive_crash_is_rte,
        ),
        Trial::test(
            "interactive_validator_writing_after_the_submission_left_is_not_killed",
            interactive_validator_outlives_submission,
        ),
        Trial::test(
            "group_validator_flags_apply_to_their_group",
            group_validator_flags,
        ),
        Trial::test("coverage_options_select_tests", coverage_options),
        Trial::test(
            "input_validators_accept_valid_and_reject_invalid_data",
            input_validators,
        ),
        Trial::test("test_case_args_reach_the_submission", test_case_args),
        Trial::test(
            "submit_answer_source_is_the_answer",
            submit_answer_source_is_the_answer,
        ),
        Trial::test(
            "languages_outside_the_problems_list_are_refused",
            languages_outside_the_problems_list_are_refused,
        ),
        Trial::test(
            "interactive_crash_caused_by_the_validators_exit_is_its_rejection",
            interactive_crash_caused_by_the_validators_exit_is_its_rejection,
        ),
        Trial::test(
            "shown_sample_outputs_must_pass_the_output_validator",
            shown_sample_outputs_must_pass_the_output_validator,
        ),
        Trial::test(
            "a_rejudge_takes_the_kept_compilation_and_judges_alike",
            a_rejudge_takes_the_kept_compilation,
        ),
    ];
    let trials = trials
        .into_iter()
        .chain(function::trials())
        .chain(jobs::trials())
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

struct Env {
    sandbox: NativeSandbox,
    languages: Languages,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let sandbox = NativeSandbox::new(SupervisorCommand::current_exe().unwrap());
        // C, C++ and Python are required; the other harness languages are tested where
        // this machine has them.
        let required = ["c", "cpp17", "python3"];
        let wanted = ["java", "javascript", "go", "rust"];
        let configs = default_languages()
            .into_iter()
            .filter(|c| required.contains(&c.id.as_str()) || wanted.contains(&c.id.as_str()))
            .collect();
        let languages = Languages::detect(&sandbox, configs);
        let missing: Vec<_> = languages
            .unavailable
            .iter()
            .filter(|u| required.contains(&u.id.as_str()))
            .collect();
        assert!(missing.is_empty(), "{missing:?}");
        Env { sandbox, languages }
    })
}

/// Writes a package from (path, content) pairs.
fn package(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

fn judge(
    dir: &Path,
    language: &str,
    source: &str,
    coverage: Coverage,
) -> Result<JudgeReport, JudgeError> {
    let problem = Problem::load(dir).map_err(|e| JudgeError::Language(e.to_string()))?;
    let env = env();
    let judge = Judge::new(&env.sandbox, &env.languages);
    let prepared = judge.prepare(&problem)?;
    judge.judge(
        &prepared,
        language,
        source.as_bytes(),
        JudgeOptions {
            coverage,
            abort: None,
        },
        &|_| {},
    )
}

fn expect(report: &JudgeReport, verdicts: &[Verdict]) -> Result<(), Failed> {
    let got: Vec<Verdict> = report.tests.iter().map(|t| t.verdict).collect();
    if got == verdicts {
        Ok(())
    } else {
        Err(format!("verdicts {got:?}, expected {verdicts:?}: {report:#?}").into())
    }
}

/// A testlib-style checker (`checker input output answer`): the submission prints the code
/// the checker should answer with.
const TESTLIB_CHECKER: &str = r#"
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    if (argc != 4) return 3;
    FILE *out = fopen(argv[2], "r");
    char word[64] = "";
    if (!out || fscanf(out, "%63s", word) != 1) { fputs("wrong answer no output", stderr); return 1; }
    if (!strcmp(word, "ok")) { fputs("ok fine", stderr); return 0; }
    if (!strcmp(word, "pe")) { fputs("wrong output format", stderr); return 2; }
    if (!strcmp(word, "points")) { fputs("points 7.5 partial", stderr); return 7; }
    if (!strcmp(word, "fail")) { fputs("FAIL checker gave up", stderr); return 3; }
    fputs("wrong answer expected ok", stderr);
    return 1;
}
"#;

fn testlib_checker_exit_codes() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "validation: custom\n"),
        ("output_validators/check/checker.c", TESTLIB_CHECKER),
        ("data/secret/1.in", "x\n"),
        ("data/secret/1.ans", "x\n"),
    ]);
    let cases = [
        ("ok", Verdict::AC, "ok fine"),
        ("pe", Verdict::PE, "wrong output format"),
        ("nope", Verdict::WA, "wrong answer expected ok"),
        ("points", Verdict::AC, "points 7.5 partial"),
        ("fail", Verdict::SE, "checker failed: FAIL checker gave up"),
    ];
    for (word, verdict, message) in cases {
        let report = judge(
            dir.path(),
            "python3",
            &format!("print('{word}')"),
            Coverage::Package,
        )?;
        expect(&report, &[verdict])?;
        if report.tests[0].message != message {
            return Err(format!("{word}: message {:?}", report.tests[0].message).into());
        }
    }
    let report = judge(dir.path(), "python3", "print('points')", Coverage::Package)?;
    assert_eq!(report.tests[0].score, Some(7.5));
    Ok(())
}

/// An ICPC validator that accepts when the output equals the input, reports a score of the
/// output's length on `custom score` problems, and writes why it rejects.
const ECHO_VALIDATOR: &str = r#"
import sys
feedback = sys.argv[3]
expected = open(sys.argv[1]).read().strip()
got = sys.stdin.read().strip()
if got == expected:
    open(feedback + '/score.txt', 'w').write(str(len(got)))
    sys.exit(42)
open(feedback + '/judgemessage.txt', 'w').write('expected the input echoed back')
sys.exit(43)
"#;

fn icpc_validator_feedback_and_scores() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "type: scoring\nvalidation: custom score\n"),
        ("output_validators/echo/validate.py", ECHO_VALIDATOR),
        ("data/secret/1.in", "abc\n"),
        ("data/secret/1.ans", "\n"),
        ("data/secret/2.in", "hello\n"),
        ("data/secret/2.ans", "\n"),
    ]);
    let echo = "import sys\nsys.stdout.write(sys.stdin.read())\n";
    let report = judge(dir.path(), "python3", echo, Coverage::Package)?;
    expect(&report, &[Verdict::AC, Verdict::AC])?;
    assert_eq!(report.score, Some(8.0), "custom scores are summed: 3 + 5");
    let report = judge(dir.path(), "python3", "print('nope')", Coverage::Package)?;
    expect(&report, &[Verdict::WA, Verdict::WA])?;
    assert_eq!(report.tests[0].message, "expected the input echoed back");
    assert_eq!(report.score, Some(0.0));
    Ok(())
}

fn crashing_validator_is_system_error() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "validation: custom\n"),
        (
            "output_validators/bad/validate.c",
            "int main(void) { int *p = 0; return *p; }\n",
        ),
        ("data/secret/1.in", "1\n"),
        ("data/secret/1.ans", "1\n"),
    ]);
    let report = judge(dir.path(), "python3", "print(1)", Coverage::Package)?;
    expect(&report, &[Verdict::SE])?;
    assert_eq!(report.verdict, Verdict::SE);
    assert!(
        report.tests[0]
            .message
            .contains("validator ended as signaled"),
        "{report:#?}"
    );
    Ok(())
}

fn validator_compile_failure() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "validation: custom\n"),
        (
            "output_validators/bad/validate.c",
            "int main(void) { return }\n",
        ),
        ("data/secret/1.in", "1\n"),
        ("data/secret/1.ans", "1\n"),
    ]);
    match judge(dir.path(), "python3", "print(1)", Coverage::Package) {
        Err(JudgeError::Validator(output)) if output.contains("error") => Ok(()),
        other => Err(format!("expected a validator error, got {other:?}").into()),
    }
}

const PATIENT_INTERACTOR: &str = r#"
import sys
line = sys.stdin.readline()
sys.exit(42 if line.strip() == 'hello' else 43)
"#;

fn interactive_stall_is_tle() -> Result<(), Failed> {
    let dir = package(&[
        (
            "problem.yaml",
            "validation: custom interactive\nlimits:\n  time_limit: 0.5\n",
        ),
        ("output_validators/patient/interact.py", PATIENT_INTERACTOR),
        ("data/secret/1.in", "\n"),
        ("data/secret/1.ans", "\n"),
    ]);
    let report = judge(dir.path(), "python3", "print('hello')", Coverage::Package)?;
    expect(&report, &[Verdict::AC])?;
    // Never answers: the validator waits, the submission burns its CPU time.
    let report = judge(
        dir.path(),
        "python3",
        "while True:\n    pass\n",
        Coverage::Package,
    )?;
    expect(&report, &[Verdict::TLE])?;
    // Sleeps without printing: idle until the wall-clock limit.
    let report = judge(
        dir.path(),
        "python3",
        "import time\ntime.sleep(60)\n",
        Coverage::Package,
    )?;
    expect(&report, &[Verdict::TLE])?;
    Ok(())
}

/// Answers one query, then expects another; end of input is a wrong answer.
const ONE_QUERY_INTERACTOR: &str = r#"
import sys
sys.stdin.readline()
print('lower', flush=True)
sys.exit(42 if sys.stdin.readline() else 43)
"#;

/// The submission crashes after its first answer: its end is what makes the validator see end
/// of input and reject, so the crash came first and decides (run-time error), every time, not
/// only when the submission's report happens to reach the judge before the validator's.
fn interactive_crash_is_rte() -> Result<(), Failed> {
    let dir = package(&[
        (
            "problem.yaml",
            "validation: custom interactive
",
        ),
        ("output_validators/one/interact.py", ONE_QUERY_INTERACTOR),
        ("data/secret/1.in", "\n"),
        ("data/secret/1.ans", "\n"),
    ]);
    // A child it leaves behind holds memory that takes a while to tear down, so the
    // submission's report reaches the judge well after the validator's.
    let crash = r#"
import os, signal, time
if os.fork() == 0:
    hold = bytes([1]) * (200 << 20)
    os.close(0)
    os.close(1)
    time.sleep(60)
time.sleep(0.3)
print('? 1', flush=True)
input()
os.kill(os.getpid(), signal.SIGSEGV)
"#;
    for round in 0..8 {
        let report = judge(dir.path(), "python3", crash, Coverage::Package)?;
        expect(&report, &[Verdict::RE]).map_err(|e| format!("round {round}: {e:?}"))?;
    }
    Ok(())
}

/// A validator that still writes after the submission left (here: it waits, then talks) is not
/// killed by a broken pipe: it reads end of input and rejects, as the reference runner has it.
fn interactive_validator_outlives_submission() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "validation: custom interactive
"),
        (
            "output_validators/late/interact.py",
            "import sys, time\ntime.sleep(0.3)\nprint('welcome', flush=True)\nsys.exit(42 if sys.stdin.readline() else 43)\n",
        ),
        ("data/secret/1.in", "\n"),
        ("data/secret/1.ans", "\n"),
    ]);
    let report = judge(dir.path(), "python3", "pass\n", Coverage::Package)?;
    expect(&report, &[Verdict::WA])?;
    Ok(())
}

fn group_validator_flags() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "name: flags\n"),
        ("data/secret/exact/1.in", "\n"),
        ("data/secret/exact/1.ans", "1.0\n"),
        (
            "data/secret/loose/testdata.yaml",
            "output_validator_flags: float_tolerance 0.1\n",
        ),
        ("data/secret/loose/1.in", "\n"),
        ("data/secret/loose/1.ans", "1.0\n"),
    ]);
    let report = judge(dir.path(), "python3", "print(1.05)", Coverage::All)?;
    expect(&report, &[Verdict::WA, Verdict::AC])?;
    Ok(())
}

fn coverage_options() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "name: coverage\n"),
        ("data/secret/1.in", "1\n"),
        ("data/secret/1.ans", "1\n"),
        ("data/secret/2.in", "2\n"),
        ("data/secret/2.ans", "2\n"),
        ("data/secret/3.in", "3\n"),
        ("data/secret/3.ans", "3\n"),
    ]);
    // Echoes, except that 2 crashes: the run stops there, unless every test is wanted.
    let source = "n = int(input())\nassert n != 2\nprint(n)\n";
    let report = judge(dir.path(), "python3", source, Coverage::Package)?;
    expect(&report, &[Verdict::AC, Verdict::RE])?;
    let report = judge(dir.path(), "python3", source, Coverage::All)?;
    expect(&report, &[Verdict::AC, Verdict::RE, Verdict::AC])?;
    assert_eq!(report.verdict, Verdict::RE);
    Ok(())
}

/// Input validators run on every input in the sandbox: a checktestdata script (exit 0) and a
/// program (exit 42/43, with the group's arguments). An input one of them rejects, or an
/// invalid input none rejects, is a failure; checktestdata missing is "not run", by name.
fn input_validators() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "name: validated\n"),
        ("input_validators/range.ctd", "INT(1, 100) NEWLINE\n"),
        (
            "input_validators/even.py",
            "import sys\nlimit = int(sys.argv[1]) if len(sys.argv) > 1 else 100\nv = int(sys.stdin.read())\nsys.exit(42 if v % 2 == 0 and v <= limit else 43)\n",
        ),
        ("data/sample/1.in", "4\n"),
        ("data/sample/1.ans", "4\n"),
        (
            "data/secret/small/testdata.yaml",
            "input_validator_flags:\n  name: even\n  flags: \"10\"\n",
        ),
        ("data/secret/small/1.in", "12\n"),
        ("data/secret/small/1.ans", "12\n"),
        ("data/secret/big/1.in", "300\n"),
        ("data/secret/big/1.ans", "300\n"),
        ("data/invalid_input/odd.in", "7\n"),
        ("data/invalid_input/sneaky.in", "8\n"),
    ]);
    let problem = Problem::load(dir.path())?;
    let env = env();
    let judge = Judge::new(&env.sandbox, &env.languages);
    let checktestdata = judge::input_validation::checktestdata_dir();
    let reports = judge::input_validation::validate_inputs_with(&judge, &problem, &checktestdata)?;
    let by_name = |name: &str| reports.iter().find(|r| r.validator == name).unwrap();
    let even = by_name("even");
    // 12 is over the small group's limit of 10, 300 over the default 100.
    assert_eq!(even.accepted, 1, "{even:?}");
    let mut failures: Vec<&String> = even
        .failures
        .iter()
        .filter(|f| f.starts_with("rejected"))
        .collect();
    failures.sort();
    assert_eq!(
        failures,
        [
            "rejected data/secret/big/1.in",
            "rejected data/secret/small/1.in"
        ],
        "{reports:#?}"
    );
    let range = by_name("range");
    match &range.not_run {
        Some(reason) => println!("UNAVAILABLE checktestdata: {reason}"),
        None => {
            assert_eq!(range.accepted, 2, "{range:?}");
            assert_eq!(
                range.failures,
                ["rejected data/secret/big/1.in"],
                "{range:?}"
            );
        }
    }
    // Both reject 7 (odd); nobody rejects 8.
    let all: Vec<&String> = reports.iter().flat_map(|r| &r.failures).collect();
    assert!(
        all.iter()
            .any(|f| f.as_str() == "no input validator rejected data/invalid_input/sneaky.in"),
        "{all:?}"
    );
    assert!(!all.iter().any(|f| f.contains("odd.in")), "{all:?}");

    let missing = judge::input_validation::validate_inputs_with(
        &judge,
        &problem,
        Path::new("/nonexistent/checktestdata"),
    )?;
    let range = missing.iter().find(|r| r.validator == "range").unwrap();
    assert!(
        range.not_run.as_deref().is_some_and(
            |r| r.contains("input validator range not run: checktestdata is not installed")
        ),
        "{range:?}"
    );
    Ok(())
}

/// `args` (2025-09): a group's arguments for every test in it, a case's own `<name>.yaml`
/// for that case; the submission gets them on its command line.
fn test_case_args() -> Result<(), Failed> {
    let dir = package(&[
        (
            "problem.yaml",
            "problem_format_version: 2025-09\nname: args\n",
        ),
        ("data/sample/1.in", "\n"),
        ("data/sample/1.ans", "\n"),
        ("data/secret/test_group.yaml", "args: [--mode, group]\n"),
        ("data/secret/1.in", "\n"),
        ("data/secret/1.ans", "--mode group\n"),
        ("data/secret/2.in", "\n"),
        ("data/secret/2.ans", "own 7\n"),
        (
            "data/secret/2.yaml",
            "args: [own, 7]\ndescription: its own arguments\n",
        ),
    ]);
    let report = judge(
        dir.path(),
        "python3",
        "import sys\nprint(' '.join(sys.argv[1:]))\n",
        Coverage::All,
    )?;
    expect(&report, &[Verdict::AC, Verdict::AC, Verdict::AC])
}

/// A submit-answer problem judged the way the server judges a submission: the source is the
/// answer to every test, checked by the output validator and never run.
fn submit_answer_source_is_the_answer() -> Result<(), Failed> {
    let dir = package(&[
        (
            "problem.yaml",
            "problem_format_version: 2025-09\nname: answers\ntype: submit-answer\n",
        ),
        ("data/sample/1.in", "2 + 2\n"),
        ("data/sample/1.ans", "4\n"),
        ("data/secret/1.in", "3 + 1\n"),
        ("data/secret/1.ans", "4\n"),
        ("data/secret/2.in", "2 + 3\n"),
        ("data/secret/2.ans", "5\n"),
    ]);
    // Were it run, this "program" would print nothing: the answers are its bytes.
    let report = judge(dir.path(), "python3", "4\n", Coverage::All)?;
    expect(&report, &[Verdict::AC, Verdict::AC, Verdict::WA])?;
    assert!(report.tests[2].message.contains("differs"), "{report:#?}");
    assert_eq!(report.compile_output, "");
    Ok(())
}

/// `languages` and `limits.code` in problem.yaml: a submission in another language, or larger
/// than the code limit, is refused with the reason, before anything is compiled.
fn languages_outside_the_problems_list_are_refused() -> Result<(), Failed> {
    let dir = package(&[
        (
            "problem.yaml",
            "problem_format_version: 2025-09\nname: c only\nlanguages: [c]\n",
        ),
        ("data/secret/1.in", "\n"),
        ("data/secret/1.ans", "1\n"),
    ]);
    let refused = judge(dir.path(), "python3", "print(1)\n", Coverage::All)?;
    assert_eq!(refused.verdict, Verdict::CE, "{refused:#?}");
    assert!(
        refused
            .compile_output
            .contains("python3 is not one of this problem's languages (c)"),
        "{refused:#?}"
    );
    let allowed = judge(
        dir.path(),
        "c",
        "#include <stdio.h>\nint main(void) { puts(\"1\"); return 0; }\n",
        Coverage::All,
    )?;
    expect(&allowed, &[Verdict::AC])?;
    // `limits.code` (KiB): a larger submission is refused the same way.
    let limited = package(&[
        (
            "problem.yaml",
            "problem_format_version: 2025-09\nname: small\nlimits:\n  code: 1\n",
        ),
        ("data/secret/1.in", "\n"),
        ("data/secret/1.ans", "1\n"),
    ]);
    let padded = format!("print(1)\n#{}\n", "x".repeat(1100));
    let refused = judge(limited.path(), "python3", &padded, Coverage::All)?;
    assert_eq!(refused.verdict, Verdict::CE, "{refused:#?}");
    assert!(
        refused
            .compile_output
            .contains("the submission is 2 KiB, more than the problem's code limit of 1 KiB"),
        "{refused:#?}"
    );
    let fits = judge(limited.path(), "python3", "print(1)\n", Coverage::All)?;
    expect(&fits, &[Verdict::AC])
}

/// The format's checks of the output validator: a sample's `.out` (shown instead of its
/// answer) must pass it, and so must a shown `.ans`; `valid_output/` must pass and
/// `invalid_output/` must not. A failure on a test with a `.desc` / `.hint` quotes them.
fn shown_sample_outputs_must_pass_the_output_validator() -> Result<(), Failed> {
    let dir = package(&[
        (
            "problem.yaml",
            "problem_format_version: 2025-09\nname: shown\n",
        ),
        ("data/sample/1.in", "3\n"),
        ("data/sample/1.ans", "6\n"),
        ("data/sample/1.out", " 6 \n"),
        ("data/sample/2.in", "4\n"),
        ("data/sample/2.ans", "8\n"),
        ("data/sample/2.out", "9\n"),
        ("data/valid_output/ok.in", "5\n"),
        ("data/valid_output/ok.ans", "10\n"),
        ("data/valid_output/ok.out", "  10\n"),
        ("data/invalid_output/bad.in", "5\n"),
        ("data/invalid_output/bad.ans", "10\n"),
        ("data/invalid_output/bad.out", "10\n"),
        ("data/sample/1.desc", "three doubled\n"),
        ("data/sample/1.hint", "read the statement\n"),
        ("data/secret/1.in", "1\n"),
        ("data/secret/1.ans", "2\n"),
        ("submissions/accepted/zero.py", "print(0)\n"),
    ]);
    let problem = Problem::load(dir.path()).map_err(|e| e.to_string())?;
    let env = env();
    let judge = Judge::new(&env.sandbox, &env.languages);
    let prepared = judge.prepare(&problem)?;
    let report = judge::verify(&judge, &prepared, &|_| {})?;
    // valid_output/ok.out passes as it must; invalid_output/bad.out passes but must not;
    // sample/2.out is wrong.
    let said = &report.output_validation;
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].starts_with(
            "data/invalid_output/bad.out: the output validator says AC (), but it must reject it"
        ),
        "{said:?}"
    );
    assert!(
        said[1].starts_with("data/sample/2.out: the output validator says WA"),
        "{said:?}"
    );
    assert!(!report.ok);
    // A mismatch names the first failed test with what the package says of it.
    let judge::RowOutcome::Mismatch(reason) = &report.rows[0].outcome else {
        return Err(format!("{:?}", report.rows[0]).into());
    };
    assert!(
        reason.ends_with("[sample/1: three doubled (hint: read the statement)]"),
        "{reason}"
    );
    Ok(())
}

/// A validator that rejects and exits: the submission, waiting for its answer, would see the
/// end of its input at once and crash on it. That crash is caused by the validator's exit, so
/// the rejection decides, every time (the judge holds the pipes until the submission is
/// cancelled; before, this was RE in some runs).
fn interactive_crash_caused_by_the_validators_exit_is_its_rejection() -> Result<(), Failed> {
    let dir = package(&[
        ("problem.yaml", "validation: custom interactive\n"),
        (
            "output_validators/strict/interact.py",
            "import sys\nsys.stdin.readline()\nsys.exit(43)\n",
        ),
        ("data/secret/1.in", "\n"),
        ("data/secret/1.ans", "\n"),
    ]);
    let asks = "print('? 1', flush=True)\ninput()\nprint('? 2', flush=True)\n";
    for round in 0..12 {
        let report = judge(dir.path(), "python3", asks, Coverage::Package)?;
        expect(&report, &[Verdict::WA]).map_err(|e| format!("round {round}: {e:?}"))?;
    }
    Ok(())
}

/// The compile cache: judging the same source again (a rejudge) compiles nothing and judges
/// alike; a source differing by one byte compiles anew and is judged on its own bytes.
fn a_rejudge_takes_the_kept_compilation() -> Result<(), Failed> {
    let dir = package(&[
        (
            "problem.yaml",
            "problem_format_version: 2025-09\nname: sum\n",
        ),
        ("data/secret/1.in", "1 2\n"),
        ("data/secret/1.ans", "3\n"),
        ("data/secret/2.in", "40 2\n"),
        ("data/secret/2.ans", "42\n"),
    ]);
    let problem = Problem::load(dir.path()).map_err(|e| e.to_string())?;
    let env = env();
    let store = tempfile::tempdir()?;
    let cache = judge::compile_cache::CompileCache::open(store.path(), 64 << 20)?;
    let judge = Judge::new(&env.sandbox, &env.languages).with_compile_cache(Some(&cache));
    let prepared = judge.prepare(&problem)?;
    let run = |source: &str| {
        judge.judge(
            &prepared,
            "c",
            source.as_bytes(),
            JudgeOptions {
                coverage: Coverage::All,
                abort: None,
            },
            &|_| {},
        )
    };
    let sum = "#include <stdio.h>\nint main(void){long a,b;scanf(\"%ld %ld\",&a,&b);printf(\"%ld\\n\",a+b);return 0;}\n";
    let first = run(sum)?;
    expect(&first, &[Verdict::AC, Verdict::AC])?;
    let counts = cache.counts();
    assert_eq!((counts.hits, counts.misses), (0, 1), "{counts:?}");
    let again = run(sum)?;
    expect(&again, &[Verdict::AC, Verdict::AC])?;
    assert_eq!(again.compile_output, first.compile_output);
    assert_eq!(cache.counts().hits, 1, "the rejudge compiled again");
    let product = sum.replace("a+b", "a*b");
    let other = run(&product)?;
    expect(&other, &[Verdict::WA, Verdict::WA])?;
    assert_eq!(cache.counts().misses, 2, "another source shares no entry");
    Ok(())
}
