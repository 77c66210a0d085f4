//! Thin, checked wrappers over the raw system calls the supervisor needs.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub fn check(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// A close-on-exec pipe: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors.
    check(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    // SAFETY: plain fcntl on a descriptor we own.
    unsafe {
        let flags = check(libc::fcntl(fd.as_raw_fd(), libc::F_GETFL))?;
        check(libc::fcntl(
            fd.as_raw_fd(),
            libc::F_SETFL,
            flags | libc::O_NONBLOCK,
        ))?;
    }
    Ok(())
}

pub fn kill(pid: libc::pid_t, signal: libc::c_int) {
    // SAFETY: sending a signal has no memory-safety preconditions; a dead pid is harmless
    // because the caller has not reaped it yet (the pid cannot be reused).
    unsafe { libc::kill(pid, signal) };
}

/// Blocks until `pid` has exited and returns its raw wait status.
pub fn wait_pid(pid: libc::pid_t) -> io::Result<libc::c_int> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid out-pointer.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::__WALL) };
        if rc == pid {
            return Ok(status);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reaps `pid` if it has exited; true when it was reaped (or is not our child any more).
pub fn try_reap(pid: libc::pid_t) -> bool {
    let mut status = 0;
    // SAFETY: `status` is a valid out-pointer.
    let rc = unsafe { libc::waitpid(pid, &mut status, libc::__WALL | libc::WNOHANG) };
    rc != 0
}

/// `read(2)` returning the byte count; `Ok(None)` for "would block".
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    loop {
        // SAFETY: `buf` is valid for `buf.len()` bytes.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(None),
            _ => return Err(err),
        }
    }
}

/// `write(2)` returning the byte count; `Ok(None)` for "would block".
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<Option<usize>> {
    loop {
        // SAFETY: `buf` is valid for `buf.len()` bytes.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => return Ok(None),
            _ => return Err(err),
        }
    }
}

/// Writes all of `buf` to a blocking descriptor.
pub fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        match write(fd, buf)? {
            Some(0) => return Err(io::ErrorKind::WriteZero.into()),
            Some(n) => buf = &buf[n..],
            None => return Err(io::ErrorKind::WouldBlock.into()),
        }
    }
    Ok(())
}

/// Reads a blocking descriptor to end of file.
pub fn read_to_end(fd: RawFd) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match read(fd, &mut buf)? {
            Some(0) | None => return Ok(out),
            Some(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}
