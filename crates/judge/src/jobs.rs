//! Execution jobs (`contracts::jobs`) run by the judge runtime, and the builds they share.
//!
//! A build is kept for a few minutes by a digest of everything that made it (the language,
//! the compiler options, the source and the archive of additional files), so jobs that repeat
//! a program — a batch running one source on many inputs — compile it once. Builds of the same
//! key made at the same time wait for one another. A build is never shared by two different
//! sources: the key is their digest.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use contracts::jobs::{ExecutionRequest, ExecutionResult, ExecutionRun};
use contracts::PortError;
use sha2::{Digest, Sha256};

use crate::execution::{lines_match, unzip, BuildOptions, RunOptions};
use crate::judging::{Abort, Compilation, Compiled, Judge};
use crate::verdict::Verdict;

/// How long a build stays reusable after its last use, and how many are kept.
const KEEP_FOR: Duration = Duration::from_secs(300);
const KEEP_AT_MOST: usize = 64;
/// The most bytes an archive of additional files may unpack to.
const MAX_EXTRACT_BYTES: u64 = 10 << 20;

/// A build, or why there is none (the compiler's verdict and output).
type Built = Result<(Arc<Compiled>, String), (Verdict, String)>;

/// A build's place: filled by the first job that needs it, the others wait on its lock.
type Slot = Arc<Mutex<Option<Built>>>;

/// Builds by key, with when each was last used.
#[derive(Default)]
pub struct Builds {
    slots: Mutex<HashMap<String, (Instant, Slot)>>,
}

fn key(request: &ExecutionRequest) -> String {
    let mut hash = Sha256::new();
    for part in [
        request.language.as_bytes(),
        request.compiler_options.join("\0").as_bytes(),
        &request.source,
        request.additional_files.as_deref().unwrap_or_default(),
    ] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

impl Builds {
    /// The build of `request`, made now or earlier.
    fn get(&self, judge: &Judge<'_>, request: &ExecutionRequest) -> Result<Built, PortError> {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            slots.retain(|_, (used, _)| used.elapsed() < KEEP_FOR);
            if slots.len() >= KEEP_AT_MOST {
                if let Some(oldest) = slots
                    .iter()
                    .min_by_key(|(_, (used, _))| *used)
                    .map(|(k, _)| k.clone())
                {
                    slots.remove(&oldest);
                }
            }
            let (used, slot) = slots
                .entry(key(request))
                .or_insert_with(|| (Instant::now(), Arc::default()));
            *used = Instant::now();
            slot.clone()
        };
        // Held while building: a job with the same key waits here, then reuses the build.
        let mut built = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(built) = built.as_ref() {
            return Ok(built.clone());
        }
        let files = match &request.additional_files {
            Some(archive) => match unzip(archive, MAX_EXTRACT_BYTES) {
                Ok(files) => files,
                Err(e) => return Ok(Err((Verdict::CE, e.to_string()))),
            },
            None => Vec::new(),
        };
        let options = BuildOptions {
            compiler_options: request.compiler_options.clone(),
            files,
            skip_checks: true,
        };
        let made = match judge
            .build(&request.language, &request.source, &options)
            .map_err(|e| PortError::Unavailable(e.to_string()))?
        {
            Compilation::Ready(program, output) => Ok((Arc::from(program), output)),
            // The machine failed, not the program: nothing to keep, the job is tried again.
            Compilation::Failed {
                verdict: Verdict::SE,
                output,
            } => return Err(PortError::Unavailable(output)),
            Compilation::Failed { verdict, output } => Err((verdict, output)),
        };
        *built = Some(made.clone());
        Ok(made)
    }
}

/// Runs `request`: builds it (or reuses the build), then runs it `runs` times, stopping at
/// the first run that does not end cleanly or whose output differs from the expected.
pub fn execute(
    judge: &Judge<'_>,
    builds: &Builds,
    request: &ExecutionRequest,
) -> Result<ExecutionResult, PortError> {
    let (program, compile_output) = match builds.get(judge, request)? {
        Ok(built) => built,
        Err((_, output)) => {
            return Ok(ExecutionResult {
                compile_timed_out: output.contains("[compiler ended as time_limit"),
                compile_output: output.into_bytes(),
                compile_failed: true,
                runs: Vec::new(),
                stdout: Vec::new(),
                stderr: Vec::new(),
            })
        }
    };
    let limits = &request.limits;
    let options = RunOptions {
        cpu_time_ms: limits.cpu_time_ms,
        cpu_extra_ms: limits.cpu_extra_ms,
        wall_time_ms: limits.wall_time_ms,
        memory_kib: limits.memory_kib,
        stack_kib: Some(limits.stack_kib),
        processes: Some(limits.processes),
        // The sandbox needs room for one byte: a limit of 0 stops the first byte written.
        output_bytes: (limits.file_size_kib << 10).max(1),
        file_size_bytes: Some((limits.file_size_kib << 10).max(1)),
        arguments: request.arguments.clone(),
        redirect_stderr: request.redirect_stderr_to_stdout,
    };
    let mut result = ExecutionResult {
        compile_output: compile_output.into_bytes(),
        compile_failed: false,
        compile_timed_out: false,
        runs: Vec::new(),
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    for _ in 0..request.runs.max(1) {
        let outcome = judge
            .run_built(&program, request.stdin.clone(), &options, &Abort::default())
            .map_err(|e| PortError::Unavailable(e.to_string()))?;
        if outcome.fault == sandbox::Fault::Infrastructure {
            return Err(PortError::Unavailable(format!(
                "the sandbox failed: {}",
                outcome.message.unwrap_or_default()
            )));
        }
        let clean = outcome.status == sandbox::Status::Ok;
        let output_matches = match &request.expected_output {
            Some(expected) if clean => Some(lines_match(expected, &outcome.stdout)),
            _ => None,
        };
        result.runs.push(ExecutionRun {
            status: outcome.status.to_string(),
            exit_code: outcome.exit_code,
            signal: outcome.signal,
            cpu_time_us: outcome.cpu_time_ms * 1_000,
            wall_time_us: outcome.wall_time_ms * 1_000,
            memory_kib: outcome.memory_kib,
            output_matches,
            message: outcome.message,
        });
        result.stdout = outcome.stdout;
        result.stderr = outcome.stderr;
        if !clean || output_matches == Some(false) {
            break;
        }
    }
    Ok(result)
}
