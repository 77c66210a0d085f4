//! The execution port's adapter: compiles and runs code once in the native sandbox.

use std::sync::Arc;

use async_trait::async_trait;
use contracts::execution::{
    Canceller, CodeRunner, RunLimits, RunReport, RunRequest, RunTarget, StartedRun,
};
use contracts::jobs::{ExecutionRequest, ExecutionResult};
use contracts::{PortError, ProblemPackagePort};
use judge::{Abort, ExecuteLimits, Judge, Languages, Problem};
use sandbox::Sandbox;

pub struct SandboxRunner {
    pub sandbox: Arc<dyn Sandbox>,
    pub languages: Arc<Languages>,
    /// App's packages, for runs of function problems (connected once App is open).
    pub packages: std::sync::OnceLock<Arc<dyn ProblemPackagePort>>,
    /// Builds shared by execution jobs that repeat a program.
    builds: Arc<judge::jobs::Builds>,
}

impl SandboxRunner {
    pub fn new(sandbox: Arc<dyn Sandbox>, languages: Arc<Languages>) -> Self {
        Self {
            sandbox,
            languages,
            packages: std::sync::OnceLock::new(),
            builds: Arc::default(),
        }
    }

    /// The function problem whose package has `hash`.
    async fn function_problem(
        packages: Option<Arc<dyn ProblemPackagePort>>,
        hash: &str,
    ) -> Result<Problem, PortError> {
        let packages = packages.ok_or_else(|| {
            PortError::Unavailable("no package source for function problems".into())
        })?;
        let dir = packages.package(hash).await?;
        let problem = tokio::task::spawn_blocking(move || Problem::load(&dir))
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?
            .map_err(|e| PortError::Unavailable(format!("the problem's package: {e}")))?;
        if problem.function.is_none() {
            return Err(PortError::Rejected(
                "the problem is not a function problem: run programs without `problem`".into(),
            ));
        }
        Ok(problem)
    }
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

/// A report with no run in it (the program did not compile, or nothing ran).
fn bare_report(verdict: contracts::Verdict, compile_output: String) -> RunReport {
    RunReport {
        verdict,
        status: None,
        exit_code: None,
        signal: None,
        time_ms: 0,
        wall_time_ms: 0,
        memory_kib: 0,
        stdout: String::new(),
        stderr: String::new(),
        output_truncated: false,
        compile_output,
        cases: Vec::new(),
    }
}

fn program_report(execution: judge::Execution) -> RunReport {
    let Some(outcome) = execution.outcome else {
        return bare_report(execution.verdict, execution.compile_output);
    };
    RunReport {
        verdict: execution.verdict,
        status: Some(outcome.status.to_string()),
        exit_code: outcome.exit_code,
        signal: outcome.signal,
        time_ms: outcome.cpu_time_ms,
        wall_time_ms: outcome.wall_time_ms,
        memory_kib: outcome.memory_kib,
        stdout: String::from_utf8_lossy(&outcome.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&outcome.stderr).into_owned(),
        output_truncated: outcome.output_truncated,
        compile_output: execution.compile_output,
        cases: Vec::new(),
    }
}

fn function_report(execution: judge::function::FunctionExecution) -> RunReport {
    let cases = execution.cases;
    RunReport {
        time_ms: cases.iter().map(|c| c.time_ms).max().unwrap_or(0),
        memory_kib: cases.iter().map(|c| c.memory_kib).max().unwrap_or(0),
        cases,
        ..bare_report(execution.verdict, execution.compile_output)
    }
}

#[async_trait]
impl CodeRunner for SandboxRunner {
    async fn execute(&self, request: &ExecutionRequest) -> Result<ExecutionResult, PortError> {
        let (sandbox, languages, builds, request) = (
            self.sandbox.clone(),
            self.languages.clone(),
            self.builds.clone(),
            request.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let judge = Judge::new(sandbox.as_ref(), &languages);
            judge::jobs::execute(&judge, &builds, &request)
        })
        .await
        .map_err(|e| PortError::Unavailable(e.to_string()))?
    }

    async fn check(&self, request: &RunRequest, target: &RunTarget) -> Result<(), PortError> {
        let RunTarget::Function { package_hash } = target else {
            return Ok(());
        };
        let problem = Self::function_problem(self.packages.get().cloned(), package_hash).await?;
        let spec = problem.function.as_ref().expect("checked");
        spec.parse_arguments(&request.stdin)
            .map(drop)
            .map_err(PortError::Rejected)
    }

    fn start(
        &self,
        request: &RunRequest,
        limits: RunLimits,
        target: RunTarget,
    ) -> Box<dyn StartedRun> {
        let abort = Abort::default();
        let (sandbox, languages, request, cancel, packages) = (
            self.sandbox.clone(),
            self.languages.clone(),
            request.clone(),
            abort.clone(),
            self.packages.get().cloned(),
        );
        let task = tokio::spawn(async move {
            let problem = match &target {
                RunTarget::Program => None,
                RunTarget::Function { package_hash } => {
                    Some(Self::function_problem(packages, package_hash).await?)
                }
            };
            tokio::task::spawn_blocking(move || {
                let judge = Judge::new(sandbox.as_ref(), &languages);
                let unavailable = |e: judge::JudgeError| PortError::Unavailable(e.to_string());
                match problem {
                    None => judge
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
                        .map(program_report)
                        .map_err(unavailable),
                    Some(problem) => judge
                        .execute_function(
                            &problem,
                            &request.language,
                            request.source.as_bytes(),
                            &request.stdin,
                            limits.time_limit_ms,
                            &cancel,
                        )
                        .map(function_report)
                        .map_err(unavailable),
                }
            })
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?
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
