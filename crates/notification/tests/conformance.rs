//! The Notification owner on both backends: intents from events, preferences, the ledger
//! (one row per notification and channel, whatever is redelivered), the inbox.

mod common;

use common::{event, judged, service};
use contracts::events::types;
use contracts::UserId;
use notification::{Delivery, Preference};
use platform::events::{handle_once, Handled};
use platform::testing::TestPostgres;
use platform::Db;

enum Backing {
    Sqlite(#[allow(dead_code)] tempfile::TempDir),
    Postgres(#[allow(dead_code)] TestPostgres),
}

async fn sqlite() -> (Db, Backing) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::sqlite_owner(dir.path(), "notification").await.unwrap();
    (db, Backing::Sqlite(dir))
}

async fn postgres() -> (Db, Backing) {
    let pg = TestPostgres::new().await.unwrap();
    let db = pg.owner("notification").await.unwrap();
    (db, Backing::Postgres(pg))
}

fn row(channel: &str, state: &str, reason: Option<&str>) -> (String, String, Option<String>) {
    (channel.into(), state.into(), reason.map(str::to_string))
}

fn rows(ledger: &[Delivery]) -> Vec<(String, String, Option<String>)> {
    ledger
        .iter()
        .map(|d| (d.channel.clone(), d.state.clone(), d.reason.clone()))
        .collect()
}

async fn a_verdict_reaches_the_inbox_once_however_often_it_is_delivered(db: Db) {
    let notifications = service(db, true).await;
    let verdict = judged(1, 42, "WA");
    assert_eq!(
        handle_once(&notifications, &verdict).await.unwrap(),
        Handled::Applied
    );
    assert_eq!(
        handle_once(&notifications, &verdict).await.unwrap(),
        Handled::Duplicate
    );
    let inbox = notifications.inbox(UserId(1), None, 20).await.unwrap();
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0].title, "Submission 42: WA");
    assert_eq!(
        inbox[0].link.as_deref(),
        Some("http://judge.example/submissions/42")
    );
    // Mail about verdicts is off unless the user turns it on.
    assert_eq!(
        rows(
            &notifications
                .deliveries_of(&verdict.event_id)
                .await
                .unwrap()
        ),
        [
            row("email", "skipped", Some("preference")),
            row("in_app", "delivered", None)
        ]
    );
    assert_eq!(notifications.unread(UserId(1)).await.unwrap(), 1);
    assert!(notifications
        .mark_read(UserId(1), Some(inbox[0].id))
        .await
        .unwrap());
    assert!(
        !notifications
            .mark_read(UserId(2), Some(inbox[0].id))
            .await
            .unwrap(),
        "not bo's"
    );
    assert_eq!(notifications.unread(UserId(1)).await.unwrap(), 0);
}

async fn preferences_decide_each_channel(db: Db) {
    let notifications = service(db, true).await;
    let choose = |kind: &str, channel: &str, enabled: bool| Preference {
        kind: kind.into(),
        channel: channel.into(),
        enabled,
    };
    notifications
        .set_preferences(
            UserId(1),
            &[
                choose("submission_judged", "email", true),
                choose("submission_judged", "in_app", false),
            ],
        )
        .await
        .unwrap();
    let verdict = judged(1, 7, "AC");
    handle_once(&notifications, &verdict).await.unwrap();
    assert_eq!(
        rows(
            &notifications
                .deliveries_of(&verdict.event_id)
                .await
                .unwrap()
        ),
        [
            row("email", "pending", None),
            row("in_app", "skipped", Some("preference"))
        ]
    );
    // Bo wants mail too, but has no verified address.
    notifications
        .set_preferences(UserId(2), &[choose("submission_judged", "email", true)])
        .await
        .unwrap();
    let hers = judged(2, 8, "AC");
    handle_once(&notifications, &hers).await.unwrap();
    assert_eq!(
        rows(&notifications.deliveries_of(&hers.event_id).await.unwrap()),
        [
            row("email", "skipped", Some("no verified address")),
            row("in_app", "delivered", None)
        ]
    );
    let titles: Vec<String> = notifications
        .inbox(UserId(2), None, 20)
        .await
        .unwrap()
        .into_iter()
        .map(|n| n.title)
        .collect();
    assert_eq!(titles, ["提出 8: AC"], "in Bo's language");
    let unknown = notifications
        .set_preferences(UserId(1), &[choose("password_reset", "email", false)])
        .await;
    assert!(unknown.is_err(), "security mail cannot be switched off");
    let listed = notifications.preferences(UserId(1)).await.unwrap();
    assert!(listed.contains(&choose("submission_judged", "email", true)));
    assert!(
        listed.contains(&choose("role_changed", "email", true)),
        "a default"
    );
}

async fn verification_mail_goes_to_the_new_address_and_stays_out_of_the_inbox(db: Db) {
    let notifications = service(db, true).await;
    let mut requested = event(
        types::EMAIL_VERIFICATION_REQUESTED,
        2,
        serde_json::json!({ "email": "bo@example.jp" }),
    );
    requested.confidential =
        Some(serde_json::json!({ "token": "t0k3n", "email": "bo@example.jp" }));
    handle_once(&notifications, &requested).await.unwrap();
    assert_eq!(
        rows(
            &notifications
                .deliveries_of(&requested.event_id)
                .await
                .unwrap()
        ),
        [row("email", "pending", None)]
    );
    assert!(notifications
        .inbox(UserId(2), None, 20)
        .await
        .unwrap()
        .is_empty());
    // Without its token the event cannot become a mail: poison, not a silent skip.
    let broken = event(types::PASSWORD_RESET_REQUESTED, 1, serde_json::json!({}));
    assert!(handle_once(&notifications, &broken).await.is_err());
}

async fn without_a_mail_server_mail_is_skipped(db: Db) {
    let notifications = service(db, false).await;
    let changed = event(
        types::ROLE_CHANGED,
        1,
        serde_json::json!({ "role": "setter" }),
    );
    handle_once(&notifications, &changed).await.unwrap();
    assert_eq!(
        rows(
            &notifications
                .deliveries_of(&changed.event_id)
                .await
                .unwrap()
        ),
        [
            row("email", "skipped", Some("no mail server is configured")),
            row("in_app", "delivered", None)
        ]
    );
    // Events for nobody it knows (a deleted account) and of other types change nothing.
    handle_once(&notifications, &judged(99, 1, "AC"))
        .await
        .unwrap();
    handle_once(
        &notifications,
        &event(types::LOGIN_FAILED, 1, serde_json::json!({})),
    )
    .await
    .unwrap();
    assert_eq!(
        notifications
            .ledger_counts()
            .await
            .unwrap()
            .iter()
            .map(|(_, _, n)| n)
            .sum::<i64>(),
        2
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
    a_verdict_reaches_the_inbox_once_however_often_it_is_delivered,
    preferences_decide_each_channel,
    verification_mail_goes_to_the_new_address_and_stays_out_of_the_inbox,
    without_a_mail_server_mail_is_skipped,
);
