//! A test's output, captured into an unnamed file of the judge's: the sandbox streams it there
//! (capped at the output limit), the default checker reads it in place, and a validator gets it
//! as a read-only stdin. It never sits whole in the supervisor's or the judge's heap.
//!
//! The file is a memfd: an output lives no longer than its test, and an unnamed file on a disk
//! filesystem (`/tmp` on ext4) cost an inode's allocation and release in the journal on every
//! test.

use std::fs::File;
use std::io;
use std::ops::Deref;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;

use sandbox::PassedFds;

pub(crate) struct CapturedOutput {
    file: File,
}

/// The output's bytes, mapped rather than copied.
pub(crate) enum Mapped {
    Empty,
    Mapped(memmap2::Mmap),
}

impl Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Mapped::Empty => &[],
            Mapped::Mapped(map) => map,
        }
    }
}

impl CapturedOutput {
    pub(crate) fn create() -> io::Result<Self> {
        // SAFETY: a NUL-terminated name and flags; the descriptor is owned from here on.
        let fd = unsafe { libc::memfd_create(c"ulticode-output".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nobody else.
        Ok(Self {
            file: File::from(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) }),
        })
    }

    /// An output that is given, not produced by a run (a submit-answer submission's answer).
    pub(crate) fn from_bytes(bytes: &[u8]) -> io::Result<Self> {
        let output = Self::create()?;
        output.file.write_all_at(bytes, 0)?;
        Ok(output)
    }

    /// The descriptors for the run: this file as its captured stdout.
    pub(crate) fn for_run(&self) -> io::Result<PassedFds> {
        Ok(PassedFds {
            stdin: None,
            stdout: Some(OwnedFd::from(self.file.try_clone()?)),
            stderr: None,
        })
    }

    /// The whole output. Only the judge holds the file once the run has ended, so the mapping
    /// cannot change under the reader.
    pub(crate) fn map(&self) -> io::Result<Mapped> {
        if self.file.metadata()?.len() == 0 {
            return Ok(Mapped::Empty);
        }
        // SAFETY: the file is private to this judge (unnamed, the run that wrote it is over),
        // so nobody truncates or rewrites it while it is mapped.
        Ok(Mapped::Mapped(unsafe { memmap2::Mmap::map(&self.file)? }))
    }

    /// A read-only descriptor of its own, positioned at the start (a validator's stdin).
    pub(crate) fn reader(&self) -> io::Result<OwnedFd> {
        let path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
        Ok(OwnedFd::from(File::open(path)?))
    }

    /// Up to `limit` bytes from the start (what a sample's result shows).
    pub(crate) fn head(&self, limit: usize) -> Vec<u8> {
        let mut bytes = vec![0; limit];
        let mut filled = 0;
        while filled < limit {
            match self.file.read_at(&mut bytes[filled..], filled as u64) {
                Ok(0) | Err(_) => break,
                Ok(n) => filled += n,
            }
        }
        bytes.truncate(filled);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn what_the_run_writes_is_mapped_read_back_and_shown_in_part() {
        let output = CapturedOutput::create().unwrap();
        assert!(output.map().unwrap().is_empty());
        let fds = output.for_run().unwrap();
        File::from(fds.stdout.unwrap())
            .write_all(b"42\n\xff tail")
            .unwrap();
        assert_eq!(&*output.map().unwrap(), b"42\n\xff tail");
        assert_eq!(output.head(3), b"42\n");
        let mut read = Vec::new();
        File::from(output.reader().unwrap())
            .read_to_end(&mut read)
            .unwrap();
        assert_eq!(read, b"42\n\xff tail");
    }

    #[test]
    fn the_reader_cannot_write() {
        let output = CapturedOutput::create().unwrap();
        let mut reader = File::from(output.reader().unwrap());
        assert!(reader.write_all(b"forged").is_err());
    }
}
