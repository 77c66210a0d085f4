//! Frames between the sandbox client and a supervisor process over a Unix socket.
//!
//! A frame is a JSON header plus raw byte blobs, so program input and output travel unchanged
//! (no base64, no UTF-8 requirement):
//! `u32 header_len | header | u32 blob_count | (u64 len | bytes)*`, little-endian.
//!
//! Client messages start with a tag byte: [`REQUEST`] followed by a frame, with the run's
//! passed descriptors attached to the tag byte (SCM_RIGHTS), or [`CANCEL`] on its own, which
//! ends the current run early and is ignored between runs. The supervisor reads requests
//! unbuffered, so attached descriptors are never consumed by a read-ahead.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use crate::outcome::RunOutcome;
use crate::spec::{PassedFds, RunSpec, Stdin};
use crate::sys;

pub const REQUEST: u8 = b'R';
pub const CANCEL: u8 = b'C';

const MAX_HEADER: usize = 16 << 20;
const MAX_BLOB: u64 = 4 << 30;

fn write_frame(mut out: impl Write, header: &[u8], blobs: &[&[u8]]) -> io::Result<()> {
    let mut head = Vec::with_capacity(8 + header.len());
    head.extend_from_slice(&(header.len() as u32).to_le_bytes());
    head.extend_from_slice(header);
    head.extend_from_slice(&(blobs.len() as u32).to_le_bytes());
    out.write_all(&head)?;
    for blob in blobs {
        out.write_all(&(blob.len() as u64).to_le_bytes())?;
        out.write_all(blob)?;
    }
    out.flush()
}

/// A decoded frame: the JSON header and the blobs.
struct Frame {
    header: Vec<u8>,
    blobs: Vec<Vec<u8>>,
}

/// Reads one frame; `Ok(None)` on a clean end of stream before the frame started.
fn read_frame(mut input: impl Read) -> io::Result<Option<Frame>> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let header_len = u32::from_le_bytes(len) as usize;
    if header_len > MAX_HEADER {
        return Err(invalid(format!("frame header of {header_len} bytes")));
    }
    let mut header = vec![0; header_len];
    input.read_exact(&mut header)?;
    input.read_exact(&mut len)?;
    let count = u32::from_le_bytes(len);
    if count > 4 {
        return Err(invalid(format!("frame with {count} blobs")));
    }
    let mut blobs = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let mut blob_len = [0u8; 8];
        input.read_exact(&mut blob_len)?;
        let blob_len = u64::from_le_bytes(blob_len);
        if blob_len > MAX_BLOB {
            return Err(invalid(format!("frame blob of {blob_len} bytes")));
        }
        let mut blob = vec![0; blob_len as usize];
        input.read_exact(&mut blob)?;
        blobs.push(blob);
    }
    Ok(Some(Frame { header, blobs }))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Encodes a request frame: stdin bytes travel as a blob, not inside the JSON.
fn request_frame(spec: &RunSpec) -> io::Result<Vec<u8>> {
    let mut frame = Vec::new();
    match &spec.stdin {
        Stdin::Bytes(bytes) => {
            let header = RunSpec {
                stdin: Stdin::Bytes(Vec::new()),
                ..spec.clone()
            };
            write_frame(&mut frame, &serde_json::to_vec(&header)?, &[bytes])?
        }
        _ => write_frame(&mut frame, &serde_json::to_vec(spec)?, &[])?,
    }
    Ok(frame)
}

/// Sends a request with its descriptors attached to the tag byte.
pub fn send_request(socket: &UnixStream, spec: &RunSpec, fds: &PassedFds) -> io::Result<()> {
    let passed: Vec<_> = [&fds.stdin, &fds.stdout, &fds.stderr]
        .into_iter()
        .flatten()
        .map(|fd| fd.as_raw_fd())
        .collect();
    let frame = request_frame(spec)?;
    let sent = sys::send_with_fds(socket.as_raw_fd(), &[REQUEST], &passed)?;
    if sent != 1 {
        return Err(io::ErrorKind::WriteZero.into());
    }
    (&mut &*socket).write_all(&frame)
}

/// What the supervisor reads between runs.
pub enum Incoming {
    Request(Box<RunSpec>, PassedFds),
    /// The client closed the connection.
    Closed,
}

/// Reads the next request, skipping cancellations that arrived after their run ended.
pub fn receive_request(socket: &UnixStream) -> io::Result<Incoming> {
    loop {
        let mut tag = [0u8; 1];
        let (n, mut fds) = sys::recv_with_fds(socket.as_raw_fd(), &mut tag)?;
        if n == 0 {
            return Ok(Incoming::Closed);
        }
        match tag[0] {
            CANCEL => continue,
            REQUEST => {}
            other => return Err(invalid(format!("unknown message tag {other:#x}"))),
        }
        let Some(Frame { header, mut blobs }) = read_frame(socket)? else {
            return Err(io::ErrorKind::UnexpectedEof.into());
        };
        let mut spec: RunSpec = serde_json::from_slice(&header)?;
        if let Stdin::Bytes(bytes) = &mut spec.stdin {
            *bytes = blobs
                .pop()
                .ok_or_else(|| invalid("stdin bytes missing".into()))?;
        }
        // Descriptors arrive in order: stdin, stdout, stderr (each if passed).
        fds.reverse();
        let mut take = |wanted: bool| -> io::Result<Option<OwnedFd>> {
            if wanted {
                fds.pop()
                    .map(Some)
                    .ok_or_else(|| invalid("a passed descriptor is missing".into()))
            } else {
                Ok(None)
            }
        };
        let passed = PassedFds {
            stdin: take(spec.stdin == Stdin::Passed)?,
            stdout: take(spec.stdout.takes_descriptor())?,
            stderr: take(spec.stderr == crate::spec::Stderr::Passed)?,
        };
        return Ok(Incoming::Request(Box::new(spec), passed));
    }
}

/// Writes an outcome: its header as JSON, then stdout, stderr and the records' lines as
/// blobs (a record's line holds no newline, so the lines travel joined by newlines and the
/// header keeps only their stamps).
pub fn write_response(out: impl Write, outcome: &RunOutcome) -> io::Result<()> {
    let header = RunOutcome {
        stdout: Vec::new(),
        stderr: Vec::new(),
        records: outcome
            .records
            .iter()
            .map(|r| crate::spec::Record {
                line: Vec::new(),
                ..r.clone()
            })
            .collect(),
        ..outcome.clone()
    };
    let lines = outcome
        .records
        .iter()
        .map(|r| r.line.as_slice())
        .collect::<Vec<_>>()
        .join(&b'\n');
    write_frame(
        out,
        &serde_json::to_vec(&header)?,
        &[&outcome.stdout, &outcome.stderr, &lines],
    )
}

pub fn read_response(input: impl Read) -> io::Result<RunOutcome> {
    let Frame { header, mut blobs } =
        read_frame(input)?.ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    let mut outcome: RunOutcome = serde_json::from_slice(&header)?;
    if blobs.len() != 3 {
        return Err(invalid(format!("response with {} blobs", blobs.len())));
    }
    let lines = blobs.pop().unwrap();
    outcome.stderr = blobs.pop().unwrap();
    outcome.stdout = blobs.pop().unwrap();
    if !outcome.records.is_empty() {
        let mut lines = lines.split(|b| *b == b'\n');
        for record in &mut outcome.records {
            record.line = lines
                .next()
                .ok_or_else(|| invalid("a record's line is missing".into()))?
                .to_vec();
        }
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Status;
    use crate::spec::Stdout;

    fn received(socket: &UnixStream) -> (RunSpec, PassedFds) {
        match receive_request(socket).unwrap() {
            Incoming::Request(spec, fds) => (*spec, fds),
            Incoming::Closed => panic!("closed"),
        }
    }

    #[test]
    fn requests_round_trip_with_binary_stdin_and_stale_cancels_are_skipped() {
        let (client, supervisor) = UnixStream::pair().unwrap();
        let spec = RunSpec::new("/bin/cat").stdin(Stdin::Bytes(vec![0, 159, 146, 150, b'\n']));
        (&client).write_all(&[CANCEL]).unwrap();
        send_request(&client, &spec, &PassedFds::default()).unwrap();
        send_request(&client, &RunSpec::new("/bin/true"), &PassedFds::default()).unwrap();
        drop(client);
        assert_eq!(received(&supervisor).0, spec);
        assert_eq!(received(&supervisor).0, RunSpec::new("/bin/true"));
        assert!(matches!(
            receive_request(&supervisor).unwrap(),
            Incoming::Closed
        ));
    }

    #[test]
    fn passed_descriptors_travel_with_their_request() {
        let (client, supervisor) = UnixStream::pair().unwrap();
        let (read, write) = sys::pipe().unwrap();
        let spec = RunSpec {
            stdin: Stdin::Passed,
            stdout: Stdout::Passed,
            ..RunSpec::new("/bin/cat")
        };
        let fds = PassedFds {
            stdin: Some(read),
            stdout: Some(write),
            stderr: None,
        };
        send_request(&client, &spec, &fds).unwrap();
        drop(fds);
        let (got, passed) = received(&supervisor);
        assert_eq!(got, spec);
        // The received pair is the same pipe: what goes into stdout comes out of stdin.
        let (stdin, stdout) = (passed.stdin.unwrap(), passed.stdout.unwrap());
        sys::write_all(stdout.as_raw_fd(), b"through").unwrap();
        drop(stdout);
        assert_eq!(sys::read_to_end(stdin.as_raw_fd()).unwrap(), b"through");
    }

    #[test]
    fn responses_keep_output_bytes_exactly() {
        let mut outcome = RunOutcome::infrastructure(Status::LaunchFailure, "x");
        outcome.stdout = vec![0xff, 0xfe, b'a'];
        outcome.stderr = b"err".to_vec();
        outcome.records = ["{\"a\":1}", "", "last"]
            .iter()
            .enumerate()
            .map(|(i, line)| crate::spec::Record {
                line: line.as_bytes().to_vec(),
                cpu_time_us: i as u64,
                wall_time_us: 10,
                memory_kib: 20,
            })
            .collect();
        let mut wire = Vec::new();
        write_response(&mut wire, &outcome).unwrap();
        assert_eq!(read_response(wire.as_slice()).unwrap(), outcome);
    }

    #[test]
    fn truncated_frames_are_errors_not_hangs() {
        let mut wire = request_frame(&RunSpec::new("/bin/true")).unwrap();
        wire.truncate(wire.len() - 3);
        assert!(read_frame(wire.as_slice()).is_err());
        assert!(read_response(&[0xff, 0xff, 0xff, 0x7f][..]).is_err());
    }
}
