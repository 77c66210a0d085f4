//! Frames between the sandbox client and a supervisor process over a Unix socket.
//!
//! A frame is a JSON header plus raw byte blobs, so program input and output travel unchanged
//! (no base64, no UTF-8 requirement):
//! `u32 header_len | header | u32 blob_count | (u64 len | bytes)*`, little-endian.

use std::io::{self, Read, Write};

use crate::outcome::RunOutcome;
use crate::spec::{RunSpec, Stdin};

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

pub fn write_request(out: impl Write, spec: &RunSpec) -> io::Result<()> {
    match &spec.stdin {
        Stdin::Bytes(bytes) => {
            let header = RunSpec {
                stdin: Stdin::Bytes(Vec::new()),
                ..spec.clone()
            };
            write_frame(out, &serde_json::to_vec(&header)?, &[bytes])
        }
        _ => write_frame(out, &serde_json::to_vec(spec)?, &[]),
    }
}

pub fn read_request(input: impl Read) -> io::Result<Option<RunSpec>> {
    let Some(Frame { header, mut blobs }) = read_frame(input)? else {
        return Ok(None);
    };
    let mut spec: RunSpec = serde_json::from_slice(&header)?;
    if let Stdin::Bytes(bytes) = &mut spec.stdin {
        *bytes = blobs
            .pop()
            .ok_or_else(|| invalid("stdin bytes missing".into()))?;
    }
    Ok(Some(spec))
}

pub fn write_response(out: impl Write, outcome: &RunOutcome) -> io::Result<()> {
    let header = RunOutcome {
        stdout: Vec::new(),
        stderr: Vec::new(),
        ..outcome.clone()
    };
    write_frame(
        out,
        &serde_json::to_vec(&header)?,
        &[&outcome.stdout, &outcome.stderr],
    )
}

pub fn read_response(input: impl Read) -> io::Result<RunOutcome> {
    let Frame { header, mut blobs } =
        read_frame(input)?.ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
    let mut outcome: RunOutcome = serde_json::from_slice(&header)?;
    if blobs.len() != 2 {
        return Err(invalid(format!("response with {} blobs", blobs.len())));
    }
    outcome.stderr = blobs.pop().unwrap();
    outcome.stdout = blobs.pop().unwrap();
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::Status;

    #[test]
    fn requests_round_trip_with_binary_stdin() {
        let spec = RunSpec::new("/bin/cat").stdin(Stdin::Bytes(vec![0, 159, 146, 150, b'\n']));
        let mut wire = Vec::new();
        write_request(&mut wire, &spec).unwrap();
        write_request(&mut wire, &RunSpec::new("/bin/true")).unwrap();
        let mut input = wire.as_slice();
        assert_eq!(read_request(&mut input).unwrap(), Some(spec));
        assert_eq!(
            read_request(&mut input).unwrap(),
            Some(RunSpec::new("/bin/true"))
        );
        assert_eq!(read_request(&mut input).unwrap(), None);
    }

    #[test]
    fn responses_keep_output_bytes_exactly() {
        let mut outcome = RunOutcome::infrastructure(Status::LaunchFailure, "x");
        outcome.stdout = vec![0xff, 0xfe, b'a'];
        outcome.stderr = b"err".to_vec();
        let mut wire = Vec::new();
        write_response(&mut wire, &outcome).unwrap();
        assert_eq!(read_response(wire.as_slice()).unwrap(), outcome);
    }

    #[test]
    fn truncated_frames_are_errors_not_hangs() {
        let mut wire = Vec::new();
        write_request(&mut wire, &RunSpec::new("/bin/true")).unwrap();
        wire.truncate(wire.len() - 3);
        assert!(read_request(wire.as_slice()).is_err());
        assert!(read_response(&[0xff, 0xff, 0xff, 0x7f][..]).is_err());
    }
}
