//! The sandbox daemon serving an unprivileged client: what the client may do, the sandbox
//! does; what it may not, the sandbox refuses — whatever paths the request names.
//!
//! The client is this test binary, started as a uid and gid that are neither root nor a run
//! identity (see [`client_main`]); the daemon runs in this (root) process.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use libtest_mimic::{Failed, Trial};
use sandbox::{
    Bind, IdentityRange, RunOutcome, RunSpec, SandboxDaemon, Status, Stdin, SupervisorCommand,
};

/// The argument that makes this binary a daemon client: it reads a spec (JSON) on stdin, runs
/// it through the daemon at `ULTICODE_SANDBOX_SOCKET` and prints the outcome (JSON).
pub const CLIENT_ARG: &str = "__sandbox-daemon-client";

/// The client's ids: no host account, no run identity.
const CLIENT: u32 = 59_999;
/// A process whose uid and gid are not the socket's group.
const STRANGER: u32 = 59_998;

pub fn all() -> Vec<Trial> {
    vec![
        Trial::test(
            "daemon_a_client_compiles_and_runs_and_owns_what_its_run_left",
            compiles_and_runs,
        ),
        Trial::test(
            "daemon_host_paths_the_client_cannot_read_are_refused",
            unreadable_paths_refused,
        ),
        Trial::test(
            "daemon_a_directory_the_client_cannot_write_is_never_writable",
            unwritable_dirs_refused,
        ),
        Trial::test(
            "daemon_only_root_and_its_group_may_connect",
            strangers_cannot_connect,
        ),
    ]
}

pub fn client_main() -> ! {
    let spec: RunSpec = serde_json::from_reader(std::io::stdin()).expect("a spec on stdin");
    let socket = std::env::var_os("ULTICODE_SANDBOX_SOCKET").expect("the daemon's socket");
    let sandbox = sandbox::NativeSandbox::connect(socket);
    let outcome = sandbox::Sandbox::run(&sandbox, &spec).expect("a valid spec");
    serde_json::to_writer(std::io::stdout(), &outcome).expect("stdout");
    std::process::exit(0)
}

/// The files the cases use, made once: a home of the client's own and things it may not touch.
struct Host {
    _dir: tempfile::TempDir,
    socket: PathBuf,
    /// The client's own directory (0700), with `main.c`.
    home: PathBuf,
    /// root's, 0600.
    secret: PathBuf,
    /// root's, 0700, holding a world-readable file.
    closed_dir: PathBuf,
    /// root's, 0755: readable by everyone, writable by root only.
    open_dir: PathBuf,
}

fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        std::fs::set_permissions(base, PermissionsExt::from_mode(0o755)).unwrap();
        let home = base.join("home");
        std::fs::create_dir(&home).unwrap();
        std::fs::write(
            home.join("main.c"),
            "#include <stdio.h>\nint main(void) { puts(\"hello from the client\"); return 0; }\n",
        )
        .unwrap();
        for path in [&home, &home.join("main.c")] {
            std::os::unix::fs::chown(path, Some(CLIENT), Some(CLIENT)).unwrap();
        }
        std::fs::set_permissions(&home, PermissionsExt::from_mode(0o700)).unwrap();
        std::fs::set_permissions(home.join("main.c"), PermissionsExt::from_mode(0o600)).unwrap();
        let secret = base.join("secret");
        std::fs::write(&secret, "root's secret\n").unwrap();
        std::fs::set_permissions(&secret, PermissionsExt::from_mode(0o600)).unwrap();
        let closed_dir = base.join("closed");
        std::fs::create_dir(&closed_dir).unwrap();
        std::fs::write(closed_dir.join("world.txt"), "readable, if reachable\n").unwrap();
        std::fs::set_permissions(&closed_dir, PermissionsExt::from_mode(0o700)).unwrap();
        let open_dir = base.join("open");
        std::fs::create_dir(&open_dir).unwrap();
        std::fs::write(open_dir.join("keep.txt"), "root's file\n").unwrap();
        std::fs::set_permissions(&open_dir, PermissionsExt::from_mode(0o755)).unwrap();

        let socket = base.join("sandbox.sock");
        let command = SupervisorCommand::current_exe().unwrap();
        let identities = IdentityRange::from_env().unwrap();
        let daemon = SandboxDaemon::bind(&socket, CLIENT, command, identities).unwrap();
        std::thread::spawn(move || daemon.serve());
        Host {
            _dir: dir,
            socket,
            home,
            secret,
            closed_dir,
            open_dir,
        }
    })
}

/// Runs `spec` through the daemon from a process with the given uid and gid.
fn run_as(id: u32, spec: &RunSpec) -> Result<RunOutcome, Failed> {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let host = host();
    let mut child = Command::new(std::env::current_exe()?)
        .arg(CLIENT_ARG)
        .env("ULTICODE_SANDBOX_SOCKET", &host.socket)
        .uid(id)
        .gid(id)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&serde_json::to_vec(spec)?)?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        return Err(format!("the client failed: {}", output.status).into());
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}

fn describe(outcome: &RunOutcome) -> String {
    format!(
        "{} ({}); stdout {:?}, stderr {:?}",
        outcome.status,
        outcome.message.as_deref().unwrap_or(""),
        String::from_utf8_lossy(&outcome.stdout),
        String::from_utf8_lossy(&outcome.stderr)
    )
}

fn expect_refused(outcome: &RunOutcome, naming: &Path) -> Result<(), Failed> {
    let message = outcome.message.as_deref().unwrap_or("");
    if outcome.status != Status::ConfigError
        || !message.contains(&*naming.to_string_lossy())
        || !message.contains("Permission denied")
    {
        return Err(format!(
            "expected a config_error naming {} (permission denied), got {}",
            naming.display(),
            describe(outcome)
        )
        .into());
    }
    Ok(())
}

fn compiles_and_runs() -> Result<(), Failed> {
    let host = host();
    let compile = RunSpec::new("/usr/bin/gcc")
        .args(["-O1", "-o", "/job/main", "/job/main.c"])
        .job_dir(&host.home, true)
        .limits(super::compile_limits());
    let outcome = run_as(CLIENT, &compile)?;
    if outcome.status != Status::Ok {
        return Err(format!("compilation: {}", describe(&outcome)).into());
    }
    let binary = std::fs::metadata(host.home.join("main"))?;
    if binary.uid() != CLIENT || binary.gid() != CLIENT {
        return Err(format!(
            "the compiled binary belongs to {}:{}, not to the client",
            binary.uid(),
            binary.gid()
        )
        .into());
    }
    // The binary is the client's (0755 from the compiler). The run reads it through a
    // read-only job directory the client opened, and sees it with its own identity: the
    // directory must let others in, as the judge's job directories do.
    std::fs::set_permissions(&host.home, PermissionsExt::from_mode(0o755))?;
    let run = RunSpec::new("/job/main").job_dir(&host.home, false);
    let outcome = run_as(CLIENT, &run)?;
    if outcome.status != Status::Ok || outcome.stdout != b"hello from the client\n" {
        return Err(format!("the run: {}", describe(&outcome)).into());
    }
    super::expect_run_identity(&run_as(CLIENT, &RunSpec::new("/usr/bin/id").args(["-u"]))?)?;
    Ok(())
}

fn unreadable_paths_refused() -> Result<(), Failed> {
    let host = host();
    let cat = || RunSpec::new("/bin/cat").args(["/data/secret"]);
    let cases = [
        (
            cat().bind(Bind::read_only(&host.secret, "/data/secret")),
            &host.secret,
        ),
        (
            RunSpec::new("/bin/cat").stdin(Stdin::File(host.secret.clone())),
            &host.secret,
        ),
        (
            RunSpec::new("/bin/ls").job_dir(&host.closed_dir, false),
            &host.closed_dir,
        ),
        (
            cat().bind(Bind::read_only(
                host.closed_dir.join("world.txt"),
                "/data/secret",
            )),
            &host.closed_dir,
        ),
    ];
    for (spec, naming) in &cases {
        expect_refused(&run_as(CLIENT, spec)?, naming)?;
    }
    Ok(())
}

fn unwritable_dirs_refused() -> Result<(), Failed> {
    let host = host();
    let scribble = "echo run > /job/new.txt; rm -f /job/keep.txt";
    let cases = [
        RunSpec::new("/bin/sh")
            .args(["-c", scribble])
            .job_dir(&host.open_dir, true),
        RunSpec::new("/bin/sh")
            .args(["-c", "echo run > /out/new.txt"])
            .bind(Bind {
                source: host.open_dir.clone(),
                target: "/out".into(),
                writable: true,
            }),
    ];
    for spec in &cases {
        expect_refused(&run_as(CLIENT, spec)?, &host.open_dir)?;
        let mut left: Vec<_> = std::fs::read_dir(&host.open_dir)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()?;
        left.sort();
        if left != ["keep.txt"] {
            return Err(format!("the directory changed: {left:?}").into());
        }
    }
    Ok(())
}

fn strangers_cannot_connect() -> Result<(), Failed> {
    let outcome = run_as(STRANGER, &RunSpec::new("/bin/true"))?;
    let message = outcome.message.as_deref().unwrap_or("");
    if outcome.status != Status::LaunchFailure || !message.contains("Permission denied") {
        return Err(format!("a stranger's run: {}", describe(&outcome)).into());
    }
    Ok(())
}
