//! Back-off for failed logins, per client address and account.
//!
//! A stranger must not be able to lock anyone out: failures count against the pair (address,
//! account), never against the account alone, so another address (the owner's) is not slowed
//! down. The first failures are free; after them each further attempt from that address waits
//! twice as long as the one before (1 s, 2 s, 4 s ... up to 15 minutes), and a success clears
//! the pair. Keys are fixed-size digests, so neither long usernames nor many addresses can
//! grow the table's entries, and the table itself is pruned when it grows large.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// Failures allowed before the back-off starts.
const FREE_FAILURES: u32 = 5;
/// The longest wait.
const MAX_WAIT: Duration = Duration::from_secs(15 * 60);
/// Entries above this many are pruned (those whose back-off is over).
const MAX_ENTRIES: usize = 100_000;

#[derive(Clone, Default)]
pub struct LoginGuard {
    entries: Arc<Mutex<HashMap<[u8; 16], Entry>>>,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    until: Instant,
}

/// The key of one (address, account) pair.
pub fn pair(address: &str, username_key: &str) -> [u8; 16] {
    let digest = Sha256::new()
        .chain_update(address.as_bytes())
        .chain_update([0])
        .chain_update(username_key.as_bytes())
        .finalize();
    let mut key = [0u8; 16];
    key.copy_from_slice(&digest[..16]);
    key
}

impl LoginGuard {
    /// `Err(wait)` while the pair is backing off.
    pub fn check(&self, key: [u8; 16], now: Instant) -> Result<(), Duration> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        match entries.get(&key) {
            Some(entry) if entry.until > now => Err(entry.until - now),
            _ => Ok(()),
        }
    }

    pub fn failed(&self, key: [u8; 16], now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= MAX_ENTRIES {
            entries.retain(|_, entry| entry.until > now);
        }
        let entry = entries.entry(key).or_insert(Entry {
            failures: 0,
            until: now,
        });
        entry.failures += 1;
        if entry.failures >= FREE_FAILURES {
            let doublings = (entry.failures - FREE_FAILURES).min(20);
            entry.until = now + Duration::from_secs(1u64 << doublings).min(MAX_WAIT);
        }
    }

    pub fn succeeded(&self, key: [u8; 16]) {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_back_off_exponentially_per_pair_only() {
        let guard = LoginGuard::default();
        let start = Instant::now();
        let stranger = pair("203.0.113.9", "admin");
        let owner = pair("198.51.100.1", "admin");
        for _ in 0..FREE_FAILURES - 1 {
            assert_eq!(guard.check(stranger, start), Ok(()));
            guard.failed(stranger, start);
        }
        guard.failed(stranger, start);
        assert_eq!(guard.check(stranger, start), Err(Duration::from_secs(1)));
        guard.failed(stranger, start);
        assert_eq!(guard.check(stranger, start), Err(Duration::from_secs(2)));
        for _ in 0..30 {
            guard.failed(stranger, start);
        }
        assert_eq!(guard.check(stranger, start), Err(MAX_WAIT));
        // The account's owner, from another address, is never slowed down by the stranger.
        assert_eq!(guard.check(owner, start), Ok(()));
        guard.succeeded(stranger);
        assert_eq!(guard.check(stranger, start), Ok(()));
    }

    #[test]
    fn keys_have_a_fixed_size_whatever_the_username() {
        let long = "x".repeat(1 << 20);
        assert_ne!(pair("a", &long), pair("a", "x"));
        assert_ne!(pair("a", "bc"), pair("ab", "c"));
    }
}
