//! The original system's sandbox ("D-form"): one `docker run` per job, with the seed's flags.
//!
//! Kept as a second [`Sandbox`] implementation for hosts where namespaces are unavailable but a
//! Docker engine is. Its classification is the seed's: it guesses from exit codes and stderr
//! markers, because the Docker client sees nothing else. CPU time is not observable from the
//! client and is reported as 0; memory as 0.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::capture::{CaptureSink, Captured};
use crate::outcome::{RunOutcome, Status};
use crate::spec::{PassedFds, RunSpec, SpecError, Stdin, Stdout, JOB_MOUNT};
use crate::{Canceller, Finished, Run, Sandbox};

/// The seed's identity: every container runs as 1000:1000. Containers of one uid share that
/// uid's kernel limits; the native sandbox gives each run slot its own uid instead.
const DOCKER_IDENTITY: &str = "1000:1000";

/// Runs jobs with `docker run`.
#[derive(Debug)]
pub struct DockerSandbox {
    /// The Docker client binary.
    pub docker: PathBuf,
    /// The image that holds the runtimes.
    pub image: String,
    /// Directory of seccomp profiles, one `<profile>.json` per profile family.
    pub seccomp_dir: PathBuf,
    runs: AtomicU64,
}

/// What the seed's classifier looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerEvidence {
    /// `None` when the `docker` process itself could not be started.
    pub exit_code: Option<i32>,
    pub stderr: String,
    pub timed_out: bool,
    pub output_exceeded: bool,
}

impl DockerSandbox {
    pub fn new(
        docker: impl Into<PathBuf>,
        image: impl Into<String>,
        seccomp_dir: impl Into<PathBuf>,
    ) -> Self {
        Self {
            docker: docker.into(),
            image: image.into(),
            seccomp_dir: seccomp_dir.into(),
            runs: AtomicU64::new(0),
        }
    }

    /// Resolves the profile file; a missing profile is a configuration error, never a run
    /// without a filter.
    pub fn resolve_seccomp(&self, spec: &RunSpec) -> Result<PathBuf, String> {
        let path = self
            .seccomp_dir
            .join(format!("{}.json", spec.profile.as_str()));
        if path.is_file() {
            Ok(path)
        } else {
            Err(format!(
                "seccomp profile {} not found; refusing to run without one",
                path.display()
            ))
        }
    }

    /// The complete `docker` argument list for a run, in the seed's order.
    pub fn arguments(&self, spec: &RunSpec, container: &str, seccomp: &Path) -> Vec<String> {
        let limits = &spec.limits;
        let mut args: Vec<String> = [
            "run",
            "--name",
            container,
            "-i",
            "--network",
            "none",
            "--cap-drop",
            "ALL",
            "--read-only",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.push("--user".into());
        args.push(DOCKER_IDENTITY.into());
        args.push("--security-opt".into());
        args.push("no-new-privileges".into());
        args.push("--security-opt".into());
        args.push(format!("seccomp={}", seccomp.display()));
        args.push("--memory".into());
        args.push(limits.memory_bytes.to_string());
        args.push("--cpus".into());
        args.push("1".into());
        args.push("--pids-limit".into());
        args.push(limits.pids.to_string());
        args.push("--ulimit".into());
        args.push(format!("nofile={0}:{0}", limits.open_files));
        args.push("--tmpfs".into());
        args.push(format!("/tmp:rw,exec,size={}", limits.tmp_bytes));
        if let Some(job) = &spec.job_dir {
            let mode = if spec.job_dir_writable { "rw" } else { "ro" };
            args.push("-v".into());
            args.push(format!("{}:{JOB_MOUNT}:{mode}", job.display()));
        }
        for bind in &spec.binds {
            let mode = if bind.writable { "rw" } else { "ro" };
            args.push("-v".into());
            args.push(format!(
                "{}:{}:{mode}",
                bind.source.display(),
                bind.target.display()
            ));
        }
        args.push("-w".into());
        args.push(spec.effective_cwd().display().to_string());
        for (key, value) in &spec.env {
            args.push("-e".into());
            args.push(format!("{key}={value}"));
        }
        args.push("--rm".into());
        args.push(self.image.clone());
        args.push(spec.program.clone());
        args.extend(spec.args.iter().cloned());
        args
    }
}

/// The seed's `SandboxOutcomeClassifier`, in its order.
pub fn classify(evidence: &DockerEvidence) -> Status {
    let Some(code) = evidence.exit_code else {
        return Status::LaunchFailure;
    };
    if evidence.timed_out {
        return Status::TimeLimitWall;
    }
    if evidence.output_exceeded {
        return Status::OutputLimit;
    }
    if code == 0 {
        return Status::Ok;
    }
    if code == 137 {
        return Status::MemoryLimit;
    }
    if code == 125 || evidence.stderr.contains("OCI runtime") {
        return Status::ConfigError;
    }
    if ["Cannot fork", "pids", "RLIMIT_NPROC"]
        .iter()
        .any(|marker| evidence.stderr.contains(marker))
    {
        return Status::ForkLimit;
    }
    Status::NonzeroExit
}

/// Reads a stream on its own thread, keeping at most `cap` bytes.
fn capture(mut stream: impl Read + Send + 'static, mut sink: CaptureSink) -> CaptureThread {
    std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.keep(&buf[..n]);
        }
        sink.finish()
    })
}

impl Sandbox for DockerSandbox {
    fn start(&self, spec: &RunSpec, fds: PassedFds) -> Result<Box<dyn Run + '_>, SpecError> {
        spec.validate()?;
        fds.check(spec)?;
        if spec.records.is_some() || spec.stderr == crate::spec::Stderr::Passed {
            return Ok(Box::new(Finished(RunOutcome::infrastructure(
                Status::ConfigError,
                "the docker backend has no report channel and no passed stderr",
            ))));
        }
        let seccomp = match self.resolve_seccomp(spec) {
            Ok(path) => path,
            Err(message) => {
                return Ok(Box::new(Finished(RunOutcome::infrastructure(
                    Status::ConfigError,
                    message,
                ))))
            }
        };
        let container = format!(
            "ulticode-{}-{}",
            std::process::id(),
            self.runs.fetch_add(1, Ordering::Relaxed)
        );
        let stdin = match (&spec.stdin, fds.stdin) {
            (Stdin::Null, _) => Stdio::null(),
            (_, Some(fd)) => Stdio::from(fd),
            _ => Stdio::piped(),
        };
        let (stdout, stdout_file) = match (spec.stdout, fds.stdout) {
            (Stdout::Passed, Some(fd)) => (Stdio::from(fd), None),
            (_, file) => (Stdio::piped(), file),
        };
        let started = Instant::now();
        let mut child = match Command::new(&self.docker)
            .args(self.arguments(spec, &container, &seccomp))
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
        {
            Ok(child) => child,
            Err(e) => {
                return Ok(Box::new(Finished(RunOutcome::infrastructure(
                    Status::LaunchFailure,
                    format!("start {}: {e}", self.docker.display()),
                ))))
            }
        };
        if let Some(mut stdin) = child.stdin.take() {
            let bytes = match &spec.stdin {
                Stdin::Bytes(b) => b.clone(),
                Stdin::File(path) => std::fs::read(path).unwrap_or_default(),
                Stdin::Null | Stdin::Passed => Vec::new(),
            };
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(&bytes);
            });
        }
        let cap = usize::try_from(spec.limits.output_bytes).unwrap_or(usize::MAX);
        let stdout = child
            .stdout
            .take()
            .map(|out| capture(out, CaptureSink::new(stdout_file, cap)));
        let stderr_cap = usize::try_from(spec.limits.stderr_bytes).unwrap_or(usize::MAX);
        let stderr = capture(
            child.stderr.take().expect("piped"),
            CaptureSink::new(None, stderr_cap),
        );
        Ok(Box::new(DockerRun {
            docker: self.docker.clone(),
            container,
            child,
            stdout,
            stderr,
            started,
            deadline: started + Duration::from_millis(spec.limits.wall_time_ms),
        }))
    }
}

type CaptureThread = std::thread::JoinHandle<std::io::Result<Captured>>;

/// One `docker run` in progress.
struct DockerRun {
    docker: PathBuf,
    container: String,
    child: std::process::Child,
    stdout: Option<CaptureThread>,
    stderr: CaptureThread,
    started: Instant,
    deadline: Instant,
}

fn docker_kill(docker: &Path, container: &str) {
    let _ = Command::new(docker)
        .args(["kill", container])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

impl Run for DockerRun {
    fn canceller(&self) -> Canceller {
        let (docker, container) = (self.docker.clone(), self.container.clone());
        Canceller::new(move || docker_kill(&docker, &container))
    }

    fn wait(mut self: Box<Self>) -> RunOutcome {
        let mut timed_out = false;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() >= self.deadline && !timed_out => {
                    timed_out = true;
                    docker_kill(&self.docker, &self.container);
                    let _ = self.child.kill();
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => break None,
            }
        };
        let wall_time_ms = self.started.elapsed().as_millis() as u64;
        let joined = |handle: CaptureThread| {
            handle
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the capture thread panicked")))
        };
        let stdout = self.stdout.take().map(joined).transpose();
        let (stdout, stderr) = match (stdout, joined(self.stderr)) {
            (Ok(stdout), Ok(stderr)) => (stdout, stderr),
            (Err(e), _) | (_, Err(e)) => {
                return RunOutcome::infrastructure(
                    Status::ConfigError,
                    format!("write the captured output: {e}"),
                )
            }
        };
        let (stdout, out_exceeded) = stdout.map_or((Vec::new(), false), |c| (c.memory, c.exceeded));
        let (stderr, err_exceeded) = (stderr.memory, stderr.exceeded);
        let exit_code = status
            .and_then(|s| s.code())
            .or(if timed_out { Some(137) } else { None });
        let evidence = DockerEvidence {
            exit_code,
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            timed_out,
            output_exceeded: out_exceeded || err_exceeded,
        };
        let status = classify(&evidence);
        RunOutcome {
            status,
            fault: status.fault(),
            exit_code,
            signal: None,
            cpu_time_ms: 0,
            wall_time_ms,
            memory_kib: 0,
            stdout,
            stderr,
            output_truncated: evidence.output_exceeded,
            cancelled: false,
            message: (status.fault() == crate::Fault::Infrastructure).then(|| {
                evidence
                    .stderr
                    .lines()
                    .last()
                    .unwrap_or_default()
                    .to_string()
            }),
            records: Vec::new(),
        }
    }
}

/// Whether a Docker engine answers, with the client's reason when it does not.
pub fn engine_available(docker: &Path) -> Result<(), String> {
    let output = Command::new(docker)
        .args(["info", "--format", "{{.ServerVersion}}"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", docker.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&output.stderr);
        Err(stderr
            .lines()
            .next()
            .unwrap_or("docker info failed")
            .to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seccomp::Profile;
    use crate::spec::Limits;

    fn docker() -> DockerSandbox {
        DockerSandbox::new("docker", "ulticode/runtimes:1", "/etc/ulticode/seccomp")
    }

    #[test]
    fn argument_list_is_the_seeds_exactly() {
        let spec = RunSpec::new("/job/main")
            .args(["--fast"])
            .job_dir("/var/lib/ulticode/jobs/42", false)
            .limits(Limits {
                memory_bytes: 256 << 20,
                pids: 64,
                ..Limits::default()
            });
        let args = docker().arguments(
            &spec,
            "ulticode-1-0",
            Path::new("/etc/ulticode/seccomp/native.json"),
        );
        let expected = [
            "run",
            "--name",
            "ulticode-1-0",
            "-i",
            "--network",
            "none",
            "--cap-drop",
            "ALL",
            "--read-only",
            "--user",
            "1000:1000",
            "--security-opt",
            "no-new-privileges",
            "--security-opt",
            "seccomp=/etc/ulticode/seccomp/native.json",
            "--memory",
            "268435456",
            "--cpus",
            "1",
            "--pids-limit",
            "64",
            "--ulimit",
            "nofile=128:128",
            "--tmpfs",
            "/tmp:rw,exec,size=67108864",
            "-v",
            "/var/lib/ulticode/jobs/42:/job:ro",
            "-w",
            "/job",
            "--rm",
            "ulticode/runtimes:1",
            "/job/main",
            "--fast",
        ];
        assert_eq!(args, expected);
    }

    #[test]
    fn a_missing_seccomp_profile_is_a_config_error_not_a_weaker_sandbox() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = DockerSandbox::new("/nonexistent/docker", "img", dir.path());
        let outcome = sandbox.run(&RunSpec::new("/bin/true")).unwrap();
        assert_eq!(outcome.status, Status::ConfigError);
        assert!(outcome.message.unwrap().contains("native.json"));

        std::fs::write(dir.path().join("python.json"), "{}").unwrap();
        let spec = RunSpec::new("/bin/true").profile(Profile::Python);
        assert_eq!(
            sandbox.resolve_seccomp(&spec),
            Ok(dir.path().join("python.json"))
        );
    }

    #[test]
    fn a_docker_client_that_cannot_start_is_a_launch_failure() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("native.json"), "{}").unwrap();
        let sandbox = DockerSandbox::new("/nonexistent/docker", "img", dir.path());
        let outcome = sandbox.run(&RunSpec::new("/bin/true")).unwrap();
        assert_eq!(outcome.status, Status::LaunchFailure);
    }

    #[test]
    fn classifier_follows_the_seed() {
        let evidence = |exit_code: Option<i32>, stderr: &str| DockerEvidence {
            exit_code,
            stderr: stderr.into(),
            timed_out: false,
            output_exceeded: false,
        };
        let cases = [
            (evidence(None, ""), Status::LaunchFailure),
            (evidence(Some(0), ""), Status::Ok),
            (evidence(Some(137), ""), Status::MemoryLimit),
            (
                evidence(Some(125), "docker: Error response from daemon"),
                Status::ConfigError,
            ),
            (
                evidence(Some(126), "OCI runtime create failed: seccomp"),
                Status::ConfigError,
            ),
            (
                evidence(Some(1), "bash: fork: Cannot fork"),
                Status::ForkLimit,
            ),
            (
                evidence(Some(1), "pthread_create: RLIMIT_NPROC"),
                Status::ForkLimit,
            ),
            (evidence(Some(1), "pids limit reached"), Status::ForkLimit),
            (
                evidence(Some(1), "Traceback: ValueError"),
                Status::NonzeroExit,
            ),
            (
                DockerEvidence {
                    timed_out: true,
                    ..evidence(Some(137), "")
                },
                Status::TimeLimitWall,
            ),
            (
                DockerEvidence {
                    output_exceeded: true,
                    ..evidence(Some(0), "")
                },
                Status::OutputLimit,
            ),
        ];
        for (evidence, expected) in cases {
            assert_eq!(classify(&evidence), expected, "{evidence:?}");
        }
    }
}
