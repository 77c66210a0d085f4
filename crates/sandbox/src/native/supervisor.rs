//! The supervisor: a small single-threaded process that serves run requests one at a time.
//!
//! It is started by exec (never forked from the async runtime that asked for it), which keeps
//! `clone` safe and keeps the caller's memory out of the program's accounting. Per run it
//! arms the cgroup, clones the sandbox init (in this process's memory, on a stack of its own)
//! into a fresh pid namespace, pumps stdio with byte caps, enforces the CPU and wall-clock
//! limits, and turns the kernel's evidence into a [`RunOutcome`].

use std::collections::HashMap;
use std::ffi::CString;
use std::io::{self, BufWriter};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::child::{self, ChildPlan, ExecArgs, SetupError, SetupFailure};
use super::inits::Inits;
use super::pump::{Pump, PumpBuffer, Streams};
use super::resources::{CpuClaims, Placement, SharedNamespaces};
use crate::caller::Caller;
use crate::cgroup::{CgroupHierarchy, RunCgroup};
use crate::outcome::{classify, EnforcedKill, Evidence, Fault, RunOutcome, Status, Termination};
use crate::protocol::{self, Incoming};
use crate::rootfs::{RootfsLayout, RunMount, Template};
use crate::scratch::{Scratch, ScratchError};
use crate::seccomp::Profile;
use crate::sources::HostSources;
use crate::spec::{PassedFds, RunSpec, Stderr, Stdin, Stdout};
use crate::sys;

/// Where each run mounts its root tmpfs (inside its own mount namespace).
const STAGING_DIRS: &[&str] = &["/run/ulticode-sandbox/root", "/tmp/ulticode-sandbox/root"];

/// Only the pid namespace: init joins the supervisor's network, IPC and UTS namespaces (see
/// [`SharedNamespaces`]) and enters a copy of the template's mount namespace (see
/// [`RunMount::EnterTemplate`]), because making them per run costs the most. Init shares this
/// process's memory (see `child`): copying it was most of a run's cost.
const CLONE_FLAGS: libc::c_int = libc::CLONE_NEWPID | libc::CLONE_VM | libc::SIGCHLD;

/// Variables every profile starts from; nothing else from the host is inherited.
const BASE_ENV: &[(&str, &str)] = &[
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("HOME", "/tmp"),
    ("LANG", "C.UTF-8"),
];

/// Runs the supervisor protocol on stdin (a Unix socket) until the client hangs up.
pub fn supervisor_main() -> ! {
    // SAFETY: ignoring SIGPIPE so a program closing its stdin early cannot kill the supervisor.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    // SAFETY: fd 0 is the socket the client passed; this process owns it from here on.
    let socket = UnixStream::from(unsafe { OwnedFd::from_raw_fd(0) });
    // The client's credentials, as the kernel recorded them: every host path of its runs is
    // used with them (see `caller`).
    let caller = match Caller::of_socket(socket.as_raw_fd()) {
        Ok(caller) => caller,
        Err(err) => {
            eprintln!("ulticode sandbox supervisor: whose runs these are: {err}");
            std::process::exit(2);
        }
    };
    reserve_records_fds();
    let mut supervisor = Supervisor::start(RunIdentity::claim(), caller);
    loop {
        let (spec, fds) = match protocol::receive_request(&socket) {
            Ok(Incoming::Request(spec, fds)) => (*spec, fds),
            Ok(Incoming::Closed) => {
                supervisor.shutdown();
                std::process::exit(0);
            }
            // A client killed while this supervisor was idle: nothing was asked, nothing is lost.
            Err(err) if err.kind() == io::ErrorKind::ConnectionReset => {
                supervisor.shutdown();
                std::process::exit(0);
            }
            Err(err) => {
                eprintln!("ulticode sandbox supervisor: bad request: {err}");
                supervisor.shutdown();
                std::process::exit(2);
            }
        };
        let outcome = supervisor.run(&spec, fds, socket.as_raw_fd());
        let mut writer = BufWriter::new(&socket);
        if protocol::write_response(&mut writer, &outcome).is_err() {
            std::process::exit(0);
        }
        drop(writer);
        supervisor.between_runs();
    }
}

/// Keeps descriptors 3 and 4 taken for the supervisor's whole life, so nothing it or a run's
/// init opens later gets those numbers: the program (which shares init's descriptor table
/// until its exec) puts a run's report channel there ([`crate::spec::RECORDS_FD`],
/// [`crate::spec::RECORDS_ACK_FD`]).
fn reserve_records_fds() {
    for fd in [crate::spec::RECORDS_FD, crate::spec::RECORDS_ACK_FD] {
        match open_read(Path::new("/dev/null")) {
            Ok(null) if null.as_raw_fd() == fd => std::mem::forget(null),
            Ok(null) => {
                // Whatever was inherited there is nothing this process uses.
                // SAFETY: dup2 onto a number this process reserves; `null` closes on drop.
                unsafe { libc::dup2(null.as_raw_fd(), fd) };
            }
            Err(e) => eprintln!("ulticode sandbox supervisor: open /dev/null: {e}"),
        }
    }
}

/// The run slot this supervisor holds for its whole life (see `identity`).
#[derive(Debug)]
struct RunIdentity {
    slot: u32,
    uid: u32,
    _claim: crate::identity::ClaimedSlot,
}

impl RunIdentity {
    /// Claims a slot of the range the client passed.
    fn claim() -> Result<Self, String> {
        let range = std::env::var(crate::identity::RANGE_VARIABLE)
            .map_err(|_| "the sandbox client passed no identity range".to_string())
            .and_then(|text| crate::IdentityRange::parse(&text).map_err(|e| e.to_string()))?;
        let locks = lock_dir()?;
        let claim = range.claim(&locks).map_err(|e| e.to_string())?;
        Ok(Self {
            slot: claim.slot.index,
            uid: claim.slot.uid,
            _claim: claim,
        })
    }
}

/// Where run identities are claimed (one lock file per uid, shared by every sandbox on the host).
fn lock_dir() -> Result<PathBuf, String> {
    let staging = staging_dir()?;
    let dir = staging.with_file_name("identities");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

struct Supervisor {
    /// Whose permissions the runs' host paths are used with.
    caller: Caller,
    /// Where to mount the hierarchy that makes cgroup joins cheap, until it is done.
    favor_dynamic_changes: Option<PathBuf>,
    /// `Err` when no identity could be claimed, or the capability bounding set every run
    /// inherits could not be emptied; every run then reports it as a config error.
    identity: Result<RunIdentity, String>,
    /// The CPUs this supervisor's runs are pinned to, one at a time.
    cpus_to_pin: CpuClaims,
    /// The CPU this process is pinned to (its last run's own), or `None`: every CPU.
    pinned_to: Option<u32>,
    /// `Err` holds why cgroups are unusable; every run then reports it as a config error.
    cgroups: Result<CgroupHierarchy, String>,
    template: Result<Template, String>,
    namespaces: Result<SharedNamespaces, String>,
    filters: HashMap<Profile, Vec<libc::sock_filter>>,
    cpus: u64,
    pump_buffer: PumpBuffer,
    /// Signals to reset in each program (see [`child::ignored_signals`]).
    ignored_signals: Vec<libc::c_int>,
    runs: u64,
    /// The last run's cgroup, settled (its counters final): the next run's, once reset.
    warm_cgroup: Option<RunCgroup>,
    /// A cgroup made ahead of time for the next run, where none can be reused (v2).
    next_cgroup: Option<RunCgroup>,
    /// A cgroup that cannot serve again, removed while the next run's init builds its root.
    retired: Option<RunCgroup>,
    /// The stacks of inits and programs, and the inits that reported and are exiting (reaped
    /// later, off the response path).
    inits: Inits,
}

impl Supervisor {
    fn start(identity: Result<RunIdentity, String>, caller: Caller) -> Self {
        let identity = identity.and_then(|identity| {
            child::empty_bounding_set()
                .map(|()| identity)
                .map_err(|e| format!("empty the capability bounding set: {}", io::Error::from(e)))
        });
        let cgroups = CgroupHierarchy::detect()
            .and_then(|h| h.prepare().map(|()| h))
            .map_err(|e| e.to_string());
        let staging = staging_dir();
        let template = staging
            .clone()
            .map(RootfsLayout::scan_host)
            .and_then(|layout| {
                let id = identity.as_ref().map_err(Clone::clone)?;
                Template::build(layout, id.uid, id.uid)
            });
        // Only inside the private mount namespace the template made, and only after the first
        // run (see `between_runs`).
        let favor_dynamic_changes = match (&template, &staging) {
            (Ok(_), Ok(staging)) => Some(staging.with_file_name("cgroup-favordynmods")),
            _ => None,
        };
        let namespaces = SharedNamespaces::create()
            .map_err(|e| format!("the runs' network, IPC and UTS namespaces: {e}"));
        let cpus_to_pin = CpuClaims::open(identity.as_ref().map_or(0, |id| id.slot as usize));
        let filters = Profile::ALL.iter().map(|p| (*p, p.compile())).collect();
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        Self {
            caller,
            favor_dynamic_changes,
            identity,
            cpus_to_pin,
            pinned_to: None,
            cgroups,
            template,
            namespaces,
            filters,
            cpus,
            pump_buffer: PumpBuffer::new(),
            ignored_signals: child::ignored_signals(),
            runs: 0,
            warm_cgroup: None,
            next_cgroup: None,
            retired: None,
            inits: Inits::default(),
        }
    }

    fn run(&mut self, spec: &RunSpec, fds: PassedFds, control: RawFd) -> RunOutcome {
        if let Err(e) = fds.check(spec) {
            return RunOutcome::infrastructure(Status::ConfigError, e.to_string());
        }
        if let Err(e) = spec.validate() {
            return RunOutcome::infrastructure(Status::ConfigError, e.to_string());
        }
        let uid = match &self.identity {
            Ok(identity) => identity.uid,
            Err(e) => return RunOutcome::infrastructure(Status::ConfigError, e.clone()),
        };
        let scratch: Result<Vec<Scratch>, _> = spec
            .writable_dirs()
            .map(|dir| {
                let limits = &spec.limits;
                Scratch::create(dir, limits.tmp_bytes, limits.tmp_inodes, uid, &self.caller)
            })
            .collect();
        let scratch = match scratch {
            Ok(scratch) => scratch,
            Err(e) => return RunOutcome::infrastructure(Status::ConfigError, e.to_string()),
        };
        let mounts: Vec<RawFd> = scratch.iter().map(Scratch::mount_fd).collect();
        // Held until init has bound them (it inherits the descriptors at the clone).
        let sources = match HostSources::open(spec, &self.caller) {
            Ok(sources) => sources,
            Err(message) => return RunOutcome::infrastructure(Status::ConfigError, message),
        };
        match self.prepare(spec, &mounts, &sources) {
            Ok((mounts, mut cgroup)) => {
                let mut outcome = self.run_in(spec, fds, &mounts, &mut cgroup, control, uid);
                if cgroup.reusable() {
                    self.warm_cgroup = Some(cgroup);
                } else {
                    self.retired = Some(cgroup);
                }
                if outcome.fault != Fault::Infrastructure {
                    copy_back(&scratch, &mut outcome);
                }
                outcome
            }
            Err(message) => RunOutcome::infrastructure(Status::ConfigError, message),
        }
    }

    /// The run's mount operations and its armed cgroup; `Err` is a configuration error.
    fn prepare(
        &mut self,
        spec: &RunSpec,
        scratch: &[RawFd],
        sources: &HostSources,
    ) -> Result<(Vec<RunMount>, RunCgroup), String> {
        let mounts = self
            .template
            .as_mut()
            .map_err(|e| e.clone())?
            .prepare(spec, scratch, sources)?;
        let (memory, pids) = (spec.limits.memory_bytes, spec.limits.pids);
        if let Some(mut warm) = self.reset_warm_cgroup() {
            match warm.set_limits(memory, pids) {
                Ok(()) => return Ok((mounts, warm)),
                Err(e) => {
                    // A reused cgroup may hold more than a lower limit lets it keep (memory
                    // it cannot give back); a fresh one holds nothing.
                    eprintln!(
                        "ulticode sandbox supervisor: a fresh cgroup replaces one that cannot take the run's limits: {e}"
                    );
                    warm.remove();
                }
            }
        }
        let mut cgroup = self.fresh_cgroup()?;
        if let Err(e) = cgroup.set_limits(memory, pids) {
            cgroup.remove();
            return Err(e.to_string());
        }
        Ok((mounts, cgroup))
    }

    /// The last run's cgroup, reset, where it can serve again. A reset that fails gives the
    /// cgroup up rather than the run.
    fn reset_warm_cgroup(&mut self) -> Option<RunCgroup> {
        if let Some(mut warm) = self.warm_cgroup.take() {
            // The last run's tmpfs mounts are charged to the cgroup until its init has exited
            // and taken its mount namespace along.
            let inits = &mut self.inits;
            match warm.reuse(|| inits.wait_all()) {
                Ok(()) => return Some(warm),
                Err(e) => {
                    eprintln!("ulticode sandbox supervisor: a fresh cgroup replaces one that could not be reset: {e}");
                    warm.remove();
                }
            }
        }
        None
    }

    /// The cgroup made ahead for the next run, or a new one.
    fn fresh_cgroup(&mut self) -> Result<RunCgroup, String> {
        match self.next_cgroup.take() {
            Some(cgroup) => Ok(cgroup),
            None => {
                let name = self.next_cgroup_name();
                let hierarchy = self.cgroups.as_ref().map_err(|e| e.clone())?;
                hierarchy.create_run(&name).map_err(|e| e.to_string())
            }
        }
    }

    fn next_cgroup_name(&mut self) -> String {
        self.runs += 1;
        format!("{}-{}", std::process::id(), self.runs)
    }

    /// Work for later runs, done while a run's init builds its root on another CPU: a cgroup
    /// that cannot serve again removed and, where cgroups are not reused (v2), the next one
    /// created.
    fn prepare_ahead(&mut self) {
        self.inits.reap_exited();
        if let Some(retired) = self.retired.take() {
            retired.remove();
        }
        let reused =
            matches!(&self.cgroups, Ok(h) if h.version() == crate::cgroup::CgroupVersion::V1);
        if self.next_cgroup.is_none() && !reused {
            let name = self.next_cgroup_name();
            if let Ok(hierarchy) = &self.cgroups {
                self.next_cgroup = hierarchy.create_run(&name).ok();
            }
        }
    }

    /// Work that waits for an answered run, so a one-run client (`ulticode sandbox run`) never
    /// waits for it: the `favordynmods` hierarchy, whose first mount on a host waits for an
    /// RCU grace period (~8 ms) that it saves later joins (see
    /// [`CgroupHierarchy::favor_dynamic_changes`]). A kernel without it keeps the slower joins;
    /// nothing about the sandbox's guarantees changes.
    fn between_runs(&mut self) {
        let (Some(mountpoint), Ok(hierarchy)) = (self.favor_dynamic_changes.take(), &self.cgroups)
        else {
            return;
        };
        if let Err(e) = hierarchy.favor_dynamic_changes(&mountpoint) {
            eprintln!("ulticode sandbox supervisor: cgroup joins stay on the slow path: {e}");
        }
    }

    /// Removes the cgroups this supervisor still holds.
    fn shutdown(&mut self) {
        self.inits.wait_all();
        for cgroup in [
            self.retired.take(),
            self.next_cgroup.take(),
            self.warm_cgroup.take(),
        ]
        .into_iter()
        .flatten()
        {
            cgroup.remove();
        }
    }

    /// Pins this process to the run's own CPU, so init and the program inherit it: the whole
    /// run (its setup, its program, the pump and the teardown) stays on the CPU it claimed and
    /// never waits behind another run's program. The program starts there, never migrated; a
    /// supervisor keeps its slot's CPU from run to run, so this is mostly no call at all. A
    /// shared run (every CPU claimed) may use every CPU, so it moves to the first that frees.
    fn pin(&mut self, placement: &Placement) -> io::Result<()> {
        let cpu = match placement {
            Placement::Own { cpu, .. } => Some(*cpu),
            Placement::Shared => None,
        };
        if self.pinned_to == cpu {
            return Ok(());
        }
        // SAFETY: an all-zero cpu_set_t is a valid empty set; CPU_SET stays in bounds (every
        // CPU is one this process may use); the call reads the set.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            match cpu {
                Some(cpu) => libc::CPU_SET(cpu as usize, &mut set),
                None => self
                    .cpus_to_pin
                    .all()
                    .for_each(|cpu| libc::CPU_SET(cpu as usize, &mut set)),
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        sys::check(rc)?;
        self.pinned_to = cpu;
        Ok(())
    }

    fn run_in(
        &mut self,
        spec: &RunSpec,
        fds: PassedFds,
        mounts: &[RunMount],
        cgroup: &mut RunCgroup,
        control: RawFd,
        uid: u32,
    ) -> RunOutcome {
        let io = match RunIo::open(spec, fds, &self.caller) {
            Ok(io) => io,
            Err((status, message)) => return RunOutcome::infrastructure(status, message),
        };
        let cgroup_procs = match cgroup.procs() {
            Ok(procs) => procs,
            Err(e) => return RunOutcome::infrastructure(Status::ConfigError, e.to_string()),
        };
        // The report channel belongs to the run's identity, so the program may also reach it
        // by opening `/proc/self/fd/3` and `/proc/self/fd/4` (Java can name no descriptor by
        // number).
        if let Some((records, ack)) = &io.child_records {
            for pipe in [records, ack] {
                // SAFETY: fchown on a pipe this process owns.
                if unsafe { libc::fchown(pipe.as_raw_fd(), uid, uid) } != 0 {
                    return RunOutcome::infrastructure(
                        Status::ConfigError,
                        format!(
                            "give the report channel to the run: {}",
                            io::Error::last_os_error()
                        ),
                    );
                }
            }
        }
        let namespaces = match &self.namespaces {
            Ok(namespaces) => namespaces.to_join(),
            Err(e) => return RunOutcome::infrastructure(Status::ConfigError, e.clone()),
        };
        let stack = match self.inits.stack() {
            Ok(stack) => stack,
            Err(e) => {
                let message = format!("map the stacks of the sandbox init: {e}");
                return RunOutcome::infrastructure(Status::LaunchFailure, message);
            }
        };
        let exec = ExecArgs::new(
            exec_candidates(spec),
            std::iter::once(&spec.program)
                .chain(&spec.args)
                .map(|a| CString::new(a.as_str()).expect("validated"))
                .collect(),
            environment(spec),
        );
        // Its claim is held until the run's tree is gone.
        let placement = self.cpus_to_pin.claim();
        if let Err(e) = self.pin(&placement) {
            let message = format!("pin the run to its CPU: {e}");
            return RunOutcome::infrastructure(Status::ConfigError, message);
        }
        let plan = ChildPlan {
            namespaces,
            mounts,
            cgroup_procs,
            stdin: io.child_stdin.as_raw_fd(),
            stdout: io.child_stdout.as_raw_fd(),
            stderr: io.child_stderr.as_raw_fd(),
            records: io
                .child_records
                .as_ref()
                .map(|(records, ack)| (records.as_raw_fd(), ack.as_raw_fd())),
            status_pipe: io.status_write.as_raw_fd(),
            error_pipe: io.error_write.as_raw_fd(),
            cancel: io.cancel_read.as_raw_fd(),
            rlimits: rlimits(spec),
            uid,
            gid: uid,
            seccomp: &self.filters[&spec.profile],
            exec: &exec,
            listener: std::sync::atomic::AtomicI32::new(-1),
            ignored_signals: &self.ignored_signals,
            program_stack_top: stack.program_top(),
        };

        let started = Instant::now();
        // SAFETY: init runs `child::init_entry` on its own stack, which no other process uses
        // until init is reaped; the plan it reads stays unchanged until init has reported or is
        // gone (the pump below returns only then); init keeps to raw calls.
        let cloned = unsafe {
            crate::raw::clone_on_stack(
                CLONE_FLAGS as libc::c_ulong,
                stack.init_top(),
                child::init_entry,
                &plan as *const ChildPlan<'_> as *mut libc::c_void,
            )
        };
        let pid = match cloned {
            Ok(pid) => pid,
            Err(errno) => {
                self.inits.release(stack);
                return RunOutcome::infrastructure(
                    Status::LaunchFailure,
                    format!("clone the sandbox init: {}", io::Error::from(errno)),
                );
            }
        };
        let parent = io.into_parent();
        self.prepare_ahead();
        let pump = Pump::new(spec, pid, cgroup, self.cpus, started, control);
        let pumped = pump.run(
            self.pump_buffer.bytes(),
            Streams {
                stdout: parent.stdout,
                stdout_file: parent.stdout_file,
                stderr: parent.stderr,
                records: parent.records,
                stdin: parent.stdin_bytes,
            },
            &parent.status_read,
            &parent.cancel_write,
        );
        let wall = started.elapsed();
        if pumped.report.is_some() {
            // The tree is gone; init's own exit finishes in the background.
            self.inits.exiting(pid, stack);
        } else {
            // Init died without a report (killed, or failed setup): its exit kills the rest.
            let _ = sys::wait_pid(pid);
            self.inits.release(stack);
        }

        let setup_failure = sys::read_to_end(parent.error_read.as_raw_fd())
            .ok()
            .and_then(|m| SetupError::decode(&m));
        if let Some(error) = setup_failure {
            let (kind, message) = error.explain(mounts, &exec);
            let status = match kind {
                SetupFailure::Config => Status::ConfigError,
                SetupFailure::Launch => Status::LaunchFailure,
            };
            return RunOutcome::infrastructure(status, message);
        }
        let termination = pumped
            .report
            .as_ref()
            .map(|r| decode_wait_status(r.wait_status));
        let violation = pumped.report.as_ref().and_then(|r| r.violation);
        // Cancelled only when the cancellation is what ended the program: init got it first and
        // the program died of the kill it sent. A program that had already ended by itself (a
        // crash that closed the pipe an interactive validator was reading) keeps its ending.
        let enforced = pumped.enforced.or_else(|| {
            let report = pumped.report.as_ref()?;
            (report.cancelled && termination == Some(Termination::Signaled(libc::SIGKILL)))
                .then_some(EnforcedKill::Cancelled)
        });
        if termination.is_none() && enforced.is_none() {
            let reason = if pumped.client_gone {
                "the client hung up during the run"
            } else {
                "the sandbox init ended without reporting the program's status"
            };
            return RunOutcome::infrastructure(Status::LaunchFailure, reason);
        }
        let (stdout, stderr) = match (pumped.stdout, pumped.stderr) {
            (Ok(stdout), Ok(stderr)) => (stdout, stderr),
            (Err(e), _) | (_, Err(e)) => {
                return RunOutcome::infrastructure(
                    Status::ConfigError,
                    format!("write the captured output: {e}"),
                )
            }
        };
        let output_exceeded = stdout.exceeded || stderr.exceeded;
        let stats = match cgroup.stats() {
            Ok(s) => s,
            Err(e) => return RunOutcome::infrastructure(Status::ConfigError, e.to_string()),
        };
        let evidence = Evidence {
            termination,
            violation: violation.is_some(),
            enforced,
            cpu_time_us: stats.cpu_time_us,
            cpu_limit_us: spec.limits.cpu_time_ms * 1_000,
            oom_kills: stats.oom_kills,
            memory_limit_reached: stats.memory_limit_reached,
            fork_refusals: stats.fork_refusals,
            output_exceeded,
        };
        let status = classify(&evidence);
        let (exit_code, signal) = match termination {
            Some(Termination::Exited(code)) => (Some(code), None),
            Some(Termination::Signaled(sig)) => (None, Some(sig)),
            None => (None, Some(libc::SIGKILL)),
        };
        RunOutcome {
            status,
            fault: status.fault(),
            exit_code,
            signal,
            cpu_time_ms: stats.cpu_time_us.div_ceil(1_000),
            wall_time_ms: wall.as_millis() as u64,
            memory_kib: stats.peak_memory_bytes / 1024,
            stdout: stdout.memory,
            stderr: stderr.memory,
            output_truncated: output_exceeded,
            cancelled: enforced == Some(EnforcedKill::Cancelled),
            message: match (violation, enforced) {
                (Some(violation), _) => Some(violation.describe()),
                (None, Some(EnforcedKill::Cancelled)) => Some("cancelled by the caller".into()),
                _ => None,
            },
            records: pumped.records,
        }
    }
}

/// Copies what the run left in its writable directories back to the host. More than their cap
/// (sparse files) is the program's output limit; a failing copy is the infrastructure's.
fn copy_back(scratch: &[Scratch], outcome: &mut RunOutcome) {
    for dir in scratch {
        match dir.copy_back() {
            Ok(()) => {}
            Err(e @ ScratchError::TooLarge(_)) => {
                outcome.status = Status::OutputLimit;
                outcome.fault = Fault::User;
                outcome.message = Some(e.to_string());
            }
            Err(e) => *outcome = RunOutcome::infrastructure(Status::ConfigError, e.to_string()),
        }
    }
}

pub(super) fn staging_dir() -> Result<PathBuf, String> {
    let mut errors = Vec::new();
    for dir in STAGING_DIRS {
        match std::fs::create_dir_all(dir) {
            Ok(()) => return Ok(PathBuf::from(dir)),
            Err(e) => errors.push(format!("{dir}: {e}")),
        }
    }
    Err(format!(
        "no staging directory for the sandbox root: {}",
        errors.join("; ")
    ))
}

fn decode_wait_status(status: i32) -> Termination {
    if libc::WIFSIGNALED(status) {
        Termination::Signaled(libc::WTERMSIG(status))
    } else {
        Termination::Exited(libc::WEXITSTATUS(status))
    }
}

fn rlimits(spec: &RunSpec) -> Vec<(libc::__rlimit_resource_t, libc::rlim_t, libc::rlim_t)> {
    let limits = &spec.limits;
    // A per-process backstop behind the cgroup CPU watch: SIGXCPU a second after the limit.
    let cpu_soft = limits.cpu_time_ms.div_ceil(1_000) + 1;
    let same = |v: u64| (v as libc::rlim_t, v as libc::rlim_t);
    let entries = [
        (libc::RLIMIT_NOFILE, same(limits.open_files)),
        (libc::RLIMIT_CORE, same(0)),
        (libc::RLIMIT_STACK, same(limits.effective_stack_bytes())),
        (libc::RLIMIT_FSIZE, same(limits.file_size_bytes)),
        (libc::RLIMIT_CPU, (cpu_soft, cpu_soft + 1)),
    ];
    entries.into_iter().map(|(r, (s, h))| (r, s, h)).collect()
}

fn environment(spec: &RunSpec) -> Vec<CString> {
    let mut vars: Vec<(String, String)> = BASE_ENV
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    for (key, value) in &spec.env {
        vars.retain(|(k, _)| k != key);
        vars.push((key.clone(), value.clone()));
    }
    vars.into_iter()
        .map(|(k, v)| CString::new(format!("{k}={v}")).expect("validated"))
        .collect()
}

/// An absolute program is tried as is; a bare name along the sandbox's `PATH`.
fn exec_candidates(spec: &RunSpec) -> Vec<CString> {
    let cstring = |p: &Path| CString::new(p.as_os_str().as_encoded_bytes()).expect("validated");
    if spec.program.contains('/') {
        return vec![CString::new(spec.program.as_str()).expect("validated")];
    }
    let path = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())
        .unwrap_or(BASE_ENV[0].1);
    path.split(':')
        .filter(|dir| dir.starts_with('/'))
        .map(|dir| cstring(&Path::new(dir).join(&spec.program)))
        .collect()
}

/// Descriptors of one run, both ends, before the clone.
struct RunIo {
    child_stdin: OwnedFd,
    child_stdout: OwnedFd,
    child_stderr: OwnedFd,
    /// The report channel's write end and its acknowledgements' read end, when the spec asks
    /// for one.
    child_records: Option<(OwnedFd, OwnedFd)>,
    status_write: OwnedFd,
    error_write: OwnedFd,
    cancel_read: OwnedFd,
    stdin_bytes: Option<(OwnedFd, Vec<u8>)>,
    /// `None` when stdout goes to a passed descriptor instead of being captured.
    stdout: Option<OwnedFd>,
    /// The caller's file that captured stdout is streamed into ([`Stdout::CaptureToFile`]).
    stdout_file: Option<OwnedFd>,
    /// `None` when stderr goes to a passed descriptor.
    stderr: Option<OwnedFd>,
    /// The report channel's read end and its acknowledgements' write end.
    records: Option<(OwnedFd, OwnedFd)>,
    status_read: OwnedFd,
    error_read: OwnedFd,
    cancel_write: OwnedFd,
}

/// The supervisor's ends, after the child's copies are closed.
struct ParentIo {
    stdin_bytes: Option<(OwnedFd, Vec<u8>)>,
    stdout: Option<OwnedFd>,
    stdout_file: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
    records: Option<(OwnedFd, OwnedFd)>,
    status_read: OwnedFd,
    error_read: OwnedFd,
    cancel_write: OwnedFd,
}

impl RunIo {
    fn open(spec: &RunSpec, fds: PassedFds, caller: &Caller) -> Result<Self, (Status, String)> {
        let launch = |what: &str| {
            let what = what.to_string();
            move |e: io::Error| (Status::LaunchFailure, format!("{what}: {e}"))
        };
        let (child_stdin, stdin_bytes) = match &spec.stdin {
            Stdin::Null => (
                open_read(Path::new("/dev/null")).map_err(launch("open /dev/null"))?,
                None,
            ),
            Stdin::File(path) => (
                caller.act(|| open_no_symlinks(path)).map_err(|e| {
                    (
                        Status::ConfigError,
                        format!("stdin file {}: {e}", path.display()),
                    )
                })?,
                None,
            ),
            Stdin::Bytes(bytes) => {
                let (read, write) = sys::pipe().map_err(launch("stdin pipe"))?;
                sys::set_nonblocking(&write).map_err(launch("stdin pipe"))?;
                (read, Some((write, bytes.clone())))
            }
            Stdin::Passed => (fds.stdin.expect("checked against the spec"), None),
        };
        let (stdout, child_stdout, stdout_file) = match (spec.stdout, fds.stdout) {
            (Stdout::Passed, Some(passed)) => (None, passed, None),
            (_, file) => {
                let (read, write) = sys::pipe().map_err(launch("stdout pipe"))?;
                (Some(read), write, file)
            }
        };
        let (stderr, child_stderr) = match (spec.stderr, fds.stderr) {
            (Stderr::Passed, Some(passed)) => (None, passed),
            _ => {
                let (read, write) = sys::pipe().map_err(launch("stderr pipe"))?;
                (Some(read), write)
            }
        };
        let (records, child_records) = match spec.records {
            Some(_) => {
                let (read, write) = sys::pipe().map_err(launch("records pipe"))?;
                let (ack_read, ack_write) = sys::pipe().map_err(launch("records pipe"))?;
                sys::set_nonblocking(&ack_write).map_err(launch("records pipe"))?;
                (Some((read, ack_write)), Some((write, ack_read)))
            }
            None => (None, None),
        };
        let (status_read, status_write) = sys::pipe().map_err(launch("status pipe"))?;
        let (error_read, error_write) = sys::pipe().map_err(launch("error pipe"))?;
        let (cancel_read, cancel_write) = sys::pipe().map_err(launch("cancel pipe"))?;
        for fd in stdout
            .iter()
            .chain(&stderr)
            .chain(records.iter().map(|(read, _)| read))
        {
            sys::set_nonblocking(fd).map_err(launch("output pipe"))?;
        }
        Ok(Self {
            child_stdin,
            child_stdout,
            child_stderr,
            child_records,
            status_write,
            error_write,
            cancel_read,
            stdin_bytes,
            stdout,
            stdout_file,
            stderr,
            records,
            status_read,
            error_read,
            cancel_write,
        })
    }

    /// Drops the child's ends so EOF on a pipe means every process holding it is gone.
    fn into_parent(self) -> ParentIo {
        ParentIo {
            stdin_bytes: self.stdin_bytes,
            stdout: self.stdout,
            stdout_file: self.stdout_file,
            stderr: self.stderr,
            records: self.records,
            status_read: self.status_read,
            error_read: self.error_read,
            cancel_write: self.cancel_write,
        }
    }
}

/// Opens a host file a run may have written (a stdin file in a job directory) without
/// following any symlink on the way.
fn open_no_symlinks(path: &Path) -> io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    crate::mountapi::open_no_symlinks(libc::AT_FDCWD, &path, libc::O_RDONLY)
}

pub(super) fn open_read(path: &Path) -> io::Result<OwnedFd> {
    Ok(OwnedFd::from(std::fs::File::open(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_names_are_searched_along_path_and_absolute_paths_are_not() {
        let spec = RunSpec::new("python3");
        let got: Vec<String> = exec_candidates(&spec)
            .into_iter()
            .map(|c| c.into_string().unwrap())
            .collect();
        assert_eq!(
            got,
            ["/usr/local/bin/python3", "/usr/bin/python3", "/bin/python3"]
        );
        let spec = RunSpec::new("/job/a.out").env("PATH", "/opt/x");
        assert_eq!(
            exec_candidates(&spec),
            vec![CString::new("/job/a.out").unwrap()]
        );
        let spec = RunSpec::new("go").env("PATH", "/opt/go/bin:relative");
        assert_eq!(
            exec_candidates(&spec),
            vec![CString::new("/opt/go/bin/go").unwrap()]
        );
    }

    #[test]
    fn environment_is_the_profile_base_plus_overrides() {
        let spec = RunSpec::new("x")
            .env("HOME", "/job")
            .env("JAVA_OPTS", "-Xmx64m");
        let env: Vec<String> = environment(&spec)
            .into_iter()
            .map(|c| c.into_string().unwrap())
            .collect();
        assert_eq!(
            env,
            [
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "LANG=C.UTF-8",
                "HOME=/job",
                "JAVA_OPTS=-Xmx64m"
            ]
        );
    }

    #[test]
    fn rlimits_follow_the_spec() {
        let spec = RunSpec::new("x");
        let limits = rlimits(&spec);
        assert!(limits.contains(&(libc::RLIMIT_NOFILE, 128, 128)));
        assert!(limits.contains(&(libc::RLIMIT_CORE, 0, 0)));
        assert!(limits.contains(&(libc::RLIMIT_CPU, 3, 4)));
        let stack = spec.limits.memory_bytes as libc::rlim_t;
        assert!(limits.contains(&(libc::RLIMIT_STACK, stack, stack)));
    }

    #[test]
    fn wait_statuses_decode() {
        assert_eq!(decode_wait_status(0), Termination::Exited(0));
        assert_eq!(decode_wait_status(3 << 8), Termination::Exited(3));
        assert_eq!(
            decode_wait_status(libc::SIGSEGV),
            Termination::Signaled(libc::SIGSEGV)
        );
    }
}
