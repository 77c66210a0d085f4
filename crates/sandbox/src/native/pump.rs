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
use crate::spec::{Record, Records, RunSpec};
use crate::sys;

/// The buffer a supervisor's pump reads every run's streams through, made once rather than
/// per run.
pub(super) struct PumpBuffer(Vec<u8>);

impl PumpBuffer {
    const LEN: usize = 64 * 1024;

    pub(super) fn new() -> Self {
        Self(vec![0; Self::LEN])
    }

    pub(super) fn bytes(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

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
    pub(super) records: Vec<Record>,
}

/// The supervisor's ends of a run's streams.
pub(super) struct Streams {
    /// `None` when stdout goes to a passed descriptor.
    pub(super) stdout: Option<OwnedFd>,
    /// The caller's file captured stdout is streamed into.
    pub(super) stdout_file: Option<OwnedFd>,
    /// `None` when stderr goes to a passed descriptor.
    pub(super) stderr: Option<OwnedFd>,
    /// The report channel's read end and its acknowledgements' write end.
    pub(super) records: Option<(OwnedFd, OwnedFd)>,
    /// The stdin pipe's write end and the bytes still to write.
    pub(super) stdin: Option<(OwnedFd, Vec<u8>)>,
}

/// The poll loop of one run: stdio, limits, and the init's exit.
pub(super) struct Pump<'a> {
    pid: libc::pid_t,
    cgroup: &'a RunCgroup,
    cap: usize,
    stderr_cap: usize,
    cpu_limit_us: u64,
    cpus: u64,
    started: Instant,
    deadline: Instant,
    control: RawFd,
    enforced: Option<EnforcedKill>,
    /// The report channel's budgets, when the run has one.
    records: Option<Records>,
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
            started,
            deadline: started + Duration::from_millis(spec.limits.wall_time_ms),
            control,
            enforced: None,
            records: spec.records,
        }
    }

    fn enforce(&mut self, reason: EnforcedKill) {
        if self.enforced.is_none() {
            self.enforced = Some(reason);
            sys::kill(self.pid, libc::SIGKILL);
        }
    }

    /// How long until the CPU budget (the run's, or the current record's) could be exhausted
    /// with every CPU busy.
    fn cpu_check_interval(&self, used_us: u64, channel: &RecordChannel) -> Duration {
        let run = self.cpu_limit_us.saturating_sub(used_us);
        let record = channel.budget_us().map_or(u64::MAX, |budget| {
            (channel.cpu_base_us + budget).saturating_sub(used_us)
        });
        let remaining = run.min(record) / self.cpus.max(1);
        Duration::from_micros(remaining.clamp(1_000, 100_000))
    }

    pub(super) fn run(
        mut self,
        buf: &mut [u8],
        streams: Streams,
        status: &OwnedFd,
        cancel: &OwnedFd,
    ) -> Pumped {
        let Streams {
            stdout,
            stdout_file,
            stderr,
            records,
            mut stdin,
        } = streams;
        let mut out = Stream::new(stdout, CaptureSink::new(stdout_file, self.cap));
        let mut err = Stream::new(stderr, CaptureSink::new(None, self.stderr_cap));
        let mut channel = RecordChannel::new(records, self.records, self.started);
        let mut stdin_written = 0usize;
        let mut client_gone = false;
        let mut cancel_sent = false;
        let mut report = None;
        let mut next_cpu_check = Instant::now() + Duration::from_millis(1);

        loop {
            let now = Instant::now();
            if now >= self.deadline || channel.wall_deadline().is_some_and(|d| now >= d) {
                self.enforce(EnforcedKill::WallTime);
            }
            if now >= next_cpu_check && self.enforced.is_none() {
                let used = self.cgroup.cpu_time_us().unwrap_or(0);
                if used > self.cpu_limit_us || channel.over_budget(used) {
                    self.enforce(EnforcedKill::CpuTime);
                }
                next_cpu_check = now + self.cpu_check_interval(used, &channel);
            }
            let timeout = if self.enforced.is_some() {
                Duration::from_millis(50)
            } else {
                let deadline = channel
                    .wall_deadline()
                    .map_or(self.deadline, |d| d.min(self.deadline));
                next_cpu_check.min(deadline).saturating_duration_since(now)
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
            let records_slot = channel.open.then(|| {
                fds.push(pollfd(channel.raw(), libc::POLLIN));
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

            if fired(out_slot) && out.pump(buf) {
                self.enforce(EnforcedKill::Output);
            }
            if fired(err_slot) && err.pump(buf) {
                self.enforce(EnforcedKill::Output);
            }
            if fired(records_slot) && channel.pump(buf, self.cgroup, self.started) {
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
        out.drain(buf);
        err.drain(buf);
        if channel.drain(buf, self.cgroup, self.started) {
            self.enforced.get_or_insert(EnforcedKill::Output);
        }
        Pumped {
            report,
            stdout: out.sink.finish(),
            stderr: err.sink.finish(),
            enforced: self.enforced,
            client_gone,
            records: channel.records,
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

/// The report channel of a run: records split at newlines, each stamped with the run's CPU
/// time, wall time and peak memory as it arrives, and the budget of the next one.
struct RecordChannel {
    fd: Option<OwnedFd>,
    /// Where each stamped record is acknowledged (one byte).
    ack: Option<OwnedFd>,
    budgets: Option<Records>,
    open: bool,
    /// The unfinished line.
    partial: Vec<u8>,
    records: Vec<Record>,
    /// CPU time at the previous record (the start before the first).
    cpu_base_us: u64,
    /// When the previous record arrived (the start before the first); `None` without budgets.
    wall_base: Option<Instant>,
    /// The CPU clock of the process that writes the records (found at the first record).
    writer_clock: Option<libc::clockid_t>,
    /// The stamp of the previous record: stamps never go back.
    last_stamp_us: u64,
}

impl RecordChannel {
    fn new(fds: Option<(OwnedFd, OwnedFd)>, budgets: Option<Records>, started: Instant) -> Self {
        let (fd, ack) = fds.unzip();
        Self {
            open: fd.is_some(),
            fd,
            ack,
            budgets,
            partial: Vec::new(),
            records: Vec::new(),
            cpu_base_us: 0,
            wall_base: budgets.map(|_| started),
            writer_clock: None,
            last_stamp_us: 0,
        }
    }

    /// The run's CPU time now, for a stamp. The cgroup's counter is brought up to date only
    /// at the scheduler's ticks and switches (every 4 ms at HZ=250) while its tasks run; the
    /// writer's process-wide CPU clock is exact (and a writer waiting for its
    /// acknowledgement is not running at all). The stamp is the larger of the two: exact for
    /// the writer, and never less than the whole tree's accounting.
    fn cpu_now_us(&mut self, cgroup: &RunCgroup) -> u64 {
        let tree = cgroup.cpu_time_us().unwrap_or(0);
        if self.writer_clock.is_none() {
            self.writer_clock = cgroup
                .processes()
                .ok()
                .and_then(|pids| pids.first().copied())
                .and_then(process_clock);
        }
        let writer = self.writer_clock.and_then(read_clock_us).unwrap_or(0);
        self.last_stamp_us = self.last_stamp_us.max(tree.max(writer));
        self.last_stamp_us
    }

    fn raw(&self) -> RawFd {
        self.fd.as_ref().map_or(-1, AsRawFd::as_raw_fd)
    }

    /// CPU time the next record may take.
    fn budget_us(&self) -> Option<u64> {
        let budgets = self.budgets?;
        let ms = if self.records.is_empty() {
            budgets.first_cpu_ms
        } else {
            budgets.cpu_ms
        };
        Some(ms * 1_000)
    }

    fn over_budget(&self, used_us: u64) -> bool {
        self.budget_us()
            .is_some_and(|budget| used_us > self.cpu_base_us + budget)
    }

    fn wall_deadline(&self) -> Option<Instant> {
        let budgets = self.budgets?;
        Some(self.wall_base? + Duration::from_millis(budgets.wall_ms))
    }

    /// Reads what is available; returns true when a record grew past its cap.
    fn pump(&mut self, buf: &mut [u8], cgroup: &RunCgroup, started: Instant) -> bool {
        match sys::read(self.raw(), buf) {
            Ok(Some(0)) | Err(_) => {
                self.open = false;
                false
            }
            Ok(None) => false,
            Ok(Some(n)) => self.take(&buf[..n], cgroup, started),
        }
    }

    /// Reads what is left once every writer is gone.
    fn drain(&mut self, buf: &mut [u8], cgroup: &RunCgroup, started: Instant) -> bool {
        let mut exceeded = false;
        while self.open {
            match sys::read(self.raw(), buf) {
                Ok(Some(n)) if n > 0 => exceeded |= self.take(&buf[..n], cgroup, started),
                _ => self.open = false,
            }
        }
        exceeded
    }

    fn take(&mut self, bytes: &[u8], cgroup: &RunCgroup, started: Instant) -> bool {
        let cap = self.budgets.map_or(usize::MAX, |b| {
            usize::try_from(b.max_record_bytes).unwrap_or(usize::MAX)
        });
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            self.partial.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            if self.partial.len() > cap {
                return true;
            }
            let now = Instant::now();
            let cpu_time_us = self.cpu_now_us(cgroup);
            self.records.push(Record {
                line: std::mem::take(&mut self.partial),
                cpu_time_us,
                wall_time_us: now.duration_since(started).as_micros() as u64,
                memory_kib: cgroup.peak_memory_bytes().unwrap_or(0) / 1024,
            });
            self.cpu_base_us = cpu_time_us;
            self.wall_base = Some(now);
            if let Some(ack) = &self.ack {
                // A program that does not read its acknowledgements fills the pipe; later
                // ones are dropped (it was not waiting for them).
                let _ = sys::write(ack.as_raw_fd(), b"+");
            }
        }
        self.partial.extend_from_slice(rest);
        self.partial.len() > cap
    }
}

/// The process-wide CPU clock of `pid`.
fn process_clock(pid: libc::pid_t) -> Option<libc::clockid_t> {
    let mut clock: libc::clockid_t = 0;
    // SAFETY: an out-pointer to a clockid_t.
    (unsafe { libc::clock_getcpuclockid(pid, &mut clock) } == 0).then_some(clock)
}

fn read_clock_us(clock: libc::clockid_t) -> Option<u64> {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: an out-pointer to a timespec.
    (unsafe { libc::clock_gettime(clock, &mut time) } == 0)
        .then(|| time.tv_sec as u64 * 1_000_000 + time.tv_nsec as u64 / 1_000)
}
