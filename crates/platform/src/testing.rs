//! Isolated PostgreSQL databases for integration tests: each test gets a fresh database (and
//! owner roles prefixed with its name), dropped when the handle is dropped.

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
