//! Mail over SMTP to a real server (aiosmtpd, which `scripts/test.sh` installs in a venv):
//! the server down → the delivery fails and is retried with backoff → the server comes back
//! → the mail is delivered once, with the right content in the recipient's language.

mod common;

use std::time::{Duration, Instant};

use common::{event, service};
use contracts::events::types;
use notification::mail::Mailer;
use platform::events::handle_once;
use platform::testing::SmtpServer;
use platform::Metrics;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_is_retried_until_the_server_answers_and_delivered_once() {
    let Some(mut server) = SmtpServer::locate() else {
        println!(
            "UNAVAILABLE smtp_server: aiosmtpd is not installed (scripts/test.sh installs it)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = platform::Db::sqlite_owner(dir.path(), "notification")
        .await
        .unwrap();
    let notifications = service(db, true).await;
    // Ada switched password-change mail off: that one is never sent.
    notifications
        .set_preferences(
            contracts::UserId(1),
            &[notification::Preference {
                kind: "password_changed".into(),
                channel: "email".into(),
                enabled: false,
            }],
        )
        .await
        .unwrap();
    let silenced = event(types::PASSWORD_CHANGED, 1, serde_json::json!({}));
    handle_once(&notifications, &silenced).await.unwrap();
    let changed = event(
        types::ROLE_CHANGED,
        1,
        serde_json::json!({ "role": "setter" }),
    );
    handle_once(&notifications, &changed).await.unwrap();
    let mut verify = event(
        types::EMAIL_VERIFICATION_REQUESTED,
        2,
        serde_json::json!({}),
    );
    verify.confidential = Some(serde_json::json!({ "token": "t0k3n", "email": "bo@example.jp" }));
    handle_once(&notifications, &verify).await.unwrap();

    let mailer = Mailer::new(&server.url(), "UltiCode <judge@example.org>").unwrap();
    let metrics = Metrics::new();
    let down = notifications.send_mail(&mailer, &metrics).await.unwrap();
    assert_eq!((down.delivered, down.failed), (0, 2), "nobody listens yet");
    let ledger = notifications
        .deliveries_of(&changed.event_id)
        .await
        .unwrap();
    let email = ledger.iter().find(|d| d.channel == "email").unwrap();
    assert_eq!((email.state.as_str(), email.attempts), ("failed", 1));
    assert!(email.reason.is_some());

    server.start();
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut delivered = 0;
    while delivered < 2 {
        assert!(
            Instant::now() < deadline,
            "not delivered after the server came back"
        );
        delivered += notifications
            .send_mail(&mailer, &metrics)
            .await
            .unwrap()
            .delivered;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        notifications
            .send_mail(&mailer, &metrics)
            .await
            .unwrap()
            .delivered,
        0,
        "once"
    );

    let mut mails = server.messages();
    mails.sort_by_key(|m| m["to"].as_str().unwrap_or_default().to_string());
    assert_eq!(mails.len(), 2, "nothing for the silenced kind: {mails:?}");
    assert!(mails
        .iter()
        .all(|m| m["subject"] != "Your password was changed"));
    let ada = &mails[0];
    assert_eq!(ada["to"], "ada@example.org");
    assert_eq!(ada["from"], "UltiCode <judge@example.org>");
    assert_eq!(ada["subject"], "Your role is now setter");
    assert!(ada["message_id"]
        .as_str()
        .unwrap()
        .ends_with("@example.org>"));
    let types: Vec<&str> = ada["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["text/plain", "text/html"]);
    assert!(ada["parts"][0]["text"]
        .as_str()
        .unwrap()
        .contains("changed your role to setter"));
    let bo = &mails[1];
    assert_eq!(bo["to"], "bo@example.jp");
    assert_eq!(bo["subject"], "メールアドレスの確認", "in Bo's language");
    let text = bo["parts"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("http://judge.example/account/verify?token=t0k3n"),
        "{text}"
    );
    assert!(bo["parts"][1]["text"]
        .as_str()
        .unwrap()
        .contains("href=\"http://judge.example/account/verify?token=t0k3n\""));

    // Once sent, the token is no longer kept in the ledger.
    let db = notifications.db();
    let kept: i64 = {
        use platform::db::Row;
        db.query("SELECT COUNT(*) FROM deliveries WHERE text_body LIKE '%t0k3n%' OR html_body LIKE '%t0k3n%'")
            .fetch_one(db.pool())
            .await
            .unwrap()
            .try_get(0)
            .unwrap()
    };
    assert_eq!(kept, 0);
}
