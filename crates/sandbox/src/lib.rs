//! The trust boundary of UltiCode.
//!
//! Every compiler and every submitted program runs through a [`Sandbox`]. A run takes a
//! [`RunSpec`] (what to execute, with which [`Limits`] and [`Profile`]) and always ends in a
//! [`RunOutcome`] whose [`Status`] says exactly how it ended and whether that was the user's
//! fault or the infrastructure's. Only a malformed spec is an `Err`: everything that can happen
//! once a valid spec is accepted (including the sandbox failing to start) is an outcome.
//!
//! Two implementations share the trait:
//! - [`NativeSandbox`]: namespaces, a pivoted read-only root, cgroups (v1 or v2), seccomp-bpf,
//!   rlimits, dropped privileges; driven by single-threaded supervisor processes.
//! - [`DockerSandbox`]: the original system's `docker run` form, kept as a second backend.

mod caller;
mod capture;
mod cgroup;
pub mod docker;
pub mod doctor;
mod identity;
mod mountapi;
mod native;
mod outcome;
mod protocol;
mod raw;
mod rootfs;
mod scratch;
mod seccomp;
mod sources;
mod spec;
mod sys;

pub use docker::DockerSandbox;
pub use identity::{IdentityError, IdentityRange, RANGE_VARIABLE};
pub use native::{
    supervisor_main, DaemonError, NativeSandbox, SandboxDaemon, SupervisorCommand, SUPERVISOR_ARG,
};
pub use outcome::{Fault, RunOutcome, Status};
pub use seccomp::Profile;
pub use spec::{
    Bind, Limits, PassedFds, Record, Records, RunSpec, SpecError, Stderr, Stdin, Stdout,
    RECORDS_ACK_FD, RECORDS_FD,
};

/// Runs programs inside an isolation boundary.
///
/// Implementations are `Sync` so one instance serves concurrent runs. Waiting blocks the
/// calling thread; async callers use `spawn_blocking`.
pub trait Sandbox: Send + Sync {
    /// Starts `spec` with the given descriptors. `Err` only for a spec that fails validation;
    /// everything that happens afterwards, including failing to start, is in the outcome.
    fn start(&self, spec: &RunSpec, fds: PassedFds) -> Result<Box<dyn Run + '_>, SpecError>;

    /// Runs `spec` to completion.
    fn run(&self, spec: &RunSpec) -> Result<RunOutcome, SpecError> {
        Ok(self.start(spec, PassedFds::default())?.wait())
    }
}

/// A started run.
pub trait Run: Send {
    /// A handle that ends the run early from another thread (used when an interactive
    /// validator has already decided).
    fn canceller(&self) -> Canceller;

    /// Waits for the run to end.
    fn wait(self: Box<Self>) -> RunOutcome;
}

/// Ends a run early. Cancelling a run that already ended does nothing.
pub struct Canceller(Box<dyn Fn() + Send + Sync>);

impl Canceller {
    pub fn new(cancel: impl Fn() + Send + Sync + 'static) -> Self {
        Self(Box::new(cancel))
    }

    pub fn cancel(&self) {
        (self.0)()
    }
}

/// A run that ended before it started: its outcome is already known.
pub(crate) struct Finished(pub(crate) RunOutcome);

impl Run for Finished {
    fn canceller(&self) -> Canceller {
        Canceller::new(|| {})
    }

    fn wait(self: Box<Self>) -> RunOutcome {
        self.0
    }
}
