//! Mail over SMTP to a real server (aiosmtpd, which `scripts/test.sh` installs in a venv):
//! the server down → the delivery fails and is retried with backoff → the server comes back
//! → the mail is delivered once, with the right content in the recipient's language.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{event, service};
use contracts::events::types;
use notification::mail::Mailer;
use platform::events::handle_once;
use platform::Metrics;

fn aiosmtpd() -> Option<PathBuf> {
    let cache =
        std::env::var("ULTICODE_CACHE_DIR").unwrap_or_else(|_| "/var/cache/ulticode".into());
    let bin = Path::new(&cache).join("venv-aiosmtpd/bin/aiosmtpd");
    bin.exists().then_some(bin)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(bin: &Path, port: u16, maildir: &Path) -> Server {
    let child = Command::new(bin)
        .args([
            "-n",
            "-l",
            &format!("127.0.0.1:{port}"),
            "-c",
            "aiosmtpd.handlers.Mailbox",
        ])
        .arg(maildir)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "aiosmtpd did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    Server(child)
}

/// The messages in the maildir, parsed by Python's `email` package.
fn received(bin: &Path, maildir: &Path) -> Vec<serde_json::Value> {
    let python = bin.with_file_name("python");
    let script = r#"
import email, email.policy, json, mailbox, sys
out = []
for message in mailbox.Maildir(sys.argv[1], factory=None, create=False):
    m = email.message_from_bytes(message.as_bytes(), policy=email.policy.default)
    parts = [{"type": p.get_content_type(), "text": p.get_content()} for p in m.walk() if not p.is_multipart()]
    out.append({"subject": str(m["subject"]), "to": str(m["to"]), "from": str(m["from"]),
                "message_id": str(m["message-id"]), "parts": parts})
print(json.dumps(out))
"#;
    let output = Command::new(python)
        .arg("-c")
        .arg(script)
        .arg(maildir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_is_retried_until_the_server_answers_and_delivered_once() {
    let Some(bin) = aiosmtpd() else {
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

    let port = free_port();
    let mailer = Mailer::new(
        &format!("smtp://127.0.0.1:{port}"),
        "UltiCode <judge@example.org>",
    )
    .unwrap();
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

    let maildir = dir.path().join("maildir");
    let _server = start_server(&bin, port, &maildir);
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

    let mut mails = received(&bin, &maildir);
    mails.sort_by_key(|m| m["to"].as_str().unwrap_or_default().to_string());
    assert_eq!(mails.len(), 2, "{mails:?}");
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
