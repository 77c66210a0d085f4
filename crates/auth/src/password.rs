//! Argon2id password hashing, run on the blocking pool so a login never stalls the async
//! threads, and with a fixed decoy hash so an unknown username costs as much as a wrong password.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

/// Argon2id cost parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasswordCost {
    pub memory_kib: u32,
    pub iterations: u32,
    pub parallelism: u32,
}

impl Default for PasswordCost {
    /// OWASP's recommended Argon2id minimum (19 MiB, 2 passes, 1 lane).
    fn default() -> Self {
        Self {
            memory_kib: 19 * 1024,
            iterations: 2,
            parallelism: 1,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    #[error("password hashing failed: {0}")]
    Hash(String),
    #[error("the hashing task failed: {0}")]
    Task(String),
}

#[derive(Clone)]
pub struct Passwords {
    cost: PasswordCost,
    /// A hash of a random password nobody knows, verified against when the user is unknown.
    decoy: String,
}

fn hasher(cost: PasswordCost) -> Result<Argon2<'static>, PasswordError> {
    let params = Params::new(cost.memory_kib, cost.iterations, cost.parallelism, None)
        .map_err(|e| PasswordError::Hash(e.to_string()))?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

fn hash_now(cost: PasswordCost, password: &str) -> Result<String, PasswordError> {
    let salt = SaltString::encode_b64(&crate::random_bytes::<16>())
        .map_err(|e| PasswordError::Hash(e.to_string()))?;
    Ok(hasher(cost)?
        .hash_password(password.as_bytes(), &salt)
        .map_err(|e| PasswordError::Hash(e.to_string()))?
        .to_string())
}

impl Passwords {
    pub fn new(cost: PasswordCost) -> Result<Self, PasswordError> {
        let decoy = hash_now(cost, &crate::random_token())?;
        Ok(Self { cost, decoy })
    }

    pub async fn hash(&self, password: String) -> Result<String, PasswordError> {
        let cost = self.cost;
        tokio::task::spawn_blocking(move || hash_now(cost, &password))
            .await
            .map_err(|e| PasswordError::Task(e.to_string()))?
    }

    /// Whether `password` matches `stored`; with `stored = None` (unknown user) the decoy is
    /// verified instead and the answer is always false.
    pub async fn verify(
        &self,
        password: String,
        stored: Option<String>,
    ) -> Result<bool, PasswordError> {
        let known = stored.is_some();
        let stored = stored.unwrap_or_else(|| self.decoy.clone());
        let cost = self.cost;
        let matched = tokio::task::spawn_blocking(move || {
            let parsed =
                PasswordHash::new(&stored).map_err(|e| PasswordError::Hash(e.to_string()))?;
            Ok::<_, PasswordError>(
                hasher(cost)?
                    .verify_password(password.as_bytes(), &parsed)
                    .is_ok(),
            )
        })
        .await
        .map_err(|e| PasswordError::Task(e.to_string()))??;
        Ok(known && matched)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cheap() -> PasswordCost {
        PasswordCost {
            memory_kib: 1024,
            iterations: 1,
            parallelism: 1,
        }
    }

    #[tokio::test]
    async fn hashes_are_argon2id_salted_and_verify() {
        let passwords = Passwords::new(cheap()).unwrap();
        let a = passwords.hash("correct horse".into()).await.unwrap();
        let b = passwords.hash("correct horse".into()).await.unwrap();
        assert!(a.starts_with("$argon2id$v=19$m=1024,t=1,p=1$"), "{a}");
        assert_ne!(a, b, "salted");
        assert!(passwords
            .verify("correct horse".into(), Some(a.clone()))
            .await
            .unwrap());
        assert!(!passwords
            .verify("wrong".into(), Some(a.clone()))
            .await
            .unwrap());
        assert!(!passwords
            .verify("correct horse".into(), None)
            .await
            .unwrap());
    }
}
