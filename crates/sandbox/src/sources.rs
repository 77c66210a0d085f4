//! A run's read-only host paths (the job directory unless it is writable, then the read-only
//! binds), opened before the run with its caller's permissions and held as detached mount
//! trees that the run's init attaches.

use std::ffi::CString;
use std::fs;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use crate::caller::Caller;
use crate::mountapi;
use crate::rootfs::{mount_attrs, NOSUID_NODEV};
use crate::spec::RunSpec;

/// The read-only host paths of a run (the job directory unless it is writable, then the
/// read-only binds, in [`RunSpec::host_dirs`] order), opened with the caller's permissions:
/// what the run sees is what its caller could read, resolved without following symlinks.
/// Each is held as a detached read-only mount tree (made here, in the supervisor's mount
/// namespace: a mount can only be cloned in the namespace it belongs to), which the run's
/// init attaches.
pub struct HostSources {
    opened: Vec<(OwnedFd, bool)>,
}

impl HostSources {
    /// Opens them as `caller`; an error names the path and why (a configuration error).
    pub fn open(spec: &RunSpec, caller: &Caller) -> Result<Self, String> {
        let mut opened = Vec::new();
        for (host, _, writable) in spec.host_dirs() {
            if writable {
                continue;
            }
            let path = CString::new(host.as_os_str().as_bytes())
                .map_err(|_| format!("bind source {} holds a NUL byte", host.display()))?;
            // Non-blocking: opening a FIFO must not wait for a writer.
            let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
            let fd = caller
                .act(|| mountapi::open_no_symlinks(libc::AT_FDCWD, &path, flags))
                .map_err(|e| match e.raw_os_error() {
                    Some(libc::ELOOP) => format!(
                        "bind source {} is or passes through a symlink; binds are resolved \
                         without following symlinks, so pass the path it stands for",
                        host.display()
                    ),
                    _ => format!("bind source {}: {e}", host.display()),
                })?;
            let meta = fs::File::from(fd.try_clone().map_err(|e| e.to_string())?)
                .metadata()
                .map_err(|e| format!("bind source {}: {e}", host.display()))?;
            if !meta.is_dir() && !meta.is_file() {
                return Err(format!(
                    "bind source {} is neither a regular file nor a directory",
                    host.display()
                ));
            }
            let attrs = mount_attrs(NOSUID_NODEV) | mountapi::ATTR_RDONLY;
            let tree = mountapi::clone_tree_with_attrs(fd.as_raw_fd(), attrs)
                .map_err(|e| format!("bind source {}: copy its mount tree: {e}", host.display()))?;
            opened.push((tree, meta.is_dir()));
        }
        Ok(Self { opened })
    }

    /// The detached trees, in order.
    pub fn fds(&self) -> Vec<RawFd> {
        self.opened.iter().map(|(fd, _)| fd.as_raw_fd()).collect()
    }

    /// Whether each of the spec's binds is a directory (a writable one always is).
    pub fn bind_kinds<'a>(&'a self, spec: &'a RunSpec) -> impl Iterator<Item = bool> + 'a {
        let job_is_read_only = spec.job_dir.is_some() && !spec.job_dir_writable;
        let mut read_only = self.opened.iter().skip(usize::from(job_is_read_only));
        spec.binds
            .iter()
            .map(move |bind| bind.writable || read_only.next().is_some_and(|(_, dir)| *dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Bind;

    #[test]
    fn a_missing_bind_source_is_a_configuration_error() {
        let spec = RunSpec::new("/bin/true").bind(Bind::read_only("/nonexistent/x", "/x"));
        let err = HostSources::open(&spec, &Caller::root())
            .err()
            .expect("no such source");
        assert!(err.contains("/nonexistent/x"), "{err}");
    }
}
