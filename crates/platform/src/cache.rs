//! Reads answered from memory while nothing says they changed. An owner keeps the views it
//! reads most often here and forgets a key whenever it learns of a change: its own writes at
//! once, other processes' through a change feed, anything else after a maximum age the reader
//! chooses on every read (so a reader that cannot trust its feed can ask for younger entries).
//!
//! A read that raced a change must never be stored: take a [`Ticket`] for the key before
//! reading the database and [`ReadCache::store`] with it afterwards; a forget of that key (or
//! of everything) in between voids the store. Keys are counted in stripes, so a busy key's
//! changes void the stores of few others, and a slow read is not voided by the churn of keys
//! it never read.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hash};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A bounded map of recently read values.
pub struct ReadCache<K, V> {
    inner: Mutex<Inner<K, V>>,
    capacity: usize,
    stripes_of: RandomState,
}

/// Stripes keys are counted in.
const STRIPES: usize = 256;

struct Inner<K, V> {
    entries: HashMap<K, Entry<V>>,
    /// Forgets of everything so far.
    forgets_of_all: u64,
    /// Forgets of single keys so far, per stripe.
    forgets: [u64; STRIPES],
}

struct Entry<V> {
    value: V,
    stored: Instant,
}

/// Taken before a read whose result may be stored: the forgets counted then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct Ticket {
    of_all: u64,
    stripe: usize,
    of_stripe: u64,
}

impl<K: Eq + Hash + Clone, V: Clone> ReadCache<K, V> {
    /// A cache of at most `capacity` entries (the oldest goes first).
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                entries: HashMap::new(),
                forgets_of_all: 0,
                forgets: [0; STRIPES],
            }),
            capacity: capacity.max(1),
            stripes_of: RandomState::new(),
        }
    }

    fn stripe(&self, key: &K) -> usize {
        (self.stripes_of.hash_one(key) % STRIPES as u64) as usize
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<K, V>> {
        // A panic while holding the lock leaves a consistent map (every step is one call).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value stored for `key`, if it was stored less than `max_age` ago.
    pub fn get(&self, key: &K, max_age: Duration) -> Option<V> {
        let inner = self.lock();
        let entry = inner.entries.get(key)?;
        (entry.stored.elapsed() < max_age).then(|| entry.value.clone())
    }

    /// To be taken before reading what may then be stored for `key`.
    pub fn ticket(&self, key: &K) -> Ticket {
        let stripe = self.stripe(key);
        let inner = self.lock();
        Ticket {
            of_all: inner.forgets_of_all,
            stripe,
            of_stripe: inner.forgets[stripe],
        }
    }

    /// Stores `value` for `key` unless `key` (or everything) was forgotten since `ticket` was
    /// taken for it (the value may predate that change). Returns whether it was stored.
    pub fn store(&self, ticket: Ticket, key: K, value: V) -> bool {
        let stripe = self.stripe(&key);
        let mut inner = self.lock();
        if stripe != ticket.stripe
            || inner.forgets_of_all != ticket.of_all
            || inner.forgets[stripe] != ticket.of_stripe
        {
            return false;
        }
        if inner.entries.len() >= self.capacity && !inner.entries.contains_key(&key) {
            let oldest = inner
                .entries
                .iter()
                .min_by_key(|(_, entry)| entry.stored)
                .map(|(key, _)| key.clone());
            if let Some(oldest) = oldest {
                inner.entries.remove(&oldest);
            }
        }
        inner.entries.insert(
            key,
            Entry {
                value,
                stored: Instant::now(),
            },
        );
        true
    }

    /// `key` changed.
    pub fn forget(&self, key: &K) {
        let stripe = self.stripe(key);
        let mut inner = self.lock();
        inner.forgets[stripe] += 1;
        inner.entries.remove(key);
    }

    /// Anything may have changed.
    pub fn forget_all(&self) {
        let mut inner = self.lock();
        inner.forgets_of_all += 1;
        inner.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LONG: Duration = Duration::from_secs(3600);

    #[test]
    fn a_stored_value_is_read_back_until_forgotten() {
        let cache = ReadCache::new(8);
        let ticket = cache.ticket(&1);
        assert!(cache.store(ticket, 1, "one"));
        assert_eq!(cache.get(&1, LONG), Some("one"));
        cache.forget(&1);
        assert_eq!(cache.get(&1, LONG), None);
    }

    #[test]
    fn a_read_that_raced_a_change_is_not_stored() {
        // Each case: what happens between the ticket and the store.
        type Change = fn(&ReadCache<i32, &str>);
        let cases: [(&str, Change); 2] = [
            ("the key changed", |c| c.forget(&1)),
            ("everything changed", |c| c.forget_all()),
        ];
        for (case, change) in cases {
            let cache = ReadCache::new(8);
            let ticket = cache.ticket(&1);
            change(&cache);
            assert!(!cache.store(ticket, 1, "stale"), "{case}");
            assert_eq!(cache.get(&1, LONG), None, "{case}");
            assert!(cache.store(cache.ticket(&1), 1, "fresh"), "{case}");
            assert_eq!(cache.get(&1, LONG), Some("fresh"), "{case}");
        }
    }

    #[test]
    fn other_keys_changing_void_few_reads() {
        // A slow read while a thousand other keys change: only those sharing its stripe
        // void it, so most such reads are kept.
        let mut kept = 0;
        for key in 0..100 {
            let cache = ReadCache::new(8);
            let ticket = cache.ticket(&key);
            for other in 1000..1010 {
                cache.forget(&other);
            }
            kept += usize::from(cache.store(ticket, key, key));
        }
        assert!(kept >= 80, "{kept} of 100 reads kept");
    }

    #[test]
    fn a_ticket_is_good_only_for_its_key() {
        let cache = ReadCache::new(8);
        let ticket = cache.ticket(&1);
        let other = (2..).find(|k| cache.stripe(k) != cache.stripe(&1)).unwrap();
        assert!(!cache.store(ticket, other, "elsewhere"));
        assert!(cache.store(ticket, 1, "here"));
    }

    #[test]
    fn an_entry_older_than_the_readers_bound_is_not_answered() {
        let cache = ReadCache::new(8);
        assert!(cache.store(cache.ticket(&1), 1, "one"));
        assert_eq!(cache.get(&1, Duration::ZERO), None);
        assert_eq!(cache.get(&1, LONG), Some("one"));
    }

    #[test]
    fn a_full_cache_gives_up_its_oldest_entry() {
        let cache = ReadCache::new(3);
        for key in 0..3 {
            assert!(cache.store(cache.ticket(&key), key, key * 10));
            std::thread::sleep(Duration::from_millis(2));
        }
        assert!(cache.store(cache.ticket(&3), 3, 30));
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&0, LONG), None);
        for key in 1..4 {
            assert_eq!(cache.get(&key, LONG), Some(key * 10));
        }
        // Storing a key again replaces it without evicting another.
        assert!(cache.store(cache.ticket(&3), 3, 31));
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&3, LONG), Some(31));
    }

    #[test]
    fn forget_all_empties_the_cache() {
        let cache = ReadCache::new(8);
        for key in 0..5 {
            assert!(cache.store(cache.ticket(&key), key, key));
        }
        cache.forget_all();
        assert!(cache.is_empty());
    }
}
