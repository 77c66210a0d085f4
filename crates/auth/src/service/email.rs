//! Account email: an optional address, verified by a one-time token sent to it, and password
//! reset through a verified address. Tokens are random, stored as SHA-256, single use and
//! short-lived; the raw token travels only in the `confidential` part of its event, to the
//! Notification owner's mail. Requests for a reset answer the same whether or not an
//! account has the address (no enumeration).

use contracts::events::types;
use contracts::{PortError, Recipient, Recipients, UserId};
use platform::db::Row;
use platform::events::NewEvent;

use super::{ms, sha256_hex, validate_password, AuthError, AuthService};

/// How long a verification link works.
const VERIFY_TTL: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
/// How long a password-reset link works.
const RESET_TTL: std::time::Duration = std::time::Duration::from_secs(30 * 60);

const VERIFY: &str = "verify_email";
const RESET: &str = "reset_password";

/// A plausible address: one `@`, a dot in the domain, no spaces or controls, ≤ 254 bytes.
pub fn validate_email(email: &str) -> Result<String, AuthError> {
    let invalid = |reason: &str| AuthError::Invalid {
        field: "email",
        reason: reason.into(),
    };
    let email = email.trim();
    if email.len() > 254 || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("at most 254 characters, no spaces"));
    }
    let Some((local, domain)) = email.split_once('@') else {
        return Err(invalid("an address like name@example.org"));
    };
    if local.is_empty()
        || domain.contains('@')
        || !domain.contains('.')
        || domain.starts_with('.')
        || domain.ends_with('.')
    {
        return Err(invalid("an address like name@example.org"));
    }
    Ok(email.to_string())
}

/// The account's address as `/me` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailState {
    pub email: Option<String>,
    pub verified: bool,
}

impl AuthService {
    /// Sets (or with `None` removes) the account's address; a new address is unverified
    /// until the token mailed to it comes back.
    pub async fn set_email(&self, user: UserId, email: Option<&str>) -> Result<(), AuthError> {
        let email = email.map(validate_email).transpose()?;
        let mut tx = self.db.begin().await?;
        self.db
            .query("UPDATE users SET email = $2, email_verified_at = NULL, updated_at = {now} WHERE id = $1")
            .bind(user.0)
            .bind(email.clone())
            .execute(&mut *tx)
            .await?;
        self.db
            .query("UPDATE account_tokens SET used_at = {now} WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL")
            .bind(user.0)
            .bind(VERIFY)
            .execute(&mut *tx)
            .await?;
        let mut event = NewEvent::new(
            types::EMAIL_CHANGED,
            "account",
            user.0,
            serde_json::json!({ "email": email }),
        )
        .by(Some(user));
        if let Some(email) = &email {
            let token = self
                .issue_token(&mut tx, user, VERIFY, email, VERIFY_TTL)
                .await?;
            event = NewEvent::new(
                types::EMAIL_VERIFICATION_REQUESTED,
                "account",
                user.0,
                serde_json::json!({ "email": email }),
            )
            .by(Some(user))
            .confidential(serde_json::json!({ "token": token, "email": email }));
        }
        self.events.record(&mut tx, event).await?;
        tx.commit().await?;
        Ok(())
    }

    pub async fn email(&self, user: UserId) -> Result<EmailState, AuthError> {
        let row = self
            .db
            .query("SELECT email, email_verified_at FROM users WHERE id = $1")
            .bind(user.0)
            .fetch_optional(self.db.pool())
            .await?;
        Ok(match row {
            Some(row) => EmailState {
                email: row.try_get(0)?,
                verified: row.try_get::<Option<i64>, _>(1)?.is_some(),
            },
            None => EmailState {
                email: None,
                verified: false,
            },
        })
    }

    /// Marks the address the token was mailed to as verified.
    pub async fn verify_email(&self, token: &str) -> Result<(), AuthError> {
        let mut tx = self.db.begin().await?;
        let (user, email) = self.spend_token(&mut tx, token, VERIFY).await?;
        let verified = self
            .db
            .query(
                "UPDATE users SET email_verified_at = {now}, updated_at = {now} \
                 WHERE id = $1 AND email = $2 AND email_verified_at IS NULL",
            )
            .bind(user.0)
            .bind(email.clone())
            .execute(&mut *tx)
            .await
            .map_err(platform::DbError::from);
        match verified {
            Ok(done) if done.rows_affected() == 1 => {}
            Ok(_) => return Err(AuthError::InvalidToken),
            Err(e) if e.is_unique_violation() => return Err(AuthError::EmailTaken),
            Err(e) => return Err(e.into()),
        }
        self.events
            .record(
                &mut tx,
                NewEvent::new(
                    types::EMAIL_VERIFIED,
                    "account",
                    user.0,
                    serde_json::json!({ "email": email }),
                )
                .by(Some(user)),
            )
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Mails a reset link to the account whose verified address is `email`, if there is one;
    /// the caller's answer is the same either way.
    pub async fn request_password_reset(&self, email: &str) -> Result<(), AuthError> {
        let Ok(email) = validate_email(email) else {
            return Ok(());
        };
        let mut tx = self.db.begin().await?;
        let row = self
            .db
            .query("SELECT id, email FROM users WHERE lower(email) = lower($1) AND email_verified_at IS NOT NULL")
            .bind(email)
            .fetch_optional(&mut *tx)
            .await?;
        let Some(row) = row else {
            return Ok(());
        };
        let user = UserId(row.try_get(0)?);
        let address: String = row.try_get(1)?;
        let token = self
            .issue_token(&mut tx, user, RESET, &address, RESET_TTL)
            .await?;
        self.events
            .record(
                &mut tx,
                NewEvent::new(
                    types::PASSWORD_RESET_REQUESTED,
                    "account",
                    user.0,
                    serde_json::json!({}),
                )
                .confidential(serde_json::json!({ "token": token, "email": address })),
            )
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Sets a new password with a reset token; every session of the account ends.
    pub async fn reset_password(&self, token: &str, new: &str) -> Result<(), AuthError> {
        validate_password(new)?;
        let hash = self.passwords.hash(new.to_string()).await?;
        let mut tx = self.db.begin().await?;
        let (user, _) = self.spend_token(&mut tx, token, RESET).await?;
        self.db
            .query("UPDATE users SET password_hash = $2, authz_version = authz_version + 1, updated_at = {now} WHERE id = $1")
            .bind(user.0)
            .bind(hash)
            .execute(&mut *tx)
            .await?;
        self.db
            .query("UPDATE refresh_tokens SET revoked_at = {now} WHERE user_id = $1 AND revoked_at IS NULL")
            .bind(user.0)
            .execute(&mut *tx)
            .await?;
        let version = self.authz_version(&mut tx, user).await?;
        self.events
            .record(
                &mut tx,
                NewEvent::new(
                    types::PASSWORD_RESET,
                    "account",
                    user.0,
                    serde_json::json!({}),
                )
                .version(version)
                .by(Some(user)),
            )
            .await?;
        tx.commit().await?;
        self.forget_verifications();
        Ok(())
    }

    async fn issue_token(
        &self,
        tx: &mut platform::db::Transaction<'static, platform::db::Any>,
        user: UserId,
        purpose: &'static str,
        email: &str,
        ttl: std::time::Duration,
    ) -> Result<String, AuthError> {
        let token = crate::random_token();
        self.db
            .query(
                "INSERT INTO account_tokens (token_hash, user_id, purpose, email, created_at, expires_at) \
                 VALUES ($1, $2, $3, $4, {now}, {now} + $5)",
            )
            .bind(sha256_hex(&token))
            .bind(user.0)
            .bind(purpose)
            .bind(email.to_string())
            .bind(ms(ttl))
            .execute(&mut **tx)
            .await?;
        Ok(token)
    }

    /// Uses up a live token of `purpose`: (account, address it was issued for).
    async fn spend_token(
        &self,
        tx: &mut platform::db::Transaction<'static, platform::db::Any>,
        token: &str,
        purpose: &'static str,
    ) -> Result<(UserId, String), AuthError> {
        let row = self
            .db
            .query(
                "UPDATE account_tokens SET used_at = {now} \
                 WHERE token_hash = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > {now} \
                 RETURNING user_id, email",
            )
            .bind(sha256_hex(token))
            .bind(purpose)
            .fetch_optional(&mut **tx)
            .await?
            .ok_or(AuthError::InvalidToken)?;
        Ok((UserId(row.try_get(0)?), row.try_get(1)?))
    }
}

#[async_trait::async_trait]
impl Recipients for AuthService {
    async fn recipient(&self, user: UserId) -> Result<Option<Recipient>, PortError> {
        let row = self
            .db
            .query("SELECT username, email, email_verified_at, locale FROM users WHERE id = $1")
            .bind(user.0)
            .fetch_optional(self.db.pool())
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?;
        let Some(row) = row else { return Ok(None) };
        let get = |e: sqlx::Error| PortError::Unavailable(e.to_string());
        let verified = row.try_get::<Option<i64>, _>(2).map_err(get)?.is_some();
        Ok(Some(Recipient {
            username: row.try_get(0).map_err(get)?,
            email: row
                .try_get::<Option<String>, _>(1)
                .map_err(get)?
                .filter(|_| verified),
            locale: row.try_get(3).map_err(get)?,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::validate_email;

    #[test]
    fn addresses_are_checked_for_shape_only() {
        for good in ["a@b.co", " ada@example.org ", "x.y+z@sub.example.jp"] {
            assert!(validate_email(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "a",
            "a@b",
            "@b.co",
            "a@@b.co",
            "a b@c.d",
            "a@.co",
            "a@co.",
            "a\u{0}@b.co",
        ] {
            assert!(validate_email(bad).is_err(), "{bad:?}");
        }
    }
}
