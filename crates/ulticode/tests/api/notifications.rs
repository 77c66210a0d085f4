//! Account mail and notifications end to end on `ulticode up` with a real SMTP server: an
//! address verified through the mailed link, a verdict in the inbox and the mail, a
//! password reset through the mailed link — and the audit log holding every step but no
//! token.

use std::time::{Duration, Instant};

use platform::testing::SmtpServer;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::harness::{source, spawn_up_with, Api};

/// Waits (up to 30 s) for a mail to `to` whose subject contains `subject`; returns its
/// plain-text part.
async fn mail(server: &SmtpServer, to: &str, subject: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = server
            .messages()
            .into_iter()
            .find(|m| m["to"] == to && m["subject"].as_str().is_some_and(|s| s.contains(subject)));
        if let Some(m) = found {
            return m["parts"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
        assert!(
            Instant::now() < deadline,
            "no mail {subject:?} to {to}: {:?}",
            server.messages()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn token_in(text: &str) -> String {
    let start = text.find("token=").expect("a link with a token") + "token=".len();
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

async fn until<F, Fut>(what: &str, mut probe: F) -> Value
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<Value>>,
{
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(value) = probe().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_verification_verdicts_and_password_reset_on_the_embedded_shape() {
    let Some(mut server) = SmtpServer::locate() else {
        println!(
            "UNAVAILABLE smtp_server: aiosmtpd is not installed (scripts/test.sh installs it)"
        );
        return;
    };
    server.start();
    let service = spawn_up_with(
        tempfile::tempdir().unwrap(),
        &[
            "--smtp-url".into(),
            server.url(),
            "--mail-from".into(),
            "UltiCode <judge@example.org>".into(),
        ],
    );
    let api = Api::new(&service);
    let ada = api.account("mailada").await;

    let (status, _) = api
        .call(
            reqwest::Method::PUT,
            "/api/v1/auth/me/email",
            Some(&ada.access),
            Some(json!({"email": "ada@example.org"})),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let text = mail(&server, "ada@example.org", "Confirm your mail address").await;
    assert!(
        text.contains(&format!("{}/account/verify?token=", service.base)),
        "{text}"
    );
    let token = token_in(&text);
    let (status, body) = api
        .post("/api/v1/auth/email/verify", None, json!({"token": token}))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, _) = api
        .post("/api/v1/auth/email/verify", None, json!({"token": token}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "single use");
    let (_, me) = api.get("/api/v1/auth/me", Some(&ada.access)).await;
    assert_eq!(
        (me["email"].clone(), me["email_verified"].clone()),
        (json!("ada@example.org"), json!(true))
    );

    // Verdicts by mail too, then a submission: the inbox and the mail both say so.
    let (status, _) = api
        .call(
            reqwest::Method::PUT,
            "/api/v1/notifications/preferences",
            Some(&ada.access),
            Some(json!([{"kind": "submission_judged", "channel": "email", "enabled": true}])),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let id = api
        .submit(
            &ada,
            "aplusb",
            "python3",
            &source("aplusb/submissions/accepted/sum.py"),
        )
        .await;
    let subject = format!("Submission {id}: AC");
    let inbox = until("the verdict in the inbox", || async {
        let (_, inbox) = api.get("/api/v1/notifications", Some(&ada.access)).await;
        inbox
            .as_array()
            .is_some_and(|a| a.iter().any(|n| n["title"] == subject.as_str()))
            .then_some(inbox)
    })
    .await;
    assert_eq!(inbox.as_array().unwrap().len(), 1, "{inbox}");
    let (_, unread) = api
        .get("/api/v1/notifications/unread", Some(&ada.access))
        .await;
    assert_eq!(unread["unread"], 1);
    mail(&server, "ada@example.org", &subject).await;

    // A reset asked for by address (any letter case); an unknown address gets the same answer.
    for address in ["ADA@example.org", "nobody@example.org"] {
        let (status, _) = api
            .post(
                "/api/v1/auth/password-reset",
                None,
                json!({"email": address}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED);
    }
    let text = mail(&server, "ada@example.org", "Reset your password").await;
    let token = token_in(&text);
    let new = json!({"token": token, "new_password": "a brand new password"});
    let (status, body) = api
        .post("/api/v1/auth/password-reset/confirm", None, new.clone())
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, _) = api
        .post("/api/v1/auth/password-reset/confirm", None, new)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "single use");
    let (status, _) = api.get("/api/v1/auth/me", Some(&ada.access)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "every session ended");
    api.login("mailada", "a brand new password").await;
    assert!(
        server
            .messages()
            .iter()
            .all(|m| m["to"] != "nobody@example.org"),
        "nothing for an unknown address"
    );

    // The audit log has each step, and no token anywhere.
    let admin = api.login("admin", &service.admin_password).await;
    let audit = until("the audit of the reset", || async {
        let (_, audit) = api
            .get("/api/v1/admin/audit?limit=200", Some(&admin.access))
            .await;
        audit
            .as_array()
            .is_some_and(|a| a.iter().any(|e| e["action"] == "auth.password_reset"))
            .then_some(audit)
    })
    .await;
    let actions: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    for expected in [
        "auth.email_verification_requested",
        "auth.email_verified",
        "auth.password_reset_requested",
        "auth.password_reset",
    ] {
        assert!(actions.contains(&expected), "{expected} in {actions:?}");
    }
    assert!(
        !audit.to_string().contains(&token),
        "a token in the audit log"
    );
    service.stop();
}

/// The live unread count: pushed when it changes, and ended with the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_unread_stream_follows_the_inbox_and_ends_with_the_session() {
    let service = crate::harness::spawn_up();
    let api = Api::new(&service);
    let bo = api.account("streambo").await;
    let mut response = api
        .http
        .get(format!("{}/api/v1/notifications/stream", api.base))
        .bearer_auth(&bo.access)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut text = String::new();
    let mut next = async |text: &mut String, expect: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !text.contains(expect) {
            assert!(Instant::now() < deadline, "no {expect:?} in {text:?}");
            match tokio::time::timeout(Duration::from_secs(20), response.chunk()).await {
                Ok(Ok(Some(chunk))) => text.push_str(&String::from_utf8_lossy(&chunk)),
                other => panic!("stream ended early ({other:?}): {text:?}"),
            }
        }
    };
    next(&mut text, r#"data: {"unread":0}"#).await;
    // A verdict is a notification: the count goes up without a reload.
    api.submit(
        &bo,
        "aplusb",
        "python3",
        &source("aplusb/submissions/accepted/sum.py"),
    )
    .await;
    next(&mut text, r#"data: {"unread":1}"#).await;
    // Logging out ends the stream (within the 2 s re-check).
    let (status, body) = api
        .post(
            "/api/v1/auth/logout",
            None,
            json!({"refresh_token": bo.refresh}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(_)) = response.chunk().await {}
    })
    .await;
    assert!(ended.is_ok(), "the stream outlived the session: {text:?}");
    service.stop();
}
