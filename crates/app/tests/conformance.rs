//! The App owner's behaviour on both backends (SQLite and PostgreSQL): problems, visibility,
//! authorship, package uploads by content hash, listing filters, and the facts snapshot.

use std::path::Path;
use std::sync::Arc;

use app::{AppError, AppService, NewProblem, ProblemFilter, ProblemPatch, Visibility};
use async_trait::async_trait;
use contracts::{
    FactsError, PortError, Principal, ProblemFacts, ProblemPackagePort, Role, UserDirectory, UserId,
};
use platform::testing::TestPostgres;
use platform::Db;

enum Backing {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres(#[allow(dead_code)] TestPostgres),
}

/// Auth's directory as App sees it: every id below 100 exists; user 66 has just been demoted
/// to a plain user, everyone else keeps their role.
struct Directory;

const DEMOTED: i64 = 66;

#[async_trait]
impl UserDirectory for Directory {
    async fn user_exists(&self, user: UserId) -> Result<bool, PortError> {
        Ok(user.0 < 100)
    }

    async fn current_role(&self, user: UserId) -> Result<Option<Role>, PortError> {
        Ok(match user.0 {
            DEMOTED => Some(Role::User),
            id if id < 100 => Some(Role::Admin),
            _ => None,
        })
    }

    async fn find_user(&self, username: &str) -> Result<Option<UserId>, PortError> {
        Ok(username
            .strip_prefix("user")
            .and_then(|n| n.parse().ok())
            .filter(|n| *n < 100)
            .map(UserId))
    }
}

async fn open(db: Db) -> (AppService, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
    let app = AppService::open(db, Arc::new(Directory), cache.path().to_path_buf())
        .await
        .unwrap();
    (app, cache)
}

async fn sqlite() -> (Db, Backing) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite_owner(dir.path(), "app").await.unwrap();
    (db, Backing::Sqlite(dir))
}

async fn postgres() -> (Db, Backing) {
    let pg = TestPostgres::new().await.unwrap();
    let db = pg.owner("app").await.unwrap();
    (db, Backing::Postgres(pg))
}

fn who(id: i64, role: Role) -> Principal {
    Principal {
        user_id: UserId(id),
        username: format!("u{id}"),
        role,
    }
}

fn problem(slug: &str) -> NewProblem {
    NewProblem {
        slug: slug.into(),
        title: format!("Problem {slug}"),
        statement: "Read and write.".into(),
        tags: vec![],
        difficulty: None,
        visibility: Visibility::Public,
        time_limit_ms: None,
        memory_mib: None,
    }
}

fn aplusb() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/problems/aplusb");
    judge::package::archive::pack(&dir).unwrap()
}

async fn setters_own_their_problems_and_hidden_ones_stay_hidden(db: Db) {
    let (app, _cache) = open(db).await;
    let setter = who(1, Role::Setter);
    let other_setter = who(2, Role::Setter);
    let admin = who(3, Role::Admin);
    let user = who(4, Role::User);
    app.create(&setter, problem("mine")).await.unwrap();
    assert!(matches!(
        app.create(&setter, problem("mine")).await,
        Err(AppError::SlugTaken(_))
    ));
    assert!(matches!(
        app.create(&setter, problem("Not A Slug")).await,
        Err(AppError::Invalid { field: "slug", .. })
    ));
    let patch = || ProblemPatch {
        title: Some("Renamed".into()),
        ..ProblemPatch::default()
    };
    assert!(matches!(
        app.update(&other_setter, "mine", patch()).await,
        Err(AppError::NotAuthor)
    ));
    assert!(matches!(
        app.update(&user, "mine", patch()).await,
        Err(AppError::NotAuthor)
    ));
    assert_eq!(
        app.update(&admin, "mine", patch()).await.unwrap().title,
        "Renamed"
    );
    let hidden = NewProblem {
        visibility: Visibility::Hidden,
        ..problem("secret")
    };
    let secret = app.create(&admin, hidden).await.unwrap();
    for viewer in [None, Some(&user)] {
        assert!(matches!(
            app.get(viewer, "secret").await,
            Err(AppError::NotFound(_))
        ));
        let listed = app.list(viewer, &ProblemFilter::default()).await.unwrap();
        assert!(listed.items.iter().all(|p| p.slug != "secret"));
    }
    assert_eq!(
        app.get(Some(&setter), "secret").await.unwrap().id,
        secret.id
    );
    assert!(!app
        .visible(&user, contracts::ProblemId(secret.id))
        .await
        .unwrap());
    assert!(app
        .visible(&setter, contracts::ProblemId(secret.id))
        .await
        .unwrap());
}

async fn packages_are_validated_stored_by_hash_and_served(db: Db) {
    let (app, cache) = open(db).await;
    let setter = who(1, Role::Setter);
    app.create(&setter, problem("aplusb")).await.unwrap();
    let user = who(5, Role::User);
    assert!(matches!(
        app.capture(&user, "aplusb", None).await,
        Err(FactsError::NoTestData(_))
    ));
    let bad = app
        .upload_package(&setter, "aplusb", b"PK not really".to_vec())
        .await;
    assert!(matches!(bad, Err(AppError::BadPackage(_))), "{bad:?}");
    assert!(!app.get(None, "aplusb").await.unwrap().has_test_data);

    // A setter demoted while the upload was being validated commits nothing.
    let demoted = who(DEMOTED, Role::Setter);
    app.create(&demoted, problem("theirs")).await.unwrap();
    let late = app.upload_package(&demoted, "theirs", aplusb()).await;
    assert!(matches!(late, Err(AppError::NotAuthor)), "{late:?}");
    assert!(!app.get(None, "theirs").await.unwrap().has_test_data);

    let view = app
        .upload_package(&setter, "aplusb", aplusb())
        .await
        .unwrap();
    assert!(view.has_test_data);
    assert_eq!((view.time_limit_ms, view.memory_mib), (1000, 256));
    assert_eq!(view.samples[0].input, "1 2\n");
    assert_eq!(view.samples[0].output, "3\n");

    let facts = app.capture(&user, "aplusb", None).await.unwrap();
    assert!(facts
        .admits(user.user_id, contracts::ProblemId(view.id))
        .is_ok());
    let ghost = who(500, Role::User);
    assert!(
        !app.capture(&ghost, "aplusb", None)
            .await
            .unwrap()
            .user_exists
    );
    assert!(matches!(
        app.capture(&user, "missing", None).await,
        Err(FactsError::ProblemNotFound(_))
    ));

    // The archive round-trips through the database and installs under its content hash.
    let stored = app
        .package_archive(&facts.package_hash)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored, aplusb());
    let dir = app.package(&facts.package_hash).await.unwrap();
    assert_eq!(dir, cache.path().join(&facts.package_hash));
    assert_eq!(
        judge::package::content_hash(&dir).unwrap(),
        facts.package_hash
    );
    assert!(app.package("abcdef").await.is_err());
}

async fn listings_filter_and_page(db: Db) {
    let (app, _cache) = open(db).await;
    let setter = who(1, Role::Setter);
    for (i, (tags, difficulty)) in [
        (vec!["math"], Some(800)),
        (vec!["graphs", "math"], Some(1500)),
        (vec!["graphs"], Some(2400)),
        (vec![], None),
    ]
    .into_iter()
    .enumerate()
    {
        app.create(
            &setter,
            NewProblem {
                tags: tags.into_iter().map(String::from).collect(),
                difficulty,
                title: format!("Title {i} {}", if i == 2 { "Shortest Path" } else { "x" }),
                ..problem(&format!("p{i}"))
            },
        )
        .await
        .unwrap();
    }
    let slugs = |page: &app::ProblemPage| {
        page.items
            .iter()
            .map(|p| p.slug.clone())
            .collect::<Vec<_>>()
    };
    let list = |filter: ProblemFilter| {
        let app = app.clone();
        async move { app.list(None, &filter).await.unwrap() }
    };
    let math = list(ProblemFilter {
        tag: Some("math".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(slugs(&math), ["p0", "p1"]);
    let middle = list(ProblemFilter {
        difficulty_min: Some(1000),
        difficulty_max: Some(2000),
        ..Default::default()
    })
    .await;
    assert_eq!(slugs(&middle), ["p1"]);
    let search = list(ProblemFilter {
        q: Some("shortest".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(slugs(&search), ["p2"]);
    let first = list(ProblemFilter {
        limit: Some(3),
        ..Default::default()
    })
    .await;
    assert_eq!(slugs(&first), ["p0", "p1", "p2"]);
    let rest = list(ProblemFilter {
        limit: Some(3),
        after: first.next_after,
        ..Default::default()
    })
    .await;
    assert_eq!(slugs(&rest), ["p3"]);
    assert_eq!(rest.next_after, None);
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
    setters_own_their_problems_and_hidden_ones_stay_hidden,
    packages_are_validated_stored_by_hash_and_served,
    listings_filter_and_page,
);
