//! The execution port's adapter: compiles and runs code once in the native sandbox.

use std::sync::Arc;

use async_trait::async_trait;
use contracts::execution::{Canceller, CodeRunner, RunLimits, RunReport, RunRequest, StartedRun};
use contracts::PortError;
use judge::{Abort, ExecuteLimits, Judge, Languages};
use sandbox::Sandbox;

pub struct SandboxRunner {
    pub sandbox: Arc<dyn Sandbox>,
    pub languages: Arc<Languages>,
}

struct Started {
    abort: Abort,
    task: tokio::task::JoinHandle<Result<RunReport, PortError>>,
}

#[async_trait]
impl StartedRun for Started {
    fn canceller(&self) -> Canceller {
        let abort = self.abort.clone();
        Arc::new(move || abort.abort())
    }

    async fn finish(self: Box<Self>) -> Result<RunReport, PortError> {
        self.task
            .await
            .map_err(|e| PortError::Unavailable(format!("the run's task failed: {e}")))?
    }
}

impl CodeRunner for SandboxRunner {
    fn start(&self, request: &RunRequest, limits: RunLimits) -> Box<dyn StartedRun> {
        let abort = Abort::default();
        let (sandbox, languages, request, cancel) = (
            self.sandbox.clone(),
            self.languages.clone(),
            request.clone(),
            abort.clone(),
        );
        let task = tokio::task::spawn_blocking(move || {
            let judge = Judge::new(sandbox.as_ref(), &languages);
            let execution = judge
                .execute(
                    &request.language,
                    request.source.as_bytes(),
                    request.stdin.into_bytes(),
                    ExecuteLimits {
                        time_limit_ms: limits.time_limit_ms,
                        memory_mib: limits.memory_mib,
                        output_bytes: limits.output_bytes,
                    },
                    &cancel,
                )
                .map_err(|e| PortError::Unavailable(e.to_string()))?;
            let outcome = execution.outcome;
            Ok(RunReport {
                verdict: execution.verdict,
                status: outcome.as_ref().map(|o| o.status.to_string()),
                exit_code: outcome.as_ref().and_then(|o| o.exit_code),
                signal: outcome.as_ref().and_then(|o| o.signal),
                time_ms: outcome.as_ref().map_or(0, |o| o.cpu_time_ms),
                wall_time_ms: outcome.as_ref().map_or(0, |o| o.wall_time_ms),
                memory_kib: outcome.as_ref().map_or(0, |o| o.memory_kib),
                stdout: outcome
                    .as_ref()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default(),
                stderr: outcome
                    .as_ref()
                    .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
                    .unwrap_or_default(),
                output_truncated: outcome.as_ref().is_some_and(|o| o.output_truncated),
                compile_output: execution.compile_output,
            })
        });
        Box::new(Started { abort, task })
    }
}

/// Uploaded packages prepared in this process's sandbox (`judge::upload`): Polygon packages
/// imported, missing time limits derived. The work blocks, so it runs off the async threads.
#[async_trait]
impl contracts::PackagePreparer for SandboxRunner {
    async fn prepare(&self, upload: Vec<u8>) -> Result<Vec<u8>, PortError> {
        let sandbox = self.sandbox.clone();
        let languages = self.languages.clone();
        tokio::task::spawn_blocking(move || {
            let judge = Judge::new(sandbox.as_ref(), &languages);
            let limits = judge::package::archive::ArchiveLimits::default();
            match judge::upload::prepare_upload(&judge, &upload, limits) {
                Ok(judge::upload::Preparation::Unchanged) => Ok(upload),
                Ok(judge::upload::Preparation::Prepared { archive, notes }) => {
                    for note in notes {
                        tracing::info!(%note, "uploaded package prepared");
                    }
                    Ok(archive)
                }
                // The machine failed, not the package: the upload may be tried again.
                Err(judge::upload::PrepareError::Io(e)) => {
                    Err(PortError::Unavailable(e.to_string()))
                }
                Err(e) => Err(PortError::Rejected(e.to_string())),
            }
        })
        .await
        .map_err(|e| PortError::Unavailable(e.to_string()))?
    }
}
