//! Who a run is: a uid and gid of its own per concurrent run slot.
//!
//! The kernel keeps several limits per user, not per process or cgroup: queued real-time
//! signals, pipe buffer pages, inotify instances, descriptors in flight over Unix sockets,
//! `RLIMIT_NPROC`. Runs that shared one uid would share those budgets, so one run could make a
//! legal concurrent program fail. Each supervisor (which serves one run at a time) therefore
//! holds a slot of an identity range for its whole life, and the range may not contain a host
//! account or group, so a file a run leaves behind (there are none, see `scratch`) or a process
//! it could signal never belongs to anyone real.

use std::path::Path;

/// The environment variable that overrides the default range, as `FIRST-LAST` (inclusive).
pub const RANGE_VARIABLE: &str = "ULTICODE_SANDBOX_UIDS";

/// A contiguous range of uids (each used as the gid too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdentityRange {
    first: u32,
    count: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    #[error(
        "{RANGE_VARIABLE} must look like FIRST-LAST with 1 <= FIRST <= LAST < 2^31, got {0:?}"
    )]
    Malformed(String),
    #[error("run identity {id} is the host's {kind} {name:?}; choose a range no host account or group uses ({RANGE_VARIABLE})")]
    HostAccount {
        id: u32,
        kind: &'static str,
        name: String,
    },
    #[error("all {0} run identities are in use: no more concurrent runs (widen {RANGE_VARIABLE})")]
    Exhausted(u32),
}

impl Default for IdentityRange {
    /// 61000–61999: above the usual system and user ranges, below `nobody`.
    fn default() -> Self {
        Self {
            first: 61_000,
            count: 1_000,
        }
    }
}

impl IdentityRange {
    pub fn parse(text: &str) -> Result<Self, IdentityError> {
        let malformed = || IdentityError::Malformed(text.to_string());
        let (first, last) = text.split_once('-').ok_or_else(malformed)?;
        let first: u32 = first.trim().parse().map_err(|_| malformed())?;
        let last: u32 = last.trim().parse().map_err(|_| malformed())?;
        if first == 0 || last < first || last >= 1 << 31 {
            return Err(malformed());
        }
        Ok(Self {
            first,
            count: last - first + 1,
        })
    }

    /// The range from [`RANGE_VARIABLE`], or the default.
    pub fn from_env() -> Result<Self, IdentityError> {
        match std::env::var(RANGE_VARIABLE) {
            Ok(text) => Self::parse(&text),
            Err(_) => Ok(Self::default()),
        }
    }

    pub fn first(&self) -> u32 {
        self.first
    }

    pub fn len(&self) -> u32 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn contains(&self, id: u32) -> bool {
        id >= self.first && id - self.first < self.count
    }

    /// Fails if an account in the host's `/etc/passwd` or a group in `/etc/group` falls in the
    /// range.
    pub fn check_host(&self) -> Result<(), IdentityError> {
        self.check_files(Path::new("/etc/passwd"), Path::new("/etc/group"))
    }

    fn check_files(&self, passwd: &Path, group: &Path) -> Result<(), IdentityError> {
        for (path, kind, column) in [(passwd, "account", 2), (group, "group", 2)] {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            for line in text.lines() {
                let fields: Vec<&str> = line.split(':').collect();
                let Some(id) = fields.get(column).and_then(|f| f.parse::<u32>().ok()) else {
                    continue;
                };
                if self.contains(id) {
                    return Err(IdentityError::HostAccount {
                        id,
                        kind,
                        name: fields[0].to_string(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// One concurrent run slot: its index in the range and its uid (= gid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub index: u32,
    pub uid: u32,
}

/// A slot held for as long as this value lives, machine-wide: every sandbox on the host
/// (embedded server, judge workers, CLI runs, test processes) claims from the same lock files,
/// so no two concurrent runs anywhere share a uid.
#[derive(Debug)]
pub struct ClaimedSlot {
    pub slot: Slot,
    _lock: std::fs::File,
}

impl IdentityRange {
    /// Claims the lowest free identity of the range by locking `<lock_dir>/<uid>`; the lock
    /// (and the slot) is released when the claim is dropped or the process dies.
    pub fn claim(&self, lock_dir: &Path) -> Result<ClaimedSlot, IdentityError> {
        use std::os::fd::AsRawFd;
        for index in 0..self.count {
            let uid = self.first + index;
            let Ok(file) = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(lock_dir.join(uid.to_string()))
            else {
                continue;
            };
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(ClaimedSlot {
                    slot: Slot { index, uid },
                    _lock: file,
                });
            }
        }
        Err(IdentityError::Exhausted(self.count))
    }

    /// `FIRST-LAST`, the form [`IdentityRange::parse`] reads.
    pub fn to_arg(&self) -> String {
        format!("{}-{}", self.first, self.first + self.count - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_refuse_nonsense() {
        assert_eq!(
            IdentityRange::parse("61000-61003"),
            Ok(IdentityRange {
                first: 61_000,
                count: 4
            })
        );
        for bad in ["", "5", "0-10", "10-5", "a-b", "1-4294967295"] {
            assert!(
                matches!(IdentityRange::parse(bad), Err(IdentityError::Malformed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_range_holding_a_host_account_or_group_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let passwd = dir.path().join("passwd");
        let group = dir.path().join("group");
        std::fs::write(
            &passwd,
            "root:x:0:0::/root:/bin/sh\nada:x:1000:1000::/home/ada:/bin/sh\n",
        )
        .unwrap();
        std::fs::write(&group, "root:x:0:\nstaff:x:2000:\n").unwrap();
        let range = |text| IdentityRange::parse(text).unwrap();
        assert_eq!(range("3000-3999").check_files(&passwd, &group), Ok(()));
        assert_eq!(
            range("900-1000").check_files(&passwd, &group),
            Err(IdentityError::HostAccount {
                id: 1000,
                kind: "account",
                name: "ada".into()
            })
        );
        assert!(matches!(
            range("1999-2001").check_files(&passwd, &group),
            Err(IdentityError::HostAccount { kind: "group", .. })
        ));
    }

    #[test]
    fn claims_are_the_lowest_free_slot_and_run_out_explicitly() {
        let locks = tempfile::tempdir().unwrap();
        let range = IdentityRange::parse("100-102").unwrap();
        let a = range.claim(locks.path()).unwrap();
        let b = range.claim(locks.path()).unwrap();
        assert_eq!((a.slot.uid, b.slot.uid), (100, 101));
        assert_eq!((a.slot.index, b.slot.index), (0, 1));
        drop(a);
        let c = range.claim(locks.path()).unwrap();
        assert_eq!(c.slot.uid, 100);
        let d = range.claim(locks.path()).unwrap();
        assert_eq!(d.slot.uid, 102);
        assert_eq!(
            range.claim(locks.path()).unwrap_err(),
            IdentityError::Exhausted(3)
        );
        assert_eq!(range.to_arg(), "100-102");
    }
}
