//! Starting a supervisor process: by exec of the configured program, or, for a caller that
//! has one thread and asked for it, as a fork of the caller that calls [`supervisor_main`]
//! without a second exec.
//!
//! The fork exists for `ulticode sandbox run`, a process that lives for one run: an exec of
//! this (large, position-independent) binary costs the dynamic loader's relocations, their
//! copy-on-write page faults and the C library's start-up, about a millisecond and a half of
//! the whole command here. A fork of a process with one thread may run any code; the child
//! is left in the state an exec'd supervisor starts in (stdin the socket, stdout `/dev/null`,
//! stderr inherited, no other descriptor, an environment of the identity range only, a
//! process group of its own), and never returns to the caller's code.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use super::{supervisor_main, SupervisorCommand};
use crate::identity::{IdentityRange, RANGE_VARIABLE};

/// A supervisor this process started.
pub(super) enum SupervisorProcess {
    Spawned(Child),
    Forked(libc::pid_t),
}

impl SupervisorProcess {
    /// Starts a supervisor whose stdin is `theirs`.
    pub(super) fn start(
        command: &SupervisorCommand,
        identities: &IdentityRange,
        theirs: UnixStream,
    ) -> io::Result<Self> {
        if command.fork_when_alone && has_one_thread() {
            return fork(identities, theirs).map(Self::Forked);
        }
        // A process group of its own: a signal to the caller's group (a terminal's ^C, a
        // `kill(0, ...)` anywhere in the caller) never reaches a supervisor mid-run, and the
        // runs themselves get sessions of their own (see `child`).
        Command::new(&command.program)
            .args(&command.args)
            .process_group(0)
            .env_clear()
            .env(RANGE_VARIABLE, identities.to_arg())
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map(Self::Spawned)
    }

    pub(super) fn kill_and_wait(&mut self) {
        match self {
            Self::Spawned(child) => {
                let _ = child.kill();
                let _ = child.wait();
            }
            Self::Forked(pid) => {
                // SAFETY: plain syscalls on a child of this process not yet reaped.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                    libc::waitpid(*pid, std::ptr::null_mut(), 0);
                }
            }
        }
    }

    /// Whether the process has exited (and is reaped now).
    pub(super) fn exited(&mut self) -> bool {
        match self {
            Self::Spawned(child) => matches!(child.try_wait(), Ok(Some(_))),
            Self::Forked(pid) => {
                // SAFETY: a non-blocking wait for a child of this process.
                let reaped = unsafe { libc::waitpid(*pid, std::ptr::null_mut(), libc::WNOHANG) };
                reaped == *pid || reaped == -1
            }
        }
    }
}

/// Whether this process runs one thread (`/proc/self/task` has one entry).
fn has_one_thread() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.take(2).count() == 1)
}

fn fork(identities: &IdentityRange, theirs: UnixStream) -> io::Result<libc::pid_t> {
    // Everything the child needs, made before the fork.
    let variable = CString::new(RANGE_VARIABLE).expect("no NUL in the variable's name");
    let range = CString::new(identities.to_arg())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in the identity range"))?;
    let null = std::fs::OpenOptions::new().write(true).open("/dev/null")?;
    // SAFETY: this process has one thread (checked by the caller), so the child may run any
    // code; it never returns from this function.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // SAFETY: the child's own descriptors and environment, before it serves.
            unsafe {
                // Both above every descriptor the moves below overwrite, then into place;
                // everything else (the caller's files, sockets, pipes) closed.
                let socket = libc::fcntl(theirs.as_raw_fd(), libc::F_DUPFD, 3);
                let null = libc::fcntl(null.as_raw_fd(), libc::F_DUPFD, 3);
                if socket < 0
                    || null < 0
                    || libc::dup2(socket, 0) != 0
                    || libc::dup2(null, 1) != 1
                    || libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0
                    || libc::setpgid(0, 0) != 0
                    || libc::clearenv() != 0
                    || libc::setenv(variable.as_ptr(), range.as_ptr(), 1) != 0
                {
                    libc::_exit(127);
                }
            }
            supervisor_main()
        }
        pid => Ok(pid),
    }
}
