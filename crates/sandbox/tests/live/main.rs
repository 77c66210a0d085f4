//! The sandbox against the real kernel.
//!
//! - `attacks`: hostile programs in C, C++, Python and JavaScript, each compiled (inside the
//!   sandbox) and run, each asserting the exact outcome category and that the host was not
//!   affected; plus the measurement-accuracy cases.
//! - `isolation`: attacks on concurrent runs, the supervisors and the host's shared files, and
//!   attempts to forge the sandbox's evidence.
//! - `connected`: runs wired to each other through passed descriptors, and cancellation.
//! - `daemon`: the sandbox daemon serving an unprivileged client, and refusing it what its
//!   own permissions refuse.
//!
//! The test binary is its own sandbox supervisor (it dispatches on the supervisor argument
//! before the harness starts), so the suite needs nothing but root and this crate.

mod attacks;
mod connected;
mod daemon;
mod isolation;
mod leftovers;
mod records;

use std::any::Any;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use libtest_mimic::{Arguments, Failed, Trial};
use sandbox::{
    Limits, NativeSandbox, Profile, RunOutcome, RunSpec, Sandbox, Status, SupervisorCommand,
};

fn main() {
    if std::env::args_os().nth(1).as_deref() == Some(sandbox::SUPERVISOR_ARG.as_ref()) {
        sandbox::supervisor_main();
    }
    if std::env::args_os().nth(1).as_deref() == Some(daemon::CLIENT_ARG.as_ref()) {
        daemon::client_main();
    }
    let args = Arguments::from_args();
    let mut trials: Vec<Trial> = attacks::all()
        .into_iter()
        .chain(isolation::all())
        .map(|case| Trial::test(case.name, move || case.run()))
        .collect();
    trials.extend(isolation::trials());
    trials.extend(connected::all());
    trials.extend(records::all());
    trials.extend(leftovers::all());
    trials.extend(daemon::all());
    libtest_mimic::run(&args, trials).exit();
}

pub fn sandbox() -> &'static NativeSandbox {
    static SANDBOX: OnceLock<NativeSandbox> = OnceLock::new();
    SANDBOX.get_or_init(|| NativeSandbox::new(SupervisorCommand::current_exe().expect("own exe")))
}

/// A C program, compiled on the host into a directory of its own (it is trusted test code,
/// not a submission).
pub fn compiled(name: &str, source: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let src = dir.path().join(format!("{name}.c"));
    std::fs::write(&src, source).unwrap();
    let status = std::process::Command::new("gcc")
        .args(["-O1", "-o"])
        .arg(dir.path().join(name))
        .arg(&src)
        .status()
        .unwrap();
    assert!(status.success());
    dir
}

/// How a case's program is built and started.
#[derive(Debug, Clone, Copy)]
pub enum Lang {
    C,
    Cpp,
    Python,
    Node,
    /// A file the case's setup puts into the job directory, run as is.
    Prebuilt(&'static str),
    /// The run *is* the compilation (of a hostile source), with the case's limits.
    CompileC,
}

/// Everything a case's setup and checks can see.
pub struct Fixture {
    /// The job directory on the host (mounted at `/job`).
    pub job: PathBuf,
    /// Unique per case run: set as `ULTICODE_CASE` in the program's environment and used in
    /// host paths, so leftovers can be found even with other cases running in parallel.
    pub marker: String,
    /// Whatever the setup wants to keep alive until the checks.
    pub state: Option<Box<dyn Any + Send>>,
}

type Setup = fn(&mut Fixture);
type Check = fn(&Fixture, &RunOutcome) -> Result<(), String>;

pub struct Case {
    pub name: &'static str,
    lang: Lang,
    source: &'static str,
    args: Vec<&'static str>,
    limits: Limits,
    profile: Option<Profile>,
    job_writable: bool,
    expect: Status,
    stdin: Option<Vec<u8>>,
    setup: Option<Setup>,
    check: Option<Check>,
}

/// Limits for attack runs: small enough to keep the suite fast.
fn attack_limits() -> Limits {
    Limits {
        cpu_time_ms: 1_000,
        wall_time_ms: 3_000,
        memory_bytes: 128 << 20,
        pids: 32,
        output_bytes: 1 << 20,
        ..Limits::default()
    }
}

impl Case {
    pub fn new(name: &'static str, lang: Lang, source: &'static str, expect: Status) -> Self {
        Self {
            name,
            lang,
            source,
            args: Vec::new(),
            limits: attack_limits(),
            profile: None,
            job_writable: false,
            expect,
            stdin: None,
            setup: None,
            check: None,
        }
    }

    pub fn limits(mut self, change: impl FnOnce(&mut Limits)) -> Self {
        change(&mut self.limits);
        self
    }

    /// Default limits of the sandbox itself, not the suite's small ones.
    pub fn default_limits(mut self) -> Self {
        self.limits = Limits::default();
        self
    }

    pub fn args(mut self, args: &[&'static str]) -> Self {
        self.args = args.to_vec();
        self
    }

    pub fn profile(mut self, profile: Profile) -> Self {
        self.profile = Some(profile);
        self
    }

    pub fn job_writable(mut self) -> Self {
        self.job_writable = true;
        self
    }

    pub fn stdin(mut self, bytes: Vec<u8>) -> Self {
        self.stdin = Some(bytes);
        self
    }

    pub fn setup(mut self, setup: Setup) -> Self {
        self.setup = Some(setup);
        self
    }

    pub fn check(mut self, check: Check) -> Self {
        self.check = Some(check);
        self
    }

    fn run(self) -> Result<(), Failed> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let job = dir.path().join("job");
        std::fs::create_dir(&job).map_err(|e| e.to_string())?;
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let mut fixture = Fixture {
            job: job.clone(),
            marker: format!("ulticode-case-{}-{}-{nanos}", self.name, std::process::id()),
            state: None,
        };
        let (program, args, profile) = self.prepare(&fixture)?;
        if let Some(setup) = self.setup {
            setup(&mut fixture);
        }
        let spec = RunSpec {
            args,
            stdin: self
                .stdin
                .clone()
                .map_or(sandbox::Stdin::Null, sandbox::Stdin::Bytes),
            profile: self.profile.unwrap_or(profile),
            limits: self.limits,
            ..RunSpec::new(program)
                .job_dir(&job, self.job_writable)
                .env("ULTICODE_CASE", &fixture.marker)
        };
        let outcome = sandbox().run(&spec).map_err(|e| e.to_string())?;
        let describe = || {
            format!(
                "{} ended as {} (exit {:?}, signal {:?}, cpu {} ms, wall {} ms, {} KiB{})\nstdout: {}\nstderr: {}",
                self.name,
                outcome.status,
                outcome.exit_code,
                outcome.signal,
                outcome.cpu_time_ms,
                outcome.wall_time_ms,
                outcome.memory_kib,
                outcome.message.as_deref().map(|m| format!(", {m}")).unwrap_or_default(),
                truncate(&outcome.stdout),
                truncate(&outcome.stderr),
            )
        };
        if outcome.status != self.expect {
            return Err(format!("expected {}; {}", self.expect, describe()).into());
        }
        host_unaffected(&fixture).map_err(|e| format!("{e}; {}", describe()))?;
        if let Some(check) = self.check {
            check(&fixture, &outcome).map_err(|e| format!("{e}; {}", describe()))?;
        }
        Ok(())
    }

    /// Writes the source and compiles it (in the sandbox); returns how to start the program.
    fn prepare(&self, fixture: &Fixture) -> Result<(String, Vec<String>, Profile), Failed> {
        let args = self.args.iter().map(|a| a.to_string());
        let write = |name: &str| -> Result<(), Failed> {
            let path = fixture.job.join(name);
            std::fs::write(&path, self.source).map_err(|e| e.to_string())?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
                .map_err(|e| e.to_string())?;
            Ok(())
        };
        Ok(match self.lang {
            Lang::C => {
                write("main.c")?;
                compile_with(
                    fixture,
                    Profile::Native,
                    "/usr/bin/gcc",
                    &["-O2", "-pthread", "-o", "/job/main", "/job/main.c"],
                )?;
                ("/job/main".into(), args.collect(), Profile::Native)
            }
            Lang::Cpp => {
                write("main.cpp")?;
                compile_with(
                    fixture,
                    Profile::Native,
                    "/usr/bin/g++",
                    &[
                        "-O2",
                        "-std=c++17",
                        "-pthread",
                        "-o",
                        "/job/main",
                        "/job/main.cpp",
                    ],
                )?;
                ("/job/main".into(), args.collect(), Profile::Native)
            }
            Lang::Python => {
                write("main.py")?;
                let mut all = vec!["/job/main.py".to_string()];
                all.extend(args);
                ("/usr/bin/python3".into(), all, Profile::Python)
            }
            Lang::Node => {
                write("main.js")?;
                let mut all = vec!["/job/main.js".to_string()];
                all.extend(args);
                ("/usr/bin/node".into(), all, Profile::Node)
            }
            Lang::Prebuilt(path) => (path.into(), args.collect(), Profile::Native),
            Lang::CompileC => {
                write("main.c")?;
                let compile = ["-c", "-o", "/job/main.o", "/job/main.c"].map(String::from);
                ("/usr/bin/gcc".into(), compile.to_vec(), Profile::Native)
            }
        })
    }
}

/// Compiles inside the sandbox, like every compilation the judge does.
pub fn compile_with(
    fixture: &Fixture,
    profile: Profile,
    compiler: &str,
    args: &[&str],
) -> Result<(), Failed> {
    let spec = RunSpec::new(compiler)
        .args(args.iter().copied())
        .job_dir(&fixture.job, true)
        .profile(profile)
        .limits(compile_limits());
    let outcome = sandbox().run(&spec).map_err(|e| e.to_string())?;
    if outcome.status != Status::Ok {
        return Err(format!(
            "compilation ended as {}: {}{}",
            outcome.status,
            String::from_utf8_lossy(&outcome.stderr),
            outcome.message.unwrap_or_default()
        )
        .into());
    }
    Ok(())
}

pub fn compile_limits() -> Limits {
    Limits {
        cpu_time_ms: 20_000,
        wall_time_ms: 40_000,
        memory_bytes: 512 << 20,
        pids: 32,
        ..Limits::default()
    }
}

fn truncate(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() > 400 {
        format!("{}… ({} bytes)", &text[..400], bytes.len())
    } else {
        text.into_owned()
    }
}

/// Checks every case makes: no process of the run survives anywhere on the host, and nothing
/// the program wrote under its marker appeared in the host's `/tmp`.
fn host_unaffected(fixture: &Fixture) -> Result<(), String> {
    let needle = format!("ULTICODE_CASE={}", fixture.marker);
    for entry in std::fs::read_dir("/proc")
        .map_err(|e| e.to_string())?
        .flatten()
    {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == needle.as_bytes())
        {
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            return Err(format!(
                "process {pid} ({}) of the run outlived it",
                comm.trim()
            ));
        }
    }
    let leaked = Path::new("/tmp").join(&fixture.marker);
    if leaked.exists() {
        return Err(format!("{} appeared on the host", leaked.display()));
    }
    Ok(())
}

/// Helpers for checks.
pub fn stdout(outcome: &RunOutcome) -> String {
    String::from_utf8_lossy(&outcome.stdout).into_owned()
}

pub fn stderr(outcome: &RunOutcome) -> String {
    String::from_utf8_lossy(&outcome.stderr).into_owned()
}

pub fn expect_stdout(outcome: &RunOutcome, expected: &str) -> Result<(), String> {
    let got = stdout(outcome);
    if got.trim_end() == expected {
        Ok(())
    } else {
        Err(format!("stdout {got:?}, expected {expected:?}"))
    }
}

/// The program ran as one of the sandbox's run identities (never root, never a host account).
pub fn expect_run_identity(outcome: &RunOutcome) -> Result<(), String> {
    let range = sandbox::IdentityRange::from_env().map_err(|e| e.to_string())?;
    let got = stdout(outcome);
    match got.trim().parse::<u32>() {
        Ok(uid) if uid >= range.first() && uid < range.first() + range.len() => Ok(()),
        _ => Err(format!(
            "ran as uid {got:?}, expected one of {}..{}",
            range.first(),
            range.first() + range.len()
        )),
    }
}

pub fn expect_stderr_contains(outcome: &RunOutcome, needle: &str) -> Result<(), String> {
    let got = stderr(outcome);
    if got.contains(needle) {
        Ok(())
    } else {
        Err(format!("stderr lacks {needle:?}"))
    }
}
