//! The record of backups. `ulticode backup` writes a row here when a backup is complete
//! (through [`record_backup`]: the command is a process of its own, like a migration), and
//! operators read the latest ones through the API and the management console.

use axum::extract::State;
use axum::Json;
use contracts::Permission;
use platform::db::Row;
use platform::http::{ApiError, Authenticated, ProblemDetails};
use platform::{Db, DbError, Migration};
use serde::Serialize;
use utoipa::ToSchema;

use crate::AdminService;

pub(crate) const MIGRATION: Migration = Migration {
    version: 3,
    name: "backups",
    postgres: "
        CREATE TABLE backups (
            id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            taken_at BIGINT NOT NULL,
            shape TEXT NOT NULL,
            location TEXT NOT NULL,
            bytes BIGINT NOT NULL,
            owners TEXT NOT NULL
        )",
    sqlite: "
        CREATE TABLE backups (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            taken_at INTEGER NOT NULL,
            shape TEXT NOT NULL,
            location TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            owners TEXT NOT NULL
        )",
};

/// A finished backup.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct BackupRecord {
    pub id: i64,
    /// When it was finished (epoch ms).
    pub taken_at_ms: i64,
    /// `embedded` (SQLite files) or `distributed` (a `pg_dump` per owner schema).
    pub shape: String,
    /// Where it was written, as the command was given it.
    pub location: String,
    pub bytes: i64,
    /// The owners it holds.
    pub owners: Vec<String>,
}

/// Records a finished backup in the Admin owner's database `db` (migrating it first: the
/// backup command may run before any `up` of a new version).
pub async fn record_backup(
    db: &Db,
    shape: &str,
    location: &str,
    bytes: u64,
    owners: &[String],
) -> Result<i64, DbError> {
    db.migrate(crate::MIGRATIONS).await?;
    let row = db
        .query(
            "INSERT INTO backups (taken_at, shape, location, bytes, owners) \
             VALUES ({now}, $1, $2, $3, $4) RETURNING id",
        )
        .bind(shape.to_string())
        .bind(location.to_string())
        .bind(bytes.min(i64::MAX as u64) as i64)
        .bind(owners.join(","))
        .fetch_one(db.pool())
        .await?;
    Ok(row.try_get(0)?)
}

/// The latest backups, newest first.
pub(crate) async fn latest(db: &Db, limit: i64) -> Result<Vec<BackupRecord>, DbError> {
    let rows = db
        .query("SELECT id, taken_at, shape, location, bytes, owners FROM backups ORDER BY id DESC LIMIT $1")
        .bind(limit)
        .fetch_all(db.pool())
        .await?;
    rows.iter()
        .map(|r| {
            let owners: String = r.try_get(5)?;
            Ok(BackupRecord {
                id: r.try_get(0)?,
                taken_at_ms: r.try_get(1)?,
                shape: r.try_get(2)?,
                location: r.try_get(3)?,
                bytes: r.try_get(4)?,
                owners: owners
                    .split(',')
                    .filter(|o| !o.is_empty())
                    .map(str::to_string)
                    .collect(),
            })
        })
        .collect()
}

/// The last 20 backups, newest first (taken with `ulticode backup`).
#[utoipa::path(get, path = "/api/v1/admin/backups", tag = "admin",
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The latest backups, newest first", body = Vec<BackupRecord>),
        (status = 401, description = "Not authenticated", body = ProblemDetails),
        (status = 403, description = "Not an admin", body = ProblemDetails),
    ))]
pub(crate) async fn backups(
    State(admin_service): State<AdminService>,
    caller: Authenticated,
) -> Result<Json<Vec<BackupRecord>>, ApiError> {
    caller.require(Permission::ViewPipeline)?;
    Ok(Json(latest(&admin_service.db, 20).await?))
}
