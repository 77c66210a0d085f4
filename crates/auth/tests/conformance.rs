//! The Auth owner's behaviour on both backends (SQLite and PostgreSQL): accounts, sessions,
//! rotation and family revocation, token revocation by `authz_version`, keys.

use std::time::{Duration, Instant};

use auth::{AuthConfig, AuthError, AuthService, PasswordCost};
use contracts::admin::AccountAdmin;
use contracts::{Role, TokenRejection, TokenVerifier, UserDirectory, UserId};
use platform::testing::TestPostgres;
use platform::Db;

enum Backing {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres(#[allow(dead_code)] TestPostgres),
}

fn cheap() -> AuthConfig {
    AuthConfig {
        password_cost: PasswordCost {
            memory_kib: 1024,
            iterations: 1,
            parallelism: 1,
        },
        ..AuthConfig::default()
    }
}

async fn sqlite() -> (Db, Backing) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite_owner(dir.path(), "auth").await.unwrap();
    (db, Backing::Sqlite(dir))
}

async fn postgres() -> (Db, Backing) {
    let pg = TestPostgres::new().await.unwrap();
    let db = pg.owner("auth").await.unwrap();
    (db, Backing::Postgres(pg))
}

async fn accounts_log_in_and_sessions_rotate(db: Db) {
    let auth = AuthService::open(db, cheap()).await.unwrap();
    let ada = auth
        .register("ada", "correct horse", Role::User)
        .await
        .unwrap();
    assert!(matches!(
        auth.register("ada", "another password", Role::User).await,
        Err(AuthError::UsernameTaken(_))
    ));
    assert!(matches!(
        auth.register("a", "correct horse", Role::User).await,
        Err(AuthError::Invalid {
            field: "username",
            ..
        })
    ));
    assert!(matches!(
        auth.login("ada", "wrong password").await,
        Err(AuthError::InvalidCredentials)
    ));
    assert!(matches!(
        auth.login("nobody", "correct horse").await,
        Err(AuthError::InvalidCredentials)
    ));
    let session = auth.login("ada", "correct horse").await.unwrap();
    let principal = auth.verify_access(&session.access_token).await.unwrap();
    assert_eq!(principal.user_id, ada.id);
    assert_eq!(principal.role, Role::User);
    assert!(auth.user_exists(ada.id).await.unwrap());
    assert!(!auth.user_exists(UserId(9_999)).await.unwrap());

    let second = auth.refresh(&session.refresh_token).await.unwrap();
    assert_ne!(second.refresh_token, session.refresh_token);
    assert!(matches!(
        auth.refresh(&session.refresh_token).await,
        Err(AuthError::RefreshReused)
    ));
    assert!(
        matches!(
            auth.refresh(&second.refresh_token).await,
            Err(AuthError::InvalidRefresh)
        ),
        "the family is revoked"
    );
    let third = auth.login("ada", "correct horse").await.unwrap();
    auth.logout(&third.refresh_token).await.unwrap();
    assert!(auth.refresh(&third.refresh_token).await.is_err());
    assert!(matches!(
        auth.refresh("rt_not-a-token").await,
        Err(AuthError::InvalidRefresh)
    ));
}

async fn role_and_password_changes_revoke_tokens(db: Db) {
    let auth = AuthService::open(db, cheap()).await.unwrap();
    let bob = auth
        .register("bob", "correct horse", Role::User)
        .await
        .unwrap();
    let before = auth.login("bob", "correct horse").await.unwrap();
    // Verified once (and kept): the change below must still end it at once.
    assert_eq!(
        auth.verify_access(&before.access_token).await.unwrap().role,
        Role::User
    );
    let changed = auth
        .set_role(UserId(1), bob.id, Role::Setter)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(changed.role, Role::Setter);
    assert_eq!(
        auth.verify_access(&before.access_token).await,
        Err(TokenRejection::Revoked)
    );
    assert!(auth.refresh(&before.refresh_token).await.is_err());
    let after = auth.login("bob", "correct horse").await.unwrap();
    assert_eq!(
        auth.verify_access(&after.access_token).await.unwrap().role,
        Role::Setter
    );
    assert_eq!(
        auth.set_role(UserId(1), UserId(9_999), Role::Admin)
            .await
            .unwrap(),
        None
    );

    assert!(matches!(
        auth.change_password(bob.id, "wrong", "a new password")
            .await,
        Err(AuthError::InvalidCredentials)
    ));
    auth.change_password(bob.id, "correct horse", "a new password")
        .await
        .unwrap();
    assert_eq!(
        auth.verify_access(&after.access_token).await,
        Err(TokenRejection::Revoked)
    );
    auth.login("bob", "a new password").await.unwrap();

    let listed = auth.list_accounts(None, 10).await.unwrap();
    assert_eq!(listed.len(), 1);
    let (admin, password) = auth.ensure_account("root", Role::Admin).await.unwrap();
    assert!(password.is_some());
    let (again, none) = auth.ensure_account("root", Role::Admin).await.unwrap();
    assert_eq!((again.id, none), (admin.id, None), "created once");
    let page = auth.list_accounts(Some(bob.id), 10).await.unwrap();
    assert_eq!(page.iter().map(|a| a.id).collect::<Vec<_>>(), [admin.id]);
}

async fn keys_survive_a_restart(db: Db) {
    let auth = AuthService::open(db.clone(), cheap()).await.unwrap();
    auth.register("carol", "correct horse", Role::User)
        .await
        .unwrap();
    let session = auth.login("carol", "correct horse").await.unwrap();
    let jwks = auth.jwks();
    let reopened = AuthService::open(db, cheap()).await.unwrap();
    assert_eq!(reopened.jwks(), jwks, "the same keys, not new ones");
    assert!(reopened.verify_access(&session.access_token).await.is_ok());
}

async fn unknown_users_cost_as_much_as_wrong_passwords(db: Db) {
    let auth = AuthService::open(db, AuthConfig::default()).await.unwrap();
    auth.register("dave", "correct horse", Role::User)
        .await
        .unwrap();
    // Alternate the two kinds of attempt and compare medians, so load from other tests on
    // the machine affects both alike. Without the decoy an unknown user would cost a
    // database lookup (well under a millisecond) against Argon2id's tens of milliseconds.
    let (mut known, mut unknown) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        for (user, times) in [("dave", &mut known), ("nobody-at-all", &mut unknown)] {
            let started = Instant::now();
            assert!(auth.login(user, "wrong password").await.is_err());
            times.push(started.elapsed());
        }
    }
    let median = |times: &mut Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    let (known, unknown) = (median(&mut known), median(&mut unknown));
    assert!(
        known > Duration::from_millis(5),
        "Argon2id at its default cost takes time: {known:?}"
    );
    let ratio = unknown.as_secs_f64() / known.as_secs_f64();
    assert!(
        (0.33..3.0).contains(&ratio),
        "unknown {unknown:?} vs known {known:?} (median of 7)"
    );
}

/// The event types in the outbox, in order, with their aggregate and actor.
async fn recorded(db: &Db) -> Vec<(String, i64, Option<i64>)> {
    use platform::db::Row;
    db.query("SELECT event_type, aggregate_id, actor_id FROM events_outbox ORDER BY id")
        .fetch_all(db.pool())
        .await
        .unwrap()
        .iter()
        .map(|r| {
            (
                r.try_get(0).unwrap(),
                r.try_get(1).unwrap(),
                r.try_get(2).unwrap(),
            )
        })
        .collect()
}

async fn every_account_change_records_its_event(db: Db) {
    use contracts::events::types::*;
    let auth = AuthService::open(db.clone(), cheap()).await.unwrap();
    let cy = auth
        .register("cyd", "correct horse", Role::User)
        .await
        .unwrap();
    let id = cy.id.0;
    // A name that is taken records nothing: the change did not happen.
    assert!(auth
        .register("cyd", "another one", Role::User)
        .await
        .is_err());
    assert!(auth.login("cyd", "wrong password").await.is_err());
    assert!(auth.login("nobody", "wrong password").await.is_err());
    let session = auth.login("cyd", "correct horse").await.unwrap();
    let rotated = auth.refresh(&session.refresh_token).await.unwrap();
    // Reuse of the spent token revokes the family, once.
    assert!(auth.refresh(&session.refresh_token).await.is_err());
    assert!(auth.refresh(&session.refresh_token).await.is_err());
    auth.logout(&rotated.refresh_token).await.unwrap();
    let second = auth.login("cyd", "correct horse").await.unwrap();
    auth.logout(&second.refresh_token).await.unwrap();
    auth.set_role(UserId(77), cy.id, Role::Setter)
        .await
        .unwrap();
    auth.change_password(cy.id, "correct horse", "a new password")
        .await
        .unwrap();
    let s = |t: &str| t.to_string();
    assert_eq!(
        recorded(&db).await,
        vec![
            (s(ACCOUNT_REGISTERED), id, Some(id)),
            (s(LOGIN_FAILED), id, None),
            (s(LOGIN_FAILED), 0, None),
            (s(LOGIN_SUCCEEDED), id, Some(id)),
            (s(REFRESH_FAMILY_REVOKED), id, Some(id)),
            (s(LOGIN_SUCCEEDED), id, Some(id)),
            (s(LOGGED_OUT), id, Some(id)),
            (s(ROLE_CHANGED), id, Some(77)),
            (s(PASSWORD_CHANGED), id, Some(id)),
        ]
    );
}

/// A rotation: the new key signs at once, the old one still verifies the tokens it signed
/// until the overlap ends, then they are refused; another process picks the rotation up.
async fn a_rotated_key_verifies_until_its_tokens_expire(db: Db) {
    let config = AuthConfig {
        // Whole seconds (a token's `exp`): at least a second left after the issuing one.
        access_ttl: Duration::from_secs(2),
        key_overlap_margin: Duration::from_millis(500),
        ..cheap()
    };
    let auth = AuthService::open(db.clone(), config.clone()).await.unwrap();
    let other = AuthService::open(db.clone(), config).await.unwrap();
    auth.register("erin", "correct horse", Role::User)
        .await
        .unwrap();
    let before = auth.login("erin", "correct horse").await.unwrap();
    let rotation = auth.rotate_signing_key().await.unwrap();
    assert_eq!(rotation.retiring.len(), 1, "{rotation:?}");
    let after = auth.login("erin", "correct horse").await.unwrap();
    let kid = |token: &str| {
        use base64::Engine;
        let header = token.split('.').next().unwrap();
        let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header)
            .unwrap();
        serde_json::from_slice::<serde_json::Value>(&header).unwrap()["kid"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(kid(&after.access_token), rotation.new_kid);
    assert_eq!(kid(&before.access_token), rotation.retiring[0]);
    assert_eq!(auth.jwks()["keys"].as_array().unwrap().len(), 2);
    // Both verify, here and in the process that did not rotate (it loads the new key when a
    // token names it).
    for service in [&auth, &other] {
        for token in [&before.access_token, &after.access_token] {
            let verified = service.verify_access(token).await;
            assert!(verified.is_ok(), "{verified:?}");
        }
    }
    // Past the overlap (access lifetime + margin) the old key is gone.
    tokio::time::sleep(Duration::from_millis(2700)).await;
    let again = auth.rotate_signing_key().await.unwrap();
    assert_eq!(again.removed, 1, "{again:?}");
    let reopened = AuthService::open(db, cheap()).await.unwrap();
    let kids: Vec<String> = reopened.jwks()["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kids.len(), 2, "{kids:?}");
    assert!(!kids.contains(&rotation.retiring[0]), "{kids:?}");
    assert!(kids.contains(&again.new_kid) && kids.contains(&rotation.new_kid));
}

/// With a key-encryption key the signing keys are stored sealed (clear ones are sealed on
/// open); without it, or with another, the owner refuses to open; tokens survive sealing.
async fn signing_keys_are_sealed_at_rest(db: Db) {
    let clear = AuthService::open(db.clone(), cheap()).await.unwrap();
    clear
        .register("frank", "correct horse", Role::User)
        .await
        .unwrap();
    let session = clear.login("frank", "correct horse").await.unwrap();
    let kek = auth::KeyEncryptionKey::from_hex(&"5a".repeat(32)).unwrap();
    let sealed_config = AuthConfig {
        key_encryption: Some(kek),
        ..cheap()
    };
    let sealed = AuthService::open(db.clone(), sealed_config.clone())
        .await
        .unwrap();
    assert!(sealed.verify_access(&session.access_token).await.is_ok());
    sealed.rotate_signing_key().await.unwrap();
    let rows = db
        .query("SELECT secret_hex FROM signing_keys")
        .fetch_all(db.pool())
        .await
        .unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        let stored: String = platform::db::Row::try_get(&row, 0).unwrap();
        assert!(stored.starts_with("sealed:v1:"), "{stored}");
    }
    assert!(matches!(
        AuthService::open(db.clone(), cheap()).await,
        Err(AuthError::Keys(auth::KeyError::Sealed))
    ));
    let wrong = AuthConfig {
        key_encryption: Some(auth::KeyEncryptionKey::from_hex(&"a5".repeat(32)).unwrap()),
        ..cheap()
    };
    assert!(matches!(
        AuthService::open(db.clone(), wrong).await,
        Err(AuthError::Keys(auth::KeyError::WrongKey(_)))
    ));
    let reopened = AuthService::open(db, sealed_config).await.unwrap();
    assert!(reopened.verify_access(&session.access_token).await.is_ok());
}

/// Another replica (another service on the same database) ends a session: here the token
/// stops working within `VERIFIED_FOR`, however recently it was verified.
async fn another_replicas_logout_takes_effect_within_the_bound(db: Db) {
    let here = AuthService::open(db.clone(), cheap()).await.unwrap();
    let there = AuthService::open(db, cheap()).await.unwrap();
    here.register("carol", "correct horse", Role::User)
        .await
        .unwrap();
    let session = here.login("carol", "correct horse").await.unwrap();
    assert!(here.verify_access(&session.access_token).await.is_ok());
    there.logout(&session.refresh_token).await.unwrap();
    assert_eq!(
        there.verify_access(&session.access_token).await,
        Err(TokenRejection::Revoked),
        "the replica that ended the session refuses the token at once"
    );
    tokio::time::sleep(auth::VERIFIED_FOR).await;
    assert_eq!(
        here.verify_access(&session.access_token).await,
        Err(TokenRejection::Revoked)
    );
}

macro_rules! conformance {
    ($($behaviour:ident),* $(,)?) => {
        mod on_sqlite {
            $(#[tokio::test] async fn $behaviour() { let (db, _b) = super::sqlite().await; super::$behaviour(db).await; })*
        }
        mod on_postgres {
            $(#[tokio::test] async fn $behaviour() { let (db, _b) = super::postgres().await; super::$behaviour(db).await; })*
        }
    };
}

conformance!(
    accounts_log_in_and_sessions_rotate,
    role_and_password_changes_revoke_tokens,
    keys_survive_a_restart,
    unknown_users_cost_as_much_as_wrong_passwords,
    every_account_change_records_its_event,
    a_rotated_key_verifies_until_its_tokens_expire,
    signing_keys_are_sealed_at_rest,
    another_replicas_logout_takes_effect_within_the_bound,
);
