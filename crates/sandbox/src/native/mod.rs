//! The native sandbox: a pool of supervisor processes, each serving one run at a time.
//!
//! ```text
//! caller thread ──request──▶ supervisor (exec'd or forked by a caller with one thread
//!                              │         (`process`), single-threaded, root, own process
//!                              │         group, one run identity for its life)
//!                              │ clone(NEWPID|VM) on a stack of its own
//!                              ▼
//!                            init (pid 1: own session, joins the supervisor's net, IPC and
//!                              │   UTS namespaces, enters a copy of the template's mount
//!                              │   namespace, mounts the run's own, reaps, holds the seccomp
//!                              │   listener, reports)
//!                              │ clone(VM|VFORK|FILES)
//!                              ▼
//!                            program (pid 2: cgroups, CPU, rlimits, the run's uid, no caps,
//!                                     no_new_privs, seccomp, exec)
//! ```
//!
//! A supervisor is reused for later runs, so a run costs two clones that copy no memory and an
//! exec rather than a process start of this binary. A supervisor that fails mid-run is discarded and the run
//! reported as a launch failure.
//!
//! Supervisors are either started by this process (which must then be root) or served by a
//! sandbox daemon (see `daemon`) to a process that need not be: the daemon starts one per
//! connection, and it uses the connecting process's permissions for every host path.

mod child;
mod daemon;
mod inits;
mod process;
mod pump;
mod resources;
mod supervisor;

use std::ffi::OsString;
use std::io::{self, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Mutex;

pub use daemon::{DaemonError, SandboxDaemon};
pub use supervisor::supervisor_main;

use crate::identity::{IdentityError, IdentityRange};
use crate::outcome::{RunOutcome, Status};
use crate::protocol;
use crate::spec::{PassedFds, RunSpec, SpecError};
use crate::{Canceller, Finished, Run, Sandbox};

/// The CPUs this process may run on, in order.
pub(crate) fn allowed_cpus() -> Vec<u32> {
    // SAFETY: an all-zero cpu_set_t is a valid empty set; the call fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    let rc =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: the index is below CPU_SETSIZE.
        .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
        .map(|cpu| cpu as u32)
        .collect()
}

/// The hidden argument that turns the `ulticode` binary into a supervisor.
pub const SUPERVISOR_ARG: &str = "__sandbox-supervisor";

/// How to start a supervisor process: a program that calls [`supervisor_main`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Fork instead, while the caller has one thread (see `process`).
    fork_when_alone: bool,
}

impl SupervisorCommand {
    /// `program __sandbox-supervisor`, for a binary whose `main` dispatches on [`SUPERVISOR_ARG`].
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args: vec![SUPERVISOR_ARG.into()],
            fork_when_alone: false,
        }
    }

    /// Starts supervisors as forks of the caller, without an exec, whenever the caller has
    /// one thread (else as before): for a short-lived command such as `ulticode sandbox
    /// run`, whose own binary is the supervisor.
    pub fn forked_when_alone(self) -> Self {
        Self {
            fork_when_alone: true,
            ..self
        }
    }

    /// The running executable (the composition root calls this).
    pub fn current_exe() -> io::Result<Self> {
        Ok(Self::new(std::env::current_exe()?))
    }
}

/// The native Linux sandbox. Cheap to share; concurrent runs use separate supervisors, each
/// claiming a run identity of its own from the range (see `identity`).
pub struct NativeSandbox {
    origin: Origin,
    idle: Mutex<Vec<Supervisor>>,
}

/// Where this sandbox's supervisors come from.
enum Origin {
    /// Started here. `Err` when the configured identity range is unusable; every run then
    /// says why.
    Spawned {
        command: SupervisorCommand,
        identities: Result<IdentityRange, IdentityError>,
    },
    /// One per connection to a sandbox daemon's socket.
    Daemon(PathBuf),
}

struct Supervisor {
    /// `None` for a daemon's supervisor (the daemon owns the process).
    process: Option<process::SupervisorProcess>,
    socket: UnixStream,
}

impl Supervisor {
    fn spawn(command: &SupervisorCommand, identities: IdentityRange) -> io::Result<Self> {
        let (socket, theirs) = UnixStream::pair()?;
        let process = process::SupervisorProcess::start(command, &identities, theirs)?;
        Ok(Self {
            process: Some(process),
            socket,
        })
    }

    fn connect(socket: &std::path::Path) -> io::Result<Self> {
        Ok(Self {
            process: None,
            socket: UnixStream::connect(socket)?,
        })
    }

    fn response(&mut self) -> io::Result<RunOutcome> {
        protocol::read_response(BufReader::new(&self.socket))
    }

    /// Ends a supervisor that failed mid-run (its identity is free once the process is gone).
    fn discard(mut self) {
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
        if let Some(process) = &mut self.process {
            process.kill_and_wait();
        }
    }

    /// Ends an idle supervisor: end of stream lets it remove its cgroups and exit; one that
    /// does not exit within a second is killed (its leftovers are removed by the next
    /// supervisor to start).
    fn retire(mut self) {
        let _ = self.socket.shutdown(std::net::Shutdown::Write);
        let Some(process) = &mut self.process else {
            return;
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        while std::time::Instant::now() < deadline {
            if process.exited() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        self.discard()
    }
}

impl NativeSandbox {
    /// A sandbox whose runs take their identities from [`IdentityRange::from_env`].
    pub fn new(command: SupervisorCommand) -> Self {
        let range = IdentityRange::from_env();
        Self::with_identities(command, range)
    }

    /// A sandbox whose runs take their identities from `range` (checked against the host's
    /// accounts and groups here; an unusable range makes every run a `config_error`).
    pub fn with_identities(
        command: SupervisorCommand,
        range: Result<IdentityRange, IdentityError>,
    ) -> Self {
        Self {
            origin: Origin::Spawned {
                command,
                identities: range.and_then(|r| r.check_host().map(|()| r)),
            },
            idle: Mutex::new(Vec::new()),
        }
    }

    /// A sandbox whose supervisors a sandbox daemon serves on `socket` (see
    /// [`SandboxDaemon`]); this process needs no privilege beyond connecting.
    pub fn connect(socket: impl Into<PathBuf>) -> Self {
        Self {
            origin: Origin::Daemon(socket.into()),
            idle: Mutex::new(Vec::new()),
        }
    }

    fn checkout(&self) -> Result<Supervisor, (Status, String)> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        if let Some(supervisor) = idle {
            return Ok(supervisor);
        }
        match &self.origin {
            Origin::Spawned {
                command,
                identities,
            } => {
                let identities = identities
                    .clone()
                    .map_err(|e| (Status::ConfigError, e.to_string()))?;
                Supervisor::spawn(command, identities).map_err(|e| {
                    let program = command.program.display();
                    let message = format!("start the sandbox supervisor {program}: {e}");
                    (Status::LaunchFailure, message)
                })
            }
            Origin::Daemon(socket) => Supervisor::connect(socket).map_err(|e| {
                let message = format!("connect to the sandbox daemon at {}: {e}", socket.display());
                (Status::LaunchFailure, message)
            }),
        }
    }

    /// Ends this sandbox without waiting for its idle supervisors: each sees its stream end,
    /// removes its cgroups and exits on its own. For a process about to exit (`ulticode
    /// sandbox run`), whose user need not wait for that cleanup.
    pub fn leave(self) {
        let idle = std::mem::take(&mut *self.idle.lock().unwrap_or_else(|p| p.into_inner()));
        for supervisor in idle {
            let _ = supervisor.socket.shutdown(std::net::Shutdown::Write);
        }
    }

    fn checkin(&self, supervisor: Supervisor) {
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(supervisor);
    }
}

impl Sandbox for NativeSandbox {
    fn start(&self, spec: &RunSpec, fds: PassedFds) -> Result<Box<dyn Run + '_>, SpecError> {
        spec.validate()?;
        fds.check(spec)?;
        let failed = |status: Status, message: String| -> Box<dyn Run + '_> {
            Box::new(Finished(RunOutcome::infrastructure(status, message)))
        };
        let supervisor = match self.checkout() {
            Ok(s) => s,
            Err((status, message)) => return Ok(failed(status, message)),
        };
        // `fds` drops after sending: the supervisor holds the only copies from here on.
        if let Err(e) = protocol::send_request(&supervisor.socket, spec, &fds) {
            supervisor.discard();
            return Ok(failed(
                Status::LaunchFailure,
                format!("send the run to the sandbox supervisor: {e}"),
            ));
        }
        let cancel = supervisor.socket.try_clone().ok();
        Ok(Box::new(NativeRun {
            sandbox: self,
            supervisor: Some(supervisor),
            cancel: std::sync::Arc::new(std::sync::Mutex::new(cancel)),
        }))
    }
}

/// A run in progress on one supervisor.
struct NativeRun<'a> {
    sandbox: &'a NativeSandbox,
    supervisor: Option<Supervisor>,
    /// A clone of the supervisor's socket for cancelling; emptied once the run has ended so a
    /// late cancel never reaches the supervisor's next run.
    cancel: std::sync::Arc<std::sync::Mutex<Option<UnixStream>>>,
}

impl Run for NativeRun<'_> {
    fn canceller(&self) -> Canceller {
        let cancel = self.cancel.clone();
        Canceller::new(move || {
            if let Some(socket) = cancel.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                let _ = (&mut &*socket).write_all(&[protocol::CANCEL]);
            }
        })
    }

    fn wait(mut self: Box<Self>) -> RunOutcome {
        let mut supervisor = self.supervisor.take().expect("a run is waited for once");
        let response = supervisor.response();
        *self.cancel.lock().unwrap_or_else(|p| p.into_inner()) = None;
        match response {
            Ok(outcome) => {
                self.sandbox.checkin(supervisor);
                outcome
            }
            Err(e) => {
                supervisor.discard();
                RunOutcome::infrastructure(
                    Status::LaunchFailure,
                    format!("the sandbox supervisor failed during the run: {e}"),
                )
            }
        }
    }
}

impl Drop for NativeSandbox {
    fn drop(&mut self) {
        let idle = std::mem::take(self.idle.get_mut().unwrap_or_else(|p| p.into_inner()));
        for supervisor in idle {
            supervisor.retire();
        }
    }
}
