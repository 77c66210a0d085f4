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
    #[error("{RANGE_VARIABLE} must look like FIRST-LAST with 1 <= FIRST <= LAST < 2^31, got {0:?}")]
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

/// Which identities of a range are held by live supervisors.
#[derive(Debug)]
pub(crate) struct Slots {
    range: IdentityRange,
    taken: Vec<bool>,
}

impl Slots {
    pub(crate) fn new(range: IdentityRange) -> Self {
        Self {
            range,
            taken: vec![false; range.count as usize],
        }
    }

    /// The lowest free identity (so slot numbers, and the CPUs derived from them, stay small).
    pub(crate) fn take(&mut self) -> Result<Slot, IdentityError> {
        let index = self
            .taken
            .iter()
            .position(|taken| !taken)
            .ok_or(IdentityError::Exhausted(self.range.count))?;
        self.taken[index] = true;
        Ok(Slot {
            index: index as u32,
            uid: self.range.first + index as u32,
        })
    }

    pub(crate) fn give_back(&mut self, slot: Slot) {
        self.taken[slot.index as usize] = false;
    }
}

/// One concurrent run slot: its index in the range and its uid (= gid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub index: u32,
    pub uid: u32,
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
        std::fs::write(&passwd, "root:x:0:0::/root:/bin/sh\nada:x:1000:1000::/home/ada:/bin/sh\n")
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
    fn slots_are_the_lowest_free_and_run_out_explicitly() {
        let mut slots = Slots::new(IdentityRange::parse("100-102").unwrap());
        let a = slots.take().unwrap();
        let b = slots.take().unwrap();
        assert_eq!((a.uid, b.uid), (100, 101));
        slots.give_back(a);
        assert_eq!(slots.take().unwrap().uid, 100);
        assert_eq!(slots.take().unwrap().uid, 102);
        assert_eq!(slots.take(), Err(IdentityError::Exhausted(3)));
    }
}
