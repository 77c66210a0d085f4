//! Access tokens: compact JWS signed with Ed25519 (`alg: EdDSA`), a `kid` naming the key.
//!
//! Verification is deliberately narrow: the header must say exactly `EdDSA` and name a key we
//! hold; the signature is checked with that key only (there is no way to make us use a
//! symmetric key or no key); then issuer, audience, token type and expiry. Nothing in the token
//! is trusted before its signature verifies.

use std::collections::HashMap;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use contracts::{Role, TokenRejection, UserId};
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};

/// The only algorithm we sign with and accept.
pub const ALGORITHM: &str = "EdDSA";
/// The `typ` claim of access tokens (refresh tokens are opaque and never JWTs).
pub const ACCESS_TYPE: &str = "access";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub alg: String,
    #[serde(default)]
    pub typ: Option<String>,
    #[serde(default)]
    pub kid: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    pub iss: String,
    pub aud: String,
    /// The user id, as a string per RFC 7519.
    pub sub: String,
    pub name: String,
    pub role: Role,
    /// The account's `authz_version` when the token was issued.
    pub av: i64,
    pub typ: String,
    pub iat: i64,
    pub exp: i64,
    pub jti: String,
    /// The session (refresh-token family) the token was issued to: ending the session ends
    /// the token too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
}

impl Claims {
    pub fn user_id(&self) -> Result<UserId, TokenRejection> {
        self.sub
            .parse()
            .map(UserId)
            .map_err(|_| TokenRejection::Malformed)
    }
}

/// One signing key.
#[derive(Clone)]
pub struct Key {
    pub kid: String,
    signing: SigningKey,
}

impl Key {
    pub fn from_secret(kid: String, secret: [u8; 32]) -> Self {
        Self {
            kid,
            signing: SigningKey::from_bytes(&secret),
        }
    }

    pub fn secret(&self) -> [u8; 32] {
        self.signing.to_bytes()
    }

    pub fn verifying(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    /// The key as a JWK (public part only).
    pub fn jwk(&self) -> serde_json::Value {
        serde_json::json!({
            "kty": "OKP",
            "crv": "Ed25519",
            "alg": ALGORITHM,
            "use": "sig",
            "kid": self.kid,
            "x": URL_SAFE_NO_PAD.encode(self.verifying().as_bytes()),
        })
    }
}

fn encode_part<T: Serialize>(value: &T) -> String {
    URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).expect("token parts serialise"))
}

/// Signs `claims` with `key`.
pub fn sign(key: &Key, claims: &Claims) -> String {
    let header = Header {
        alg: ALGORITHM.into(),
        typ: Some("JWT".into()),
        kid: Some(key.kid.clone()),
    };
    let signing_input = format!("{}.{}", encode_part(&header), encode_part(claims));
    let signature = key.signing.sign(signing_input.as_bytes());
    format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    )
}

/// What a verifier expects besides a good signature.
#[derive(Debug, Clone)]
pub struct Expectations {
    pub issuer: String,
    pub audience: String,
}

/// Verifies signature and registered claims; `keys` are the verifying keys by `kid`.
pub fn verify(
    token: &str,
    keys: &HashMap<String, VerifyingKey>,
    expect: &Expectations,
    now_s: i64,
) -> Result<Claims, TokenRejection> {
    let mut parts = token.split('.');
    let (Some(header_b64), Some(claims_b64), Some(signature_b64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenRejection::Malformed);
    };
    let decode = |part: &str| {
        URL_SAFE_NO_PAD
            .decode(part)
            .map_err(|_| TokenRejection::Malformed)
    };
    let header: Header =
        serde_json::from_slice(&decode(header_b64)?).map_err(|_| TokenRejection::Malformed)?;
    if header.alg != ALGORITHM {
        return Err(TokenRejection::UnacceptedKey);
    }
    let key = header
        .kid
        .as_deref()
        .and_then(|kid| keys.get(kid))
        .ok_or(TokenRejection::UnacceptedKey)?;
    let signature: [u8; 64] = decode(signature_b64)?
        .try_into()
        .map_err(|_| TokenRejection::BadSignature)?;
    let signing_input = &token[..header_b64.len() + 1 + claims_b64.len()];
    key.verify_strict(signing_input.as_bytes(), &Signature::from_bytes(&signature))
        .map_err(|_| TokenRejection::BadSignature)?;
    let claims: Claims =
        serde_json::from_slice(&decode(claims_b64)?).map_err(|_| TokenRejection::Malformed)?;
    if claims.iss != expect.issuer || claims.aud != expect.audience || claims.typ != ACCESS_TYPE {
        return Err(TokenRejection::WrongAudience);
    }
    if claims.exp <= now_s {
        return Err(TokenRejection::Expired);
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(kid: &str, seed: u8) -> Key {
        Key::from_secret(kid.into(), [seed; 32])
    }

    fn claims() -> Claims {
        Claims {
            iss: "ulticode".into(),
            aud: "ulticode-api".into(),
            sub: "7".into(),
            name: "ada".into(),
            role: Role::User,
            av: 1,
            typ: ACCESS_TYPE.into(),
            iat: 1_000,
            exp: 2_000,
            jti: "j".into(),
            sid: None,
        }
    }

    fn expect() -> Expectations {
        Expectations {
            issuer: "ulticode".into(),
            audience: "ulticode-api".into(),
        }
    }

    fn keys(key: &Key) -> HashMap<String, VerifyingKey> {
        HashMap::from([(key.kid.clone(), key.verifying())])
    }

    fn forge(header: serde_json::Value, claims: &Claims, signature: &[u8]) -> String {
        format!(
            "{}.{}.{}",
            encode_part(&header),
            encode_part(claims),
            URL_SAFE_NO_PAD.encode(signature)
        )
    }

    #[test]
    fn a_signed_token_verifies_and_round_trips() {
        let k = key("k1", 1);
        let token = sign(&k, &claims());
        assert_eq!(verify(&token, &keys(&k), &expect(), 1_500), Ok(claims()));
    }

    #[test]
    fn attacks_and_mismatches_are_rejected() {
        let k = key("k1", 1);
        let other = key("k1", 2);
        let good = sign(&k, &claims());
        let public = k.verifying().to_bytes();
        let cases: Vec<(&str, String, TokenRejection)> = vec![
            (
                "alg none",
                forge(
                    serde_json::json!({"alg": "none", "kid": "k1"}),
                    &claims(),
                    b"",
                ),
                TokenRejection::UnacceptedKey,
            ),
            (
                // HS256 "signed" with the public key as the HMAC secret: the classic confusion.
                "hs256 with the public key",
                forge(
                    serde_json::json!({"alg": "HS256", "kid": "k1"}),
                    &claims(),
                    &public,
                ),
                TokenRejection::UnacceptedKey,
            ),
            (
                "unknown kid",
                sign(&key("k9", 1), &claims()),
                TokenRejection::UnacceptedKey,
            ),
            (
                "another key under our kid",
                sign(&other, &claims()),
                TokenRejection::BadSignature,
            ),
            (
                "expired",
                sign(
                    &k,
                    &Claims {
                        exp: 1_500,
                        ..claims()
                    },
                ),
                TokenRejection::Expired,
            ),
            (
                "wrong audience",
                sign(
                    &k,
                    &Claims {
                        aud: "elsewhere".into(),
                        ..claims()
                    },
                ),
                TokenRejection::WrongAudience,
            ),
            (
                "not an access token",
                sign(
                    &k,
                    &Claims {
                        typ: "refresh".into(),
                        ..claims()
                    },
                ),
                TokenRejection::WrongAudience,
            ),
            ("two parts", "a.b".into(), TokenRejection::Malformed),
            (
                "trailing part",
                format!("{good}.x"),
                TokenRejection::Malformed,
            ),
        ];
        for (name, token, rejection) in cases {
            assert_eq!(
                verify(&token, &keys(&k), &expect(), 1_500),
                Err(rejection),
                "{name}"
            );
        }
        // A tampered payload no longer matches the signature.
        let mut parts: Vec<&str> = good.split('.').collect();
        let admin = encode_part(&Claims {
            role: Role::Admin,
            ..claims()
        });
        parts[1] = &admin;
        assert_eq!(
            verify(&parts.join("."), &keys(&k), &expect(), 1_500),
            Err(TokenRejection::BadSignature)
        );
    }
}
