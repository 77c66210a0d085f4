//! Test support shared by the integration suites: isolated PostgreSQL databases (each test
//! gets a fresh database, and owner roles prefixed with its name, dropped with the handle),
//! and a real SMTP server (aiosmtpd, which `scripts/test.sh` installs in a venv).

use crate::db::{provision_owner, Db, DbError};

/// The server tests use; `ULTICODE_TEST_POSTGRES` overrides it.
pub fn admin_url() -> String {
    std::env::var("ULTICODE_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A database that exists for one test.
pub struct TestPostgres {
    name: String,
    server: String,
}

impl TestPostgres {
    pub async fn new() -> Result<Self, DbError> {
        let name = format!("ut_{}", uuid::Uuid::new_v4().simple());
        let admin = Db::connect(&admin_url(), None, 1).await?;
        admin
            .query(&format!("CREATE DATABASE \"{name}\""))
            .execute(admin.pool())
            .await?;
        admin.close().await;
        let server = admin_url()
            .rsplit_once('/')
            .map(|(s, _)| s.to_string())
            .unwrap_or_default();
        Ok(Self { name, server })
    }

    /// The database's name (also the prefix of its owner roles).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The superuser URL of this database.
    pub fn url(&self) -> String {
        format!("{}/{}", self.server, self.name)
    }

    /// Provisions `owner` (schema + role) and returns its URL.
    pub async fn owner_url(&self, owner: &str) -> Result<String, DbError> {
        provision_owner(&self.url(), owner, &self.name).await
    }

    /// Connects as `owner`, in its schema.
    pub async fn owner(&self, owner: &str) -> Result<Db, DbError> {
        let url = self.owner_url(owner).await?;
        Db::connect(&url, Some(owner), 8).await
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        let name = self.name.clone();
        // Dropping runs outside any async context the test may be in.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async move {
                let admin = Db::connect(&admin_url(), None, 1).await.ok()?;
                admin
                    .query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .execute(admin.pool())
                    .await
                    .ok()?;
                let roles = admin
                    .query("SELECT rolname FROM pg_roles WHERE rolname LIKE $1")
                    .bind(format!("{name}\\_%"))
                    .fetch_all(admin.pool())
                    .await
                    .ok()?;
                for role in roles {
                    let role: String = sqlx::Row::try_get(&role, 0).ok()?;
                    let _ = admin
                        .query(&format!("DROP ROLE IF EXISTS \"{role}\""))
                        .execute(admin.pool())
                        .await;
                }
                admin.close().await;
                Some(())
            })
        })
        .join();
    }
}

/// A real SMTP server on a port of its own (aiosmtpd writing to a Maildir), stopped when
/// dropped. `None` from [`SmtpServer::locate`] when aiosmtpd is not installed.
pub struct SmtpServer {
    bin: std::path::PathBuf,
    pub port: u16,
    maildir: tempfile_dir::Dir,
    child: Option<std::process::Child>,
}

mod tempfile_dir {
    /// A directory removed when dropped.
    pub struct Dir(pub std::path::PathBuf);

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl SmtpServer {
    /// The installed server, with a free port chosen but nothing listening yet.
    pub fn locate() -> Option<SmtpServer> {
        let cache =
            std::env::var("ULTICODE_CACHE_DIR").unwrap_or_else(|_| "/var/cache/ulticode".into());
        let bin = std::path::Path::new(&cache).join("venv-aiosmtpd/bin/aiosmtpd");
        if !bin.exists() {
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let maildir =
            std::env::temp_dir().join(format!("ut-mail-{}", uuid::Uuid::new_v4().simple()));
        Some(SmtpServer {
            bin,
            port,
            maildir: tempfile_dir::Dir(maildir),
            child: None,
        })
    }

    pub fn url(&self) -> String {
        format!("smtp://127.0.0.1:{}", self.port)
    }

    /// Starts listening (and waits until it does).
    pub fn start(&mut self) {
        let child = std::process::Command::new(&self.bin)
            .args(["-n", "-l", &format!("127.0.0.1:{}", self.port)])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(&self.maildir.0)
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("start aiosmtpd");
        self.child = Some(child);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "aiosmtpd did not listen"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// The messages received so far, parsed by Python's `email` package: `subject`, `to`,
    /// `from`, `message_id`, and `parts` (`type`, decoded `text`).
    pub fn messages(&self) -> Vec<serde_json::Value> {
        if !self.maildir.0.join("new").exists() {
            return Vec::new();
        }
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
        let output = std::process::Command::new(self.bin.with_file_name("python"))
            .arg("-c")
            .arg(script)
            .arg(&self.maildir.0)
            .output()
            .expect("run python");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("messages as JSON")
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
