//! A job as a Judge0 1.13.1 submission: the fields asked for (in Judge0's attribute order),
//! values in its formats, and the status our outcome maps to.
//!
//! Status mapping (Judge0 has no memory or output limit statuses; the nearest are used):
//!
//! | our outcome of the last run | Judge0 status | message |
//! |---|---|---|
//! | queued / running | 1 In Queue / 2 Processing | — |
//! | the build failed | 6 Compilation Error | (`Compilation time limit exceeded.` when it timed out) |
//! | ok, output as expected or none expected | 3 Accepted | — |
//! | ok, output differs from `expected_output` | 4 Wrong Answer | — |
//! | ok past the CPU limit (inside the extra time), `time_limit_cpu` | 5 | `Time limit exceeded` |
//! | `time_limit_wall` | 5 | `Time limit exceeded (wall clock)` |
//! | `signaled` SIGSEGV / SIGXFSZ / SIGFPE / SIGABRT / other | 7 / 8 / 9 / 10 / 12 | `Caught fatal signal N` |
//! | `output_limit` | 8 Runtime Error (SIGXFSZ) | `File size limit exceeded` |
//! | `nonzero_exit` | 11 Runtime Error (NZEC) | `Exited with error status N` |
//! | `memory_limit` | 12 Runtime Error (Other) | `Memory limit exceeded` |
//! | `fork_limit`, `disallowed_syscall` | 12 Runtime Error (Other) | what the sandbox stopped |
//! | `launch_failure` | 14 Exec Format Error | the sandbox's reason |
//! | the job failed (`config_error`, the machine) | 13 Internal Error | the error |

use contracts::jobs::{ExecutionResult, ExecutionRun, JobState, JobView};
use serde_json::Value;

use crate::languages::Languages;
use crate::ordered::Object;
use crate::request::encode_base64;

/// Every field of a 1.13.1 submission, in the order Judge0 writes them (`fields=*`).
pub const ALL_FIELDS: [&str; 35] = [
    "source_code",
    "language_id",
    "stdin",
    "expected_output",
    "stdout",
    "status_id",
    "created_at",
    "finished_at",
    "time",
    "memory",
    "stderr",
    "token",
    "number_of_runs",
    "cpu_time_limit",
    "cpu_extra_time",
    "wall_time_limit",
    "memory_limit",
    "stack_limit",
    "max_processes_and_or_threads",
    "enable_per_process_and_thread_time_limit",
    "enable_per_process_and_thread_memory_limit",
    "max_file_size",
    "compile_output",
    "exit_code",
    "exit_signal",
    "message",
    "wall_time",
    "compiler_options",
    "command_line_arguments",
    "redirect_stderr_to_stdout",
    "callback_url",
    "additional_files",
    "enable_network",
    "status",
    "language",
];

/// The fields shown when none are asked for.
const DEFAULT_FIELDS: [&str; 8] = [
    "token",
    "time",
    "memory",
    "stdout",
    "stderr",
    "compile_output",
    "message",
    "status",
];

/// Text fields: base64 with `base64_encoded=true`; without it, they must be UTF-8.
const TEXT_FIELDS: [&str; 7] = [
    "source_code",
    "stdin",
    "expected_output",
    "stdout",
    "stderr",
    "compile_output",
    "message",
];

/// The statuses of 1.13.1.
pub const STATUSES: [(u8, &str); 14] = [
    (1, "In Queue"),
    (2, "Processing"),
    (3, "Accepted"),
    (4, "Wrong Answer"),
    (5, "Time Limit Exceeded"),
    (6, "Compilation Error"),
    (7, "Runtime Error (SIGSEGV)"),
    (8, "Runtime Error (SIGXFSZ)"),
    (9, "Runtime Error (SIGFPE)"),
    (10, "Runtime Error (SIGABRT)"),
    (11, "Runtime Error (NZEC)"),
    (12, "Runtime Error (Other)"),
    (13, "Internal Error"),
    (14, "Exec Format Error"),
];

pub fn status_description(id: u8) -> &'static str {
    STATUSES
        .iter()
        .find(|(i, _)| *i == id)
        .map_or("Internal Error", |(_, d)| d)
}

/// The fields a `fields` parameter asks for, in Judge0's order; `Err` is the 400 message.
pub fn fields(param: Option<&str>) -> Result<Vec<&'static str>, String> {
    let asked: Vec<&str> = param
        .unwrap_or("")
        .split(',')
        .filter(|f| !f.is_empty())
        .collect();
    let unknown: Vec<&str> = asked
        .iter()
        .copied()
        .filter(|f| *f != "*" && !ALL_FIELDS.contains(f))
        .collect();
    if !unknown.is_empty() {
        return Err(format!("invalid fields: [{}]", unknown.join(", ")));
    }
    let wanted = |f: &&str| {
        if asked.contains(&"*") {
            true
        } else if asked.is_empty() {
            DEFAULT_FIELDS.contains(f)
        } else {
            asked.contains(f)
        }
    };
    Ok(ALL_FIELDS.iter().copied().filter(wanted).collect())
}

/// A text field holds bytes that are not UTF-8 and base64 was not asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8;

/// The Judge0 status of a job, and its message.
pub fn status(job: &JobView) -> (u8, Option<String>) {
    match (job.state, &job.result) {
        (JobState::Queued, _) => (1, None),
        (JobState::Running, _) => (2, None),
        (JobState::Failed, _) => (13, job.error.clone()),
        (JobState::Done, None) => (13, Some("the job finished without a result".into())),
        (JobState::Done, Some(result)) => {
            outcome_status(&result.outcome(&job.request.limits), result.runs.last())
        }
    }
}

/// The Judge0 status of an outcome ([`ExecutionResult::outcome`]), with the message the
/// last run gives it.
pub fn outcome_status(outcome: &str, run: Option<&ExecutionRun>) -> (u8, Option<String>) {
    let said = |text: &str| Some(text.to_string());
    let sandbox_said = |fallback: &str| {
        Some(
            run.and_then(|r| r.message.clone())
                .unwrap_or_else(|| fallback.to_string()),
        )
    };
    if let Some(signal) = outcome.strip_prefix("signaled_") {
        let id = match signal {
            "11" => 7,
            "25" => 8,
            "8" => 9,
            "6" => 10,
            _ => 12,
        };
        return (id, Some(format!("Caught fatal signal {signal}")));
    }
    match outcome {
        "compile_error" => (6, None),
        "ok" => (3, None),
        "wrong_output" => (4, None),
        "time_limit_cpu" => (5, said("Time limit exceeded")),
        "time_limit_wall" => (5, said("Time limit exceeded (wall clock)")),
        "output_limit" => (8, said("File size limit exceeded")),
        "nonzero_exit" => (
            11,
            Some(format!(
                "Exited with error status {}",
                run.and_then(|r| r.exit_code).unwrap_or(1)
            )),
        ),
        "memory_limit" => (12, said("Memory limit exceeded")),
        "fork_limit" => (12, said("Process or thread limit exceeded")),
        "disallowed_syscall" => (12, sandbox_said("Disallowed system call")),
        "launch_failure" => (14, sandbox_said("The program could not be started")),
        other => (13, sandbox_said(other)),
    }
}

/// Seconds of microseconds as Judge0 writes them (`"0.004"`).
fn seconds(us: f64) -> String {
    let text = format!("{:.6}", us / 1e6);
    let text = text.trim_end_matches('0');
    if text.ends_with('.') {
        format!("{text}0")
    } else {
        text.to_string()
    }
}

/// An epoch-milliseconds instant as Judge0 writes it: `2026-12-02T07:15:42.123Z`.
pub fn timestamp(ms: i64) -> String {
    platform::calendar::iso_time(ms).replace("+00:00", "Z")
}

fn nonempty(bytes: &[u8]) -> Option<&[u8]> {
    (!bytes.is_empty()).then_some(bytes)
}

/// The values of a job the run produced.
struct Outcome<'a> {
    result: Option<&'a ExecutionResult>,
    last: Option<&'a ExecutionRun>,
    status: u8,
    message: Option<String>,
}

impl<'a> Outcome<'a> {
    fn of(job: &'a JobView) -> Self {
        let (status, message) = status(job);
        let result = job.result.as_ref().filter(|_| job.state == JobState::Done);
        Self {
            result,
            last: result.and_then(|r| r.runs.last()),
            status,
            message,
        }
    }

    fn mean(&self, of: impl Fn(&ExecutionRun) -> u64) -> Option<f64> {
        let runs = &self.result?.runs;
        (!runs.is_empty()).then(|| runs.iter().map(&of).sum::<u64>() as f64 / runs.len() as f64)
    }
}

/// The job as a submission with `fields`; text fields in base64 when `base64` is set.
pub fn submission(
    job: &JobView,
    fields: &[&str],
    base64: bool,
    languages: &Languages,
) -> Result<Object, NotUtf8> {
    let outcome = Outcome::of(job);
    let mut object = Object::new();
    for &field in fields {
        if TEXT_FIELDS.contains(&field) {
            let bytes: Option<Vec<u8>> = match field {
                "source_code" => nonempty(&job.request.source).map(<[u8]>::to_vec),
                "stdin" => nonempty(&job.request.stdin).map(<[u8]>::to_vec),
                "expected_output" => job.request.expected_output.clone(),
                "stdout" => outcome
                    .result
                    .and_then(|r| nonempty(&r.stdout))
                    .map(<[u8]>::to_vec),
                "stderr" => outcome
                    .result
                    .and_then(|r| nonempty(&r.stderr))
                    .map(<[u8]>::to_vec),
                "compile_output" => compile_output(outcome.result),
                _ => outcome.message.clone().map(String::into_bytes),
            };
            match bytes {
                None => object.push(field, Value::Null),
                Some(bytes) if base64 => object.push(field, encode_base64(&bytes)),
                Some(bytes) => object.push(field, String::from_utf8(bytes).map_err(|_| NotUtf8)?),
            }
            continue;
        }
        match field {
            "status_id" => object.push(field, outcome.status),
            "status" => object.push_raw(
                field,
                Object::new()
                    .with("id", outcome.status)
                    .with("description", status_description(outcome.status))
                    .render(),
            ),
            "language" => {
                let id = job.echo["language_id"].as_u64().unwrap_or_default();
                let name = languages
                    .get(id as i64)
                    .map(|l| l.name.clone())
                    .unwrap_or_default();
                object.push_raw(
                    field,
                    Object::new().with("id", id).with("name", name).render(),
                );
            }
            "token" => object.push(field, &job.token),
            "created_at" => object.push(field, timestamp(job.created_at_ms)),
            "finished_at" => object.push(field, job.finished_at_ms.map(timestamp)),
            "time" => object.push(field, outcome.mean(|r| r.cpu_time_us).map(seconds)),
            "wall_time" => object.push(field, outcome.last.map(|r| seconds(r.wall_time_us as f64))),
            "memory" => object.push(field, outcome.mean(|r| r.memory_kib).map(|m| m as u64)),
            "exit_code" => object.push(field, outcome.last.map(|r| r.exit_code.unwrap_or(0))),
            "exit_signal" => object.push(field, outcome.last.and_then(|r| r.signal)),
            // Fields of the request, as it was given.
            _ => object.push(field, job.echo.get(field).cloned().unwrap_or(Value::Null)),
        }
    }
    Ok(object)
}

fn compile_output(result: Option<&ExecutionResult>) -> Option<Vec<u8>> {
    let result = result?;
    if result.compile_failed && result.compile_timed_out {
        return Some(b"Compilation time limit exceeded.".to_vec());
    }
    nonempty(&result.compile_output).map(<[u8]>::to_vec)
}

/// `GET /statuses`.
pub fn statuses() -> String {
    crate::ordered::array(STATUSES.iter().map(|(id, description)| {
        Object::new()
            .with("id", id)
            .with("description", description)
            .render()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use contracts::jobs::{ExecutionLimits, ExecutionRequest};

    #[test]
    fn fields_follow_judge0s_order_and_reject_unknown_names() {
        assert_eq!(
            fields(None).unwrap(),
            [
                "stdout",
                "time",
                "memory",
                "stderr",
                "token",
                "compile_output",
                "message",
                "status"
            ]
        );
        assert_eq!(fields(Some(",")).unwrap().len(), 8);
        assert_eq!(fields(Some("*")).unwrap().len(), 35);
        assert_eq!(
            fields(Some("token,status_id,stdout,time,memory,exit_code")).unwrap(),
            [
                "stdout",
                "status_id",
                "time",
                "memory",
                "token",
                "exit_code"
            ]
        );
        assert_eq!(
            fields(Some("token, stdout,bogus,*")).unwrap_err(),
            "invalid fields: [ stdout, bogus]"
        );
    }

    fn job(runs: Vec<ExecutionRun>) -> JobView {
        JobView {
            token: "t".into(),
            state: JobState::Done,
            request: ExecutionRequest {
                language: "c".into(),
                source: b"int main(){}".to_vec(),
                stdin: Vec::new(),
                limits: ExecutionLimits {
                    cpu_time_ms: 1_000,
                    cpu_extra_ms: 500,
                    wall_time_ms: 5_000,
                    memory_kib: 128_000,
                    stack_kib: 64_000,
                    processes: 60,
                    file_size_kib: 1_024,
                },
                compiler_options: Vec::new(),
                arguments: Vec::new(),
                additional_files: None,
                redirect_stderr_to_stdout: false,
                runs: runs.len() as u32,
                expected_output: None,
            },
            echo: serde_json::json!({"language_id": 50, "cpu_time_limit": "1.0"}),
            result: Some(ExecutionResult {
                compile_output: Vec::new(),
                compile_failed: false,
                compile_timed_out: false,
                runs,
                stdout: b"caf\xe9".to_vec(),
                stderr: Vec::new(),
            }),
            error: None,
            callback_url: None,
            created_at_ms: 1_764_659_742_123,
            finished_at_ms: Some(1_764_659_742_200),
        }
    }

    fn run(status: &str, exit: Option<i32>, signal: Option<i32>, cpu_us: u64) -> ExecutionRun {
        ExecutionRun {
            status: status.into(),
            exit_code: exit,
            signal,
            cpu_time_us: cpu_us,
            wall_time_us: 2 * cpu_us,
            memory_kib: 1_001,
            output_matches: None,
            message: None,
        }
    }

    #[test]
    fn outcomes_map_to_the_nearest_judge0_status() {
        for (run, id, message) in [
            (run("ok", Some(0), None, 4_000), 3, None),
            (
                run("ok", Some(0), None, 1_200_000),
                5,
                Some("Time limit exceeded"),
            ),
            (
                run("time_limit_wall", None, None, 4_000),
                5,
                Some("Time limit exceeded (wall clock)"),
            ),
            (
                run("signaled", None, Some(11), 4_000),
                7,
                Some("Caught fatal signal 11"),
            ),
            (
                run("signaled", None, Some(8), 4_000),
                9,
                Some("Caught fatal signal 8"),
            ),
            (
                run("signaled", None, Some(6), 4_000),
                10,
                Some("Caught fatal signal 6"),
            ),
            (
                run("signaled", None, Some(9), 4_000),
                12,
                Some("Caught fatal signal 9"),
            ),
            (
                run("output_limit", None, None, 4_000),
                8,
                Some("File size limit exceeded"),
            ),
            (
                run("nonzero_exit", Some(3), None, 4_000),
                11,
                Some("Exited with error status 3"),
            ),
            (
                run("memory_limit", None, None, 4_000),
                12,
                Some("Memory limit exceeded"),
            ),
        ] {
            assert_eq!(status(&job(vec![run])), (id, message.map(String::from)));
        }
    }

    #[test]
    fn values_are_written_in_judge0s_formats() {
        let job = job(vec![
            run("ok", Some(0), None, 4_000),
            run("ok", Some(0), None, 5_000),
        ]);
        let languages = Languages::default();
        let text = submission(&job, &fields(Some("*")).unwrap(), true, &languages)
            .unwrap()
            .render();
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value.as_object().unwrap().len(), 35);
        assert_eq!(value["time"], "0.0045", "the mean of the runs");
        assert_eq!(value["wall_time"], "0.01", "the last run");
        assert_eq!(value["memory"], 1001);
        assert_eq!(value["exit_code"], 0);
        assert_eq!(value["stdout"], "Y2Fm6Q==");
        assert_eq!(value["stderr"], Value::Null);
        assert_eq!(value["created_at"], "2025-12-02T07:15:42.123Z");
        assert_eq!(
            value["status"],
            serde_json::json!({"id": 3, "description": "Accepted"})
        );
        assert!(text.starts_with("{\"source_code\":\"aW50IG1haW4oKXt9\",\"language_id\":50,"));
        assert_eq!(
            submission(&job, &fields(None).unwrap(), false, &languages),
            Err(NotUtf8),
            "Latin-1 output needs base64"
        );
    }
}
