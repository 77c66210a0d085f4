//! A captured output stream's kept bytes, up to a cap: in memory, or streamed into a file the
//! caller passed ([`crate::Stdout::CaptureToFile`]), so a large output never sits in the
//! supervisor's or the client's memory.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;

pub(crate) struct CaptureSink {
    file: Option<File>,
    memory: Vec<u8>,
    kept: usize,
    cap: usize,
    exceeded: bool,
    error: Option<io::Error>,
}

/// What a finished capture holds: the bytes kept in memory (none for a file), and whether the
/// stream produced more than its cap.
pub(crate) struct Captured {
    pub(crate) memory: Vec<u8>,
    pub(crate) exceeded: bool,
}

impl CaptureSink {
    pub(crate) fn new(file: Option<OwnedFd>, cap: usize) -> Self {
        Self {
            file: file.map(File::from),
            memory: Vec::new(),
            kept: 0,
            cap,
            exceeded: false,
            error: None,
        }
    }

    /// Keeps bytes up to the cap; returns true when these bytes first crossed it. Bytes past
    /// the cap are dropped (the caller still reads them, so writers never block on a full pipe).
    pub(crate) fn keep(&mut self, bytes: &[u8]) -> bool {
        let room = self.cap.saturating_sub(self.kept);
        let kept = &bytes[..bytes.len().min(room)];
        self.kept += kept.len();
        match &mut self.file {
            None => self.memory.extend_from_slice(kept),
            Some(file) if self.error.is_none() && !kept.is_empty() => {
                if let Err(e) = file.write_all(kept) {
                    self.error = Some(e);
                }
            }
            Some(_) => {}
        }
        if bytes.len() > room && !self.exceeded {
            self.exceeded = true;
            return true;
        }
        false
    }

    /// The capture's result, or the error that kept bytes from reaching the file (the
    /// infrastructure's failure, not the program's).
    pub(crate) fn finish(self) -> io::Result<Captured> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(Captured {
                memory: self.memory,
                exceeded: self.exceeded,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek};

    #[test]
    fn memory_keeps_up_to_the_cap_and_reports_the_first_crossing() {
        let mut sink = CaptureSink::new(None, 5);
        assert!(!sink.keep(b"abc"));
        assert!(sink.keep(b"defg"));
        assert!(!sink.keep(b"h"));
        let captured = sink.finish().unwrap();
        assert_eq!(captured.memory, b"abcde");
        assert!(captured.exceeded);
    }

    #[test]
    fn a_file_gets_the_kept_bytes_and_memory_gets_none() {
        let mut file = tempfile::tempfile().unwrap();
        let mut sink = CaptureSink::new(Some(file.try_clone().unwrap().into()), 4);
        sink.keep(&[0xff, 0x00]);
        sink.keep(b"xyz");
        let captured = sink.finish().unwrap();
        assert!(captured.memory.is_empty());
        assert!(captured.exceeded);
        let mut written = Vec::new();
        file.rewind().unwrap();
        file.read_to_end(&mut written).unwrap();
        assert_eq!(written, [0xff, 0x00, b'x', b'y']);
    }

    #[test]
    fn a_failing_file_is_an_error_not_lost_output() {
        let read_only = File::open("/dev/null").unwrap();
        let mut sink = CaptureSink::new(Some(read_only.into()), 10);
        sink.keep(b"lost?");
        assert!(sink.finish().is_err());
    }
}
