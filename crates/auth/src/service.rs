//! Accounts, sessions and keys on the owner's database.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use contracts::admin::{Account, AccountAdmin};
use contracts::events::types;
use contracts::{PortError, Principal, Role, TokenRejection, TokenVerifier, UserDirectory, UserId};
use ed25519_dalek::VerifyingKey;
use platform::cache::ReadCache;
use platform::db::Row;
use platform::db::{Any, Transaction};
use platform::events::{NewEvent, Outbox};
use platform::{Db, DbError};

use crate::password::{PasswordCost, PasswordError, Passwords};

mod email;
use crate::keyring::{self, KeyEncryptionKey, KeyError, Keyring, Rotation};
use crate::tokens::{self, Claims, Expectations};
pub use email::{validate_email, EmailState};

/// Tunables of the Auth owner.
#[derive(Debug, Clone)]
pub struct AuthConfig {
    pub issuer: String,
    pub audience: String,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    pub password_cost: PasswordCost,
    /// Seals the signing keys at rest when given (see [`crate::keyring`]).
    pub key_encryption: Option<KeyEncryptionKey>,
    /// How long a rotated-out key verifies beyond the access tokens' lifetime: covers the
    /// processes that still sign with it until their next reload.
    pub key_overlap_margin: Duration,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            issuer: "ulticode".into(),
            audience: "ulticode-api".into(),
            access_ttl: Duration::from_secs(15 * 60),
            refresh_ttl: Duration::from_secs(30 * 24 * 3600),
            password_cost: PasswordCost::default(),
            key_encryption: None,
            key_overlap_margin: keyring::RELOAD_EVERY * 2,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("the username {0:?} is taken")]
    UsernameTaken(String),
    #[error("invalid username or password")]
    InvalidCredentials,
    #[error("the refresh token is not valid")]
    InvalidRefresh,
    #[error("the refresh token was already used: its whole session family is revoked")]
    RefreshReused,
    #[error("the link is not valid (used, expired or never issued)")]
    InvalidToken,
    #[error("the address is verified for another account")]
    EmailTaken,
    #[error(transparent)]
    Password(#[from] PasswordError),
    #[error(transparent)]
    Keys(#[from] KeyError),
    #[error(transparent)]
    Db(#[from] DbError),
}

impl From<sqlx::Error> for AuthError {
    fn from(e: sqlx::Error) -> Self {
        AuthError::Db(e.into())
    }
}

/// A logged-in session: a short-lived access token and the refresh token that renews it.
#[derive(Debug, Clone)]
pub struct Session {
    pub access_token: String,
    pub access_expires_in: Duration,
    pub refresh_token: String,
    pub refresh_expires_in: Duration,
    pub account: Account,
}

/// The Auth owner. Cheap to clone.
#[derive(Clone)]
pub struct AuthService {
    db: Db,
    /// The owner's integration events (audit records), written in the changes' transactions.
    events: Outbox,
    config: Arc<AuthConfig>,
    passwords: Passwords,
    keys: Arc<RwLock<Keyring>>,
    last_reload: Arc<Mutex<Instant>>,
    /// Access tokens verified lately, by token: the signature and the account's state need
    /// not be checked again on every request. This process forgets them all whenever it
    /// ends a session or changes an account's tokens' validity; another replica's change
    /// reaches this one within [`VERIFIED_FOR`].
    verified: Arc<ReadCache<String, Verified>>,
}

/// How long a verification is trusted without asking the database again: the bound on how
/// late a logout, role or password change made by another replica takes effect here.
pub const VERIFIED_FOR: Duration = Duration::from_secs(1);
/// Access tokens whose verification is kept.
const VERIFIED_TOKENS: usize = 16_384;

#[derive(Clone)]
struct Verified {
    principal: Principal,
    /// The token's expiry (Unix seconds).
    expires: i64,
}

/// The form a username is stored and compared in: NFKC, so look-alike compatibility forms
/// (full-width letters, ligatures) are the letters they stand for. Uniqueness and look-ups
/// also ignore ASCII letter case (`Admin` is `admin`).
pub fn normalize_username(username: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    username.nfkc().collect()
}

/// The key usernames are unique by.
fn username_key(username: &str) -> String {
    normalize_username(username).to_ascii_lowercase()
}

pub fn validate_username(username: &str) -> Result<(), AuthError> {
    let ok = (3..=32).contains(&username.len())
        && username
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(AuthError::Invalid {
            field: "username",
            reason: "3 to 32 characters: letters, digits, '_' or '-'".into(),
        })
    }
}

pub fn validate_password(password: &str) -> Result<(), AuthError> {
    let chars = password.chars().count();
    if (8..=128).contains(&chars) {
        Ok(())
    } else {
        Err(AuthError::Invalid {
            field: "password",
            reason: "8 to 128 characters".into(),
        })
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn ms(d: Duration) -> i64 {
    d.as_millis().min(i64::MAX as u128) as i64
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

use keyring::hex;

fn account_of(row: &platform::db::AnyRow) -> Result<Account, AuthError> {
    let role: String = row.try_get("role")?;
    Ok(Account {
        id: UserId(row.try_get("id")?),
        username: row.try_get("username")?,
        role: role.parse().unwrap_or_default(),
        created_at_ms: row.try_get("created_at")?,
    })
}

impl AuthService {
    /// Opens the owner on `db`: migrates, seals signing keys still in the clear when a
    /// key-encryption key is configured, and creates a signing key if none signs.
    pub async fn open(db: Db, config: AuthConfig) -> Result<Self, AuthError> {
        db.migrate(crate::schema::MIGRATIONS).await?;
        let kek = config.key_encryption.as_ref();
        if let Some(kek) = kek {
            let sealed = keyring::seal_clear_keys(&db, kek).await?;
            if sealed > 0 {
                tracing::info!(sealed, "signing keys sealed at rest");
            }
        }
        let keyring = match keyring::load(&db, kek).await? {
            Some(keyring) => keyring,
            None => {
                if let Err(e) = keyring::insert_key(&db, kek).await {
                    // Another replica may have created its key at the same moment: fine.
                    tracing::debug!(error = %e, "signing key insert");
                }
                keyring::load(&db, kek)
                    .await?
                    .ok_or_else(|| AuthError::Db(DbError::Sql(sqlx::Error::RowNotFound)))?
            }
        };
        Ok(Self {
            passwords: Passwords::new(config.password_cost)?,
            events: Outbox::new(db.clone(), "auth"),
            db,
            config: Arc::new(config),
            keys: Arc::new(RwLock::new(keyring)),
            last_reload: Arc::new(Mutex::new(Instant::now())),
            verified: Arc::new(ReadCache::new(VERIFIED_TOKENS)),
        })
    }

    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The owner's events outbox (for its relay).
    pub fn events(&self) -> &Outbox {
        &self.events
    }

    /// The public keys, as a JWK set.
    pub fn jwks(&self) -> serde_json::Value {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        serde_json::json!({ "keys": keys.jwks })
    }

    pub async fn register(
        &self,
        username: &str,
        password: &str,
        role: Role,
    ) -> Result<Account, AuthError> {
        let username = &normalize_username(username);
        validate_username(username)?;
        validate_password(password)?;
        let hash = self.passwords.hash(password.to_string()).await?;
        let mut tx = self.db.begin().await?;
        let inserted = self
            .db
            .query(
                "INSERT INTO users (username, password_hash, role, created_at, updated_at)
                 VALUES ($1, $2, $3, {now}, {now})
                 RETURNING id, username, role, created_at",
            )
            .bind(username.to_string())
            .bind(hash)
            .bind(role.as_str())
            .fetch_one(&mut *tx)
            .await
            .map_err(DbError::from);
        let account = match inserted {
            Ok(row) => account_of(&row)?,
            Err(e) if e.is_unique_violation() => {
                return Err(AuthError::UsernameTaken(username.into()))
            }
            Err(e) => return Err(e.into()),
        };
        self.events
            .record(
                &mut tx,
                NewEvent::new(
                    types::ACCOUNT_REGISTERED,
                    "account",
                    account.id.0,
                    serde_json::json!({ "username": account.username, "role": account.role.as_str() }),
                )
                .version(1)
                .by(Some(account.id)),
            )
            .await?;
        tx.commit().await?;
        Ok(account)
    }

    /// Creates `username` with `role` and a random password unless it exists; returns the
    /// account, and the password when it was created (shown once, never stored in clear).
    pub async fn ensure_account(
        &self,
        username: &str,
        role: Role,
    ) -> Result<(Account, Option<String>), AuthError> {
        let password = crate::random_token();
        match self.register(username, &password, role).await {
            Ok(account) => Ok((account, Some(password))),
            Err(AuthError::UsernameTaken(_)) => {
                let row = self
                    .db
                    .query(
                        "SELECT id, username, role, created_at FROM users
                         WHERE lower(username) = $1",
                    )
                    .bind(username_key(username))
                    .fetch_one(self.db.pool())
                    .await?;
                Ok((account_of(&row)?, None))
            }
            Err(e) => Err(e),
        }
    }

    pub async fn login(&self, username: &str, password: &str) -> Result<Session, AuthError> {
        let account = self.verify_credentials(username, password).await?;
        let family = hex(&crate::random_bytes::<16>());
        let event = NewEvent::new(
            types::LOGIN_SUCCEEDED,
            "account",
            account.id.0,
            serde_json::json!({ "session": family }),
        )
        .by(Some(account.id));
        self.start_session(account, &family, Some(event)).await
    }

    /// The account of these credentials; a failure is recorded as a failed login.
    pub async fn verify_credentials(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Account, AuthError> {
        // A name no account can have is refused before any work (it reveals nothing: the
        // username rules are public).
        if validate_username(&normalize_username(username)).is_err() {
            return Err(AuthError::InvalidCredentials);
        }
        let row = self
            .db
            .query(
                "SELECT id, username, role, created_at, password_hash FROM users
                 WHERE lower(username) = $1",
            )
            .bind(username_key(username))
            .fetch_optional(self.db.pool())
            .await?;
        let stored = row
            .as_ref()
            .map(|r| r.try_get::<String, _>("password_hash"))
            .transpose()?;
        // Unknown users verify against the decoy: same cost, same answer.
        if !self.passwords.verify(password.to_string(), stored).await? {
            let user = row
                .as_ref()
                .map(|r| r.try_get::<i64, _>("id"))
                .transpose()?;
            // The attempted name is recorded as typed (normalised); the answer stays the same.
            self.events
                .record_alone(NewEvent::new(
                    types::LOGIN_FAILED,
                    "account",
                    user.unwrap_or(0),
                    serde_json::json!({
                        "username": normalize_username(username),
                        "known_account": user.is_some(),
                    }),
                ))
                .await?;
            return Err(AuthError::InvalidCredentials);
        }
        account_of(row.as_ref().ok_or(AuthError::InvalidCredentials)?)
    }

    /// A new refresh token of `family` and an access token, with `event` in the same
    /// transaction.
    async fn start_session(
        &self,
        account: Account,
        family: &str,
        event: Option<NewEvent>,
    ) -> Result<Session, AuthError> {
        let refresh_token = format!("rt_{}", crate::random_token());
        let mut tx = self.db.begin().await?;
        self.db
            .query(
                "INSERT INTO refresh_tokens (token_hash, family_id, user_id, created_at, expires_at)
                 VALUES ($1, $2, $3, {now}, {now} + $4)",
            )
            .bind(sha256_hex(&refresh_token))
            .bind(family.to_string())
            .bind(account.id.0)
            .bind(ms(self.config.refresh_ttl))
            .execute(&mut *tx)
            .await?;
        let authz_version: i64 = self
            .db
            .query("SELECT authz_version FROM users WHERE id = $1")
            .bind(account.id.0)
            .fetch_one(&mut *tx)
            .await?
            .try_get(0)?;
        if let Some(event) = event {
            self.events.record(&mut tx, event).await?;
        }
        tx.commit().await?;
        Ok(Session {
            access_token: self.issue_access(&account, authz_version, family).await,
            access_expires_in: self.config.access_ttl,
            refresh_token,
            refresh_expires_in: self.config.refresh_ttl,
            account,
        })
    }

    async fn issue_access(&self, account: &Account, authz_version: i64, session: &str) -> String {
        self.reload_keys(Reload::IfStale).await;
        let now = unix_now();
        let claims = Claims {
            iss: self.config.issuer.clone(),
            aud: self.config.audience.clone(),
            sub: account.id.0.to_string(),
            name: account.username.clone(),
            role: account.role,
            av: authz_version,
            typ: tokens::ACCESS_TYPE.into(),
            iat: now,
            exp: now + self.config.access_ttl.as_secs() as i64,
            jti: hex(&crate::random_bytes::<12>()),
            sid: Some(session.to_string()),
        };
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        tokens::sign(&keys.signing, &claims)
    }

    /// Rotates a refresh token: the presented one is spent, a new one of the same family is
    /// returned. Presenting a spent token revokes the whole family (it was stolen, or the
    /// legitimate client's copy was).
    pub async fn refresh(&self, token: &str) -> Result<Session, AuthError> {
        let hash = sha256_hex(token);
        let row = self
            .db
            .query(
                "SELECT t.family_id, t.used_at, t.revoked_at, t.expires_at, {now} AS now,
                        u.id, u.username, u.role, u.created_at
                 FROM refresh_tokens t JOIN users u ON u.id = t.user_id
                 WHERE t.token_hash = $1",
            )
            .bind(hash.clone())
            .fetch_optional(self.db.pool())
            .await?
            .ok_or(AuthError::InvalidRefresh)?;
        let family: String = row.try_get("family_id")?;
        let used: Option<i64> = row.try_get("used_at")?;
        let revoked: Option<i64> = row.try_get("revoked_at")?;
        let expires_at: i64 = row.try_get("expires_at")?;
        let now: i64 = row.try_get("now")?;
        if revoked.is_some() || expires_at <= now {
            return Err(AuthError::InvalidRefresh);
        }
        let user = UserId(row.try_get("id")?);
        if used.is_some() {
            self.revoke_family(
                &family,
                user,
                types::REFRESH_FAMILY_REVOKED,
                "a spent refresh token was presented again",
            )
            .await?;
            return Err(AuthError::RefreshReused);
        }
        let spent = self
            .db
            .query(
                "UPDATE refresh_tokens SET used_at = {now}
                 WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL",
            )
            .bind(hash)
            .execute(self.db.pool())
            .await?;
        if spent.rows_affected() != 1 {
            // Spent concurrently: two holders of one token.
            self.revoke_family(
                &family,
                user,
                types::REFRESH_FAMILY_REVOKED,
                "one refresh token was spent twice at once",
            )
            .await?;
            return Err(AuthError::RefreshReused);
        }
        self.start_session(account_of(&row)?, &family, None).await
    }

    /// Revokes a session (refresh family) of `user` and records `event_type` with `reason`,
    /// in one transaction; nothing is recorded when the family was already revoked.
    async fn revoke_family(
        &self,
        family: &str,
        user: UserId,
        event_type: &'static str,
        reason: &str,
    ) -> Result<(), AuthError> {
        let mut tx = self.db.begin().await?;
        let revoked = self
            .db
            .query(
                "UPDATE refresh_tokens SET revoked_at = {now} WHERE family_id = $1 AND revoked_at IS NULL",
            )
            .bind(family.to_string())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if revoked > 0 {
            self.events
                .record(
                    &mut tx,
                    NewEvent::new(
                        event_type,
                        "account",
                        user.0,
                        serde_json::json!({ "session": family, "reason": reason }),
                    )
                    .by(Some(user)),
                )
                .await?;
        }
        tx.commit().await?;
        self.forget_verifications();
        Ok(())
    }

    /// Ends the session the refresh token belongs to (its whole family).
    pub async fn logout(&self, refresh_token: &str) -> Result<(), AuthError> {
        let row = self
            .db
            .query("SELECT family_id, user_id FROM refresh_tokens WHERE token_hash = $1")
            .bind(sha256_hex(refresh_token))
            .fetch_optional(self.db.pool())
            .await?;
        if let Some(row) = row {
            let family: String = row.try_get(0)?;
            let user = UserId(row.try_get(1)?);
            self.revoke_family(&family, user, types::LOGGED_OUT, "logout")
                .await?;
        }
        Ok(())
    }

    /// Changes a password; every token of the account stops working.
    pub async fn change_password(
        &self,
        user: UserId,
        current: &str,
        new: &str,
    ) -> Result<(), AuthError> {
        validate_password(new)?;
        let stored: Option<String> = self
            .db
            .query("SELECT password_hash FROM users WHERE id = $1")
            .bind(user.0)
            .fetch_optional(self.db.pool())
            .await?
            .map(|row| row.try_get(0))
            .transpose()?;
        if !self.passwords.verify(current.to_string(), stored).await? {
            return Err(AuthError::InvalidCredentials);
        }
        let hash = self.passwords.hash(new.to_string()).await?;
        self.invalidate_tokens(
            user,
            "UPDATE users SET password_hash = $2, authz_version = authz_version + 1, updated_at = {now} WHERE id = $1",
            &hash,
            NewEvent::new(types::PASSWORD_CHANGED, "account", user.0, serde_json::json!({}))
                .by(Some(user)),
        )
        .await?;
        Ok(())
    }

    /// Applies an account change that bumps `authz_version` and revokes every refresh family,
    /// with its event (at the new `authz_version`), in one transaction. Returns whether the
    /// account existed.
    async fn invalidate_tokens(
        &self,
        user: UserId,
        update: &str,
        value: &str,
        event: NewEvent,
    ) -> Result<bool, AuthError> {
        let mut tx = self.db.begin().await?;
        let changed = self
            .db
            .query(update)
            .bind(user.0)
            .bind(value.to_string())
            .execute(&mut *tx)
            .await?
            .rows_affected();
        self.db
            .query(
                "UPDATE refresh_tokens SET revoked_at = {now} WHERE user_id = $1 AND revoked_at IS NULL",
            )
            .bind(user.0)
            .execute(&mut *tx)
            .await?;
        if changed == 1 {
            let version = self.authz_version(&mut tx, user).await?;
            self.events.record(&mut tx, event.version(version)).await?;
        }
        tx.commit().await?;
        self.forget_verifications();
        Ok(changed == 1)
    }

    async fn authz_version(
        &self,
        tx: &mut Transaction<'static, Any>,
        user: UserId,
    ) -> Result<i64, AuthError> {
        Ok(self
            .db
            .query("SELECT authz_version FROM users WHERE id = $1")
            .bind(user.0)
            .fetch_one(&mut **tx)
            .await?
            .try_get(0)?)
    }

    pub async fn account(&self, user: UserId) -> Result<Option<Account>, AuthError> {
        self.db
            .query("SELECT id, username, role, created_at FROM users WHERE id = $1")
            .bind(user.0)
            .fetch_optional(self.db.pool())
            .await?
            .map(|row| account_of(&row))
            .transpose()
    }

    /// The interface language the account chose, if any.
    pub async fn locale(&self, user: UserId) -> Result<Option<String>, AuthError> {
        let row = self
            .db
            .query("SELECT locale FROM users WHERE id = $1")
            .bind(user.0)
            .fetch_optional(self.db.pool())
            .await?;
        Ok(match row {
            Some(row) => row.try_get::<Option<String>, _>(0)?,
            None => None,
        })
    }

    /// Records the account's interface language (`None` clears it). A language tag is
    /// letters, digits and hyphens, at most 35 characters (BCP 47's longest common form).
    pub async fn set_locale(&self, user: UserId, locale: Option<&str>) -> Result<(), AuthError> {
        if let Some(tag) = locale {
            let valid = !tag.is_empty()
                && tag.len() <= 35
                && tag.split('-').all(|part| {
                    !part.is_empty()
                        && part.len() <= 8
                        && part.bytes().all(|b| b.is_ascii_alphanumeric())
                });
            if !valid {
                return Err(AuthError::Invalid {
                    field: "locale",
                    reason: "not a language tag such as en, ja or zh-CN".into(),
                });
            }
        }
        self.db
            .query("UPDATE users SET locale = $2 WHERE id = $1")
            .bind(user.0)
            .bind(locale.map(str::to_string))
            .execute(self.db.pool())
            .await?;
        Ok(())
    }

    /// Rotates the signing keys: a new key signs from now on (in this process at once, in the
    /// others at their next reload); the current ones verify until the tokens they signed
    /// have expired (access lifetime plus the overlap margin), then are dropped.
    pub async fn rotate_signing_key(&self) -> Result<Rotation, AuthError> {
        let rotation = keyring::rotate(
            &self.db,
            self.config.key_encryption.as_ref(),
            self.config.access_ttl + self.config.key_overlap_margin,
        )
        .await?;
        self.reload_keys(Reload::Now).await;
        Ok(rotation)
    }

    /// Reloads the keyring when `reason` says it is due: another process may have rotated.
    async fn reload_keys(&self, reason: Reload) {
        /// Unknown key ids reload at most this often: a flood of forged ids costs a few
        /// queries a second, and a real one waits at most this long.
        const UNKNOWN_KID_SPACING: Duration = Duration::from_millis(200);
        if let Reload::UnknownKid = reason {
            let age = self
                .last_reload
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .elapsed();
            if let Some(wait) = UNKNOWN_KID_SPACING.checked_sub(age) {
                tokio::time::sleep(wait).await;
            }
        }
        let due = {
            let mut last = self.last_reload.lock().unwrap_or_else(|e| e.into_inner());
            let age = last.elapsed();
            // A reload that started after the token arrived holds its key too.
            let due = match reason {
                Reload::Now => true,
                Reload::IfStale => age > keyring::RELOAD_EVERY,
                Reload::UnknownKid => age >= UNKNOWN_KID_SPACING,
            };
            if due {
                *last = Instant::now();
            }
            due
        };
        if !due {
            return;
        }
        match keyring::load(&self.db, self.config.key_encryption.as_ref()).await {
            Ok(Some(keyring)) => {
                *self.keys.write().unwrap_or_else(|e| e.into_inner()) = keyring;
            }
            Ok(None) => tracing::warn!("no signing key in the database; keeping the loaded ones"),
            Err(e) => tracing::warn!(error = %e, "reloading the signing keys"),
        }
    }

    /// The verifying keys, reloaded first when due.
    async fn verifying_keys(&self, kid: Option<&str>) -> HashMap<String, VerifyingKey> {
        let unknown = {
            let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
            kid.is_some_and(|kid| !keys.verifying.contains_key(kid))
        };
        let reason = if unknown {
            Reload::UnknownKid
        } else {
            Reload::IfStale
        };
        self.reload_keys(reason).await;
        self.keys
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .verifying
            .clone()
    }
}

/// Why the keyring might be reloaded.
#[derive(Debug, Clone, Copy)]
enum Reload {
    /// A rotation happened here.
    Now,
    /// Held longer than [`keyring::RELOAD_EVERY`].
    IfStale,
    /// A token names a key this process does not hold.
    UnknownKid,
}

fn kid_of(token: &str) -> Option<String> {
    use base64::Engine;
    let header = token.split('.').next()?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .ok()?;
    serde_json::from_slice::<tokens::Header>(&bytes).ok()?.kid
}

#[async_trait]
impl TokenVerifier for AuthService {
    async fn verify_access(&self, token: &str) -> Result<Principal, TokenRejection> {
        let key = token.to_string();
        if let Some(verified) = self.verified.get(&key, VERIFIED_FOR) {
            if verified.expires > unix_now() {
                return Ok(verified.principal);
            }
        }
        let ticket = self.verified.ticket(&key);
        let (principal, expires) = self.verify_now(token).await?;
        self.verified.store(
            ticket,
            key,
            Verified {
                principal: principal.clone(),
                expires,
            },
        );
        Ok(principal)
    }
}

impl AuthService {
    /// Forgets every verification this process holds (a session ended or an account's tokens
    /// stopped being valid).
    pub(crate) fn forget_verifications(&self) {
        self.verified.forget_all();
    }

    /// Verifies `token` against the keys and the account's current state: its caller and
    /// expiry.
    async fn verify_now(&self, token: &str) -> Result<(Principal, i64), TokenRejection> {
        let keys = self.verifying_keys(kid_of(token).as_deref()).await;
        let expect = Expectations {
            issuer: self.config.issuer.clone(),
            audience: self.config.audience.clone(),
        };
        let claims = tokens::verify(token, &keys, &expect, unix_now())?;
        let user = claims.user_id()?;
        // The account's current state decides: a role or password change since issue
        // (authz_version moved), a deleted account, or the end of the token's session (logout,
        // a reused refresh token) revokes the token.
        let row = self
            .db
            .query(
                "SELECT username, role, authz_version,
                        (SELECT COUNT(*) FROM refresh_tokens
                         WHERE family_id = $2 AND revoked_at IS NULL) AS live
                 FROM users WHERE id = $1",
            )
            .bind(user.0)
            .bind(claims.sid.clone().unwrap_or_default())
            .fetch_optional(self.db.readers())
            .await
            .map_err(|e| TokenRejection::Unavailable(e.to_string()))?
            .ok_or(TokenRejection::Revoked)?;
        let version: i64 = row
            .try_get("authz_version")
            .map_err(|e| TokenRejection::Unavailable(e.to_string()))?;
        if version != claims.av {
            return Err(TokenRejection::Revoked);
        }
        let live: i64 = row
            .try_get("live")
            .map_err(|e| TokenRejection::Unavailable(e.to_string()))?;
        if claims.sid.is_none() || live == 0 {
            return Err(TokenRejection::Revoked);
        }
        let role: String = row
            .try_get("role")
            .map_err(|e| TokenRejection::Unavailable(e.to_string()))?;
        let principal = Principal {
            user_id: user,
            username: claims.name,
            role: role.parse().map_err(|_| TokenRejection::Revoked)?,
        };
        Ok((principal, claims.exp))
    }
}

fn port_error(e: impl std::fmt::Display) -> PortError {
    PortError::Unavailable(e.to_string())
}

#[async_trait]
impl UserDirectory for AuthService {
    async fn user_exists(&self, user: UserId) -> Result<bool, PortError> {
        Ok(self.account(user).await.map_err(port_error)?.is_some())
    }

    async fn current_role(&self, user: UserId) -> Result<Option<Role>, PortError> {
        Ok(self
            .account(user)
            .await
            .map_err(port_error)?
            .map(|a| a.role))
    }

    async fn find_user(&self, username: &str) -> Result<Option<UserId>, PortError> {
        let row = self
            .db
            .query("SELECT id FROM users WHERE lower(username) = $1")
            .bind(username_key(username))
            .fetch_optional(self.db.pool())
            .await
            .map_err(port_error)?;
        row.map(|r| r.try_get::<i64, _>(0).map(UserId))
            .transpose()
            .map_err(port_error)
    }
}

#[async_trait]
impl contracts::AccountProvisioner for AuthService {
    async fn ensure_user(&self, username: &str) -> Result<UserId, PortError> {
        let (account, _password) = self
            .ensure_account(username, Role::User)
            .await
            .map_err(port_error)?;
        Ok(account.id)
    }
}

#[async_trait]
impl contracts::PasswordCheck for AuthService {
    async fn check_password(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<Principal>, PortError> {
        match self.verify_credentials(username, password).await {
            Ok(account) => Ok(Some(Principal {
                user_id: account.id,
                username: account.username,
                role: account.role,
            })),
            Err(AuthError::InvalidCredentials) => Ok(None),
            Err(e) => Err(port_error(e)),
        }
    }
}

#[async_trait]
impl AccountAdmin for AuthService {
    async fn list_accounts(
        &self,
        after: Option<UserId>,
        limit: u32,
    ) -> Result<Vec<Account>, PortError> {
        let rows = self
            .db
            .query(
                "SELECT id, username, role, created_at FROM users WHERE id > $1 ORDER BY id LIMIT $2",
            )
            .bind(after.map_or(0, |u| u.0))
            .bind(i64::from(limit.clamp(1, 200)))
            .fetch_all(self.db.pool())
            .await
            .map_err(port_error)?;
        rows.iter()
            .map(account_of)
            .collect::<Result<_, _>>()
            .map_err(port_error)
    }

    async fn set_role(
        &self,
        actor: UserId,
        user: UserId,
        role: Role,
    ) -> Result<Option<Account>, PortError> {
        let existed = self
            .invalidate_tokens(
                user,
                "UPDATE users SET role = $2, authz_version = authz_version + 1, updated_at = {now} WHERE id = $1",
                role.as_str(),
                NewEvent::new(
                    types::ROLE_CHANGED,
                    "account",
                    user.0,
                    serde_json::json!({ "role": role.as_str() }),
                )
                .by(Some(actor)),
            )
            .await
            .map_err(port_error)?;
        if !existed {
            return Ok(None);
        }
        self.account(user).await.map_err(port_error)
    }
}
