//! What to run and under which limits.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::seccomp::Profile;

const MIB: u64 = 1024 * 1024;

/// A request to run one program in the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Absolute path inside the sandbox, or a bare name looked up in the sandbox's `PATH`.
    pub program: String,
    /// Arguments after the program name (`argv[1..]`).
    pub args: Vec<String>,
    /// Variables added to the profile's environment; nothing else from the host leaks in.
    pub env: Vec<(String, String)>,
    /// Working directory inside the sandbox; defaults to `/job` when a job dir is mounted, else `/tmp`.
    pub cwd: Option<PathBuf>,
    /// Host directory mounted at `/job`.
    pub job_dir: Option<PathBuf>,
    /// Mount the job directory writable (compilation writes its binary there); read-only otherwise.
    pub job_dir_writable: bool,
    /// Extra bind mounts (toolchains outside `/usr`, problem data, ...).
    pub binds: Vec<Bind>,
    pub stdin: Stdin,
    pub stdout: Stdout,
    #[serde(default)]
    pub stderr: Stderr,
    /// A report channel on descriptor 3 (see [`Records`]).
    #[serde(default)]
    pub records: Option<Records>,
    pub limits: Limits,
    pub profile: Profile,
}

impl RunSpec {
    /// A spec with default limits and the native profile. The identity a program runs as is
    /// the sandbox's choice (one per concurrent run slot), never the spec's.
    pub fn new(program: impl Into<String>) -> Self {
        Self {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            job_dir: None,
            job_dir_writable: false,
            binds: Vec::new(),
            stdin: Stdin::Null,
            stdout: Stdout::Capture,
            stderr: Stderr::Capture,
            records: None,
            limits: Limits::default(),
            profile: Profile::Native,
        }
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    pub fn job_dir(mut self, dir: impl Into<PathBuf>, writable: bool) -> Self {
        self.job_dir = Some(dir.into());
        self.job_dir_writable = writable;
        self
    }

    pub fn stdin(mut self, stdin: Stdin) -> Self {
        self.stdin = stdin;
        self
    }

    pub fn stdout(mut self, stdout: Stdout) -> Self {
        self.stdout = stdout;
        self
    }

    pub fn stderr(mut self, stderr: Stderr) -> Self {
        self.stderr = stderr;
        self
    }

    pub fn records(mut self, records: Records) -> Self {
        self.records = Some(records);
        self
    }

    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = profile;
        self
    }

    pub fn bind(mut self, bind: Bind) -> Self {
        self.binds.push(bind);
        self
    }

    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Every host directory or file the run sees, with where and whether it is writable: the
    /// job directory first, then the binds in order.
    pub fn host_dirs(&self) -> impl Iterator<Item = (&Path, &Path, bool)> {
        let job = self
            .job_dir
            .iter()
            .map(|dir| (dir.as_path(), Path::new(JOB_MOUNT), self.job_dir_writable));
        let binds = self
            .binds
            .iter()
            .map(|b| (b.source.as_path(), b.target.as_path(), b.writable));
        job.chain(binds)
    }

    /// The host directories the run may write (each becomes a tmpfs copied back afterwards).
    pub fn writable_dirs(&self) -> impl Iterator<Item = &Path> {
        self.host_dirs()
            .filter(|(_, _, writable)| *writable)
            .map(|(source, _, _)| source)
    }

    /// The working directory the program starts in.
    pub fn effective_cwd(&self) -> PathBuf {
        match (&self.cwd, &self.job_dir) {
            (Some(cwd), _) => cwd.clone(),
            (None, Some(_)) => PathBuf::from(JOB_MOUNT),
            (None, None) => PathBuf::from("/tmp"),
        }
    }

    /// Checks everything that can be checked without touching the host.
    pub fn validate(&self) -> Result<(), SpecError> {
        if self.program.is_empty() {
            return Err(SpecError::EmptyProgram);
        }
        for text in std::iter::once(&self.program).chain(&self.args) {
            if text.contains('\0') {
                return Err(SpecError::NulByte(text.clone()));
            }
        }
        for (key, value) in &self.env {
            if key.is_empty() || key.contains('=') || key.contains('\0') || value.contains('\0') {
                return Err(SpecError::BadEnv(key.clone()));
            }
        }
        if let Some(cwd) = &self.cwd {
            check_sandbox_path(cwd)?;
        }
        if let Some(dir) = &self.job_dir {
            check_host_path(dir)?;
        }
        if let Stdin::File(path) = &self.stdin {
            check_host_path(path)?;
        }
        for bind in &self.binds {
            check_host_path(&bind.source)?;
            check_sandbox_path(&bind.target)?;
            if RESERVED_TARGETS
                .iter()
                .any(|reserved| bind.target == Path::new(reserved))
                || bind.target.starts_with("/proc")
                || bind.target.starts_with("/dev")
            {
                return Err(SpecError::ReservedBindTarget(bind.target.clone()));
            }
        }
        if let Some(records) = &self.records {
            records.validate()?;
        }
        self.limits.validate()
    }
}

/// Where the job directory appears inside the sandbox.
pub const JOB_MOUNT: &str = "/job";

/// Mount points the sandbox builds itself; a bind may not replace them.
const RESERVED_TARGETS: &[&str] = &["/", "/tmp", JOB_MOUNT, "/etc", "/usr"];

fn check_host_path(path: &Path) -> Result<(), SpecError> {
    if !path.is_absolute() {
        return Err(SpecError::RelativePath(path.to_path_buf()));
    }
    Ok(())
}

fn check_sandbox_path(path: &Path) -> Result<(), SpecError> {
    if !path.is_absolute() {
        return Err(SpecError::RelativePath(path.to_path_buf()));
    }
    if path
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return Err(SpecError::UnnormalizedPath(path.to_path_buf()));
    }
    Ok(())
}

/// A host path made visible inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bind {
    pub source: PathBuf,
    pub target: PathBuf,
    pub writable: bool,
}

impl Bind {
    pub fn read_only(source: impl Into<PathBuf>, target: impl Into<PathBuf>) -> Self {
        Self {
            source: source.into(),
            target: target.into(),
            writable: false,
        }
    }

    /// Parses the CLI form `SRC:DST[:rw|:ro]`.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let bad = || SpecError::BadBind(text.to_string());
        let mut parts = text.split(':');
        let source = parts.next().filter(|s| !s.is_empty()).ok_or_else(bad)?;
        let target = parts.next().filter(|s| !s.is_empty()).ok_or_else(bad)?;
        let writable = match parts.next() {
            None | Some("ro") => false,
            Some("rw") => true,
            Some(_) => return Err(bad()),
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        Ok(Self {
            source: source.into(),
            target: target.into(),
            writable,
        })
    }
}

/// Where the program's standard input comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Stdin {
    /// `/dev/null`.
    #[default]
    Null,
    /// A host file, opened by the supervisor (the program needs no access to it).
    File(PathBuf),
    /// Bytes fed through a pipe.
    Bytes(Vec<u8>),
    /// The descriptor passed with the request ([`PassedFds::stdin`]), e.g. one end of the pipe
    /// pair that connects an interactive program to its validator.
    Passed,
}

/// Where the program's standard output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Stdout {
    /// Captured up to the output limit and returned in the outcome.
    #[default]
    Capture,
    /// The descriptor passed with the request ([`PassedFds::stdout`]); nothing is captured.
    Passed,
    /// Captured up to the output limit like `Capture`, but streamed into the descriptor passed
    /// with the request ([`PassedFds::stdout`], a regular file the caller opened) instead of
    /// being kept in memory: the outcome's `stdout` stays empty and the file holds the bytes.
    /// The program itself only ever sees a pipe.
    CaptureToFile,
}

impl Stdout {
    /// Whether the request carries a descriptor for stdout.
    pub fn takes_descriptor(self) -> bool {
        matches!(self, Stdout::Passed | Stdout::CaptureToFile)
    }
}

/// Where the program's standard error goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Stderr {
    /// Captured up to `stderr_bytes` and returned in the outcome.
    #[default]
    Capture,
    /// The descriptor passed with the request ([`PassedFds::stderr`]); nothing is captured.
    Passed,
}

/// A channel the program reports on: the write end of a pipe at descriptor 3, which the
/// supervisor reads. Each line is a record, stamped on arrival with the run's CPU time, wall
/// time and peak memory, so a caller can measure the work between two records from the
/// kernel's accounting rather than from the program's word. For each record the supervisor
/// then writes one byte on descriptor 4 (the acknowledgement): a program that waits for it
/// after each record is stopped while it is stamped, so the stamp is exact rather than late
/// by however long the supervisor took to wake. The time between records is limited too: a
/// record must follow the previous one (or the start) within its budget, else the run is
/// killed at the time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Records {
    /// CPU time from the start to the first record.
    pub first_cpu_ms: u64,
    /// CPU time between one record and the next.
    pub cpu_ms: u64,
    /// Wall-clock time between one record and the next (and from the start to the first).
    pub wall_ms: u64,
    /// Longest record, in bytes; a longer one ends the run (`output_limit`).
    pub max_record_bytes: u64,
}

impl Records {
    fn validate(&self) -> Result<(), SpecError> {
        for (name, value, minimum) in [
            ("records.first_cpu_ms", self.first_cpu_ms, 1),
            ("records.cpu_ms", self.cpu_ms, 1),
            ("records.wall_ms", self.wall_ms, 1),
            ("records.max_record_bytes", self.max_record_bytes, 64),
        ] {
            if value < minimum {
                return Err(SpecError::LimitTooSmall {
                    name,
                    value,
                    minimum,
                });
            }
        }
        Ok(())
    }
}

/// Where records go inside the program.
pub const RECORDS_FD: i32 = 3;
/// Where the program reads one byte per stamped record.
pub const RECORDS_ACK_FD: i32 = 4;

/// One record of a run's report channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The line, without its newline.
    #[serde(with = "crate::outcome::exact_bytes")]
    pub line: Vec<u8>,
    /// The run's CPU time (every thread of every process) when the record arrived.
    pub cpu_time_us: u64,
    /// Wall-clock time since the run started when the record arrived.
    pub wall_time_us: u64,
    /// The run's peak memory so far.
    pub memory_kib: u64,
}

/// Descriptors handed to a run. They are moved in, so the caller keeps no copy that would hold
/// a pipe open after the run's own end closes.
#[derive(Debug, Default)]
pub struct PassedFds {
    pub stdin: Option<std::os::fd::OwnedFd>,
    pub stdout: Option<std::os::fd::OwnedFd>,
    pub stderr: Option<std::os::fd::OwnedFd>,
}

impl PassedFds {
    /// Checks that the spec and the descriptors agree.
    pub fn check(&self, spec: &RunSpec) -> Result<(), SpecError> {
        let wants_stdin = spec.stdin == Stdin::Passed;
        let wants_stdout = spec.stdout.takes_descriptor();
        if wants_stdin != self.stdin.is_some() {
            return Err(SpecError::DescriptorMismatch("stdin"));
        }
        if wants_stdout != self.stdout.is_some() {
            return Err(SpecError::DescriptorMismatch("stdout"));
        }
        if (spec.stderr == Stderr::Passed) != self.stderr.is_some() {
            return Err(SpecError::DescriptorMismatch("stderr"));
        }
        Ok(())
    }
}

/// Resource limits of one run. Every limit is enforced; none is advisory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// CPU time of the whole process tree (all threads, all children), from cgroup accounting.
    pub cpu_time_ms: u64,
    /// Monotonic wall-clock time from start to the main process's exit.
    pub wall_time_ms: u64,
    /// Memory of the whole tree (cgroup, swap 0), including `/tmp` contents.
    pub memory_bytes: u64,
    /// Processes plus threads alive at once.
    pub pids: u32,
    /// Bytes kept from stdout; producing more ends the run (`output_limit`).
    pub output_bytes: u64,
    /// Bytes kept from stderr; producing more ends the run (`output_limit`). Small by default:
    /// the host holds whatever a run captures, and only compilers have much to say there.
    #[serde(default = "default_stderr_bytes")]
    pub stderr_bytes: u64,
    /// `RLIMIT_STACK`; `None` means "as large as the memory limit" (deep recursion is legal).
    pub stack_bytes: Option<u64>,
    /// `RLIMIT_FSIZE`: largest file the program may write.
    pub file_size_bytes: u64,
    /// `RLIMIT_NOFILE`.
    pub open_files: u64,
    /// Size of the private writable `/tmp`.
    pub tmp_bytes: u64,
    /// Inodes of the private writable `/tmp`.
    pub tmp_inodes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            cpu_time_ms: 2_000,
            wall_time_ms: 6_000,
            memory_bytes: 256 * MIB,
            pids: 64,
            output_bytes: 64 * MIB,
            stderr_bytes: default_stderr_bytes(),
            stack_bytes: None,
            file_size_bytes: 64 * MIB,
            open_files: 128,
            tmp_bytes: 64 * MIB,
            tmp_inodes: 4096,
        }
    }
}

fn default_stderr_bytes() -> u64 {
    MIB
}

impl Limits {
    /// The stack limit actually applied.
    pub fn effective_stack_bytes(&self) -> u64 {
        self.stack_bytes.unwrap_or(self.memory_bytes)
    }

    fn validate(&self) -> Result<(), SpecError> {
        let checks: [(&'static str, u64, u64); 10] = [
            ("cpu_time_ms", self.cpu_time_ms, 1),
            ("wall_time_ms", self.wall_time_ms, 1),
            ("memory_bytes", self.memory_bytes, 4 * MIB),
            ("pids", u64::from(self.pids), 1),
            ("output_bytes", self.output_bytes, 1),
            ("stderr_bytes", self.stderr_bytes, 1),
            ("file_size_bytes", self.file_size_bytes, 1),
            ("open_files", self.open_files, 4),
            ("tmp_bytes", self.tmp_bytes, 4096),
            ("tmp_inodes", self.tmp_inodes, 16),
        ];
        for (name, value, minimum) in checks {
            if value < minimum {
                return Err(SpecError::LimitTooSmall {
                    name,
                    value,
                    minimum,
                });
            }
        }
        if let Some(stack) = self.stack_bytes {
            if stack < 64 * 1024 {
                return Err(SpecError::LimitTooSmall {
                    name: "stack_bytes",
                    value: stack,
                    minimum: 64 * 1024,
                });
            }
        }
        Ok(())
    }
}

/// A spec that can never run, whatever the host looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("the program to run is empty")]
    EmptyProgram,
    #[error("argument contains a NUL byte: {0:?}")]
    NulByte(String),
    #[error("invalid environment variable name or value for {0:?}")]
    BadEnv(String),
    #[error("path must be absolute: {0}")]
    RelativePath(PathBuf),
    #[error("path must not contain '.' or '..' components: {0}")]
    UnnormalizedPath(PathBuf),
    #[error("bind target {0} is built by the sandbox itself and cannot be replaced")]
    ReservedBindTarget(PathBuf),
    #[error("bind must look like SRC:DST[:rw|:ro], got {0:?}")]
    BadBind(String),
    #[error("{0} is marked as passed but no descriptor was given, or the other way round")]
    DescriptorMismatch(&'static str),
    #[error("limit {name} = {value} is below the minimum {minimum}")]
    LimitTooSmall {
        name: &'static str,
        value: u64,
        minimum: u64,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_spec_is_valid() {
        RunSpec::new("/bin/true").validate().unwrap();
    }

    #[test]
    fn invalid_specs_are_rejected_with_the_reason() {
        let cases: Vec<(RunSpec, SpecError)> = vec![
            (RunSpec::new(""), SpecError::EmptyProgram),
            (
                RunSpec::new("/bin/echo").args(["a\0b"]),
                SpecError::NulByte("a\0b".into()),
            ),
            (
                RunSpec::new("/bin/true").env("A=B", "c"),
                SpecError::BadEnv("A=B".into()),
            ),
            (
                RunSpec::new("/bin/true").job_dir("relative/dir", false),
                SpecError::RelativePath("relative/dir".into()),
            ),
            (
                RunSpec::new("/bin/true").bind(Bind::read_only("/opt", "/x/../etc")),
                SpecError::UnnormalizedPath("/x/../etc".into()),
            ),
            (
                RunSpec::new("/bin/true").bind(Bind::read_only("/opt", "/proc/1")),
                SpecError::ReservedBindTarget("/proc/1".into()),
            ),
            (
                RunSpec::new("/bin/true").bind(Bind::read_only("/opt", "/tmp")),
                SpecError::ReservedBindTarget("/tmp".into()),
            ),
            (
                RunSpec::new("/bin/true").limits(Limits {
                    memory_bytes: 1024,
                    ..Limits::default()
                }),
                SpecError::LimitTooSmall {
                    name: "memory_bytes",
                    value: 1024,
                    minimum: 4 * MIB,
                },
            ),
        ];
        for (spec, expected) in cases {
            assert_eq!(spec.validate(), Err(expected), "{spec:?}");
        }
    }

    #[test]
    fn bind_parses_the_cli_form() {
        assert_eq!(Bind::parse("/a:/b").unwrap(), Bind::read_only("/a", "/b"));
        assert!(Bind::parse("/a:/b:rw").unwrap().writable);
        assert!(!Bind::parse("/a:/b:ro").unwrap().writable);
        for bad in ["", "/a", ":/b", "/a:", "/a:/b:rx", "/a:/b:rw:x"] {
            assert_eq!(
                Bind::parse(bad),
                Err(SpecError::BadBind(bad.into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn cwd_defaults_follow_the_job_dir() {
        assert_eq!(RunSpec::new("x").effective_cwd(), Path::new("/tmp"));
        assert_eq!(
            RunSpec::new("x").job_dir("/srv/j", false).effective_cwd(),
            Path::new("/job")
        );
    }
}
