//! An external Judge0 (1.13-compatible) as the execution backend: [`Judge0Runner`] runs
//! execution jobs and the execution API's runs there, through its HTTP API — submit in
//! base64, then poll until the status is final.
//!
//! It cannot run function problems (their harness needs our sandbox's report channel); those
//! runs are refused with a clear reason.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use contracts::execution::{
    Canceller, CodeRunner, RunLimits, RunReport, RunRequest, RunTarget, StartedRun,
};
use contracts::jobs::{ExecutionLimits, ExecutionRequest, ExecutionResult, ExecutionRun};
use contracts::{PortError, Verdict};
use serde_json::{json, Value};

use crate::languages::judge0_id;
use crate::request::{decode_base64, encode_base64};

/// How long a submission may stay unfinished on the remote before the run is given up.
const GIVE_UP_AFTER: Duration = Duration::from_secs(600);

/// Runs programs on the Judge0 at `base`.
#[derive(Clone)]
pub struct Judge0Runner {
    base: String,
    client: reqwest::Client,
    /// `X-Auth-Token`, when the remote wants one.
    auth_token: Option<String>,
}

fn unavailable(e: impl std::fmt::Display) -> PortError {
    PortError::Unavailable(format!("the Judge0 backend: {e}"))
}

/// Words as one option string (quoted where they hold spaces).
fn joined(words: &[String]) -> Option<String> {
    (!words.is_empty()).then(|| {
        words
            .iter()
            .map(|w| {
                if w.contains(char::is_whitespace) {
                    format!("'{w}'")
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// A Judge0 text field in base64 (`null` is empty).
fn bytes_of(value: &Value) -> Vec<u8> {
    value.as_str().and_then(decode_base64).unwrap_or_default()
}

impl Judge0Runner {
    pub fn new(base: &str, auth_token: Option<String>) -> Result<Self, PortError> {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .map_err(unavailable)?;
        Ok(Self {
            base: base.trim_end_matches('/').to_string(),
            client,
            auth_token,
        })
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let builder = self.client.request(method, format!("{}{path}", self.base));
        match &self.auth_token {
            Some(token) => builder.header("X-Auth-Token", token),
            None => builder,
        }
    }

    /// The submission Judge0 is sent for `request`.
    fn body(request: &ExecutionRequest) -> Result<Value, PortError> {
        let language_id = judge0_id(&request.language).ok_or_else(|| {
            PortError::Rejected(format!(
                "the Judge0 backend has no language for {}",
                request.language
            ))
        })?;
        let limits = &request.limits;
        let seconds = |ms: u64| ms as f64 / 1000.0;
        let mut body = json!({
            "language_id": language_id,
            "stdin": encode_base64(&request.stdin),
            "cpu_time_limit": seconds(limits.cpu_time_ms),
            "cpu_extra_time": seconds(limits.cpu_extra_ms),
            "wall_time_limit": seconds(limits.wall_time_ms),
            "memory_limit": limits.memory_kib,
            "stack_limit": limits.stack_kib,
            "max_processes_and_or_threads": limits.processes,
            "max_file_size": limits.file_size_kib,
            "number_of_runs": request.runs.max(1),
            "redirect_stderr_to_stdout": request.redirect_stderr_to_stdout,
            "compiler_options": joined(&request.compiler_options),
            "command_line_arguments": joined(&request.arguments),
            "expected_output": request.expected_output.as_deref().map(encode_base64),
            "additional_files": request.additional_files.as_deref().map(encode_base64),
        });
        if !request.source.is_empty() {
            body["source_code"] = json!(encode_base64(&request.source));
        }
        Ok(body)
    }

    async fn submit(&self, request: &ExecutionRequest) -> Result<String, PortError> {
        let response = self
            .request(
                reqwest::Method::POST,
                "/submissions?base64_encoded=true&wait=false",
            )
            .json(&Self::body(request)?)
            .send()
            .await
            .map_err(unavailable)?;
        let status = response.status();
        let text = response.text().await.map_err(unavailable)?;
        match status.as_u16() {
            201 => serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["token"].as_str().map(str::to_string))
                .ok_or_else(|| unavailable(format!("no token in {text}"))),
            422 => Err(PortError::Rejected(format!(
                "Judge0 refused the run: {text}"
            ))),
            code => Err(unavailable(format!("HTTP {code}: {text}"))),
        }
    }

    /// Polls the submission until it is finished (or `cancelled` is set).
    async fn finished(&self, token: &str, cancelled: &AtomicBool) -> Result<Value, PortError> {
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(20);
        loop {
            if cancelled.load(Ordering::Relaxed) {
                return Err(unavailable("the run was cancelled"));
            }
            let response = self
                .request(
                    reqwest::Method::GET,
                    &format!("/submissions/{token}?base64_encoded=true&fields=*"),
                )
                .send()
                .await
                .map_err(unavailable)?;
            if !response.status().is_success() {
                return Err(unavailable(format!(
                    "HTTP {} for {token}",
                    response.status()
                )));
            }
            let submission: Value = response.json().await.map_err(unavailable)?;
            let status = submission["status"]["id"].as_u64().unwrap_or(0);
            if !matches!(status, 1 | 2) {
                return Ok(submission);
            }
            if started.elapsed() > GIVE_UP_AFTER {
                return Err(unavailable(format!("{token} did not finish")));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_millis(500));
        }
    }

    async fn run(
        &self,
        request: &ExecutionRequest,
        cancelled: &AtomicBool,
    ) -> Result<ExecutionResult, PortError> {
        let token = self.submit(request).await?;
        let submission = self.finished(&token, cancelled).await?;
        result_of(&submission)
    }
}

/// Our result of a finished Judge0 submission (Judge0 gives the last run only).
fn result_of(submission: &Value) -> Result<ExecutionResult, PortError> {
    let status = submission["status"]["id"].as_u64().unwrap_or(13);
    let message = submission["message"]
        .as_str()
        .and_then(decode_base64)
        .map(|m| String::from_utf8_lossy(&m).into_owned());
    let seconds = |key: &str| -> u64 {
        let value = &submission[key];
        let number = value
            .as_f64()
            .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or(0.0);
        (number * 1e6).round() as u64
    };
    let exit_code = submission["exit_code"].as_i64().map(|c| c as i32);
    let signal = submission["exit_signal"].as_i64().map(|s| s as i32);
    let (run_status, signal) = match status {
        3 | 4 => ("ok", signal),
        5 if message.as_deref().is_some_and(|m| m.contains("wall")) => ("time_limit_wall", signal),
        5 => ("time_limit_cpu", signal),
        6 => {
            return Ok(ExecutionResult {
                compile_output: bytes_of(&submission["compile_output"]),
                compile_failed: true,
                compile_timed_out: false,
                runs: Vec::new(),
                stdout: Vec::new(),
                stderr: Vec::new(),
            })
        }
        7 => ("signaled", Some(11)),
        8 => ("signaled", Some(25)),
        9 => ("signaled", Some(8)),
        10 => ("signaled", Some(6)),
        11 => ("nonzero_exit", signal),
        12 => ("signaled", signal.or(Some(0))),
        14 => ("launch_failure", signal),
        _ => {
            return Err(unavailable(format!(
                "internal error: {}",
                message.unwrap_or_default()
            )))
        }
    };
    Ok(ExecutionResult {
        compile_output: bytes_of(&submission["compile_output"]),
        compile_failed: false,
        compile_timed_out: false,
        runs: vec![ExecutionRun {
            status: run_status.into(),
            exit_code,
            signal,
            cpu_time_us: seconds("time"),
            wall_time_us: seconds("wall_time"),
            memory_kib: submission["memory"].as_u64().unwrap_or(0),
            output_matches: match status {
                3 if !submission["expected_output"].is_null() => Some(true),
                4 => Some(false),
                _ => None,
            },
            message,
        }],
        stdout: bytes_of(&submission["stdout"]),
        stderr: bytes_of(&submission["stderr"]),
    })
}

/// A run of the execution API as a Judge0 submission's request (within Judge0's bounds).
fn execution_of(request: &RunRequest, limits: RunLimits) -> ExecutionRequest {
    let cpu_ms = limits.time_limit_ms.clamp(1, 15_000);
    ExecutionRequest {
        language: request.language.clone(),
        source: request.source.clone().into_bytes(),
        stdin: request.stdin.clone().into_bytes(),
        limits: ExecutionLimits {
            cpu_time_ms: cpu_ms,
            cpu_extra_ms: 0,
            wall_time_ms: (cpu_ms * 3 + 1_000).clamp(1_000, 20_000),
            memory_kib: (limits.memory_mib << 10).clamp(2_048, 512_000),
            stack_kib: 64_000,
            processes: 60,
            file_size_kib: (limits.output_bytes >> 10).clamp(1, 4_096),
        },
        compiler_options: Vec::new(),
        arguments: Vec::new(),
        additional_files: None,
        redirect_stderr_to_stdout: false,
        runs: 1,
        expected_output: None,
    }
}

/// How a Judge0 result reads as a run report.
fn report_of(request: &ExecutionRequest, result: ExecutionResult) -> RunReport {
    let compile_output = String::from_utf8_lossy(&result.compile_output).into_owned();
    let outcome = result.outcome(&request.limits);
    let verdict = match outcome.as_str() {
        "compile_error" => Verdict::CE,
        "ok" | "wrong_output" => Verdict::AC,
        "time_limit_cpu" | "time_limit_wall" => Verdict::TLE,
        "memory_limit" => Verdict::MLE,
        "output_limit" | "signaled_25" => Verdict::OLE,
        _ => Verdict::RE,
    };
    let run = result.runs.last();
    RunReport {
        verdict,
        status: run.map(|r| r.status.clone()),
        exit_code: run.and_then(|r| r.exit_code),
        signal: run.and_then(|r| r.signal),
        time_ms: run.map_or(0, |r| r.cpu_time_us / 1_000),
        wall_time_ms: run.map_or(0, |r| r.wall_time_us / 1_000),
        memory_kib: run.map_or(0, |r| r.memory_kib),
        stdout: String::from_utf8_lossy(&result.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&result.stderr).into_owned(),
        output_truncated: false,
        compile_output,
        cases: Vec::new(),
    }
}

struct Started {
    cancelled: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Result<RunReport, PortError>>,
}

#[async_trait]
impl StartedRun for Started {
    fn canceller(&self) -> Canceller {
        let cancelled = self.cancelled.clone();
        Arc::new(move || cancelled.store(true, Ordering::Relaxed))
    }

    async fn finish(self: Box<Self>) -> Result<RunReport, PortError> {
        self.task.await.map_err(unavailable)?
    }
}

#[async_trait]
impl CodeRunner for Judge0Runner {
    async fn check(&self, _request: &RunRequest, target: &RunTarget) -> Result<(), PortError> {
        match target {
            RunTarget::Program => Ok(()),
            RunTarget::Function { .. } => Err(PortError::Rejected(
                "function problems run only in UltiCode's own sandbox, not on the Judge0 backend"
                    .into(),
            )),
        }
    }

    fn start(
        &self,
        request: &RunRequest,
        limits: RunLimits,
        target: RunTarget,
    ) -> Box<dyn StartedRun> {
        let cancelled = Arc::new(AtomicBool::new(false));
        let (runner, request, flag) = (self.clone(), request.clone(), cancelled.clone());
        let task = tokio::spawn(async move {
            runner.check(&request, &target).await?;
            let execution = execution_of(&request, limits);
            let result = runner.run(&execution, &flag).await?;
            Ok(report_of(&execution, result))
        });
        Box::new(Started { cancelled, task })
    }

    async fn execute(&self, request: &ExecutionRequest) -> Result<ExecutionResult, PortError> {
        self.run(request, &AtomicBool::new(false)).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judge0_results_read_back_as_ours() {
        let tle = json!({"status": {"id": 5}, "message": encode_base64(b"Time limit exceeded (wall clock)"),
            "time": "0.5", "wall_time": "3.01", "memory": 1200, "stdout": "aGk=", "exit_code": 0});
        let result = result_of(&tle).unwrap();
        assert_eq!(result.runs[0].status, "time_limit_wall");
        assert_eq!(result.runs[0].cpu_time_us, 500_000);
        assert_eq!(result.stdout, b"hi");
        let segv = result_of(&json!({"status": {"id": 7}})).unwrap();
        assert_eq!(segv.runs[0].signal, Some(11));
        let ce = result_of(&json!({"status": {"id": 6}, "compile_output": "ZXJy"})).unwrap();
        assert!(ce.compile_failed);
        assert_eq!(ce.compile_output, b"err");
        assert!(result_of(&json!({"status": {"id": 13}})).is_err());
    }

    #[test]
    fn options_are_joined_with_their_quotes() {
        assert_eq!(joined(&["-O2".into(), "a b".into()]).unwrap(), "-O2 'a b'");
        assert_eq!(joined(&[]), None);
    }
}
