//! Backups: `ulticode backup` while the service runs, `ulticode restore` into a new data
//! directory (or database), and every account, problem, submission and verdict is there.

use platform::db::Row;
use platform::Db;
use reqwest::StatusCode;

use crate::harness::{
    run_ulticode as ulticode, source, spawn_distributed, spawn_up, spawn_up_in, Api, Session,
};

/// An accepted and a wrong submission of `user`, judged.
async fn judged_pair(api: &Api, user: &Session) -> (i64, i64) {
    let accepted = api
        .submit(
            user,
            "aplusb",
            "c",
            &source("aplusb/submissions/accepted/sum.c"),
        )
        .await;
    let wrong = api
        .submit(
            user,
            "aplusb",
            "python3",
            &source("aplusb/submissions/wrong_answer/difference.py"),
        )
        .await;
    for (id, verdict) in [(accepted, "AC"), (wrong, "WA")] {
        let events = api.watch(user, id).await;
        assert_eq!(events.last().unwrap().1["verdict"], verdict, "{events:?}");
    }
    (accepted, wrong)
}

#[tokio::test]
async fn an_embedded_backup_taken_while_serving_restores_everything() {
    let service = spawn_up();
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let ada = api.account("backup-ada").await;
    let (accepted, wrong) = judged_pair(&api, &ada).await;

    let data = service
        .data_dir
        .as_ref()
        .unwrap()
        .path()
        .to_str()
        .unwrap()
        .to_string();
    let backups = tempfile::tempdir().unwrap();
    let to = backups.path().join("first");
    let to = to.to_str().unwrap();
    let (ok, said) = ulticode(&["backup", "--data-dir", &data, "--to", to]);
    assert!(ok, "{said}");
    // The management console and API show it.
    let mut console = crate::console::Browser::new(&service);
    console.login("admin", &service.admin_password).await;
    let page = console.get("/manage/system").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body.contains("id=\"backups\"") && page.body.contains(to),
        "{}",
        page.body
    );
    let (status, list) = api.get("/api/v1/admin/backups", Some(&admin.access)).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list[0]["shape"], "embedded", "{list}");
    assert_eq!(list[0]["location"], to, "{list}");
    assert!(list[0]["bytes"].as_i64().unwrap() > 0, "{list}");
    for owner in [
        "auth",
        "app",
        "submission",
        "admin",
        "notification",
        "queue",
    ] {
        assert!(
            list[0]["owners"]
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o == owner),
            "{owner} missing: {list}"
        );
    }

    // Refusals: into a directory that holds something, over live data, a damaged backup.
    let (ok, said) = ulticode(&["backup", "--data-dir", &data, "--to", to]);
    assert!(!ok && said.contains("not empty"), "{said}");
    let (ok, said) = ulticode(&["restore", "--from", to, "--data-dir", &data]);
    assert!(!ok && said.contains("in use"), "{said}");
    let damaged = backups.path().join("damaged");
    std::fs::create_dir(&damaged).unwrap();
    for entry in std::fs::read_dir(to).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), damaged.join(entry.file_name())).unwrap();
    }
    let mut bytes = std::fs::read(damaged.join("auth.db")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(damaged.join("auth.db"), bytes).unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let fresh_path = fresh.path().to_str().unwrap();
    let (ok, said) = ulticode(&[
        "restore",
        "--from",
        damaged.to_str().unwrap(),
        "--data-dir",
        fresh_path,
    ]);
    assert!(!ok && said.contains("differs from the manifest"), "{said}");
    assert!(!fresh.path().join("auth.db").exists());

    let admin_password = service.admin_password.clone();
    drop(service);
    let (ok, said) = ulticode(&["restore", "--from", to, "--data-dir", fresh_path]);
    assert!(ok, "{said}");
    let restored = spawn_up_in(fresh);
    let api = Api::new(&restored);
    let ada = api.login("backup-ada", "password-of-some-length").await;
    let admin = api.login("admin", &admin_password).await;
    for (id, verdict) in [(accepted, "AC"), (wrong, "WA")] {
        let (status, view) = api
            .get(&format!("/api/v1/submissions/{id}"), Some(&ada.access))
            .await;
        assert_eq!(status, StatusCode::OK, "{view}");
        assert_eq!(view["status"]["verdict"], verdict, "{view}");
        assert_eq!(view["status"]["state"], "done", "{view}");
    }
    let (status, problem) = api
        .get("/api/v1/problems/aplusb", Some(&admin.access))
        .await;
    assert_eq!(status, StatusCode::OK, "{problem}");
    assert_eq!(problem["has_test_data"], true, "{problem}");
    // The restored data judges: its packages came along.
    let again = api
        .submit(
            &ada,
            "aplusb",
            "c",
            &source("aplusb/submissions/accepted/sum.c"),
        )
        .await;
    assert_eq!(
        api.watch(&ada, again).await.last().unwrap().1["verdict"],
        "AC"
    );
}

#[tokio::test]
async fn a_postgresql_backup_restores_into_a_new_database() {
    let service = spawn_distributed().await;
    let api = Api::new(&service);
    let admin = api.login("admin", &service.admin_password).await;
    let ada = api.account("pg-backup-ada").await;
    let (accepted, wrong) = judged_pair(&api, &ada).await;

    let url = service.database_url.clone().unwrap();
    let backups = tempfile::tempdir().unwrap();
    let to = backups.path().join("pg");
    let to = to.to_str().unwrap();
    let (ok, said) = ulticode(&["backup", "--database-url", &url, "--to", to]);
    assert!(ok, "{said}");
    let (status, list) = api.get("/api/v1/admin/backups", Some(&admin.access)).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list[0]["shape"], "distributed", "{list}");

    // Declared after the service, so dropped first: the restored schemas belong to the
    // service's roles, which go when the service's database does.
    let target = platform::testing::TestPostgres::new().await.unwrap();
    let (ok, said) = ulticode(&["restore", "--from", to, "--database-url", &target.url()]);
    assert!(ok, "{said}");
    let (ok, said) = ulticode(&["restore", "--from", to, "--database-url", &target.url()]);
    assert!(!ok && said.contains("already has"), "{said}");

    let owner = |name: &'static str| {
        let url = target.url();
        async move { Db::connect(&url, Some(name), 1).await.unwrap() }
    };
    let auth = owner("auth").await;
    let users: i64 = auth
        .query("SELECT COUNT(*) FROM users WHERE username = $1")
        .bind("pg-backup-ada".to_string())
        .fetch_one(auth.pool())
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(users, 1);
    let submissions = owner("submission").await;
    for (id, verdict) in [(accepted, "AC"), (wrong, "WA")] {
        let stored: String = submissions
            .query("SELECT verdict FROM submissions WHERE id = $1")
            .bind(id)
            .fetch_one(submissions.pool())
            .await
            .unwrap()
            .try_get(0)
            .unwrap();
        assert_eq!(stored, verdict);
    }
    let app = owner("app").await;
    let packaged: i64 = app
        .query(
            "SELECT COUNT(*) FROM problems p JOIN packages k ON k.hash = p.package_hash \
             WHERE p.slug = 'aplusb'",
        )
        .fetch_one(app.pool())
        .await
        .unwrap()
        .try_get(0)
        .unwrap();
    assert_eq!(packaged, 1);
    for db in [auth, submissions, app] {
        db.close().await;
    }
    drop(target);
}
