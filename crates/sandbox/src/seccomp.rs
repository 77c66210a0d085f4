//! seccomp-bpf allow-lists, one per runtime family, compiled to classic BPF by hand.
//!
//! Every filter starts with an architecture check (a foreign ABI such as a 32-bit `int 0x80`
//! or an x32 call is a violation), then tests the syscall number against the profile's rules;
//! anything not listed is a violation. A violation is not a signal: the filter answers
//! `SECCOMP_RET_USER_NOTIF`, which parks the calling thread and hands the call to the run's
//! init through a listener only init holds; init records it and kills the run. That report is
//! the only evidence of `disallowed_syscall`, so a program cannot forge one (a `SIGSYS` from
//! any other source is just a signal).
//!
//! A few calls get an errno instead: `clone3` and `io_uring_*` answer `ENOSYS` so runtimes fall
//! back to `clone` and `epoll`; `clone` with namespace flags answers `EPERM`; sockets outside
//! the profile's families answer `EACCES`. Paths to `SIGSYS` that the kernel offers besides
//! seccomp (sending it, a child's exit signal, `F_SETSIG`, the parent-death signal, a filter or
//! syscall user dispatch of the program's own) answer `EPERM`, and so does `sched_setaffinity`
//! (a run stays on the CPU of its slot). File locks (`flock`, `fcntl`
//! record locks) succeed without locking: the files a run can open are shared with other runs
//! and the host (read-only binds), and a lock there would be a covert channel and a way to
//! block others.

use std::collections::BTreeMap;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::raw::Errno;

#[cfg(not(target_arch = "x86_64"))]
compile_error!("the seccomp profiles are written for x86_64 syscall numbers");

/// `AUDIT_ARCH_X86_64` from `<linux/audit.h>`.
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// Syscall numbers at or above this bit are the x32 ABI.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

const NAMESPACE_CLONE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// A runtime family with its own allow-list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// Compiled programs and compilers: no sockets at all.
    #[default]
    Native,
    /// CPython / PyPy: the native set plus `memfd_create`.
    Python,
    /// The JVM: NUMA queries, memfd and local sockets (the network namespace is empty).
    Jvm,
    /// Node.js: memory-protection keys, inotify and sockets (the network namespace is empty).
    Node,
}

impl Profile {
    pub const ALL: [Profile; 4] = [
        Profile::Native,
        Profile::Python,
        Profile::Jvm,
        Profile::Node,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Native => "native",
            Profile::Python => "python",
            Profile::Jvm => "jvm",
            Profile::Node => "node",
        }
    }

    /// The rules of this profile, keyed by syscall number.
    fn rules(self) -> BTreeMap<u32, Rule> {
        let extra: &[&[libc::c_long]] = match self {
            Profile::Native => &[],
            Profile::Python => &[PYTHON_EXTRA],
            Profile::Jvm => &[SOCKETS, JVM_EXTRA],
            Profile::Node => &[SOCKETS, NODE_EXTRA],
        };
        let mut rules: BTreeMap<u32, Rule> = std::iter::once(BASE)
            .chain(extra.iter().copied())
            .flatten()
            .map(|&nr| (nr as u32, Rule::Allow))
            .collect();
        let socket = if matches!(self, Profile::Native | Profile::Python) {
            // libc itself opens sockets (the nscd client behind getpwnam): refuse them
            // politely so it falls back to files, rather than treating it as a violation.
            Rule::Errno(libc::EACCES)
        } else {
            Rule::Guarded(SOCKET_FAMILIES)
        };
        rules.insert(libc::SYS_socket as u32, socket);
        rules.insert(libc::SYS_flock as u32, Rule::Errno(0));
        // A run stays on the CPU of its slot.
        rules.insert(libc::SYS_sched_setaffinity as u32, Rule::Errno(libc::EPERM));
        // Runtimes (Mono's threads) set a scheduling policy and warn on stdout when refused:
        // the call succeeds without changing anything (the run's CPU share is its cgroup's).
        rules.insert(libc::SYS_sched_setscheduler as u32, Rule::Errno(0));
        rules.insert(libc::SYS_sched_setparam as u32, Rule::Errno(0));
        rules.insert(libc::SYS_fcntl as u32, Rule::Guarded(FCNTL_GUARDS));
        rules.insert(libc::SYS_prctl as u32, Rule::Guarded(PRCTL_GUARDS));
        for nr in [
            libc::SYS_clone3,
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
            libc::SYS_io_uring_register,
        ] {
            rules.insert(nr as u32, Rule::Errno(libc::ENOSYS));
        }
        rules.insert(libc::SYS_clone as u32, Rule::Guarded(CLONE_GUARDS));
        for (nr, guards) in SIGNAL_SENDERS {
            rules.insert(*nr as u32, Rule::Guarded(guards));
        }
        rules
    }

    /// The compiled filter program.
    pub(crate) fn compile(self) -> Vec<libc::sock_filter> {
        compile(&self.rules())
    }
}

impl FromStr for Profile {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.as_str() == text)
            .ok_or_else(|| {
                let names: Vec<_> = Profile::ALL.iter().map(|p| p.as_str()).collect();
                format!(
                    "unknown profile {text:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Allow,
    Errno(i32),
    /// Allowed unless a guard refuses; guards are tried in order.
    Guarded(&'static [Guard]),
}

/// A condition on a call's arguments (their low 32 bits, as the kernel reads an `int`) and the
/// errno it answers when the condition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Guard {
    when: Cond,
    errno: i32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cond {
    /// `arg == value`
    Equals(u8, u32),
    /// `arg & bits != 0`
    HasBits(u8, u32),
    /// `arg & mask == value`
    Masked(u8, u32, u32),
    /// `arg` is none of the values.
    NotIn(u8, &'static [u32]),
    /// `arg_a == a && arg_b == b`
    Both((u8, u32), (u8, u32)),
}

impl Cond {
    /// What the compiled guard decides, for the unit tests' reference model.
    #[cfg(test)]
    fn holds(self, args: [u64; 6]) -> bool {
        let arg = |i: u8| args[usize::from(i)] as u32;
        match self {
            Cond::Equals(i, v) => arg(i) == v,
            Cond::HasBits(i, bits) => arg(i) & bits != 0,
            Cond::Masked(i, mask, v) => arg(i) & mask == v,
            Cond::NotIn(i, values) => !values.contains(&arg(i)),
            Cond::Both((i, a), (j, b)) => arg(i) == a && arg(j) == b,
        }
    }
}

const fn refuse(when: Cond, errno: i32) -> Guard {
    Guard { when, errno }
}

const SIGSYS: u32 = libc::SIGSYS as u32;

/// Signal senders whose signal is argument 1 or 2: never `SIGSYS`.
const NO_SIGSYS_ARG1: &[Guard] = &[refuse(Cond::Equals(1, SIGSYS), libc::EPERM)];
const NO_SIGSYS_ARG2: &[Guard] = &[refuse(Cond::Equals(2, SIGSYS), libc::EPERM)];

/// Threads and processes, but no namespaces and no `SIGSYS` as a child's exit signal.
const CLONE_GUARDS: &[Guard] = &[
    refuse(Cond::HasBits(0, NAMESPACE_CLONE_FLAGS), libc::EPERM),
    refuse(Cond::Masked(0, libc::CSIGNAL as u32, SIGSYS), libc::EPERM),
];

/// `F_SETSIG` from `<linux/fcntl.h>` (the libc crate does not export it).
const F_SETSIG: u32 = 10;

/// `PR_SET_SYSCALL_USER_DISPATCH` from `<linux/prctl.h>`.
const PR_SET_SYSCALL_USER_DISPATCH: u32 = 59;

/// No filter of the program's own, no syscall user dispatch, no `SIGSYS` as the parent-death
/// signal.
const PRCTL_GUARDS: &[Guard] = &[
    refuse(Cond::Equals(0, libc::PR_SET_SECCOMP as u32), libc::EPERM),
    refuse(Cond::Equals(0, PR_SET_SYSCALL_USER_DISPATCH), libc::EPERM),
    refuse(
        Cond::Both((0, libc::PR_SET_PDEATHSIG as u32), (1, SIGSYS)),
        libc::EPERM,
    ),
];

/// No `SIGSYS` for I/O readiness; record locks succeed without locking (see the module doc).
const FCNTL_GUARDS: &[Guard] = &[
    refuse(Cond::Both((1, F_SETSIG), (2, SIGSYS)), libc::EPERM),
    refuse(Cond::Equals(1, libc::F_SETLK as u32), 0),
    refuse(Cond::Equals(1, libc::F_SETLKW as u32), 0),
    refuse(Cond::Equals(1, libc::F_OFD_SETLK as u32), 0),
    refuse(Cond::Equals(1, libc::F_OFD_SETLKW as u32), 0),
];

/// Socket families of the runtimes that need sockets: local ones, and the IP families, which
/// are namespaced (the run's network namespace has only a downed loopback). Never `AF_VSOCK`
/// (not namespaced: it reaches the hypervisor), `AF_NETLINK` (host uevents) or `AF_PACKET`.
const SOCKET_FAMILIES: &[Guard] = &[refuse(
    Cond::NotIn(
        0,
        &[
            libc::AF_UNIX as u32,
            libc::AF_INET as u32,
            libc::AF_INET6 as u32,
        ],
    ),
    libc::EACCES,
)];

/// Calls that send a signal, with the guard on their signal argument.
const SIGNAL_SENDERS: &[(libc::c_long, &[Guard])] = &[
    (libc::SYS_kill, NO_SIGSYS_ARG1),
    (libc::SYS_tkill, NO_SIGSYS_ARG1),
    (libc::SYS_tgkill, NO_SIGSYS_ARG2),
    (libc::SYS_rt_sigqueueinfo, NO_SIGSYS_ARG1),
    (libc::SYS_rt_tgsigqueueinfo, NO_SIGSYS_ARG2),
    (libc::SYS_pidfd_send_signal, NO_SIGSYS_ARG1),
];

/// What a C/C++ program, its libc, and the compilers (which fork `cc1`, `as`, `ld`) need.
/// Deliberately absent: mount, unshare, setns, chroot, pivot_root, ptrace, process_vm_*,
/// bpf, perf_event_open, keyctl/add_key/request_key, reboot, kexec, *_module, clock_settime,
/// settimeofday, swapon, mknod, chown, set*id, personality, userfaultfd, open_by_handle_at,
/// and every call that creates or addresses a network socket (`socket` answers `EACCES` in the
/// native and python profiles).
const BASE: &[libc::c_long] = &[
    // I/O on descriptors
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_preadv,
    libc::SYS_pwritev,
    libc::SYS_preadv2,
    libc::SYS_pwritev2,
    libc::SYS_lseek,
    libc::SYS_close,
    libc::SYS_close_range,
    libc::SYS_dup,
    libc::SYS_dup2,
    libc::SYS_dup3,
    libc::SYS_ioctl,
    libc::SYS_pipe,
    libc::SYS_pipe2,
    // Data transfer on connected local pairs (runtimes use socketpair like a pipe, e.g. Rust's
    // process spawning). `socket` itself is refused, so no other socket can exist.
    libc::SYS_socketpair,
    libc::SYS_sendto,
    libc::SYS_recvfrom,
    libc::SYS_sendmsg,
    libc::SYS_recvmsg,
    libc::SYS_shutdown,
    libc::SYS_sendfile,
    libc::SYS_copy_file_range,
    libc::SYS_fadvise64,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_ftruncate,
    libc::SYS_truncate,
    libc::SYS_fallocate,
    // files and directories
    libc::SYS_open,
    libc::SYS_openat,
    libc::SYS_creat,
    libc::SYS_stat,
    libc::SYS_fstat,
    libc::SYS_lstat,
    libc::SYS_newfstatat,
    libc::SYS_statx,
    libc::SYS_statfs,
    libc::SYS_fstatfs,
    libc::SYS_access,
    libc::SYS_faccessat,
    libc::SYS_faccessat2,
    libc::SYS_getdents64,
    libc::SYS_getcwd,
    libc::SYS_chdir,
    libc::SYS_fchdir,
    libc::SYS_rename,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_mkdir,
    libc::SYS_mkdirat,
    libc::SYS_rmdir,
    libc::SYS_link,
    libc::SYS_linkat,
    libc::SYS_unlink,
    libc::SYS_unlinkat,
    libc::SYS_symlink,
    libc::SYS_symlinkat,
    libc::SYS_readlink,
    libc::SYS_readlinkat,
    libc::SYS_chmod,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    libc::SYS_umask,
    libc::SYS_utimensat,
    libc::SYS_getxattr,
    libc::SYS_lgetxattr,
    libc::SYS_fgetxattr,
    libc::SYS_listxattr,
    libc::SYS_llistxattr,
    libc::SYS_flistxattr,
    // memory
    libc::SYS_brk,
    libc::SYS_mmap,
    libc::SYS_mprotect,
    libc::SYS_munmap,
    libc::SYS_mremap,
    libc::SYS_madvise,
    libc::SYS_mincore,
    libc::SYS_msync,
    libc::SYS_membarrier,
    // waiting and time
    libc::SYS_select,
    libc::SYS_pselect6,
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_nanosleep,
    libc::SYS_clock_nanosleep,
    libc::SYS_clock_gettime,
    libc::SYS_clock_getres,
    libc::SYS_gettimeofday,
    libc::SYS_time,
    libc::SYS_times,
    libc::SYS_pause,
    libc::SYS_alarm,
    libc::SYS_setitimer,
    libc::SYS_getitimer,
    libc::SYS_timer_create,
    libc::SYS_timer_settime,
    libc::SYS_timer_gettime,
    libc::SYS_timer_getoverrun,
    libc::SYS_timer_delete,
    libc::SYS_futex,
    libc::SYS_futex_waitv,
    libc::SYS_epoll_create,
    libc::SYS_epoll_create1,
    libc::SYS_epoll_ctl,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_pwait,
    libc::SYS_epoll_pwait2,
    libc::SYS_eventfd,
    libc::SYS_eventfd2,
    libc::SYS_timerfd_create,
    libc::SYS_timerfd_settime,
    libc::SYS_timerfd_gettime,
    libc::SYS_signalfd4,
    libc::SYS_sched_yield,
    libc::SYS_sched_getaffinity,
    libc::SYS_sched_getparam,
    libc::SYS_sched_getscheduler,
    libc::SYS_sched_get_priority_max,
    libc::SYS_sched_get_priority_min,
    // signals (sending is filtered separately)
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigreturn,
    libc::SYS_rt_sigsuspend,
    libc::SYS_rt_sigpending,
    libc::SYS_rt_sigtimedwait,
    libc::SYS_sigaltstack,
    // processes and threads (clone is filtered separately)
    libc::SYS_fork,
    libc::SYS_vfork,
    libc::SYS_execve,
    libc::SYS_execveat,
    libc::SYS_exit,
    libc::SYS_exit_group,
    libc::SYS_wait4,
    libc::SYS_waitid,
    libc::SYS_set_tid_address,
    libc::SYS_set_robust_list,
    libc::SYS_get_robust_list,
    libc::SYS_rseq,
    libc::SYS_arch_prctl,
    libc::SYS_setsid,
    libc::SYS_setpgid,
    libc::SYS_getpgid,
    libc::SYS_getpgrp,
    libc::SYS_getsid,
    // identity and system information (read-only)
    libc::SYS_getpid,
    libc::SYS_getppid,
    libc::SYS_gettid,
    libc::SYS_getuid,
    libc::SYS_geteuid,
    libc::SYS_getgid,
    libc::SYS_getegid,
    libc::SYS_getgroups,
    libc::SYS_getresuid,
    libc::SYS_getresgid,
    libc::SYS_uname,
    libc::SYS_sysinfo,
    libc::SYS_getrusage,
    libc::SYS_getrlimit,
    libc::SYS_setrlimit,
    libc::SYS_prlimit64,
    libc::SYS_getcpu,
    libc::SYS_getrandom,
];

/// `memfd_create` backs anonymous shared memory in the standard library and common modules.
const PYTHON_EXTRA: &[libc::c_long] = &[libc::SYS_memfd_create];

/// Socket calls for runtimes that use local sockets internally. The sandbox's network
/// namespace has only a downed loopback, so no address outside the run is reachable.
const SOCKETS: &[libc::c_long] = &[
    libc::SYS_socket,
    libc::SYS_connect,
    libc::SYS_bind,
    libc::SYS_listen,
    libc::SYS_accept,
    libc::SYS_accept4,
    libc::SYS_getsockname,
    libc::SYS_getpeername,
    libc::SYS_getsockopt,
    libc::SYS_setsockopt,
];

const JVM_EXTRA: &[libc::c_long] = &[
    libc::SYS_get_mempolicy,
    libc::SYS_set_mempolicy,
    libc::SYS_mbind,
    libc::SYS_memfd_create,
];

const NODE_EXTRA: &[libc::c_long] = &[
    libc::SYS_capget,
    libc::SYS_pkey_alloc,
    libc::SYS_pkey_free,
    libc::SYS_pkey_mprotect,
    libc::SYS_memfd_create,
    libc::SYS_inotify_init1,
    libc::SYS_inotify_add_watch,
    libc::SYS_inotify_rm_watch,
];

// Classic BPF opcodes (`<linux/bpf_common.h>`).
const LD_W_ABS: u16 = 0x20;
const JA: u16 = 0x05;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const AND_K: u16 = 0x54;
const RET_K: u16 = 0x06;

// Offsets into `struct seccomp_data`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
const ARGS_OFFSET: u32 = 16;

/// A call the profile does not allow: handed to init's listener (see the module doc).
const VIOLATION: u32 = libc::SECCOMP_RET_USER_NOTIF;
const ALLOW: u32 = libc::SECCOMP_RET_ALLOW;

fn errno(code: i32) -> u32 {
    libc::SECCOMP_RET_ERRNO | (code as u32 & 0xffff)
}

fn stmt(code: u16, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// Low 32 bits of syscall argument `index` (little-endian).
fn arg_offset(index: u8) -> u32 {
    ARGS_OFFSET + 8 * u32::from(index)
}

/// Compiles rules into a binary search over ranges of syscall numbers that share an action.
/// Each leaf is a self-contained block ending in `ret`, so the syscall number stays loaded
/// across every comparison.
///
/// The shape matters for speed, not just size: when a filter is attached the kernel JIT-compiles
/// it and emulates it for every syscall number to build its action cache. A linear list of ~200
/// rules cost ~400 µs per run; the range tree has a third of the instructions and decides any
/// number within a few comparisons.
fn compile(rules: &BTreeMap<u32, Rule>) -> Vec<libc::sock_filter> {
    let mut prog = vec![
        stmt(LD_W_ABS, ARCH_OFFSET),
        jump(JEQ_K, AUDIT_ARCH_X86_64, 1, 0),
        stmt(RET_K, VIOLATION),
        stmt(LD_W_ABS, NR_OFFSET),
        jump(JGE_K, X32_SYSCALL_BIT, 0, 1),
        stmt(RET_K, VIOLATION),
    ];
    prog.extend(search(&segments(rules)));
    prog
}

/// What happens to the syscall numbers of one range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaf {
    Violation,
    Rule(Rule),
}

/// Splits the number line into ranges `[start, next start)`; adjacent numbers with the same
/// argument-free action share a range, argument-checking rules get a range of their own.
fn segments(rules: &BTreeMap<u32, Rule>) -> Vec<(u32, Leaf)> {
    let mut segments: Vec<(u32, Leaf)> = Vec::new();
    let mut push = |start: u32, leaf: Leaf| {
        let mergeable = matches!(
            leaf,
            Leaf::Violation | Leaf::Rule(Rule::Allow | Rule::Errno(_))
        );
        if !(mergeable && segments.last().is_some_and(|(_, last)| *last == leaf)) {
            segments.push((start, leaf));
        }
    };
    let mut next = 0u32;
    for (&nr, &rule) in rules {
        if nr > next {
            push(next, Leaf::Violation);
        }
        push(nr, Leaf::Rule(rule));
        next = nr + 1;
    }
    push(next, Leaf::Violation);
    segments
}

fn search(segments: &[(u32, Leaf)]) -> Vec<libc::sock_filter> {
    if let [(_, leaf)] = segments {
        return match leaf {
            Leaf::Violation => vec![stmt(RET_K, VIOLATION)],
            Leaf::Rule(rule) => rule_block(*rule),
        };
    }
    let (low, high) = segments.split_at(segments.len() / 2);
    let low = search(low);
    // `nr >= high start` falls through to the long jump over the low half; otherwise skip it.
    let mut node = vec![
        jump(JGE_K, high[0].0, 0, 1),
        stmt(JA, u32::try_from(low.len()).expect("filters are small")),
    ];
    node.extend(low);
    node.extend(search(high));
    node
}

fn rule_block(rule: Rule) -> Vec<libc::sock_filter> {
    match rule {
        Rule::Allow => vec![stmt(RET_K, ALLOW)],
        Rule::Errno(code) => vec![stmt(RET_K, errno(code))],
        Rule::Guarded(guards) => {
            let mut block: Vec<libc::sock_filter> = guards.iter().flat_map(guard_block).collect();
            block.push(stmt(RET_K, ALLOW));
            block
        }
    }
}

/// Tests one guard: answers its errno when the condition holds, falls through otherwise.
fn guard_block(guard: &Guard) -> Vec<libc::sock_filter> {
    let refuse = stmt(RET_K, errno(guard.errno));
    let load = |arg: u8| stmt(LD_W_ABS, arg_offset(arg));
    match guard.when {
        Cond::Equals(arg, value) => vec![load(arg), jump(JEQ_K, value, 0, 1), refuse],
        Cond::HasBits(arg, bits) => vec![load(arg), jump(JSET_K, bits, 0, 1), refuse],
        Cond::Masked(arg, mask, value) => vec![
            load(arg),
            stmt(AND_K, mask),
            jump(JEQ_K, value, 0, 1),
            refuse,
        ],
        Cond::NotIn(arg, values) => {
            let mut block = vec![load(arg)];
            let count = values.len();
            for (i, &value) in values.iter().enumerate() {
                // A match skips the remaining comparisons and the refusal.
                let skip = u8::try_from(count - i).expect("short lists");
                block.push(jump(JEQ_K, value, skip, 0));
            }
            block.push(refuse);
            block
        }
        Cond::Both((a, x), (b, y)) => vec![
            load(a),
            jump(JEQ_K, x, 0, 3),
            load(b),
            jump(JEQ_K, y, 0, 1),
            refuse,
        ],
    }
}

/// Installs `profile`'s filter on the calling thread and returns the listener for its
/// violations (close-on-exec). Requires `no_new_privs` already set. Runs in a run's program
/// before its exec, in the supervisor's memory: raw calls only (see [`crate::raw`]).
pub(crate) fn install(program: &[libc::sock_filter]) -> Result<std::os::fd::RawFd, Errno> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len()).map_err(|_| Errno(libc::E2BIG))?,
        filter: program.as_ptr() as *mut libc::sock_filter,
    };
    let args = [
        libc::SECCOMP_SET_MODE_FILTER as usize,
        libc::SECCOMP_FILTER_FLAG_NEW_LISTENER as usize,
        &fprog as *const libc::sock_fprog as usize,
        0,
        0,
        0,
    ];
    // SAFETY: `fprog` points at a live, correctly sized program for the duration of the call.
    let listener = unsafe { crate::raw::syscall(libc::SYS_seccomp, args) }?;
    Ok(listener as std::os::fd::RawFd)
}

/// A call the filter handed to the listener: the evidence of `disallowed_syscall`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Violation {
    pub nr: i32,
    pub arch: u32,
}

impl Violation {
    /// Receives one pending violation from a listener that reported readiness.
    pub(crate) fn receive(listener: std::os::fd::RawFd) -> Result<Violation, Errno> {
        // SAFETY: an all-zero seccomp_notif is valid (and the kernel requires it zeroed).
        let mut notif: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        let args = [
            listener as usize,
            libc::SECCOMP_IOCTL_NOTIF_RECV as usize,
            &mut notif as *mut libc::seccomp_notif as usize,
            0,
            0,
            0,
        ];
        // SAFETY: the ioctl writes one seccomp_notif into `notif`. A raw call: it runs in a
        // run's init, in the supervisor's memory.
        unsafe { crate::raw::syscall(libc::SYS_ioctl, args) }?;
        Ok(Violation {
            nr: notif.data.nr,
            arch: notif.data.arch,
        })
    }

    /// How the outcome names the call.
    pub fn describe(&self) -> String {
        if self.arch == AUDIT_ARCH_X86_64 && (self.nr as u32) < X32_SYSCALL_BIT {
            format!(
                "the program made system call {} (x86_64), which its profile does not allow",
                self.nr
            )
        } else {
            format!(
                "the program made system call {:#x} through a foreign ABI (arch {:#x})",
                self.nr, self.arch
            )
        }
    }
}

#[cfg(test)]
mod tests;
