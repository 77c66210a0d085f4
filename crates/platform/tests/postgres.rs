//! The platform against a real PostgreSQL: owner isolation, migrations, leases.

use std::time::Duration;

use platform::db::Row;
use platform::leases::{self, Leases};
use platform::testing::TestPostgres;
use platform::{Backend, Migration};

const TABLE: Migration = Migration {
    version: 1,
    name: "things",
    postgres: "CREATE TABLE things (id BIGINT PRIMARY KEY, secret TEXT)",
    sqlite: "CREATE TABLE things (id INTEGER PRIMARY KEY, secret TEXT)",
};

#[tokio::test]
async fn owners_get_a_schema_and_a_role_that_cannot_see_other_owners() {
    let pg = TestPostgres::new().await.unwrap();
    let app = pg.owner("app").await.unwrap();
    let submission = pg.owner("submission").await.unwrap();
    assert_eq!(app.backend(), Backend::Postgres);
    app.migrate(&[TABLE]).await.unwrap();
    submission.migrate(&[TABLE]).await.unwrap();
    app.query("INSERT INTO things (id, secret) VALUES (1, 'app data')")
        .execute(app.pool())
        .await
        .unwrap();

    // Each owner sees its own `things` through its search path.
    let count = |db: &platform::Db| {
        let db = db.clone();
        async move {
            let row = db
                .query("SELECT COUNT(*) FROM things")
                .fetch_one(db.pool())
                .await
                .unwrap();
            row.try_get::<i64, _>(0).unwrap()
        }
    };
    assert_eq!(count(&app).await, 1);
    assert_eq!(count(&submission).await, 0);

    // And cannot name the other's schema at all.
    let denied = submission
        .query("SELECT secret FROM app.things")
        .execute(submission.pool())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        denied.contains("permission denied for schema app"),
        "{denied}"
    );
    let denied = submission
        .query("CREATE TABLE public.sneaky (id BIGINT)")
        .execute(submission.pool())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        denied.contains("permission denied for schema public"),
        "{denied}"
    );
}

#[tokio::test]
async fn migrations_apply_once_even_when_started_concurrently() {
    let pg = TestPostgres::new().await.unwrap();
    let db = pg.owner("app").await.unwrap();
    let (a, b) = tokio::join!(db.migrate(&[TABLE]), db.migrate(&[TABLE]));
    a.unwrap();
    b.unwrap();
    let applied: i64 = db
        .query("SELECT COUNT(*) FROM schema_migrations")
        .fetch_one(db.pool())
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(applied, 1);
}

#[tokio::test]
async fn leases_fence_on_postgres_too() {
    let pg = TestPostgres::new().await.unwrap();
    let db = pg.owner("submission").await.unwrap();
    db.migrate(&[leases::MIGRATION]).await.unwrap();
    let leases = Leases::new(db);
    let a = leases
        .acquire("reaper", "a", Duration::from_millis(50))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        leases
            .acquire("reaper", "b", Duration::from_secs(5))
            .await
            .unwrap(),
        None
    );
    tokio::time::sleep(Duration::from_millis(80)).await;
    let b = leases
        .acquire("reaper", "b", Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    assert!(b.fence_token > a.fence_token);
    assert!(!leases.renew(&a, Duration::from_secs(5)).await.unwrap());
    assert!(leases.renew(&b, Duration::from_secs(5)).await.unwrap());
}
