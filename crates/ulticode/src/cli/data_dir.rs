//! The embedded shape's data directory belongs to one process at a time: `up` holds an
//! exclusive `flock` on `ulticode.lock` in it for its whole life. The kernel drops the lock
//! when the process dies, however it dies, so a process that gets it knows that every lease,
//! delivery and judging of the directory's previous process is dead — which is what lets
//! `up` resume that work at once instead of waiting for leases to expire.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

use anyhow::Context;

/// The held lock; released when dropped or when the process ends.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

impl DataDirLock {
    /// Takes the lock of `dir` (which exists), or says which process holds it.
    pub fn acquire(dir: &Path) -> anyhow::Result<Self> {
        let path = dir.join("ulticode.lock");
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .with_context(|| format!("open {}", path.display()))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                anyhow::bail!(
                    "the data directory {} is in use by another ulticode process (pid {}); \
                     stop it, or give this one another --data-dir",
                    dir.display(),
                    holder.trim()
                );
            }
            return Err(error).with_context(|| format!("lock {}", path.display()));
        }
        file.set_len(0)?;
        file.rewind()?;
        writeln!(file, "{}", std::process::id())?;
        Ok(Self { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_the_lock_returns_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DataDirLock::acquire(dir.path()).unwrap();
        let refused = DataDirLock::acquire(dir.path()).unwrap_err().to_string();
        assert!(
            refused.contains(&format!("pid {}", std::process::id())),
            "{refused}"
        );
        drop(first);
        DataDirLock::acquire(dir.path()).unwrap();
    }
}
