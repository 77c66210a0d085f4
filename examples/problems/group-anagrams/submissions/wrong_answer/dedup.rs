use std::collections::{BTreeSet, HashMap};

impl Solution {
    pub fn group_anagrams(strs: Vec<String>) -> Vec<Vec<String>> {
        let mut groups: HashMap<Vec<u8>, BTreeSet<String>> = HashMap::new();
        for s in strs {
            let mut key = s.clone().into_bytes();
            key.sort_unstable();
            groups.entry(key).or_default().insert(s);
        }
        groups.into_values().map(|g| g.into_iter().collect()).collect()
    }
}
