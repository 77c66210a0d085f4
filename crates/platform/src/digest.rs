//! Request fingerprints for idempotency: the same key with a different payload must be
//! recognised as a conflict, never answered with the earlier result.

use sha2::{Digest, Sha256};

/// SHA-256 (hex) of `parts`, each length-prefixed so `["ab", "c"]` and `["a", "bc"]` differ.
pub fn fingerprint(parts: &[&[u8]]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_delimited() {
        assert_ne!(fingerprint(&[b"ab", b"c"]), fingerprint(&[b"a", b"bc"]));
        assert_eq!(fingerprint(&[b"x"]), fingerprint(&[b"x"]));
        assert_eq!(fingerprint(&[b"x"]).len(), 64);
    }
}
