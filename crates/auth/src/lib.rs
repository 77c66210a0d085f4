//! The Auth owner: accounts, Argon2id credentials, refresh-token families, roles, signing keys
//! and the JWKS. Other owners see it only through `contracts` (a verified `Principal`, the
//! `TokenVerifier`, `UserDirectory` and `AccountAdmin` ports).

mod guard;
pub mod http;
pub mod keyring;
pub mod password;
mod schema;
mod service;
pub mod tokens;

pub use http::{routes, AuthLimits};
pub use keyring::{KeyEncryptionKey, KeyError, Rotation};
pub use password::PasswordCost;
pub use service::{AuthConfig, AuthError, AuthService, EmailState, Session, VERIFIED_FOR};

/// `N` bytes from the operating system's CSPRNG.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the OS random source is available");
    bytes
}

/// A 256-bit random token, URL-safe.
pub(crate) fn random_token() -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random_bytes::<32>())
}
