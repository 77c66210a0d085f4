//! One database handle for both backends.
//!
//! Owners write portable SQL with `$1` placeholders and a few tokens the handle renders per
//! backend: `{now}` (database clock, epoch milliseconds), `{skip_locked}` (`FOR UPDATE SKIP
//! LOCKED` on PostgreSQL; nothing on SQLite, whose single connection per file already
//! serialises writers). On PostgreSQL every owner has its own schema (and login role, see
//! [`provision_owner`]) and its connections' `search_path` points there; on SQLite every owner
//! has its own file.

use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, AssertSqlSafe, Executor};

pub use sqlx::any::AnyQueryResult;
pub use sqlx::any::AnyRow;
pub use sqlx::{Any, Row, Transaction};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("unsupported database URL {0:?} (expected postgres:// or sqlite://)")]
    UnsupportedUrl(String),
    #[error("invalid owner name {0:?}")]
    InvalidOwner(String),
    #[error(transparent)]
    Sql(#[from] sqlx::Error),
}

impl DbError {
    /// A unique-constraint violation (both backends).
    pub fn is_unique_violation(&self) -> bool {
        match self {
            DbError::Sql(sqlx::Error::Database(e)) => e.is_unique_violation(),
            _ => false,
        }
    }
}

/// A nullable float as a statement parameter, which the statement reads as
/// `CAST($n AS DOUBLE PRECISION)` (both backends).
///
/// It is bound as text: sqlx's `Any` driver declares a NULL `f64` as a 4-byte float
/// (sqlx issue 4284), and PostgreSQL keeps the parameter types of a statement's first run, so
/// a cached statement first run with NULL refused every number after it ("incorrect binary
/// data format"): an IOI verdict after an ICPC one on the same connection. A float prints as
/// the shortest text that reads back as the same value.
pub fn nullable_float(value: Option<f64>) -> Option<String> {
    value.map(|v| v.to_string())
}

/// A pooled connection to one owner's storage.
#[derive(Debug, Clone)]
pub struct Db {
    pool: AnyPool,
    /// Connections for reads outside transactions: on SQLite, read-only connections beside
    /// the single writer (WAL readers never wait for it); on PostgreSQL, `pool` itself.
    readers: AnyPool,
    backend: Backend,
    url: String,
}

/// Read-only connections per SQLite file: hot reads (a problem, a submission's status, a
/// token's account) run in parallel instead of queueing behind the writer's connection.
const SQLITE_READERS: u32 = 4;

fn check_identifier(name: &str) -> Result<(), DbError> {
    let ok = !name.is_empty()
        && name.len() <= 48
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(DbError::InvalidOwner(name.to_string()))
    }
}

impl Db {
    /// Connects to `url`. On PostgreSQL, `schema` (created if missing) becomes the search path.
    pub async fn connect(
        url: &str,
        schema: Option<&str>,
        max_connections: u32,
    ) -> Result<Db, DbError> {
        sqlx::any::install_default_drivers();
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            return Err(DbError::UnsupportedUrl(url.to_string()));
        };
        if let Some(schema) = schema {
            check_identifier(schema)?;
        }
        let schema = schema.map(str::to_string);
        let options = AnyPoolOptions::new()
            .acquire_timeout(Duration::from_secs(10))
            // A SQLite connection is this process's own file handle: it cannot go stale like a
            // server's connection, and the ping before each use was a round trip to its worker
            // thread per statement.
            .test_before_acquire(backend == Backend::Postgres)
            .max_connections(match backend {
                Backend::Postgres => max_connections.max(1),
                // One connection per file: SQLite has one writer, and a single connection
                // makes every transaction a serialised one without busy-retry loops.
                Backend::Sqlite => 1,
            })
            .after_connect(move |conn, _meta| {
                let schema = schema.clone();
                Box::pin(async move {
                    match backend {
                        Backend::Postgres => {
                            if let Some(schema) = schema {
                                let sql = format!("SET search_path TO \"{schema}\"");
                                conn.execute(AssertSqlSafe(sql)).await?;
                            }
                        }
                        Backend::Sqlite => {
                            conn.execute("PRAGMA journal_mode = WAL").await?;
                            conn.execute("PRAGMA busy_timeout = 10000").await?;
                            // FULL: the WAL is synced at every commit, so what was
                            // answered 2xx survives a power failure too (NORMAL would keep
                            // it through a process crash only, losing the last commits
                            // since a checkpoint when the machine loses power).
                            conn.execute("PRAGMA synchronous = FULL").await?;
                        }
                    }
                    Ok(())
                })
            });
        let pool = options.connect(url).await?;
        let readers = match backend {
            Backend::Postgres => pool.clone(),
            // Lazy: the file exists (the writer above created it) and is in WAL mode (a
            // property of the file) by the time a reader connects.
            Backend::Sqlite => AnyPoolOptions::new()
                .acquire_timeout(Duration::from_secs(10))
                .test_before_acquire(false)
                .max_connections(SQLITE_READERS)
                .after_connect(|conn, _meta| {
                    Box::pin(async move {
                        conn.execute("PRAGMA busy_timeout = 10000").await?;
                        conn.execute("PRAGMA query_only = ON").await?;
                        Ok(())
                    })
                })
                .connect_lazy(url)?,
        };
        Ok(Db {
            pool,
            readers,
            backend,
            url: url.to_string(),
        })
    }

    /// Opens (creating if needed) the SQLite file of `owner` in `dir`.
    pub async fn sqlite_owner(dir: &std::path::Path, owner: &str) -> Result<Db, DbError> {
        check_identifier(owner)?;
        let url = format!(
            "sqlite://{}?mode=rwc",
            dir.join(format!("{owner}.db")).display()
        );
        Db::connect(&url, None, 1).await
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    /// For reads outside a transaction that need only the last committed state (several
    /// run at once on SQLite). Writes and read-then-write sequences use [`Db::pool`] or a
    /// transaction.
    pub fn readers(&self) -> &AnyPool {
        &self.readers
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Renders the backend-specific tokens of a statement.
    pub fn render(&self, sql: &str) -> String {
        let (now, skip_locked) = match self.backend {
            Backend::Postgres => (
                "(CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT))",
                "FOR UPDATE SKIP LOCKED",
            ),
            Backend::Sqlite => (
                "(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER))",
                "",
            ),
        };
        sql.replace("{now}", now)
            .replace("{skip_locked}", skip_locked)
    }

    /// A query for `sql`, rendered for this backend.
    pub fn query(&self, sql: &str) -> sqlx::query::Query<'static, Any, sqlx::any::AnyArguments> {
        sqlx::query(AssertSqlSafe(self.render(sql)))
    }

    /// Begins a transaction.
    pub async fn begin(&self) -> Result<Transaction<'static, Any>, DbError> {
        Ok(self.pool.begin().await?)
    }

    /// The database clock in epoch milliseconds.
    pub async fn now_ms(&self) -> Result<i64, DbError> {
        let row = self.query("SELECT {now}").fetch_one(&self.pool).await?;
        Ok(row.try_get(0)?)
    }

    /// Applies the migrations not yet recorded in `schema_migrations`, each in a transaction.
    pub async fn migrate(&self, migrations: &[Migration]) -> Result<(), DbError> {
        let mut tx = self.begin().await?;
        if self.backend == Backend::Postgres {
            // Concurrent starters migrate one at a time.
            tx.execute("SELECT pg_advisory_xact_lock(7405143)").await?;
        }
        tx.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
        )
        .await?;
        let applied: Vec<i64> = sqlx::query("SELECT version FROM schema_migrations")
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(|row| row.try_get(0))
            .collect::<Result<_, _>>()?;
        for migration in migrations {
            if applied.contains(&migration.version) {
                continue;
            }
            let sql = match self.backend {
                Backend::Postgres => migration.postgres,
                Backend::Sqlite => migration.sqlite,
            };
            for statement in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                tx.execute(AssertSqlSafe(statement.to_string())).await?;
            }
            self.query(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, {now})",
            )
            .bind(migration.version)
            .bind(migration.name)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    pub async fn close(&self) {
        self.readers.close().await;
        self.pool.close().await;
    }
}

/// A schema change, written once per backend (only DDL differs between them).
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub postgres: &'static str,
    pub sqlite: &'static str,
}

/// Gives `owner` its own schema and login role in the database `admin_url` points at, and
/// returns the URL the owner connects with. The role owns its schema and nothing else: it has
/// no USAGE on any other owner's schema. `role_prefix` keeps roles (which are cluster-wide)
/// of different databases apart.
pub async fn provision_owner(
    admin_url: &str,
    owner: &str,
    role_prefix: &str,
) -> Result<String, DbError> {
    let role = ensure_owner_role(admin_url, owner, role_prefix).await?;
    let admin = Db::connect(admin_url, None, 1).await?;
    admin
        .pool()
        .execute(AssertSqlSafe(format!(
            "CREATE SCHEMA IF NOT EXISTS \"{owner}\" AUTHORIZATION \"{role}\""
        )))
        .await?;
    // Nobody may create objects in `public` behind the owners' backs.
    admin
        .pool()
        .execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
        .await?;
    admin.close().await;
    Ok(with_user(admin_url, &role))
}

/// Creates `owner`'s login role `{role_prefix}_{owner}` when it does not exist (roles are
/// cluster-wide); its name.
pub async fn ensure_owner_role(
    admin_url: &str,
    owner: &str,
    role_prefix: &str,
) -> Result<String, DbError> {
    check_identifier(owner)?;
    check_identifier(role_prefix)?;
    let role = format!("{role_prefix}_{owner}");
    let admin = Db::connect(admin_url, None, 1).await?;
    let exists: i64 = admin
        .query("SELECT COUNT(*) FROM pg_roles WHERE rolname = $1")
        .bind(role.clone())
        .fetch_one(admin.pool())
        .await?
        .try_get(0)?;
    if exists == 0 {
        admin
            .pool()
            .execute(AssertSqlSafe(format!("CREATE ROLE \"{role}\" LOGIN")))
            .await?;
    }
    admin.close().await;
    Ok(role)
}

/// `admin_url` with its user replaced.
fn with_user(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let host_part = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
    format!("{scheme}://{user}@{host_part}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_strict() {
        for good in ["submission", "app", "t_123"] {
            assert!(check_identifier(good).is_ok(), "{good}");
        }
        for bad in ["", "App", "a-b", "1abc", "x\"; DROP", &"a".repeat(49)] {
            assert!(check_identifier(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn owner_urls_replace_the_user() {
        assert_eq!(
            with_user("postgres://postgres@127.0.0.1:5432/test", "t_submission"),
            "postgres://t_submission@127.0.0.1:5432/test"
        );
        assert_eq!(
            with_user("postgres://127.0.0.1/db", "r"),
            "postgres://r@127.0.0.1/db"
        );
    }

    #[tokio::test]
    async fn sqlite_renders_tokens_and_migrates_once() {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::sqlite_owner(dir.path(), "demo").await.unwrap();
        assert_eq!(db.backend(), Backend::Sqlite);
        let migrations = [Migration {
            version: 1,
            name: "items",
            postgres: "CREATE TABLE items (id BIGINT PRIMARY KEY)",
            sqlite:
                "CREATE TABLE items (id INTEGER PRIMARY KEY); CREATE INDEX items_id ON items (id)",
        }];
        db.migrate(&migrations).await.unwrap();
        db.migrate(&migrations).await.unwrap();
        let now = db.now_ms().await.unwrap();
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        assert!((now - wall).abs() < 5_000, "{now} vs {wall}");
        assert!(db
            .render("SELECT 1 {skip_locked}")
            .trim_end()
            .ends_with('1'));
    }
}
