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
);
