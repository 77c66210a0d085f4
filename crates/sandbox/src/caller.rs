//! Whose permissions a run's host paths are used with.
//!
//! The supervisor is root, but the process that asks it for a run need not be: a sandbox
//! daemon serves unprivileged clients over a Unix socket. Every host path a run names (the job
//! directory, binds, a stdin file, writable directories) is therefore opened, read and written
//! with the caller's permissions — its uid, gid and supplementary groups, taken from the
//! kernel (`SO_PEERCRED`, `SO_PEERGROUPS`), never from the request — so a run can reach nothing
//! on the host its caller could not reach itself, and what it leaves in a writable directory
//! belongs to the caller. The switch uses the filesystem ids (`setfsuid`, `setfsgid`) and the
//! supplementary groups of this thread only; the supervisor is single-threaded.

use std::io;
use std::os::fd::RawFd;

/// `SO_PEERGROUPS` (Linux 4.13): the peer's supplementary groups.
const SO_PEERGROUPS: libc::c_int = 59;

/// The credentials a run's host paths are used with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    uid: libc::uid_t,
    gid: libc::gid_t,
    groups: Vec<libc::gid_t>,
}

impl Caller {
    /// The process at the other end of a connected Unix socket, as the kernel recorded it
    /// when the connection (or the socket pair) was made.
    pub fn of_socket(socket: RawFd) -> io::Result<Self> {
        // SAFETY: an all-zero ucred is valid; getsockopt fills it.
        let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: `cred` is valid for `len` bytes.
        crate::sys::check(unsafe {
            libc::getsockopt(
                socket,
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        })?;
        let mut groups: Vec<libc::gid_t> = vec![0; 256];
        loop {
            let mut len = (groups.len() * std::mem::size_of::<libc::gid_t>()) as libc::socklen_t;
            // SAFETY: `groups` is valid for `len` bytes.
            let rc = unsafe {
                libc::getsockopt(
                    socket,
                    libc::SOL_SOCKET,
                    SO_PEERGROUPS,
                    groups.as_mut_ptr().cast(),
                    &mut len,
                )
            };
            if rc == 0 {
                groups.truncate(len as usize / std::mem::size_of::<libc::gid_t>());
                break;
            }
            let err = io::Error::last_os_error();
            // ERANGE: `len` now holds the size needed.
            let needed = len as usize / std::mem::size_of::<libc::gid_t>();
            if err.raw_os_error() == Some(libc::ERANGE) && needed > groups.len() {
                groups.resize(needed, 0);
                continue;
            }
            return Err(err);
        }
        Ok(Self {
            uid: cred.uid,
            gid: cred.gid,
            groups,
        })
    }

    /// The supervisor's own side of an operation (root: nothing is switched).
    pub fn root() -> Self {
        Self {
            uid: 0,
            gid: 0,
            groups: Vec::new(),
        }
    }

    /// Root acts with its own permissions: nothing to switch.
    fn is_root(&self) -> bool {
        self.uid == 0
    }

    /// Runs `work` with the caller's filesystem permissions, then returns to the supervisor's.
    /// While switched, the capabilities that bypass file permissions are not in effect (the
    /// kernel drops them with a non-zero fsuid), so every check is the caller's.
    pub fn act<T>(&self, work: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        if self.is_root() {
            return work();
        }
        let switched = Switched::enter(self)?;
        let result = work();
        switched.leave()?;
        result
    }
}

/// The supervisor's own credentials while the caller's are in effect.
struct Switched {
    fsuid: libc::uid_t,
    fsgid: libc::gid_t,
    groups: Vec<libc::gid_t>,
}

impl Switched {
    fn enter(caller: &Caller) -> io::Result<Self> {
        let own = Self {
            // SAFETY: plain getters.
            fsuid: unsafe { libc::geteuid() },
            // SAFETY: as above.
            fsgid: unsafe { libc::getegid() },
            groups: own_groups()?,
        };
        set_groups(&caller.groups)?;
        // setfsgid and setfsuid report failure only by leaving the id unchanged.
        // SAFETY: plain id setters.
        unsafe {
            libc::setfsgid(caller.gid);
            libc::setfsuid(caller.uid);
        }
        // SAFETY: -1 is never a valid id: the calls change nothing and return the current ids.
        let (fsuid, fsgid) = unsafe { (libc::setfsuid(u32::MAX), libc::setfsgid(u32::MAX)) };
        if fsuid as libc::uid_t != caller.uid || fsgid as libc::gid_t != caller.gid {
            let _ = own.restore();
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "cannot take the caller's filesystem ids {}:{}",
                    caller.uid, caller.gid
                ),
            ));
        }
        Ok(own)
    }

    fn restore(&self) -> io::Result<()> {
        // SAFETY: plain id setters.
        unsafe {
            libc::setfsuid(self.fsuid);
            libc::setfsgid(self.fsgid);
        }
        set_groups(&self.groups)
    }

    fn leave(self) -> io::Result<()> {
        self.restore()?;
        // SAFETY: as in `enter`.
        let fsuid = unsafe { libc::setfsuid(u32::MAX) } as libc::uid_t;
        if fsuid != self.fsuid {
            // Going on with the caller's ids would misattribute every later file operation.
            eprintln!("ulticode sandbox supervisor: cannot return to its own filesystem id");
            std::process::abort();
        }
        Ok(())
    }
}

fn own_groups() -> io::Result<Vec<libc::gid_t>> {
    // SAFETY: a zero-sized query returns the count.
    let n = crate::sys::check(unsafe { libc::getgroups(0, std::ptr::null_mut()) })?;
    let mut groups = vec![0; n as usize];
    // SAFETY: `groups` has room for `n` entries.
    let n = crate::sys::check(unsafe { libc::getgroups(n, groups.as_mut_ptr()) })?;
    groups.truncate(n as usize);
    Ok(groups)
}

/// Sets this thread's supplementary groups (the raw call: the C library's wrapper would
/// change every thread's).
fn set_groups(groups: &[libc::gid_t]) -> io::Result<()> {
    // SAFETY: `groups` is valid for its length.
    let rc = unsafe { libc::syscall(libc::SYS_setgroups, groups.len(), groups.as_ptr()) };
    crate::sys::check(rc as libc::c_int).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_socket_pair_reports_its_maker() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let caller = Caller::of_socket(a.as_raw_fd()).unwrap();
        // SAFETY: plain getters.
        assert_eq!(caller.uid, unsafe { libc::geteuid() });
        assert_eq!(caller.gid, unsafe { libc::getegid() });
    }

    #[test]
    fn root_acts_without_switching() {
        assert_eq!(Caller::root().act(|| Ok(7)).unwrap(), 7);
    }
}
