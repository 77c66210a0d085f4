use std::collections::{BTreeMap, HashMap};

/// Each key's value and last use; uses ordered by time to find the oldest.
struct LRUCache {
    capacity: usize,
    clock: u64,
    values: HashMap<i32, (i32, u64)>,
    uses: BTreeMap<u64, i32>,
}

impl LRUCache {
    fn new(capacity: i32) -> Self {
        LRUCache { capacity: capacity as usize, clock: 0, values: HashMap::new(), uses: BTreeMap::new() }
    }

    fn touch(&mut self, key: i32) {
        self.clock += 1;
        if let Some((_, used)) = self.values.get_mut(&key) {
            self.uses.remove(used);
            *used = self.clock;
            self.uses.insert(self.clock, key);
        }
    }

    fn get(&mut self, key: i32) -> i32 {
        if !self.values.contains_key(&key) {
            return -1;
        }
        self.touch(key);
        self.values[&key].0
    }

    fn put(&mut self, key: i32, value: i32) {
        if let Some(entry) = self.values.get_mut(&key) {
            entry.0 = value;
        } else {
            self.values.insert(key, (value, 0));
            self.uses.insert(0, key);
        }
        self.touch(key);
        if self.values.len() > self.capacity {
            let (&used, &oldest) = self.uses.iter().next().unwrap();
            self.uses.remove(&used);
            self.values.remove(&oldest);
        }
    }
}
