//! "Run" on arguments a user typed: the same harness, the same protocol, no hidden data.
//! Arguments equal to a sample case's are compared with that sample's answer; others are
//! shown as returned.

use contracts::execution::RunCase;

use super::judging::{CaseLimits, CaseRun, Ended};
use super::{CaseInput, FunctionSpec, Signature};
use crate::judging::{Abort, Compilation, Judge, JudgeError};
use crate::package::Problem;
use crate::verdict::Verdict;

/// Most cases one run takes.
pub const MAX_CASES: usize = 100;

/// What a run of the harness on custom arguments gave.
#[derive(Debug)]
pub struct FunctionExecution {
    /// `CE`/`SE` when it did not compile; else the first case's verdict that is not `AC`
    /// (`AC` when every case returned, and matched where an answer was known).
    pub verdict: Verdict,
    pub compile_output: String,
    pub cases: Vec<RunCase>,
    /// Each case's CPU time in microseconds (`cases` show whole milliseconds).
    pub cpu_us: Vec<u64>,
}

impl FunctionSpec {
    /// Splits typed arguments into cases (as many lines each as the signature takes) and
    /// checks each against the signature; `Err` says which case and why.
    pub fn parse_arguments(&self, text: &str) -> Result<Vec<(String, CaseInput)>, String> {
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let per_case = match &self.signature {
            Signature::Function { params, .. } => params.len().max(1),
            Signature::Design { .. } => 2,
        };
        if lines.is_empty() {
            return Err(format!(
                "no arguments: give {per_case} line(s) per case, one JSON value each"
            ));
        }
        if !lines.len().is_multiple_of(per_case) {
            return Err(format!(
                "{} line(s) do not make whole cases of {per_case} line(s) each",
                lines.len()
            ));
        }
        let cases: Vec<&[&str]> = lines.chunks(per_case).collect();
        if cases.len() > MAX_CASES {
            return Err(format!("at most {MAX_CASES} cases per run"));
        }
        cases
            .into_iter()
            .enumerate()
            .map(|(i, chunk)| {
                let text = chunk.join("\n");
                self.parse_input(&text)
                    .map(|input| (text, input))
                    .map_err(|reason| format!("case {}: {reason}", i + 1))
            })
            .collect()
    }
}

impl<'a> Judge<'a> {
    /// Compiles `source` into the problem's harness and runs it on `arguments`.
    pub fn execute_function(
        &self,
        problem: &Problem,
        language_id: &str,
        source: &[u8],
        arguments: &str,
        time_limit_ms: u64,
        abort: &Abort,
    ) -> Result<FunctionExecution, JudgeError> {
        let spec = problem
            .function
            .as_ref()
            .ok_or_else(|| JudgeError::Language("not a function problem".into()))?;
        let cases = spec
            .parse_arguments(arguments)
            .map_err(JudgeError::Language)?;
        let (program, compile_output) =
            match self.compile_harness(spec, language_id, source, None)? {
                Compilation::Ready(program, output) => (program, output),
                Compilation::Failed { verdict, output } => {
                    return Ok(FunctionExecution {
                        verdict,
                        compile_output: output,
                        cases: Vec::new(),
                        cpu_us: Vec::new(),
                    })
                }
            };
        // The answers of the samples, by their arguments' canonical line.
        let samples: Vec<(CaseInput, super::Canon)> = problem
            .test_cases()
            .into_iter()
            .filter(|case| case.sample)
            .filter_map(|case| {
                spec.check_case(&case.input, &case.answer, &problem.dir)
                    .ok()
            })
            .collect();
        let limits = CaseLimits {
            time_limit_ms: time_limit_ms.min(problem.limits.time_limit_ms).max(1),
            memory_mib: problem.limits.memory_mib,
            output_bytes: problem.limits.output_mib << 20,
        };
        let inputs: Vec<&CaseInput> = cases.iter().map(|(_, input)| input).collect();
        let runs = self
            .run_cases(&program, &inputs, limits, abort, &mut |_, _| true)
            .map_err(|e| JudgeError::Workspace(std::io::Error::other(e)))?;
        if let Some((kind, error)) = runs.load_error {
            let text = format!("{}: {}", error.kind, error.message);
            let verdict = if kind == "missing" {
                Verdict::CE
            } else {
                Verdict::RE
            };
            return Ok(FunctionExecution {
                verdict,
                compile_output: if verdict == Verdict::CE {
                    text
                } else {
                    compile_output
                },
                cpu_us: Vec::new(),
                cases: Vec::new(),
            });
        }
        let mut out = Vec::with_capacity(cases.len());
        let mut cpu_us = Vec::with_capacity(cases.len());
        for ((text, input), run) in cases.iter().zip(runs.cases) {
            let Some(run) = run else { break };
            cpu_us.push(run.time_us);
            let expected = samples
                .iter()
                .find(|(sample, _)| sample.line == input.line)
                .map(|(_, answer)| answer);
            out.push(run_case(
                spec,
                text,
                input,
                expected,
                &run,
                limits.time_limit_ms,
            ));
        }
        let verdict = out
            .iter()
            .map(|c| c.verdict)
            .find(|v| *v != Verdict::AC)
            .unwrap_or(Verdict::AC);
        Ok(FunctionExecution {
            verdict,
            compile_output,
            cases: out,
            cpu_us,
        })
    }
}

fn run_case(
    spec: &FunctionSpec,
    text: &str,
    input: &CaseInput,
    expected: Option<&super::Canon>,
    run: &CaseRun,
    time_limit_ms: u64,
) -> RunCase {
    let mut case = RunCase {
        verdict: Verdict::AC,
        input: text.to_string(),
        value: None,
        expected: expected.map(|e| e.to_json()),
        error: None,
        message: String::new(),
        time_ms: run.time_ms,
        memory_kib: run.memory_kib,
        stdout: run.stdout.clone(),
        stderr: run.stderr.clone(),
    };
    if run.time_ms > time_limit_ms {
        case.verdict = Verdict::TLE;
        return case;
    }
    match &run.ended {
        Ended::Returned(value) => match spec.check_result(input, value, super::Source::Returned) {
            Ok(actual) => {
                case.value = Some(actual.to_json());
                if let Some(expected) = expected {
                    if let Err(message) = spec.compare(input, expected, &actual) {
                        case.verdict = Verdict::WA;
                        case.message = message;
                    }
                }
            }
            Err(mismatch) => {
                case.verdict = Verdict::WA;
                case.value = Some(value.to_string());
                case.message =
                    format!("the returned value does not fit the declared type: {mismatch}");
            }
        },
        Ended::Raised(error) => {
            case.verdict = Verdict::RE;
            case.message = format!("{}: {}", error.kind, error.message);
            case.error = Some(error.clone());
        }
        Ended::Invalid(why) => {
            case.verdict = Verdict::RE;
            case.message = why.clone();
        }
        Ended::Died(verdict, message) => {
            case.verdict = *verdict;
            case.message = message.clone();
        }
    }
    case
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_into_cases_of_the_signature() {
        let spec = FunctionSpec {
            signature: Signature::parse(
                r#"{"name": "f", "params": [{"name": "a", "type": "integer[]"}, {"name": "b", "type": "integer"}], "return": {"type": "integer"}}"#,
            )
            .unwrap(),
            compare: super::super::Compare::exact(),
            starters: Default::default(),
        };
        let cases = spec.parse_arguments("[1,2]\n3\n\n[4]\n5\n").unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[1].1.line, "[[4],5]");
        for (text, reason) in [
            ("", "no arguments"),
            (
                "[1]\n2\n3\n",
                "3 line(s) do not make whole cases of 2 line(s) each",
            ),
            ("[1]\n2\n[3]\nx\n", "case 2: line 2 (b): not one JSON value"),
        ] {
            let err = spec.parse_arguments(text).unwrap_err();
            assert!(err.contains(reason), "{text:?}: {err}");
        }
    }
}
