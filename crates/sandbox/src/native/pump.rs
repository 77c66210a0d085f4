//! The poll loop of one run: stdio with byte caps, the CPU and wall-clock limits, the
//! client's cancel, and init's report.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::{Duration, Instant};

use super::child;
use crate::capture::{CaptureSink, Captured};
use crate::cgroup::RunCgroup;
use crate::outcome::EnforcedKill;
use crate::protocol;
use crate::spec::RunSpec;
use crate::sys;

/// What the poll loop observed.
pub(super) struct Pumped {
    /// Init's report, made once the whole tree was gone.
    pub(super) report: Option<child::Report>,
    /// The streams' captures; an error means kept bytes could not be written to the caller's
    /// file.
    pub(super) stdout: io::Result<Captured>,
    pub(super) stderr: io::Result<Captured>,
    pub(super) enforced: Option<EnforcedKill>,
    pub(super) client_gone: bool,
}

/// The poll loop of one run: stdio, limits, and the init's exit.
pub(super) struct Pump<'a> {
    pid: libc::pid_t,
    cgroup: &'a RunCgroup,
    cap: usize,
    stderr_cap: usize,
    cpu_limit_us: u64,
    cpus: u64,
    deadline: Instant,
    control: RawFd,
    enforced: Option<EnforcedKill>,
}

impl<'a> Pump<'a> {
    pub(super) fn new(
        spec: &RunSpec,
        pid: libc::pid_t,
        cgroup: &'a RunCgroup,
        cpus: u64,
        started: Instant,
        control: RawFd,
    ) -> Self {
        Self {
            pid,
            cgroup,
            cap: usize::try_from(spec.limits.output_bytes).unwrap_or(usize::MAX),
            stderr_cap: usize::try_from(spec.limits.stderr_bytes).unwrap_or(usize::MAX),
            cpu_limit_us: spec.limits.cpu_time_ms * 1_000,
            cpus,
            deadline: started + Duration::from_millis(spec.limits.wall_time_ms),
            control,
            enforced: None,
        }
    }

    fn enforce(&mut self, reason: EnforcedKill) {
        if self.enforced.is_none() {
            self.enforced = Some(reason);
            sys::kill(self.pid, libc::SIGKILL);
        }
    }

    /// How long until the CPU budget could be exhausted with every CPU busy.
    fn cpu_check_interval(&self, used_us: u64) -> Duration {
        let remaining = self.cpu_limit_us.saturating_sub(used_us) / self.cpus.max(1);
        Duration::from_micros(remaining.clamp(1_000, 100_000))
    }

    pub(super) fn run(
        mut self,
        stdout: Option<OwnedFd>,
        stdout_file: Option<OwnedFd>,
        stderr: OwnedFd,
        mut stdin: Option<(OwnedFd, Vec<u8>)>,
        status: &OwnedFd,
        cancel: &OwnedFd,
    ) -> Pumped {
        let mut out = Stream::new(stdout, CaptureSink::new(stdout_file, self.cap));
        let mut err = Stream::new(Some(stderr), CaptureSink::new(None, self.stderr_cap));
        let mut stdin_written = 0usize;
        let mut client_gone = false;
        let mut cancel_sent = false;
        let mut report = None;
        let mut next_cpu_check = Instant::now() + Duration::from_millis(1);
        let mut buf = vec![0u8; 64 * 1024];

        loop {
            let now = Instant::now();
            if now >= self.deadline {
                self.enforce(EnforcedKill::WallTime);
            }
            if now >= next_cpu_check && self.enforced.is_none() {
                let used = self.cgroup.cpu_time_us().unwrap_or(0);
                if used > self.cpu_limit_us {
                    self.enforce(EnforcedKill::CpuTime);
                }
                next_cpu_check = now + self.cpu_check_interval(used);
            }
            let timeout = if self.enforced.is_some() {
                Duration::from_millis(50)
            } else {
                next_cpu_check
                    .min(self.deadline)
                    .saturating_duration_since(now)
            };

            // The status pipe becomes readable with init's report, or hangs up when init dies.
            let mut fds = vec![pollfd(status.as_raw_fd(), libc::POLLIN)];
            let out_slot = out.open.then(|| {
                fds.push(pollfd(out.raw(), libc::POLLIN));
                fds.len() - 1
            });
            let err_slot = err.open.then(|| {
                fds.push(pollfd(err.raw(), libc::POLLIN));
                fds.len() - 1
            });
            let stdin_slot = stdin.as_ref().map(|(fd, _)| {
                fds.push(pollfd(fd.as_raw_fd(), libc::POLLOUT));
                fds.len() - 1
            });
            let control_slot = (!client_gone).then(|| {
                fds.push(pollfd(self.control, libc::POLLIN | libc::POLLRDHUP));
                fds.len() - 1
            });
            let millis = timeout.as_millis().clamp(1, 100_000) as libc::c_int;
            // SAFETY: `fds` is a valid array of pollfd for its length.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
            if ready < 0 {
                continue;
            }
            let fired = |slot: Option<usize>| slot.is_some_and(|i| fds[i].revents != 0);

            if fired(out_slot) && out.pump(&mut buf) {
                self.enforce(EnforcedKill::Output);
            }
            if fired(err_slot) && err.pump(&mut buf) {
                self.enforce(EnforcedKill::Output);
            }
            if fired(stdin_slot) {
                let (fd, bytes) = stdin.as_ref().expect("slot exists");
                match sys::write(fd.as_raw_fd(), &bytes[stdin_written..]) {
                    Ok(Some(n)) => stdin_written += n,
                    Ok(None) => {}
                    Err(_) => stdin_written = bytes.len(),
                }
                if stdin_written >= bytes.len() {
                    stdin = None;
                }
            }
            if fired(control_slot) {
                let mut message = [0u8; 1];
                match sys::read(self.control, &mut message) {
                    // Init decides whether the cancellation or the program's own exit came
                    // first; it needs to hear of it once.
                    Ok(Some(1)) if message[0] == protocol::CANCEL => {
                        if !cancel_sent {
                            cancel_sent = true;
                            let _ = sys::write(cancel.as_raw_fd(), &[protocol::CANCEL]);
                        }
                    }
                    // End of stream or garbage: nobody is waiting for this run any more.
                    _ => {
                        client_gone = true;
                        sys::kill(self.pid, libc::SIGKILL);
                    }
                }
            }
            if fds[0].revents != 0 {
                let mut bytes = [0u8; child::Report::LEN];
                if let Ok(Some(child::Report::LEN)) = sys::read(status.as_raw_fd(), &mut bytes) {
                    report = Some(child::Report::decode(&bytes));
                }
                break;
            }
        }
        // Every process of the run is gone; whatever is still buffered is the tail of the output.
        out.drain(&mut buf);
        err.drain(&mut buf);
        Pumped {
            report,
            stdout: out.sink.finish(),
            stderr: err.sink.finish(),
            enforced: self.enforced,
            client_gone,
        }
    }
}

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

/// One captured output stream.
struct Stream {
    /// `None` for a stream that is not captured (it went to a passed descriptor).
    fd: Option<OwnedFd>,
    sink: CaptureSink,
    open: bool,
}

impl Stream {
    fn new(fd: Option<OwnedFd>, sink: CaptureSink) -> Self {
        Self {
            open: fd.is_some(),
            fd,
            sink,
        }
    }

    fn raw(&self) -> RawFd {
        self.fd.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// Reads what is available; returns true when this read first crossed the cap.
    fn pump(&mut self, buf: &mut [u8]) -> bool {
        match sys::read(self.raw(), buf) {
            Ok(Some(0)) | Err(_) => {
                self.open = false;
                false
            }
            Ok(None) => false,
            Ok(Some(n)) => self.sink.keep(&buf[..n]),
        }
    }

    /// Reads what is left once every writer is gone.
    fn drain(&mut self, buf: &mut [u8]) {
        while self.open {
            match sys::read(self.raw(), buf) {
                Ok(Some(n)) if n > 0 => {
                    self.sink.keep(&buf[..n]);
                }
                _ => self.open = false,
            }
        }
    }
}
