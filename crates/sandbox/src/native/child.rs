//! The two processes inside a run's namespaces.
//!
//! - **init** (pid 1 of the new pid namespace, still root): builds the root filesystem, spawns
//!   the program, reaps everything, reports the program's wait status, and exits, which makes the
//!   kernel kill whatever the program left behind (daemons, stray threads).
//! - **program** (pid 2): joins the run's cgroup, drops every privilege, installs the seccomp
//!   filter and execs.
//!
//! Both run in the supervisor's memory (`CLONE_VM`) on stacks the supervisor mapped: init while
//! the supervisor goes on pumping, the program while init is suspended until its exec. Copying
//! the supervisor's address space for init, and the copy-on-write faults both sides took after
//! it, were most of a run's cost. So nothing here allocates, touches `errno` or thread-local
//! state, or may panic: every call is a raw one ([`crate::raw`]), everything else was prepared
//! by the supervisor, and every path ends in `exec` or an exit.

use std::ffi::{c_char, c_int, c_void, CString};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::raw::{self, syscall, Errno};
use crate::rootfs::RunMount;

/// Everything the child processes need, prepared by the supervisor before `clone`, and left
/// unchanged until init has reported or is gone.
pub struct ChildPlan<'a> {
    /// The supervisor's network, IPC and UTS namespaces to join, with their `setns` types.
    pub namespaces: [(RawFd, libc::c_int); 3],
    pub mounts: &'a [RunMount],
    pub cgroup_procs: Vec<RawFd>,
    pub stdin: RawFd,
    pub stdout: RawFd,
    pub stderr: RawFd,
    /// The report channel's write end and its acknowledgements' read end, put at
    /// [`crate::spec::RECORDS_FD`] and [`crate::spec::RECORDS_ACK_FD`].
    pub records: Option<(RawFd, RawFd)>,
    pub status_pipe: RawFd,
    pub error_pipe: RawFd,
    /// Readable when the caller cancels the run: init kills the tree and still reports how the
    /// program ended, so a program that had already ended on its own keeps its own ending.
    pub cancel: RawFd,
    pub rlimits: Vec<(libc::__rlimit_resource_t, libc::rlim_t, libc::rlim_t)>,
    pub uid: libc::uid_t,
    pub gid: libc::gid_t,
    pub seccomp: &'a [libc::sock_filter],
    pub exec: &'a ExecArgs,
    /// Where the program leaves its seccomp listener's descriptor number for init (the two
    /// share memory and, until the exec, the descriptor table).
    pub listener: AtomicI32,
    /// Signals the supervisor ignores (see [`ignored_signals`]): the program resets them.
    pub ignored_signals: &'a [libc::c_int],
    /// The top of the stack the program runs on until its exec.
    pub program_stack_top: usize,
}

/// The program's `execve` arguments, with the pointer arrays the call takes made ahead.
pub struct ExecArgs {
    /// Paths to try, in order (one for an absolute program, one per `PATH` entry otherwise).
    candidates: Vec<CString>,
    argv: Vec<CString>,
    /// Null-terminated pointers into `argv` and `envp` (whose heap buffers never move).
    argv_ptrs: Vec<*const c_char>,
    envp_ptrs: Vec<*const c_char>,
    _envp: Vec<CString>,
}

impl ExecArgs {
    pub fn new(candidates: Vec<CString>, argv: Vec<CString>, envp: Vec<CString>) -> Self {
        let pointers = |strings: &[CString]| {
            let mut pointers: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
            pointers.push(std::ptr::null());
            pointers
        };
        Self {
            argv_ptrs: pointers(&argv),
            envp_ptrs: pointers(&envp),
            candidates,
            argv,
            _envp: envp,
        }
    }

    /// The program's name, for messages.
    pub fn program(&self) -> String {
        self.argv
            .first()
            .map(|a| a.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// What init reports on the status pipe once the whole tree is gone: the program's wait status,
/// the first call its filter handed to init's listener, if any, and whether a cancellation
/// reached init before the program's exit did.
pub struct Report {
    pub wait_status: i32,
    pub violation: Option<crate::seccomp::Violation>,
    pub cancelled: bool,
}

impl Report {
    pub const LEN: usize = 13;

    fn encode(&self) -> [u8; Self::LEN] {
        let (nr, arch) = self.violation.map_or((-1, 0), |v| (v.nr, v.arch));
        let mut bytes = [0u8; Self::LEN];
        bytes[..4].copy_from_slice(&self.wait_status.to_le_bytes());
        bytes[4..8].copy_from_slice(&nr.to_le_bytes());
        bytes[8..12].copy_from_slice(&arch.to_le_bytes());
        bytes[12] = u8::from(self.cancelled);
        bytes
    }

    pub fn decode(bytes: &[u8; Self::LEN]) -> Self {
        let word = |at: usize| [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        let nr = i32::from_le_bytes(word(4));
        Report {
            wait_status: i32::from_le_bytes(word(0)),
            violation: (nr >= 0).then(|| crate::seccomp::Violation {
                nr,
                arch: u32::from_le_bytes(word(8)),
            }),
            cancelled: bytes[12] == 1,
        }
    }
}

/// Which kind of failure a setup error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupFailure {
    Config,
    Launch,
}

/// The setup step of init or the program that failed. The supervisor words the message: the
/// children have nothing to format it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Session,
    JoinNamespaces,
    /// The run's mount operation at this index.
    Mount(u32),
    WatchChildren,
    StartProgram,
    JoinCgroup,
    UnshareCgroup,
    RedirectStdio,
    /// `setrlimit` of this resource.
    Rlimit(u32),
    DropPrivileges,
    CloseDescriptors,
    Seccomp,
    Exec,
}

impl Step {
    fn code(self) -> (u8, u32) {
        match self {
            Step::Session => (0, 0),
            Step::JoinNamespaces => (1, 0),
            Step::Mount(index) => (2, index),
            Step::WatchChildren => (3, 0),
            Step::StartProgram => (4, 0),
            Step::JoinCgroup => (5, 0),
            Step::UnshareCgroup => (6, 0),
            Step::RedirectStdio => (7, 0),
            Step::Rlimit(resource) => (9, resource),
            Step::DropPrivileges => (10, 0),
            Step::CloseDescriptors => (11, 0),
            Step::Seccomp => (12, 0),
            Step::Exec => (13, 0),
        }
    }

    fn from_code(code: u8, index: u32) -> Option<Step> {
        Some(match code {
            0 => Step::Session,
            1 => Step::JoinNamespaces,
            2 => Step::Mount(index),
            3 => Step::WatchChildren,
            4 => Step::StartProgram,
            5 => Step::JoinCgroup,
            6 => Step::UnshareCgroup,
            7 => Step::RedirectStdio,
            9 => Step::Rlimit(index),
            10 => Step::DropPrivileges,
            11 => Step::CloseDescriptors,
            12 => Step::Seccomp,
            13 => Step::Exec,
            _ => return None,
        })
    }

    /// A failure to start the program is the launch's; the rest are the configuration's.
    pub fn failure(self) -> SetupFailure {
        match self {
            Step::StartProgram | Step::RedirectStdio | Step::Exec => SetupFailure::Launch,
            _ => SetupFailure::Config,
        }
    }

    pub fn describe(self, mounts: &[RunMount], exec: &ExecArgs) -> String {
        match self {
            Step::Session => "start the run's session".into(),
            Step::JoinNamespaces => "join the supervisor's network, IPC or UTS namespace".into(),
            Step::Mount(index) => mounts
                .get(index as usize)
                .map_or_else(|| format!("mount step {index}"), RunMount::describe),
            Step::WatchChildren => "watch for child exits".into(),
            Step::StartProgram => "start the program".into(),
            Step::JoinCgroup => "join the run cgroup".into(),
            Step::UnshareCgroup => "unshare the cgroup namespace".into(),
            Step::RedirectStdio => "redirect stdio".into(),
            Step::Rlimit(resource) => format!("setrlimit({resource})"),
            Step::DropPrivileges => "drop privileges".into(),
            Step::CloseDescriptors => "close inherited descriptors".into(),
            Step::Seccomp => "load the seccomp profile".into(),
            Step::Exec => format!("exec {}", exec.program()),
        }
    }
}

/// What a child writes on the error pipe before it exits: the failed step and the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SetupError {
    pub step: Step,
    pub errno: i32,
}

impl SetupError {
    const LEN: usize = 9;

    fn encode(self) -> [u8; Self::LEN] {
        let (code, index) = self.step.code();
        let mut bytes = [0u8; Self::LEN];
        bytes[0] = code;
        bytes[1..5].copy_from_slice(&index.to_le_bytes());
        bytes[5..9].copy_from_slice(&self.errno.to_le_bytes());
        bytes
    }

    pub fn decode(message: &[u8]) -> Option<Self> {
        let bytes: &[u8; Self::LEN] = message.try_into().ok()?;
        let word = |at: usize| [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        Some(SetupError {
            step: Step::from_code(bytes[0], u32::from_le_bytes(word(1)))?,
            errno: i32::from_le_bytes(word(5)),
        })
    }

    /// The kind of failure and its message, for the outcome.
    pub fn explain(self, mounts: &[RunMount], exec: &ExecArgs) -> (SetupFailure, String) {
        let error = std::io::Error::from_raw_os_error(self.errno);
        let what = self.step.describe(mounts, exec);
        (self.step.failure(), format!("{what}: {error}"))
    }
}

fn fail(plan: &ChildPlan<'_>, step: Step, Errno(errno): Errno) -> ! {
    let _ = raw::write_all(plan.error_pipe, &SetupError { step, errno }.encode());
    raw::exit(126)
}

/// A signed argument as the kernel reads it from a register.
fn arg(value: c_int) -> usize {
    value as isize as usize
}

/// The entry of pid 1 (`plan` points at the supervisor's [`ChildPlan`]). Never returns.
pub extern "C" fn init_entry(plan: *mut c_void) -> c_int {
    // SAFETY: the supervisor passes its plan, which it leaves unchanged while init runs.
    run_init(unsafe { &*(plan as *const ChildPlan<'_>) })
}

fn run_init(plan: &ChildPlan<'_>) -> ! {
    // A session and process group of its own: `kill(0, ...)` or `kill(-pgid, ...)` from the
    // program reaches only this run, never the supervisor, the server or other runs.
    // SAFETY (every raw call below): integer arguments, or pointers to live values of the
    // kernel's layout.
    if let Err(err) = unsafe { syscall(libc::SYS_setsid, [0; 6]) } {
        fail(plan, Step::Session, err);
    }
    // If the supervisor dies, so does this namespace (and with it the program).
    let deathsig = [
        libc::PR_SET_PDEATHSIG as usize,
        libc::SIGKILL as usize,
        0,
        0,
        0,
        0,
    ];
    let _ = unsafe { syscall(libc::SYS_prctl, deathsig) };
    for (namespace, kind) in plan.namespaces {
        let setns = [arg(namespace), arg(kind), 0, 0, 0, 0];
        if let Err(err) = unsafe { syscall(libc::SYS_setns, setns) } {
            fail(plan, Step::JoinNamespaces, err);
        }
        raw::close(namespace);
    }
    for (index, op) in (0u32..).zip(plan.mounts) {
        if let Err(err) = op.apply() {
            fail(plan, Step::Mount(index), err);
        }
    }
    // Children are noticed through a signalfd, so init can wait for them and for the seccomp
    // listener at once. The program resets its mask before the exec.
    let children = match child_signals() {
        Ok(fd) => fd,
        Err(err) => fail(plan, Step::WatchChildren, err),
    };
    let program = match spawn_program(plan) {
        Ok(pid) => pid,
        Err(err) => fail(plan, Step::StartProgram, err),
    };
    let listener = plan.listener.load(Ordering::Acquire);
    let (status_pipe, cancel) = (plan.status_pipe, plan.cancel);

    // Keep only the status pipe, the cancel pipe, the signalfd and the listener. Every other
    // descriptor (the program's stdio, the supervisor's ends of the pipes) must not be held
    // open by init: the program's stdin has to reach EOF when the supervisor closes it, and
    // the output pipes when the program's tree is gone.
    close_all_except([status_pipe, cancel, children, listener]);

    // When the program exits, everything it left behind is killed and reaped before its status
    // is reported: a report means the whole tree is gone, so the supervisor can read the
    // accounting while this process and its namespaces are still being torn down. A call
    // handed to the listener is a violation: it is recorded and the whole run is killed (the
    // calling thread stays parked until then).
    let kill_all = || {
        // From pid 1, kill(-1) signals every other process of the namespace.
        let _ = unsafe {
            syscall(
                libc::SYS_kill,
                [arg(-1), libc::SIGKILL as usize, 0, 0, 0, 0],
            )
        };
    };
    let mut report = Report {
        wait_status: 0,
        violation: None,
        cancelled: false,
    };
    let mut program_status = None;
    let mut listening = listener >= 0;
    let mut cancellable = true;
    loop {
        loop {
            let mut status: c_int = 0;
            let flags = (libc::__WALL | libc::WNOHANG) as usize;
            let wait = [arg(-1), &mut status as *mut c_int as usize, flags, 0, 0, 0];
            match unsafe { syscall(libc::SYS_wait4, wait) } {
                Ok(0) => break,
                Ok(pid) if pid == program as usize => {
                    program_status = Some(status);
                    kill_all();
                }
                Ok(_) => {}
                Err(Errno(libc::ECHILD)) => {
                    if let Some(status) = program_status {
                        report.wait_status = status;
                        let _ = raw::write_all(status_pipe, &report.encode());
                    }
                    raw::exit(0);
                }
                Err(_) => break,
            }
        }
        let watch = |fd: RawFd, on: bool| libc::pollfd {
            fd: if on { fd } else { -1 },
            events: libc::POLLIN,
            revents: 0,
        };
        let mut fds = [
            watch(children, true),
            watch(listener, listening),
            watch(cancel, cancellable),
        ];
        let poll = [fds.as_mut_ptr() as usize, fds.len(), arg(-1), 0, 0, 0];
        if unsafe { syscall(libc::SYS_poll, poll) }.is_err() {
            continue;
        }
        let [children_ready, listener_ready, cancel_ready] = fds.map(|fd| fd.revents);
        if children_ready != 0 {
            let mut info = [0u8; 128];
            while matches!(raw::read(children, &mut info), Ok(n) if n > 0) {}
        }
        if listener_ready & libc::POLLIN != 0 {
            if let Ok(violation) = crate::seccomp::Violation::receive(listener) {
                report.violation.get_or_insert(violation);
                kill_all();
            }
        } else if listener_ready != 0 {
            // Every filtered process is gone: nothing more can arrive.
            listening = false;
        }
        if cancel_ready != 0 {
            cancellable = false;
            // The program's status is not taken yet (this loop reaps before it polls), so the
            // cancellation came first, unless the program was already on its way out: the
            // kill then changes nothing, and its wait status says how it ended by itself.
            if program_status.is_none() {
                report.cancelled = true;
                kill_all();
            }
        }
    }
}

/// The kernel's signal set (`sigset_t` as the raw calls take it: 8 bytes).
fn signal_set(signals: &[c_int]) -> u64 {
    signals
        .iter()
        .filter(|&&signal| (1..=64).contains(&signal))
        .fold(0, |set, &signal| set | 1u64 << (signal - 1))
}

/// Blocks `SIGCHLD` and returns a non-blocking signalfd that reports it.
fn child_signals() -> Result<RawFd, Errno> {
    let set = signal_set(&[libc::SIGCHLD]);
    let set_ptr = &set as *const u64 as usize;
    // SAFETY: pointers to a live 8-byte signal set.
    unsafe {
        let block = [libc::SIG_BLOCK as usize, set_ptr, 0, 8, 0, 0];
        syscall(libc::SYS_rt_sigprocmask, block)?;
        let flags = (libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) as usize;
        let fd = syscall(libc::SYS_signalfd4, [arg(-1), set_ptr, 8, flags, 0, 0])?;
        Ok(fd as RawFd)
    }
}

/// Closes every descriptor but `keep` (negative entries are ignored).
fn close_all_except(mut keep: [RawFd; 4]) {
    keep.sort_unstable();
    let close_range = |from: u32, to: u32| {
        // SAFETY: closing a descriptor range of this process; nothing here uses them any more.
        let _ = unsafe {
            syscall(
                libc::SYS_close_range,
                [from as usize, to as usize, 0, 0, 0, 0],
            )
        };
    };
    let mut from = 0u32;
    for fd in keep {
        let Ok(fd) = u32::try_from(fd) else { continue };
        if fd > from {
            close_range(from, fd - 1);
        }
        from = fd.saturating_add(1);
    }
    close_range(from, u32::MAX);
}

/// Starts the program process the way `posix_spawn` does: sharing memory on the stack the
/// supervisor mapped for it, with init suspended until the exec. The descriptor table is
/// shared too until the exec (which gives the program a private copy), so the seccomp
/// listener the program creates last stays with init.
fn spawn_program(plan: &ChildPlan<'_>) -> Result<libc::pid_t, Errno> {
    extern "C" fn entry(plan: *mut c_void) -> c_int {
        // SAFETY: `plan` is the pointer passed below; init is suspended while this runs.
        program_main(unsafe { &*(plan as *const ChildPlan<'_>) })
    }
    let flags = libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD;
    // SAFETY: the program runs `entry` on its own stack, which outlives it (the supervisor
    // keeps it until init is reaped), and keeps to raw calls (see the module's docs).
    unsafe {
        raw::clone_on_stack(
            flags as libc::c_ulong,
            plan.program_stack_top,
            entry,
            plan as *const ChildPlan<'_> as *mut c_void,
        )
    }
}

/// `struct __user_cap_header_struct` / `__user_cap_data_struct` of `<linux/capability.h>`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Entry of pid 2: becomes the program. Never returns.
fn program_main(plan: &ChildPlan<'_>) -> ! {
    // Join the run's cgroup first, so the accounting covers only the program's own tree.
    for &fd in &plan.cgroup_procs {
        if let Err(err) = raw::write_all(fd, b"0") {
            fail(plan, Step::JoinCgroup, err);
        }
    }
    // SAFETY (every raw call below): integer arguments, or pointers to live values of the
    // kernel's layout.
    let unshare = [libc::CLONE_NEWCGROUP as usize, 0, 0, 0, 0, 0];
    if let Err(err) = unsafe { syscall(libc::SYS_unshare, unshare) } {
        fail(plan, Step::UnshareCgroup, err);
    }
    let records = plan.records.into_iter().flat_map(|(records, ack)| {
        [
            (records, crate::spec::RECORDS_FD),
            (ack, crate::spec::RECORDS_ACK_FD),
        ]
    });
    for (from, to) in [(plan.stdin, 0), (plan.stdout, 1), (plan.stderr, 2)]
        .into_iter()
        .chain(records)
    {
        // Numbers 3 and 4 are free to replace: the supervisor reserved them, so none of
        // init's own descriptors has them.
        if let Err(err) = unsafe { syscall(libc::SYS_dup2, [arg(from), arg(to), 0, 0, 0, 0]) } {
            fail(plan, Step::RedirectStdio, err);
        }
    }
    reset_signals(plan.ignored_signals);
    for &(resource, soft, hard) in &plan.rlimits {
        let limit = libc::rlimit {
            rlim_cur: soft,
            rlim_max: hard,
        };
        let prlimit = [0, resource as usize, &limit as *const _ as usize, 0, 0, 0];
        if let Err(err) = unsafe { syscall(libc::SYS_prlimit64, prlimit) } {
            fail(plan, Step::Rlimit(resource), err);
        }
    }
    if let Err(err) = drop_privileges(plan.uid, plan.gid) {
        fail(plan, Step::DropPrivileges, err);
    }
    // Everything but 0, 1 and 2 (and 3 and 4, the report channel, when there is one) closes
    // at exec (the error pipe stays usable until then).
    let first_closed = if plan.records.is_some() { 5 } else { 3 };
    let cloexec = libc::CLOSE_RANGE_CLOEXEC as usize;
    let close_range = [first_closed, u32::MAX as usize, cloexec, 0, 0, 0];
    if let Err(err) = unsafe { syscall(libc::SYS_close_range, close_range) } {
        fail(plan, Step::CloseDescriptors, err);
    }
    match crate::seccomp::install(plan.seccomp) {
        Ok(listener) => plan.listener.store(listener, Ordering::Release),
        Err(err) => fail(plan, Step::Seccomp, err),
    }
    exec(plan)
}

/// `struct sigaction` as the kernel's `rt_sigaction` takes it on x86-64. The raw call, not
/// glibc's wrapper: glibc hides its own signals (32 and 33) from `sigaction`, and an ignored
/// one inherited from whoever started the supervisor would survive into every program.
#[repr(C)]
#[derive(Default)]
struct KernelSigaction {
    handler: usize,
    flags: u64,
    restorer: usize,
    mask: u64,
}

/// The signals this process ignores. An ignored disposition survives exec (a handled one
/// does not), so these are the ones a program must reset; the supervisor's never change after
/// it starts, so they are listed once instead of resetting every signal in every run.
pub fn ignored_signals() -> Vec<libc::c_int> {
    (1..=64)
        .filter(|&signal| {
            let mut current = KernelSigaction::default();
            // SAFETY: a query only (no new action); `current` is a valid out-pointer of the
            // kernel's layout and size.
            let query = [signal as usize, 0, &mut current as *mut _ as usize, 8, 0, 0];
            let answered = unsafe { syscall(libc::SYS_rt_sigaction, query) };
            answered.is_ok() && current.handler == libc::SIG_IGN
        })
        .collect()
}

fn reset_signals(ignored: &[libc::c_int]) {
    let default = KernelSigaction::default();
    for &signal in ignored {
        let action = [arg(signal), &default as *const _ as usize, 0, 8, 0, 0];
        // SAFETY: installing the default disposition (handler 0) from a valid struct.
        let _ = unsafe { syscall(libc::SYS_rt_sigaction, action) };
    }
    let empty = 0u64;
    let unblock = [
        libc::SIG_SETMASK as usize,
        &empty as *const u64 as usize,
        0,
        8,
        0,
        0,
    ];
    // SAFETY: an empty 8-byte signal set.
    let _ = unsafe { syscall(libc::SYS_rt_sigprocmask, unblock) };
}

fn prctl(option: c_int, value: usize) -> Result<usize, Errno> {
    // SAFETY: prctl with integer arguments.
    unsafe { syscall(libc::SYS_prctl, [option as usize, value, 0, 0, 0, 0]) }
}

/// Empties this process's capability bounding set, which every init and program it starts
/// inherits, so no exec in a run can ever be granted a capability. The supervisor calls it
/// once at start: it never execs itself, and its own effective and permitted sets stay as
/// they are. (Dropped in every program, one credentials copy and commit per capability, it was
/// ~0.3% of a contest burst's CPU time.)
pub fn empty_bounding_set() -> Result<(), Errno> {
    // Capabilities are numbered from 0 up to the kernel's last; EINVAL is the first past it.
    for cap in 0..64 {
        match prctl(libc::PR_CAPBSET_DROP, cap) {
            Ok(_) => {}
            Err(Errno(libc::EINVAL)) => return Ok(()),
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Ambient set emptied (the bounding set already is: see [`empty_bounding_set`]),
/// supplementary groups dropped, uid/gid switched (which clears the effective and permitted
/// sets), inheritable cleared, `no_new_privs` set.
fn drop_privileges(uid: libc::uid_t, gid: libc::gid_t) -> Result<(), Errno> {
    let clear_ambient = libc::PR_CAP_AMBIENT_CLEAR_ALL as usize;
    // SAFETY: integer arguments, and pointers to live values of the kernel's layout.
    unsafe {
        let ambient = [libc::PR_CAP_AMBIENT as usize, clear_ambient, 0, 0, 0, 0];
        syscall(libc::SYS_prctl, ambient)?;
        syscall(libc::SYS_setgroups, [0; 6])?;
        let (uid, gid) = (uid as usize, gid as usize);
        syscall(libc::SYS_setresgid, [gid, gid, gid, 0, 0, 0])?;
        syscall(libc::SYS_setresuid, [uid, uid, uid, 0, 0, 0])?;
        let header = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        let capset = [
            &header as *const _ as usize,
            data.as_ptr() as usize,
            0,
            0,
            0,
            0,
        ];
        syscall(libc::SYS_capset, capset)?;
    }
    prctl(libc::PR_SET_NO_NEW_PRIVS, 1).map(drop)
}

fn exec(plan: &ChildPlan<'_>) -> ! {
    let exec = plan.exec;
    let mut best = Errno(libc::ENOENT);
    for candidate in &exec.candidates {
        let args = [
            candidate.as_ptr() as usize,
            exec.argv_ptrs.as_ptr() as usize,
            exec.envp_ptrs.as_ptr() as usize,
            0,
            0,
            0,
        ];
        // SAFETY: NUL-terminated strings and null-terminated pointer arrays that outlive the
        // call.
        if let Err(err) = unsafe { syscall(libc::SYS_execve, args) } {
            // A PATH search reports the most informative failure, not the last ENOENT.
            if err != Errno(libc::ENOENT) {
                best = err;
            }
        }
    }
    fail(plan, Step::Exec, best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec_args() -> ExecArgs {
        ExecArgs::new(vec![], vec![c"/job/a.out".into()], vec![])
    }

    #[test]
    fn setup_errors_round_trip_and_are_worded_by_the_supervisor() {
        let mounts = [RunMount::Proc(c"/proc".into())];
        for step in [
            Step::Session,
            Step::Mount(0),
            Step::Rlimit(libc::RLIMIT_NOFILE),
            Step::Exec,
            Step::Seccomp,
        ] {
            let error = SetupError {
                step,
                errno: libc::EPERM,
            };
            assert_eq!(SetupError::decode(&error.encode()), Some(error));
        }
        let explain = |step, errno| SetupError { step, errno }.explain(&mounts, &exec_args());
        let (kind, message) = explain(Step::Exec, libc::ENOENT);
        assert_eq!(kind, SetupFailure::Launch);
        assert!(
            message.starts_with("exec /job/a.out: No such file"),
            "{message}"
        );
        let (kind, message) = explain(Step::Mount(0), libc::EPERM);
        assert_eq!(kind, SetupFailure::Config);
        assert!(
            message.starts_with("mount proc on /proc: Operation not permitted"),
            "{message}"
        );
        assert_eq!(SetupError::decode(b""), None);
        assert_eq!(SetupError::decode(&[99, 0, 0, 0, 0, 1, 0, 0, 0]), None);
    }

    #[test]
    fn exec_pointer_arrays_are_null_terminated_views_of_the_strings() {
        let args = ExecArgs::new(vec![], vec![c"a".into(), c"b".into()], vec![c"X=1".into()]);
        assert_eq!(args.argv_ptrs.len(), 3);
        assert!(args.argv_ptrs[2].is_null() && args.envp_ptrs[1].is_null());
        // SAFETY: the pointers point into `args`' strings, alive here.
        let first = unsafe { std::ffi::CStr::from_ptr(args.argv_ptrs[1]) };
        assert_eq!(first, c"b");
    }

    #[test]
    fn signal_sets_have_one_bit_per_signal() {
        assert_eq!(signal_set(&[libc::SIGCHLD]), 1 << (libc::SIGCHLD - 1));
        assert_eq!(signal_set(&[1, 64, 0, 65]), 1 | 1 << 63);
    }
}
