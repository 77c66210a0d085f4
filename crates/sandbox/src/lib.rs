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

mod cgroup;
pub mod docker;
pub mod doctor;
mod native;
mod outcome;
mod protocol;
mod rootfs;
mod seccomp;
mod spec;
mod sys;

pub use docker::DockerSandbox;
pub use native::{supervisor_main, NativeSandbox, SupervisorCommand, SUPERVISOR_ARG};
pub use outcome::{Fault, RunOutcome, Status};
pub use seccomp::Profile;
pub use spec::{Bind, Limits, RunSpec, SpecError, Stdin};

/// Runs one program to completion inside an isolation boundary.
///
/// Implementations block the calling thread for the duration of the run; async callers use
/// `spawn_blocking`. Implementations are `Sync` so one instance serves concurrent runs.
pub trait Sandbox: Send + Sync {
    /// Runs `spec` and reports how it ended. `Err` only for a spec that fails validation.
    fn run(&self, spec: &RunSpec) -> Result<RunOutcome, SpecError>;
}
