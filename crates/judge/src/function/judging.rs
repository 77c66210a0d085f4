//! Judging a function problem on the trusted side.
//!
//! One harness process runs every remaining test case. Its only input is the arguments
//! (stdin, one line per case); it reports on descriptor 3, where the sandbox's supervisor
//! stamps each line with the cgroup's CPU time, the wall time and the peak memory. Per case:
//!
//! ```text
//! {"begin":k}   arguments parsed, the call starts        (stamp b)
//! {"case":k,"stdout":o,"stderr":e,"value":V}               (stamp e)
//! ```
//!
//! The case's time is `e - b` from the kernel's accounting, and the supervisor kills the run
//! when the time since the last record passes the time limit, so a case that runs too long
//! is cut off where it is. The value is parsed here against the declared type and compared
//! with the answer, which never enters the sandbox: whatever the user's code writes (on
//! stdout, on stderr, on descriptor 3 itself) can at most be a value, and a value is judged.
//! Records out of order, or a case the harness never finished (a crash, a time or memory
//! limit, an `exit` inside the call), end that case; the harness is started again from the
//! next one, so every case gets its own verdict.

use std::io::{Read, Seek, SeekFrom, Write};

use contracts::{CaseDetail, CaseError, CaseFrame};
use sandbox::{Limits, PassedFds, Record, Records, RunOutcome, Stderr, Stdin, Stdout};
use serde_json::Value;

use super::harness::{self, HarnessLanguage};
use super::value::{Canon, CompareMode, Source};
use super::{CaseInput, FunctionSpec};
use crate::checker::Decision;
use crate::judging::{
    Abort, Compilation, Compiled, Judge, JudgeError, PreparedProblem, TestResult,
};
use crate::language::{CompileLimits, Language};
use crate::output::CapturedOutput;
use crate::program::ProgramFiles;
use crate::verdict::{run_verdict, Verdict};

/// Prints kept per case and stream.
const PRINTS_BYTES: usize = 8 * 1024;
/// CPU time the harness may take to start (runtime, imports, the first case's arguments) on
/// top of the time limit; it counts toward no case.
const STARTUP_MS: u64 = 2_000;
/// Exceptions that mean the program ran out of memory.
const OUT_OF_MEMORY: &[&str] = &["MemoryError", "java.lang.OutOfMemoryError"];

/// How one case ended in the harness, before any comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// The call returned this (as the harness wrote it).
    Returned(Value),
    /// The call raised.
    Raised(CaseError),
    /// The returned value cannot be written (a cyclic list): the reason.
    Invalid(String),
    /// The harness never finished the case: how the run ended.
    Died(Verdict, String),
}

/// One case's run.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseRun {
    pub ended: Ended,
    /// CPU time between the case's `begin` and its result, from the stamps (`time_us`
    /// rounded up to whole milliseconds).
    pub time_ms: u64,
    pub time_us: u64,
    pub wall_time_ms: u64,
    /// Peak memory of the harness process up to the case's end.
    pub memory_kib: u64,
    pub stdout: String,
    pub stderr: String,
}

/// The runs of every case, or why the user's code could not be loaded at all.
#[derive(Debug, Default)]
pub struct CaseRuns {
    pub cases: Vec<Option<CaseRun>>,
    /// The harness could not load the user's code: `missing` (it does not define what the
    /// signature names; a compile error), or `exception` (it raised while loading).
    pub load_error: Option<(String, CaseError)>,
}

/// What the records of one harness run say.
#[derive(Debug, PartialEq)]
pub(crate) struct Parsed {
    /// Finished cases, in order, from the first case of the run.
    pub finished: Vec<(Ended, Stamps)>,
    /// The case after the finished ones had begun (its `begin` stamp).
    pub begun: Option<Stamps>,
    /// The records broke the protocol at the case after the finished ones.
    pub violation: Option<String>,
    pub load_error: Option<(String, CaseError)>,
}

/// A case's stamps and the offsets the harness reported.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Stamps {
    pub begin_cpu_us: u64,
    pub begin_wall_us: u64,
    pub end_cpu_us: u64,
    pub end_wall_us: u64,
    pub memory_kib: u64,
    pub stdout: i64,
    pub stderr: i64,
}

fn error_of(value: &Value) -> Option<CaseError> {
    let object = value.as_object()?;
    let text = |key: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let frames = object
        .get("frames")
        .and_then(Value::as_array)
        .map(|frames| {
            frames
                .iter()
                .filter_map(|f| {
                    Some(CaseFrame {
                        line: u32::try_from(f.get("line")?.as_u64()?).ok()?,
                        function: f
                            .get("function")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .into(),
                    })
                })
                .take(20)
                .collect()
        })
        .unwrap_or_default();
    Some(CaseError {
        kind: text("type").chars().take(200).collect(),
        message: text("message").chars().take(4096).collect(),
        frames,
        call: object
            .get("call")
            .and_then(Value::as_u64)
            .and_then(|c| u32::try_from(c).ok()),
    })
}

/// Reads one run's records (see the module's protocol). Pure: the records' order and
/// content decide, never their timing.
pub(crate) fn parse_records(records: &[Record]) -> Parsed {
    let mut parsed = Parsed {
        finished: Vec::new(),
        begun: None,
        violation: None,
        load_error: None,
    };
    for record in records {
        let k = parsed.finished.len() as u64;
        let value: Value = match serde_json::from_slice(&record.line) {
            Ok(value) => value,
            Err(_) => {
                parsed.violation =
                    Some("the report channel carried a line that is not JSON".into());
                return parsed;
            }
        };
        if parsed.finished.is_empty() && parsed.begun.is_none() {
            if let Some(error) = value.get("load_error") {
                let kind = error
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("exception");
                parsed.load_error = error_of(error).map(|e| (kind.to_string(), e));
                return parsed;
            }
        }
        match parsed.begun {
            None => {
                // A second result for the case just finished: one of the two was not the
                // harness's, so neither counts.
                if k > 0 && value.get("case").and_then(Value::as_u64) == Some(k - 1) {
                    parsed.finished.pop();
                    parsed.violation = Some(format!(
                        "case {} was reported twice: something other than the harness wrote on its report channel",
                        k - 1
                    ));
                    return parsed;
                }
                if value.get("begin").and_then(Value::as_u64) != Some(k) {
                    parsed.violation = Some(format!(
                        "the report channel carried an unexpected line before case {k} began"
                    ));
                    return parsed;
                }
                parsed.begun = Some(Stamps {
                    begin_cpu_us: record.cpu_time_us,
                    begin_wall_us: record.wall_time_us,
                    ..Stamps::default()
                });
            }
            Some(begun) => {
                if value.get("case").and_then(Value::as_u64) != Some(k) {
                    parsed.violation = Some(format!(
                        "the report channel carried an unexpected line during case {k}"
                    ));
                    return parsed;
                }
                let offset = |key: &str| value.get(key).and_then(Value::as_i64).unwrap_or(-1);
                let ended = if let Some(v) = value.get("value") {
                    Ended::Returned(v.clone())
                } else if let Some(error) = value.get("error").and_then(error_of) {
                    Ended::Raised(error)
                } else if let Some(why) = value.get("invalid").and_then(Value::as_str) {
                    Ended::Invalid(why.chars().take(500).collect())
                } else {
                    parsed.violation = Some(format!("case {k}'s report has no value"));
                    return parsed;
                };
                parsed.finished.push((
                    ended,
                    Stamps {
                        end_cpu_us: record.cpu_time_us,
                        end_wall_us: record.wall_time_us,
                        memory_kib: record.memory_kib,
                        stdout: offset("stdout"),
                        stderr: offset("stderr"),
                        ..begun
                    },
                ));
                parsed.begun = None;
            }
        }
    }
    parsed
}

/// The bytes of an output file between two offsets, as text for display (capped).
fn slice_text(bytes: &[u8], from: u64, to: u64) -> String {
    let from = (from as usize).min(bytes.len());
    let to = (to as usize).clamp(from, bytes.len());
    let part = &bytes[from..to];
    let mut text = String::from_utf8_lossy(&part[..part.len().min(PRINTS_BYTES)]).into_owned();
    if part.len() > PRINTS_BYTES {
        text.push_str("\n[… truncated]");
    }
    text
}

/// The limits of one case's run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CaseLimits {
    pub time_limit_ms: u64,
    pub memory_mib: u64,
    pub output_bytes: u64,
}

impl<'a> Judge<'a> {
    /// Compiles the user's `source` into the harness of `language_id`.
    pub(crate) fn compile_harness(
        &self,
        spec: &FunctionSpec,
        language_id: &str,
        source: &[u8],
        limits: Option<CompileLimits>,
    ) -> Result<Compilation, JudgeError> {
        let Some(harness_language) = HarnessLanguage::of(language_id) else {
            return Ok(Compilation::Failed {
                verdict: Verdict::CE,
                output: format!("{language_id} cannot solve function problems: they take C++, Java, Python 3, JavaScript, Go or Rust"),
            });
        };
        let language = self
            .languages()
            .get(language_id)
            .ok_or_else(|| JudgeError::Language(self.languages().why_not(language_id)))?;
        let files: ProgramFiles = harness::program(harness_language, &spec.signature, source);
        let mut language = Language {
            config: harness::language_config(harness_language, &language.config),
            version: language.version.clone(),
        };
        if harness_language == HarnessLanguage::Cpp {
            language.config = super::pch::with_prelude(self, &language);
        }
        let limits = limits.unwrap_or(language.config.compile_limits);
        self.compile(&language, &files, limits)
    }

    /// Runs `cases` through the compiled harness, starting it again after a case it did not
    /// finish. `keep_going` sees each case as it is read and may stop further restarts.
    pub(crate) fn run_cases(
        &self,
        program: &Compiled,
        cases: &[&CaseInput],
        limits: CaseLimits,
        abort: &Abort,
        keep_going: &mut dyn FnMut(usize, &CaseRun) -> bool,
    ) -> Result<CaseRuns, String> {
        let mut runs = CaseRuns {
            cases: vec![None; cases.len()],
            load_error: None,
        };
        let mut next = 0;
        while next < cases.len() && !abort.is_aborted() {
            let (outcome, stdout, stderr) =
                self.run_harness(program, &cases[next..], limits, abort)?;
            if outcome.fault == sandbox::Fault::Infrastructure && outcome.records.is_empty() {
                return Err(format!(
                    "the harness could not run: {}",
                    outcome.message.unwrap_or_default()
                ));
            }
            let parsed = parse_records(&outcome.records);
            if let Some(load_error) = parsed.load_error {
                runs.load_error = Some(load_error);
                return Ok(runs);
            }
            let mut printed = (0u64, 0u64);
            let mut stop = false;
            let finished = parsed.finished.len();
            for (i, (ended, stamps)) in parsed.finished.into_iter().enumerate() {
                let out_to = u64::try_from(stamps.stdout)
                    .unwrap_or(printed.0)
                    .max(printed.0);
                let err_to = u64::try_from(stamps.stderr)
                    .unwrap_or(printed.1)
                    .max(printed.1);
                let time_us = stamps.end_cpu_us.saturating_sub(stamps.begin_cpu_us);
                let run = CaseRun {
                    ended,
                    time_ms: time_us.div_ceil(1_000),
                    time_us,
                    wall_time_ms: stamps.end_wall_us.saturating_sub(stamps.begin_wall_us) / 1_000,
                    memory_kib: stamps.memory_kib,
                    stdout: slice_text(&stdout, printed.0, out_to),
                    stderr: slice_text(&stderr, printed.1, err_to),
                };
                printed = (out_to, err_to);
                stop |= !keep_going(next + i, &run);
                runs.cases[next + i] = Some(run);
            }
            next += finished;
            if next >= cases.len() {
                break;
            }
            // The case in progress when the run ended (or broke the protocol) ends here.
            let (verdict, message) = match (&parsed.violation, run_verdict(&outcome)) {
                (Some(violation), _) => (Verdict::RE, violation.clone()),
                (None, Some((verdict, message))) => (verdict, message),
                (None, None) => (
                    Verdict::RE,
                    "the program ended during the call (exit code 0)".to_string(),
                ),
            };
            let begun = parsed.begun.unwrap_or_default();
            let total_cpu_us = outcome.cpu_time_ms * 1_000;
            let time_us = total_cpu_us.saturating_sub(begun.begin_cpu_us);
            let run = CaseRun {
                ended: Ended::Died(verdict, message),
                time_ms: time_us / 1_000,
                time_us,
                wall_time_ms: outcome
                    .wall_time_ms
                    .saturating_sub(begun.begin_wall_us / 1_000),
                memory_kib: outcome.memory_kib,
                stdout: slice_text(&stdout, printed.0, u64::MAX),
                stderr: slice_text(&stderr, printed.1, u64::MAX),
            };
            if verdict == Verdict::SE {
                return Err(format!("the sandbox failed during a case: {:?}", run.ended));
            }
            stop |= !keep_going(next, &run);
            runs.cases[next] = Some(run);
            next += 1;
            if stop {
                break;
            }
        }
        Ok(runs)
    }

    /// One harness process over `cases`; returns its outcome and the user's stdout and
    /// stderr files.
    fn run_harness(
        &self,
        program: &Compiled,
        cases: &[&CaseInput],
        limits: CaseLimits,
        abort: &Abort,
    ) -> Result<(RunOutcome, Vec<u8>, Vec<u8>), String> {
        let io = |what: &str| {
            let what = what.to_string();
            move |e: std::io::Error| format!("{what}: {e}")
        };
        let mut input =
            crate::workdir::named_file("ulticode-cases-").map_err(io("the cases file"))?;
        for case in cases {
            input
                .write_all(case.line.as_bytes())
                .map_err(io("the cases file"))?;
            input.write_all(b"\n").map_err(io("the cases file"))?;
        }
        input.flush().map_err(io("the cases file"))?;
        let stdout = crate::workdir::file().map_err(io("the stdout file"))?;
        let stderr = crate::workdir::file().map_err(io("the stderr file"))?;
        let tl = limits.time_limit_ms;
        let record_wall_ms = tl * 3 + 1_000;
        let n = cases.len() as u64;
        let language = &program.language().config;
        let sandbox_limits = Limits {
            cpu_time_ms: (tl + STARTUP_MS) + 2 * n * tl,
            wall_time_ms: (tl + STARTUP_MS) * 3 + 2 * n * record_wall_ms,
            memory_bytes: (limits.memory_mib + program.memory_overhead_mib()) << 20,
            pids: language.run_pids,
            output_bytes: limits.output_bytes,
            file_size_bytes: limits.output_bytes,
            ..Limits::default()
        };
        let spec = program
            .spec(limits.memory_mib, &[], sandbox_limits)
            .stdin(Stdin::File(input.path().to_path_buf()))
            .stdout(Stdout::Passed)
            .stderr(Stderr::Passed)
            .records(Records {
                first_cpu_ms: tl + STARTUP_MS,
                cpu_ms: tl,
                wall_ms: record_wall_ms.max((tl + STARTUP_MS) * 3),
                max_record_bytes: limits.output_bytes.max(4096),
            });
        let fds = PassedFds {
            stdin: None,
            stdout: Some(stdout.try_clone().map_err(io("the stdout file"))?.into()),
            stderr: Some(stderr.try_clone().map_err(io("the stderr file"))?.into()),
        };
        let outcome = abort
            .run(self.sandbox(), &spec, fds)
            .map_err(|e| format!("invalid harness run: {e}"))?;
        let read_all = |mut file: std::fs::File| -> std::io::Result<Vec<u8>> {
            let mut bytes = Vec::new();
            file.seek(SeekFrom::Start(0))?;
            file.take(limits.output_bytes).read_to_end(&mut bytes)?;
            Ok(bytes)
        };
        Ok((
            outcome,
            read_all(stdout).map_err(io("the stdout file"))?,
            read_all(stderr).map_err(io("the stderr file"))?,
        ))
    }

    /// Judges a function problem's submission: the harness runs every case, and each
    /// returned value is compared here with the case's answer.
    pub(crate) fn judge_function(
        &self,
        prepared: &PreparedProblem<'_>,
        language_id: &str,
        source: &[u8],
        compile_limits: CompileLimits,
        options: &crate::JudgeOptions,
        progress: &(dyn Fn(crate::Progress<'_>) + Sync),
    ) -> Result<crate::JudgeReport, JudgeError> {
        use crate::grading::{aggregate, Plan};
        let problem = prepared.problem;
        let spec = problem
            .function
            .as_ref()
            .ok_or_else(|| JudgeError::Language("not a function problem".into()))?;
        let failed = |verdict: Verdict, output: String| crate::JudgeReport {
            compile_output: output,
            ..crate::judging::failed_report(problem, verdict)
        };
        progress(crate::Progress::Compiling);
        let (program, compile_output) =
            match self.compile_harness(spec, language_id, source, Some(compile_limits))? {
                Compilation::Ready(program, output) => (program, output),
                Compilation::Failed { verdict, output } => {
                    progress(crate::Progress::Compiled { ok: false });
                    return Ok(failed(verdict, output));
                }
            };
        progress(crate::Progress::Compiled { ok: true });
        let rules = options.coverage.rules(problem.kind);
        let plan = Plan::new(&problem.data);
        let mut inputs = Vec::with_capacity(plan.cases.len());
        for planned in &plan.cases {
            let (input, expected) = spec
                .check_case(&planned.case.input, &planned.case.answer, &problem.dir)
                .map_err(|e| JudgeError::Validator(e.to_string()))?;
            inputs.push((input, expected));
        }
        let limits = CaseLimits {
            time_limit_ms: problem.limits.time_limit_ms,
            memory_mib: problem.limits.memory_mib,
            output_bytes: problem.limits.output_mib << 20,
        };
        let total = plan.cases.len();
        let abort = options.abort.clone().unwrap_or_default();
        let mut results: Vec<Option<TestResult>> = vec![None; total];
        let cases: Vec<&CaseInput> = inputs.iter().map(|(input, _)| input).collect();
        let mut stopped = false;
        let runs = self
            .run_cases(&program, &cases, limits, &abort, &mut |index, run| {
                let planned = &plan.cases[index];
                let (input, expected) = &inputs[index];
                let result = self.case_result(
                    prepared,
                    spec,
                    (planned.case, planned.settings),
                    input,
                    expected,
                    run,
                );
                // Past a failure that ends the judging, the harness's later cases do not count
                // (nor are they shown as they come).
                let counted = !(rules.first_failure && stopped);
                stopped |= result.verdict != Verdict::AC;
                if counted {
                    progress(crate::Progress::Test {
                        index,
                        total,
                        result: &result,
                    });
                }
                results[index] = Some(result);
                !(stopped && rules.first_failure)
            })
            .map_err(|e| JudgeError::Workspace(std::io::Error::other(e)))?;
        if let Some((kind, error)) = runs.load_error {
            let text = format!(
                "{}{}",
                error.kind,
                if error.message.is_empty() {
                    String::new()
                } else {
                    format!(": {}", error.message)
                }
            );
            if kind == "missing" {
                return Ok(failed(Verdict::CE, text));
            }
            for (index, planned) in plan.cases.iter().enumerate() {
                let mut result = TestResult::unjudged(planned.case);
                result.verdict = Verdict::RE;
                result.message = format!("loading the code raised {text}");
                result.detail = Some(CaseDetail {
                    error: Some(error.clone()),
                    ..CaseDetail::default()
                });
                results[index] = Some(result);
            }
        }
        Ok(aggregate(problem, &plan, results, rules, compile_output))
    }

    /// One case's result: how it ended, and (when it returned) its value against the answer.
    fn case_result(
        &self,
        prepared: &PreparedProblem<'_>,
        spec: &FunctionSpec,
        (case, settings): (&crate::package::TestCase, &crate::package::GroupSettings),
        input: &CaseInput,
        expected: &Canon,
        run: &CaseRun,
    ) -> TestResult {
        let tl = prepared.problem.limits.time_limit_ms;
        let mut result = TestResult::unjudged(case);
        result.time_ms = run.time_ms;
        result.wall_time_ms = run.wall_time_ms;
        result.memory_kib = run.memory_kib;
        let mut detail = CaseDetail {
            stdout: run.stdout.clone(),
            stderr: run.stderr.clone(),
            ..CaseDetail::default()
        };
        if case.sample {
            detail.input = std::fs::read_to_string(&case.input).ok();
            detail.expected = Some(expected.to_json());
        }
        let decision = match &run.ended {
            _ if run.time_ms > tl => Decision::verdict(Verdict::TLE, String::new()),
            Ended::Returned(value) => match spec.check_result(input, value, Source::Returned) {
                Err(mismatch) => Decision::verdict(
                    Verdict::WA,
                    format!("the returned value does not fit the declared type: {mismatch}"),
                ),
                Ok(actual) => {
                    if case.sample {
                        detail.actual = Some(actual.to_json());
                    }
                    self.compare(prepared, spec, (case, settings), input, expected, &actual)
                }
            },
            Ended::Raised(error) => {
                let verdict = if OUT_OF_MEMORY.contains(&error.kind.as_str()) {
                    Verdict::MLE
                } else {
                    Verdict::RE
                };
                detail.error = Some(error.clone());
                let message = if error.message.is_empty() {
                    error.kind.clone()
                } else {
                    format!("{}: {}", error.kind, error.message)
                };
                Decision::verdict(verdict, message)
            }
            Ended::Invalid(why) => Decision::verdict(Verdict::RE, why.clone()),
            Ended::Died(verdict, message) => Decision::verdict(*verdict, message.clone()),
        };
        TestResult {
            detail: Some(detail),
            ..result.decided(decision)
        }
    }

    fn compare(
        &self,
        prepared: &PreparedProblem<'_>,
        spec: &FunctionSpec,
        (case, settings): (&crate::package::TestCase, &crate::package::GroupSettings),
        input: &CaseInput,
        expected: &Canon,
        actual: &Canon,
    ) -> Decision {
        if spec.compare.mode == CompareMode::Checker {
            // The package's output validator reads the canonical value as the output.
            return match CapturedOutput::from_bytes(format!("{}\n", actual.to_json()).as_bytes()) {
                Ok(output) => self.check(prepared, case, settings, &output, None),
                Err(e) => Decision::system_error(format!("the value for the checker: {e}")),
            };
        }
        match spec.compare(input, expected, actual) {
            Ok(()) => Decision::verdict(Verdict::AC, String::new()),
            Err(message) => Decision::verdict(Verdict::WA, message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: &str, cpu: u64) -> Record {
        Record {
            line: line.as_bytes().to_vec(),
            cpu_time_us: cpu,
            wall_time_us: cpu + 5,
            memory_kib: 100,
        }
    }

    #[test]
    fn records_pair_begins_with_results_in_order() {
        let parsed = parse_records(&[
            record(r#"{"begin":0}"#, 1_000),
            record(r#"{"case":0,"stdout":3,"stderr":0,"value":[1,2]}"#, 4_000),
            record(r#"{"begin":1}"#, 5_000),
            record(
                r#"{"case":1,"stdout":3,"stderr":0,"error":{"type":"IndexError","message":"x","frames":[{"line":4,"function":"f"}]}}"#,
                9_000,
            ),
            record(r#"{"begin":2}"#, 9_500),
        ]);
        assert_eq!(parsed.finished.len(), 2);
        assert_eq!(
            parsed.finished[0].0,
            Ended::Returned(serde_json::json!([1, 2]))
        );
        assert_eq!(
            parsed.finished[0].1.end_cpu_us - parsed.finished[0].1.begin_cpu_us,
            3_000
        );
        let Ended::Raised(error) = &parsed.finished[1].0 else {
            panic!("an error")
        };
        assert_eq!(
            (error.kind.as_str(), error.frames[0].line),
            ("IndexError", 4)
        );
        assert_eq!(parsed.begun.unwrap().begin_cpu_us, 9_500);
        assert_eq!(parsed.violation, None);
    }

    #[test]
    fn forged_or_broken_records_end_the_case_they_interrupt() {
        let cases: Vec<(Vec<&str>, usize)> = vec![
            // A result written before the case began.
            (vec![r#"{"case":0,"value":1}"#], 0),
            // A second result for the same case (the user wrote one, then the harness): the
            // case itself is not finished.
            (
                vec![
                    r#"{"begin":0}"#,
                    r#"{"case":0,"value":1}"#,
                    r#"{"case":0,"value":2}"#,
                ],
                0,
            ),
            // A result for another case.
            (vec![r#"{"begin":0}"#, r#"{"case":1,"value":1}"#], 0),
            // Not JSON.
            (vec![r#"{"begin":0}"#, "AC"], 0),
            // A begin out of order.
            (vec![r#"{"begin":1}"#], 0),
            // No value.
            (vec![r#"{"begin":0}"#, r#"{"case":0}"#], 0),
        ];
        for (lines, finished) in cases {
            let records: Vec<Record> = lines.iter().map(|l| record(l, 0)).collect();
            let parsed = parse_records(&records);
            assert!(parsed.violation.is_some(), "{lines:?}");
            assert_eq!(parsed.finished.len(), finished, "{lines:?}");
        }
    }

    #[test]
    fn a_load_error_comes_first_or_not_at_all() {
        let parsed = parse_records(&[record(
            r#"{"load_error":{"kind":"missing","type":"NameError","message":"no Solution","frames":[]}}"#,
            0,
        )]);
        assert_eq!(parsed.load_error.unwrap().0, "missing");
        let late = parse_records(&[
            record(r#"{"begin":0}"#, 0),
            record(r#"{"load_error":{"kind":"missing"}}"#, 0),
        ]);
        assert!(late.load_error.is_none() && late.violation.is_some());
    }

    #[test]
    fn prints_are_sliced_by_offsets_and_capped() {
        assert_eq!(slice_text(b"abcdef", 2, 4), "cd");
        assert_eq!(slice_text(b"abc", 2, 1), "");
        assert_eq!(slice_text(b"abc", 9, 12), "");
        let long = vec![b'x'; PRINTS_BYTES + 10];
        assert!(slice_text(&long, 0, u64::MAX).ends_with("[… truncated]"));
    }
}
