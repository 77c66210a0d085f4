//! The two processes inside a run's namespaces.
//!
//! - **init** (pid 1 of the new pid namespace, still root): builds the root filesystem, spawns
//!   the program, reaps everything, reports the program's wait status, and exits, which makes the
//!   kernel kill whatever the program left behind (daemons, stray threads).
//! - **program** (pid 2): joins the run's cgroup, drops every privilege, installs the seccomp
//!   filter and execs.
//!
//! Init is a copy of the single-threaded supervisor, so allocating there is safe; the program
//! process shares init's memory while init is suspended, so allocating there is safe too.
//! Neither may ever return into supervisor code: every path ends in `exec` or `_exit`.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::rootfs::MountOp;
use crate::sys;

/// Everything the child processes need, prepared by the supervisor before `clone`.
pub struct ChildPlan<'a> {
    /// The supervisor's network, IPC and UTS namespaces to join, with their `setns` types.
    pub namespaces: [(RawFd, libc::c_int); 3],
    pub mounts: &'a [MountOp],
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
    /// Paths to try, in order (one for an absolute program, one per `PATH` entry otherwise).
    pub candidates: Vec<CString>,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    /// Where the program leaves its seccomp listener's descriptor number for init (the two
    /// share memory and, until the exec, the descriptor table).
    pub listener: AtomicI32,
    /// The CPU the program (and everything it starts) runs on; the filter refuses
    /// `sched_setaffinity`, so it stays there.
    pub cpu: Option<u32>,
    /// Signals the supervisor ignores (see [`ignored_signals`]): the program resets them.
    pub ignored_signals: &'a [libc::c_int],
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

/// Which kind of failure a setup error is, as reported on the error pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetupFailure {
    Config,
    Launch,
}

impl SetupFailure {
    fn tag(self) -> u8 {
        match self {
            SetupFailure::Config => b'C',
            SetupFailure::Launch => b'L',
        }
    }

    /// Parses an error-pipe message: a tag byte then the text.
    pub fn decode(message: &[u8]) -> Option<(SetupFailure, String)> {
        let (&tag, text) = message.split_first()?;
        let kind = match tag {
            b'C' => SetupFailure::Config,
            b'L' => SetupFailure::Launch,
            _ => return None,
        };
        Some((kind, String::from_utf8_lossy(text).into_owned()))
    }
}

fn fail(plan: &ChildPlan<'_>, kind: SetupFailure, what: &str, err: io::Error) -> ! {
    let mut message = vec![kind.tag()];
    message.extend_from_slice(format!("{what}: {err}").as_bytes());
    let _ = sys::write_all(plan.error_pipe, &message);
    // SAFETY: terminating the process is always sound.
    unsafe { libc::_exit(126) }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    sys::check(rc).map(drop)
}

/// Entry of pid 1. Never returns.
pub fn init_main(plan: &ChildPlan<'_>) -> ! {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_init(plan)));
    if result.is_err() {
        fail(
            plan,
            SetupFailure::Launch,
            "sandbox init",
            io::Error::other("panicked"),
        );
    }
    // SAFETY: terminating the process is always sound.
    unsafe { libc::_exit(127) }
}

fn run_init(plan: &ChildPlan<'_>) -> ! {
    // A session and process group of its own: `kill(0, ...)` or `kill(-pgid, ...)` from the
    // program reaches only this run, never the supervisor, the server or other runs.
    // SAFETY: setsid has no arguments; init is not a group leader (it was just cloned).
    if let Err(err) = check(unsafe { libc::setsid() }) {
        fail(plan, SetupFailure::Config, "start the run's session", err);
    }
    // If the supervisor dies, so does this namespace (and with it the program).
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    for (namespace, kind) in plan.namespaces {
        // SAFETY: setns on a namespace descriptor the supervisor holds for its runs.
        if let Err(err) = check(unsafe { libc::setns(namespace, kind) }) {
            fail(
                plan,
                SetupFailure::Config,
                "join the supervisor's network, IPC or UTS namespace",
                err,
            );
        }
        // SAFETY: closing a descriptor this process owns.
        unsafe { libc::close(namespace) };
    }
    for op in plan.mounts {
        if let Err(err) = op.apply() {
            fail(plan, SetupFailure::Config, &op.describe(), err);
        }
    }
    // Children are noticed through a signalfd, so init can wait for them and for the seccomp
    // listener at once. The program resets its mask before the exec.
    let children = match child_signals() {
        Ok(fd) => fd,
        Err(err) => fail(plan, SetupFailure::Config, "watch for child exits", err),
    };

    let program = spawn_program(plan);
    if program < 0 {
        fail(
            plan,
            SetupFailure::Launch,
            "start the program",
            io::Error::last_os_error(),
        );
    }
    let listener = plan.listener.load(Ordering::Acquire);

    // Keep only the status pipe, the cancel pipe, the signalfd and the listener. Every other descriptor (the
    // program's stdio, the supervisor's ends of the pipes) must not be held open by init: the
    // program's stdin has to reach EOF when the supervisor closes it, and the output pipes
    // when the program's tree is gone.
    close_all_except(&[plan.status_pipe, plan.cancel, children, listener]);

    // When the program exits, everything it left behind is killed and reaped before its status
    // is reported: a report means the whole tree is gone, so the supervisor can read the
    // accounting while this process and its namespaces are still being torn down. A call
    // handed to the listener is a violation: it is recorded and the whole run is killed (the
    // calling thread stays parked until then).
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
            let mut status = 0;
            // SAFETY: `status` is a valid out-pointer.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL | libc::WNOHANG) };
            if pid == program {
                program_status = Some(status);
                // SAFETY: from pid 1, kill(-1) signals every other process of the namespace.
                unsafe { libc::kill(-1, libc::SIGKILL) };
            } else if pid == 0 {
                break;
            } else if pid < 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
                    if let Some(status) = program_status {
                        report.wait_status = status;
                        let _ = sys::write_all(plan.status_pipe, &report.encode());
                    }
                    // SAFETY: terminating the process is always sound.
                    unsafe { libc::_exit(0) };
                }
                break;
            }
        }
        let mut fds = [
            libc::pollfd {
                fd: children,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if listening { listener } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if cancellable { plan.cancel } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a valid array of three pollfd.
        if unsafe { libc::poll(fds.as_mut_ptr(), 3, -1) } < 0 {
            continue;
        }
        if fds[0].revents != 0 {
            let mut info = [0u8; 128];
            while matches!(sys::read(children, &mut info), Ok(Some(n)) if n > 0) {}
        }
        if fds[1].revents & libc::POLLIN != 0 {
            if let Ok(violation) = crate::seccomp::Violation::receive(listener) {
                report.violation.get_or_insert(violation);
                // SAFETY: as above.
                unsafe { libc::kill(-1, libc::SIGKILL) };
            }
        } else if fds[1].revents != 0 {
            // Every filtered process is gone: nothing more can arrive.
            listening = false;
        }
        if fds[2].revents != 0 {
            cancellable = false;
            // The program's status is not taken yet (this loop reaps before it polls), so the
            // cancellation came first, unless the program was already on its way out: the
            // kill then changes nothing, and its wait status says how it ended by itself.
            if program_status.is_none() {
                report.cancelled = true;
                // SAFETY: as above.
                unsafe { libc::kill(-1, libc::SIGKILL) };
            }
        }
    }
}

/// Blocks `SIGCHLD` and returns a non-blocking signalfd that reports it.
fn child_signals() -> io::Result<RawFd> {
    // SAFETY: an initialised signal set and valid out-pointers.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCHLD);
        check(libc::sigprocmask(
            libc::SIG_BLOCK,
            &set,
            std::ptr::null_mut(),
        ))?;
        sys::check(libc::signalfd(
            -1,
            &set,
            libc::SFD_NONBLOCK | libc::SFD_CLOEXEC,
        ))
    }
}

/// Closes every descriptor but `keep` (negative entries are ignored).
fn close_all_except(keep: &[RawFd]) {
    let mut keep: Vec<u32> = keep
        .iter()
        .filter_map(|&fd| u32::try_from(fd).ok())
        .collect();
    keep.sort_unstable();
    let mut from = 0u32;
    for fd in keep {
        if fd > from {
            // SAFETY: closing a descriptor range; nothing in this process uses them any more.
            unsafe { libc::syscall(libc::SYS_close_range, from, fd - 1, 0u32) };
        }
        from = fd + 1;
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32) };
}

/// Stack of the program process until it execs.
const PROGRAM_STACK_BYTES: usize = 256 * 1024;

/// Starts the program process the way `posix_spawn` does: sharing init's memory on a stack of
/// its own, with init suspended until the exec. Copying init's address space (a copy of the
/// supervisor's) and tearing the copy down again at exec cost more than the rest of a run's
/// setup together. The descriptor table is shared too until the exec (which gives the program
/// a private copy), so the seccomp listener the program creates last stays with init.
fn spawn_program(plan: &ChildPlan<'_>) -> libc::pid_t {
    extern "C" fn entry(plan: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `plan` is the pointer passed below; init is suspended while this runs.
        let plan = unsafe { &*(plan as *const ChildPlan<'_>) };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| program_main(plan)));
        if result.is_err() {
            fail(
                plan,
                SetupFailure::Launch,
                "sandbox program setup",
                io::Error::other("panicked"),
            );
        }
        // SAFETY: terminating the process is always sound.
        unsafe { libc::_exit(127) }
    }
    // A fresh mapping, not a zeroed allocation: only the pages the child touches get faulted in.
    // SAFETY: an anonymous private mapping; init never unmaps it (it only ever `_exit`s).
    let stack = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            PROGRAM_STACK_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if stack == libc::MAP_FAILED {
        return -1;
    }
    // The stack grows down from a 16-byte aligned top.
    let top = (stack as usize + PROGRAM_STACK_BYTES) & !15;
    // SAFETY: the child runs `entry` on `stack`, which outlives it (init is suspended by
    // CLONE_VFORK until the child has exec'd or exited), and never returns into init's frames.
    unsafe {
        libc::clone(
            entry,
            top as *mut libc::c_void,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_FILES | libc::SIGCHLD,
            plan as *const ChildPlan<'_> as *mut libc::c_void,
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
        if let Err(err) = sys::write_all(fd, b"0") {
            fail(plan, SetupFailure::Config, "join the run cgroup", err);
        }
    }
    // SAFETY: unshare with a flag constant.
    if let Err(err) = check(unsafe { libc::unshare(libc::CLONE_NEWCGROUP) }) {
        fail(
            plan,
            SetupFailure::Config,
            "unshare the cgroup namespace",
            err,
        );
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
        // SAFETY: duplicating descriptors this process owns. Numbers 3 and 4 are free to
        // replace: the supervisor reserved them, so none of init's own descriptors has them.
        if let Err(err) = check(unsafe { libc::dup2(from, to) }) {
            fail(plan, SetupFailure::Launch, "redirect stdio", err);
        }
    }
    reset_signals(plan.ignored_signals);
    if let Some(cpu) = plan.cpu {
        // SAFETY: an all-zero cpu_set_t is a valid empty set; CPU_SET stays in bounds.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu as usize, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if let Err(err) = check(rc) {
            fail(
                plan,
                SetupFailure::Config,
                "pin the program to its CPU",
                err,
            );
        }
    }
    for &(resource, soft, hard) in &plan.rlimits {
        let limit = libc::rlimit {
            rlim_cur: soft,
            rlim_max: hard,
        };
        // SAFETY: `limit` is a valid rlimit.
        if let Err(err) = check(unsafe { libc::setrlimit(resource, &limit) }) {
            fail(
                plan,
                SetupFailure::Config,
                &format!("setrlimit({resource})"),
                err,
            );
        }
    }
    if let Err(err) = drop_privileges(plan.uid, plan.gid) {
        fail(plan, SetupFailure::Config, "drop privileges", err);
    }
    // Everything but 0, 1 and 2 (and 3 and 4, the report channel, when there is one) closes
    // at exec (the error pipe stays usable until then).
    let first_closed = if plan.records.is_some() { 5u32 } else { 3u32 };
    // SAFETY: close_range marks descriptors close-on-exec; no memory is involved.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first_closed,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if let Err(err) = check(rc as libc::c_int) {
        fail(
            plan,
            SetupFailure::Config,
            "close inherited descriptors",
            err,
        );
    }
    match crate::seccomp::install(plan.seccomp) {
        Ok(listener) => plan.listener.store(listener, Ordering::Release),
        Err(err) => fail(plan, SetupFailure::Config, "load the seccomp profile", err),
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
            let rc = unsafe {
                libc::syscall(
                    libc::SYS_rt_sigaction,
                    signal,
                    std::ptr::null::<KernelSigaction>(),
                    &mut current,
                    8usize,
                )
            };
            rc == 0 && current.handler == libc::SIG_IGN
        })
        .collect()
}

fn reset_signals(ignored: &[libc::c_int]) {
    let default = KernelSigaction::default();
    for &signal in ignored {
        // SAFETY: installing the default disposition (handler 0) from a valid struct.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                signal,
                &default,
                std::ptr::null_mut::<KernelSigaction>(),
                8usize,
            )
        };
    }
    // SAFETY: an empty, initialised signal set.
    unsafe {
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
}

/// Bounding and ambient sets emptied, supplementary groups dropped, uid/gid switched (which
/// clears the effective and permitted sets), inheritable cleared, `no_new_privs` set.
fn drop_privileges(uid: libc::uid_t, gid: libc::gid_t) -> io::Result<()> {
    // SAFETY: prctl/setgroups/setres*id/capset with valid arguments.
    unsafe {
        // Capabilities are numbered from 0 up to the kernel's last; EINVAL is the first past it.
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap) != 0 {
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                    break;
                }
                return Err(io::Error::last_os_error());
            }
        }
        check(libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ))?;
        // Raw syscalls: glibc's wrappers would coordinate with "other threads" of the memory
        // this process shares with init.
        check(
            libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()) as libc::c_int,
        )?;
        check(libc::syscall(libc::SYS_setresgid, gid, gid, gid) as libc::c_int)?;
        check(libc::syscall(libc::SYS_setresuid, uid, uid, uid) as libc::c_int)?;
        let mut header = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        check(libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) as libc::c_int)?;
        check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))?;
    }
    Ok(())
}

fn exec(plan: &ChildPlan<'_>) -> ! {
    let mut argv: Vec<*const libc::c_char> = plan.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = plan.envp.iter().map(|e| e.as_ptr()).collect();
    envp.push(std::ptr::null());
    let mut best = io::Error::from_raw_os_error(libc::ENOENT);
    for candidate in &plan.candidates {
        // SAFETY: NUL-terminated strings and null-terminated pointer arrays that outlive the call.
        unsafe { libc::execve(candidate.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        let err = io::Error::last_os_error();
        // A PATH search reports the most informative failure, not the last ENOENT.
        if err.raw_os_error() != Some(libc::ENOENT) {
            best = err;
        }
    }
    let program = plan.argv.first().map(|a| a.to_string_lossy().into_owned());
    fail(
        plan,
        SetupFailure::Launch,
        &format!("exec {}", program.unwrap_or_default()),
        best,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_pipe_messages_decode() {
        assert_eq!(
            SetupFailure::decode(b"Cmount x: denied"),
            Some((SetupFailure::Config, "mount x: denied".into()))
        );
        assert_eq!(
            SetupFailure::decode(b"Lexec /x: No such file"),
            Some((SetupFailure::Launch, "exec /x: No such file".into()))
        );
        assert_eq!(SetupFailure::decode(b""), None);
        assert_eq!(SetupFailure::decode(b"?what"), None);
    }
}
