//! What a supervisor holds for its runs besides its identity: the host-wide CPU claims its
//! runs are pinned by, and the network, IPC and UTS namespaces they join.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::Path;

use super::supervisor::{open_read, staging_dir};
use crate::sys;

/// The CPUs runs are pinned to: one run per CPU across every supervisor on the host while
/// there are enough. A run claims a free CPU (an exclusive lock on the CPU's file, held for the
/// run) starting from its slot's, so however many supervisors exist and whichever slots the
/// busy ones hold, concurrent runs spread over the CPUs. When every CPU is claimed the run is
/// not pinned at all: the scheduler places it and moves it to whichever CPU frees up first.
/// (Pinning by slot alone put two busy supervisors of slots 0 and 2 on one CPU of two while
/// the other idled; pinning a run that found every CPU claimed to its slot's kept it there
/// after the other CPU had emptied: 2–4% of a contest burst's CPU time was idle that way.)
pub(super) struct CpuClaims {
    /// Each allowed CPU with its lock file, in order.
    cpus: Vec<(u32, Option<std::fs::File>)>,
    /// Where a run's search starts: its slot's CPU.
    first: usize,
}

/// A claimed CPU, released when dropped.
pub(super) struct CpuClaim(RawFd);

/// Where a run goes.
pub(super) enum Placement {
    /// A CPU of its own, claimed until the placement is dropped.
    Own { cpu: u32, _claim: CpuClaim },
    /// Every CPU this process may use: all are claimed (or none can be).
    Shared,
}

impl Drop for CpuClaim {
    fn drop(&mut self) {
        // SAFETY: flock on a descriptor the supervisor keeps open for its life.
        unsafe { libc::flock(self.0, libc::LOCK_UN) };
    }
}

impl CpuClaims {
    /// The claims of the CPUs this process may use, shared with every supervisor on the host.
    pub(super) fn open(slot: usize) -> Self {
        let dir = staging_dir().map(|staging| staging.with_file_name("cpus"));
        let dir = dir.ok().filter(|dir| std::fs::create_dir_all(dir).is_ok());
        Self::in_dir(dir.as_deref(), super::allowed_cpus(), slot)
    }

    /// Claims of `cpus` through lock files in `dir` (none: every run is shared).
    fn in_dir(dir: Option<&Path>, cpus: Vec<u32>, slot: usize) -> Self {
        let cpus: Vec<_> = cpus
            .into_iter()
            .map(|cpu| {
                let file = dir.and_then(|dir| {
                    std::fs::File::options()
                        .create(true)
                        .truncate(false)
                        .write(true)
                        .open(dir.join(format!("cpu-{cpu}")))
                        .ok()
                });
                (cpu, file)
            })
            .collect();
        let first = if cpus.is_empty() {
            0
        } else {
            slot % cpus.len()
        };
        Self { cpus, first }
    }

    /// Every CPU this process may use, in order.
    pub(super) fn all(&self) -> impl Iterator<Item = u32> + '_ {
        self.cpus.iter().map(|(cpu, _)| *cpu)
    }

    /// Where the next run goes: the first free CPU from the slot's on, else shared.
    pub(super) fn claim(&self) -> Placement {
        let n = self.cpus.len();
        for k in 0..n {
            let (cpu, file) = &self.cpus[(self.first + k) % n];
            let Some(file) = file else { continue };
            // SAFETY: flock on a descriptor this supervisor owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Placement::Own {
                    cpu: *cpu,
                    _claim: CpuClaim(file.as_raw_fd()),
                };
            }
        }
        Placement::Shared
    }
}

/// The network, IPC and UTS namespaces this supervisor's runs join, one run at a time: made
/// once, when the supervisor starts, empty (no interface up, not even loopback; no IPC
/// object; the hostname `ulticode`).
/// Runs of different supervisors (all concurrent runs) never share them. A later run of the
/// same supervisor finds nothing the earlier left:
/// - a run has no capability to configure the network namespace (addresses, routes, sysctls),
///   and its sockets close with its processes, all of which are gone (the pid namespace's end)
///   before the next run starts;
/// - no profile's filter lets a run make an IPC object (SysV shared memory, semaphores,
///   message queues, POSIX message queues: the only things that outlive processes there);
/// - a run has no capability to change the hostname or domain name.
///
/// Making a network namespace per run cost ~430 µs, and its teardown another ~290 µs of a
/// kernel worker; an IPC namespace mounts an mqueue filesystem and registers sysctl tables.
pub(super) struct SharedNamespaces {
    net: OwnedFd,
    ipc: OwnedFd,
    uts: OwnedFd,
}

impl SharedNamespaces {
    pub(super) fn create() -> io::Result<Self> {
        Ok(Self {
            net: fresh_namespace(libc::CLONE_NEWNET, "net", || Ok(()))?,
            ipc: fresh_namespace(libc::CLONE_NEWIPC, "ipc", || Ok(()))?,
            uts: fresh_namespace(libc::CLONE_NEWUTS, "uts", || {
                let hostname = b"ulticode";
                // SAFETY: the buffer is valid for its length.
                sys::check(unsafe { libc::sethostname(hostname.as_ptr().cast(), hostname.len()) })
                    .map(drop)
            })?,
        })
    }

    /// Each namespace's descriptor and its `setns` type.
    pub(super) fn to_join(&self) -> [(RawFd, libc::c_int); 3] {
        [
            (self.net.as_raw_fd(), libc::CLONE_NEWNET),
            (self.ipc.as_raw_fd(), libc::CLONE_NEWIPC),
            (self.uts.as_raw_fd(), libc::CLONE_NEWUTS),
        ]
    }
}

/// A new namespace of `kind` (`name` in `/proc/self/ns`), made by entering it, `set_up` there,
/// and coming back.
fn fresh_namespace(
    kind: libc::c_int,
    name: &str,
    set_up: impl FnOnce() -> io::Result<()>,
) -> io::Result<OwnedFd> {
    let path = Path::new("/proc/self/ns").join(name);
    let home = open_read(&path)?;
    // SAFETY: unshare/setns with valid flags and a descriptor we own.
    unsafe { sys::check(libc::unshare(kind))? };
    let fresh = set_up().and_then(|()| open_read(&path));
    // SAFETY: as above.
    unsafe { sys::check(libc::setns(home.as_raw_fd(), kind))? };
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;

    fn own(placement: &Placement) -> Option<u32> {
        match placement {
            Placement::Own { cpu, .. } => Some(*cpu),
            Placement::Shared => None,
        }
    }

    #[test]
    fn concurrent_runs_spread_over_the_cpus_whatever_their_slots() {
        let dir = tempfile::tempdir().unwrap();
        let supervisor = |slot| CpuClaims::in_dir(Some(dir.path()), vec![4, 7], slot);
        // Slots 0 and 2 both start at the first CPU; the second run takes the other.
        let (first, second, third) = (supervisor(0), supervisor(2), supervisor(1));
        let held_first = first.claim();
        assert_eq!(own(&held_first), Some(4));
        let held_second = second.claim();
        assert_eq!(own(&held_second), Some(7));
        // Every CPU claimed: the run is shared, claiming nothing.
        assert_eq!(own(&third.claim()), None);
        drop(held_first);
        assert_eq!(own(&third.claim()), Some(4));
    }

    #[test]
    fn without_lock_files_every_run_is_shared() {
        let claims = CpuClaims::in_dir(None, vec![0, 1], 3);
        assert_eq!(own(&claims.claim()), None);
        assert_eq!(claims.all().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(own(&CpuClaims::in_dir(None, Vec::new(), 3).claim()), None);
    }
}
