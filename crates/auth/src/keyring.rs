//! The signing keys: stored sealed when a key-encryption key is given, rotated with an
//! overlap, reloaded by every process.
//!
//! A row of `signing_keys` holds its Ed25519 secret either as 64 hex digits (no
//! key-encryption key configured) or sealed as `sealed:v1:` + hex(nonce ‖ ciphertext): XChaCha20-
//! Poly1305 under the key-encryption key, with the key id as associated data (a sealed secret
//! cannot be moved to another row). Opening the owner with a key-encryption key seals the
//! rows still in the clear. The newest row without `retire_at` signs; every row whose
//! `retire_at` is in the future (or absent) verifies. Rotation gives every current row a
//! `retire_at` far enough ahead that the tokens signed with it expire first.

use std::collections::HashMap;
use std::time::Duration;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use ed25519_dalek::VerifyingKey;
use platform::db::{Any, Row, Transaction};
use platform::{Db, DbError};

use crate::tokens::Key;

const SEALED: &str = "sealed:v1:";

/// How long a process may go on signing with a key after another process rotated it: the
/// keyring is reloaded at least this often.
pub const RELOAD_EVERY: Duration = Duration::from_secs(30);

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "the signing keys are encrypted at rest: give their key-encryption key \
         (ULTICODE_KEY_ENCRYPTION_KEY or --key-encryption-key-file)"
    )]
    Sealed,
    #[error("signing key {0} does not open with this key-encryption key")]
    WrongKey(String),
    #[error("signing key {0} is not stored in a known form")]
    Corrupt(String),
    #[error("a key-encryption key is 64 hex digits (32 bytes): {0}")]
    BadEncryptionKey(String),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for KeyError {
    fn from(e: sqlx::Error) -> Self {
        KeyError::Db(e.into())
    }
}

/// The 32-byte key that seals signing keys at rest. Never printed.
#[derive(Clone)]
pub struct KeyEncryptionKey([u8; 32]);

impl std::fmt::Debug for KeyEncryptionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyEncryptionKey(..)")
    }
}

impl KeyEncryptionKey {
    /// From 64 hex digits (surrounding whitespace ignored, as in a file).
    pub fn from_hex(text: &str) -> Result<Self, KeyError> {
        let text = text.trim();
        unhex(text)
            .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
            .map(Self)
            .ok_or_else(|| KeyError::BadEncryptionKey(format!("{} characters given", text.len())))
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&self.0.into())
    }
}

/// What one process holds of the keys.
pub(crate) struct Keyring {
    pub signing: Key,
    pub verifying: HashMap<String, VerifyingKey>,
    pub jwks: Vec<serde_json::Value>,
}

/// A signing key as stored: in the clear, or sealed under `kek`.
fn stored_secret(kid: &str, secret: &[u8; 32], kek: Option<&KeyEncryptionKey>) -> String {
    let Some(kek) = kek else {
        return hex(secret);
    };
    let nonce = crate::random_bytes::<24>();
    let sealed = kek
        .cipher()
        .encrypt(
            &XNonce::from(nonce),
            Payload {
                msg: secret,
                aad: kid.as_bytes(),
            },
        )
        .expect("XChaCha20-Poly1305 sealing does not fail");
    format!("{SEALED}{}{}", hex(&nonce), hex(&sealed))
}

fn open_secret(
    kid: &str,
    stored: &str,
    kek: Option<&KeyEncryptionKey>,
) -> Result<[u8; 32], KeyError> {
    let corrupt = || KeyError::Corrupt(kid.to_string());
    let Some(sealed) = stored.strip_prefix(SEALED) else {
        return unhex(stored)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(corrupt);
    };
    let kek = kek.ok_or(KeyError::Sealed)?;
    let bytes = unhex(sealed).ok_or_else(corrupt)?;
    if bytes.len() < 24 {
        return Err(corrupt());
    }
    let (nonce, ciphertext) = bytes.split_at(24);
    let nonce: [u8; 24] = nonce.try_into().map_err(|_| corrupt())?;
    let secret = kek
        .cipher()
        .decrypt(
            &XNonce::from(nonce),
            Payload {
                msg: ciphertext,
                aad: kid.as_bytes(),
            },
        )
        .map_err(|_| KeyError::WrongKey(kid.to_string()))?;
    secret.try_into().map_err(|_| corrupt())
}

/// Seals the rows still in the clear (a key-encryption key was given for the first time).
pub(crate) async fn seal_clear_keys(db: &Db, kek: &KeyEncryptionKey) -> Result<usize, KeyError> {
    let rows = db
        .query("SELECT kid, secret_hex FROM signing_keys")
        .fetch_all(db.pool())
        .await?;
    let mut sealed = 0;
    for row in rows {
        let (kid, stored): (String, String) = (row.try_get(0)?, row.try_get(1)?);
        if stored.starts_with(SEALED) {
            continue;
        }
        let secret = open_secret(&kid, &stored, None)?;
        db.query("UPDATE signing_keys SET secret_hex = $2 WHERE kid = $1 AND secret_hex = $3")
            .bind(kid.clone())
            .bind(stored_secret(&kid, &secret, Some(kek)))
            .bind(stored)
            .execute(db.pool())
            .await?;
        sealed += 1;
    }
    Ok(sealed)
}

/// Adds a new signing key (it signs from now on, being the newest).
pub(crate) async fn insert_key(
    db: &Db,
    kek: Option<&KeyEncryptionKey>,
) -> Result<String, KeyError> {
    let mut tx = db.begin().await?;
    let kid = insert_key_in(db, &mut tx, kek).await?;
    tx.commit().await?;
    Ok(kid)
}

async fn insert_key_in(
    db: &Db,
    tx: &mut Transaction<'static, Any>,
    kek: Option<&KeyEncryptionKey>,
) -> Result<String, KeyError> {
    let kid = hex(&crate::random_bytes::<8>());
    let secret = crate::random_bytes::<32>();
    db.query("INSERT INTO signing_keys (kid, secret_hex, created_at) VALUES ($1, $2, {now})")
        .bind(kid.clone())
        .bind(stored_secret(&kid, &secret, kek))
        .execute(&mut **tx)
        .await?;
    Ok(kid)
}

/// The keys as this process should hold them now; `None` when no key signs.
pub(crate) async fn load(
    db: &Db,
    kek: Option<&KeyEncryptionKey>,
) -> Result<Option<Keyring>, KeyError> {
    let rows = db
        .query(
            "SELECT kid, secret_hex, retire_at FROM signing_keys
             WHERE retire_at IS NULL OR retire_at > {now}
             ORDER BY created_at DESC, kid",
        )
        .fetch_all(db.pool())
        .await?;
    let mut signing = None;
    let (mut verifying, mut jwks) = (HashMap::new(), Vec::new());
    for row in rows {
        let kid: String = row.try_get(0)?;
        let stored: String = row.try_get(1)?;
        let retiring = row.try_get::<Option<i64>, _>(2)?.is_some();
        let key = Key::from_secret(kid.clone(), open_secret(&kid, &stored, kek)?);
        verifying.insert(kid, key.verifying());
        jwks.push(key.jwk());
        if !retiring && signing.is_none() {
            signing = Some(key);
        }
    }
    Ok(signing.map(|signing| Keyring {
        signing,
        verifying,
        jwks,
    }))
}

/// What a rotation did.
#[derive(Debug, Clone)]
pub struct Rotation {
    /// The key that signs from now on.
    pub new_kid: String,
    /// The keys that stop verifying at `retire_at_ms` (epoch milliseconds).
    pub retiring: Vec<String>,
    pub retire_at_ms: i64,
    /// Keys whose overlap had ended, deleted.
    pub removed: u64,
}

/// Rotates: the current keys verify for `overlap` more (then stop), a new key signs.
pub(crate) async fn rotate(
    db: &Db,
    kek: Option<&KeyEncryptionKey>,
    overlap: Duration,
) -> Result<Rotation, KeyError> {
    // One transaction: a crash never leaves every key retiring and none signing.
    let mut tx = db.begin().await?;
    let removed = db
        .query("DELETE FROM signing_keys WHERE retire_at IS NOT NULL AND retire_at <= {now}")
        .execute(&mut *tx)
        .await?
        .rows_affected();
    let retire_at_ms: i64 = db
        .query("SELECT {now} + $1")
        .bind(overlap.as_millis() as i64)
        .fetch_one(&mut *tx)
        .await?
        .try_get(0)?;
    let retiring: Vec<String> = db
        .query("UPDATE signing_keys SET retire_at = $1 WHERE retire_at IS NULL RETURNING kid")
        .bind(retire_at_ms)
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()?;
    let new_kid = insert_key_in(db, &mut tx, kek).await?;
    tx.commit().await?;
    Ok(Rotation {
        new_kid,
        retiring,
        retire_at_ms,
        removed,
    })
}

/// One line per stored key, newest first: id, creation, state, storage.
pub async fn describe(db: &Db) -> Result<Vec<String>, KeyError> {
    let rows = db
        .query(
            "SELECT kid, created_at, retire_at, secret_hex, {now} FROM signing_keys
             ORDER BY created_at DESC, kid",
        )
        .fetch_all(db.pool())
        .await?;
    let mut signing_seen = false;
    let mut lines = Vec::new();
    for row in rows {
        let (kid, created_at): (String, i64) = (row.try_get(0)?, row.try_get(1)?);
        let retire_at: Option<i64> = row.try_get(2)?;
        let stored: String = row.try_get(3)?;
        let now: i64 = row.try_get(4)?;
        let state = match retire_at {
            None if !signing_seen => {
                signing_seen = true;
                "signing".to_string()
            }
            None => "verifying".to_string(),
            Some(at) if at > now => format!("verifying until {at}"),
            Some(at) => format!("retired at {at}"),
        };
        let storage = if stored.starts_with(SEALED) {
            "sealed"
        } else {
            "in the clear"
        };
        lines.push(format!("{kid}  created {created_at}  {state}  {storage}"));
    }
    Ok(lines)
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_its_row() {
        let kek = KeyEncryptionKey::from_hex(&"ab".repeat(32)).unwrap();
        let other = KeyEncryptionKey::from_hex(&"cd".repeat(32)).unwrap();
        let secret = [7u8; 32];
        let stored = stored_secret("k1", &secret, Some(&kek));
        assert!(stored.starts_with(SEALED));
        assert!(!stored.contains(&hex(&secret)));
        assert_eq!(open_secret("k1", &stored, Some(&kek)).unwrap(), secret);
        assert!(matches!(
            open_secret("k1", &stored, Some(&other)),
            Err(KeyError::WrongKey(_))
        ));
        assert!(matches!(
            open_secret("k2", &stored, Some(&kek)),
            Err(KeyError::WrongKey(_))
        ));
        assert!(matches!(
            open_secret("k1", &stored, None),
            Err(KeyError::Sealed)
        ));
        // In the clear, with or without a key-encryption key.
        let clear = stored_secret("k1", &secret, None);
        assert_eq!(open_secret("k1", &clear, Some(&kek)).unwrap(), secret);
        assert_eq!(open_secret("k1", &clear, None).unwrap(), secret);
    }

    #[test]
    fn a_key_encryption_key_is_64_hex_digits() {
        assert!(KeyEncryptionKey::from_hex(&format!("{}\n", "0f".repeat(32))).is_ok());
        for bad in [
            "",
            "abc",
            &"zz".repeat(32),
            &"ab".repeat(31),
            &"ab".repeat(33),
        ] {
            assert!(KeyEncryptionKey::from_hex(bad).is_err(), "{bad}");
        }
        let kek = KeyEncryptionKey::from_hex(&"ab".repeat(32)).unwrap();
        assert_eq!(format!("{kek:?}"), "KeyEncryptionKey(..)");
    }
}
