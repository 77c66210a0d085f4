//! `ulticode backup` and `ulticode restore`: every owner's data, consistent per owner.
//!
//! - Embedded shape: each owner's SQLite file is copied with `VACUUM INTO`, which reads one
//!   snapshot of the file (a read transaction), so a backup may be taken while `up` serves.
//!   Problem packages are rows of App's file, so they come along; the search index and the
//!   package cache are derived and rebuilt.
//! - Distributed shape: `pg_dump --format=custom` of each owner's schema (one snapshot per
//!   schema). The Redis judge queue is not dumped: what it held is re-driven from the
//!   Submission owner's outbox by the delivery sweeper.
//!
//! A backup is a directory with one file per owner and `manifest.json` (written last, with
//! each file's SHA-256): restore refuses a directory without it or with a file that differs,
//! and refuses to write over existing data. A finished backup is recorded in the Admin
//! owner's database, where `GET /api/v1/admin/backups` shows it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::Args;
use platform::db::Row;
use platform::Db;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The owners' databases: a file each in the embedded shape's data directory, a schema each
/// in the distributed shape's database (`queue` holds the SQL stream's tables, when it is
/// used).
const OWNERS: [&str; 6] = [
    "auth",
    "app",
    "submission",
    "admin",
    "notification",
    "queue",
];

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// The directory to write the backup to (created; must be empty when it exists).
    #[arg(long)]
    to: PathBuf,
    #[command(flatten)]
    source: Source,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// A directory written by `ulticode backup`.
    #[arg(long)]
    from: PathBuf,
    #[command(flatten)]
    target: Source,
}

/// Which shape's data: a data directory, or a PostgreSQL database.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub(super) struct Source {
    /// The embedded shape's data directory (as given to `up`).
    #[arg(long, env = "ULTICODE_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// The distributed shape's PostgreSQL, as given to `serve` (allowed to create roles).
    #[arg(long)]
    database_url: Option<String>,
}

impl Source {
    /// One owner's database in this shape (on PostgreSQL through the given, privileged URL,
    /// in the owner's schema).
    pub(super) async fn owner(&self, owner: &str) -> anyhow::Result<Db> {
        match (&self.data_dir, &self.database_url) {
            (Some(dir), _) => {
                if !dir.join(format!("{owner}.db")).exists() {
                    bail!("{} holds no {owner} database", dir.display());
                }
                Ok(Db::sqlite_owner(dir, owner).await?)
            }
            (None, Some(url)) => Ok(Db::connect(url, Some(owner), 1).await?),
            (None, None) => bail!("give --data-dir or --database-url"),
        }
    }
}

/// What a backup holds; `manifest.json`.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    shape: String,
    ulticode_version: String,
    created_at_ms: i64,
    /// The distributed shape's owner roles are `{role_prefix}_{owner}`.
    role_prefix: Option<String>,
    files: Vec<ManifestFile>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ManifestFile {
    owner: String,
    name: String,
    bytes: u64,
    sha256: String,
}

const FORMAT: u32 = 1;

fn sha256_of(path: &Path) -> anyhow::Result<String> {
    let mut file = std::fs::File::open(path).with_context(|| format!("read {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = std::io::Read::read(&mut file, &mut buffer)?;
        if read == 0 {
            return Ok(hex(&hasher.finalize()));
        }
        hasher.update(&buffer[..read]);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Creates `dir`, refusing one that holds anything.
fn empty_target(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        bail!(
            "{} is not empty: a backup goes into a new directory",
            dir.display()
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))
}

fn file_entry(owner: &str, path: &Path) -> anyhow::Result<ManifestFile> {
    Ok(ManifestFile {
        owner: owner.to_string(),
        name: path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default(),
        bytes: std::fs::metadata(path)?.len(),
        sha256: sha256_of(path)?,
    })
}

fn write_manifest(dir: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    let partial = dir.join("manifest.json.partial");
    let mut file = std::fs::File::create(&partial)?;
    file.write_all(&serde_json::to_vec_pretty(manifest)?)?;
    file.sync_all()?;
    std::fs::rename(&partial, dir.join("manifest.json"))?;
    Ok(())
}

fn read_manifest(dir: &Path) -> anyhow::Result<Manifest> {
    let path = dir.join("manifest.json");
    let text = std::fs::read(&path).with_context(|| {
        format!(
            "{} has no manifest.json: not a finished backup",
            dir.display()
        )
    })?;
    let manifest: Manifest =
        serde_json::from_slice(&text).with_context(|| format!("read {}", path.display()))?;
    if manifest.format != FORMAT {
        bail!(
            "{}: backup format {} (this ulticode reads {FORMAT})",
            path.display(),
            manifest.format
        );
    }
    for file in &manifest.files {
        if file.name.contains('/') || file.name.starts_with('.') {
            bail!("{}: bad file name {:?}", path.display(), file.name);
        }
        let actual = sha256_of(&dir.join(&file.name))?;
        if actual != file.sha256 {
            bail!(
                "{} differs from the manifest (SHA-256 {actual}, expected {})",
                file.name,
                file.sha256
            );
        }
    }
    Ok(manifest)
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

pub fn backup(args: BackupArgs) -> anyhow::Result<ExitCode> {
    empty_target(&args.to)?;
    let manifest = runtime()?.block_on(async {
        match (&args.source.data_dir, &args.source.database_url) {
            (Some(data), _) => backup_embedded(data, &args.to).await,
            (None, Some(url)) => backup_distributed(url, &args.to).await,
            (None, None) => unreachable!("clap requires one"),
        }
    })?;
    write_manifest(&args.to, &manifest)?;
    let bytes: u64 = manifest.files.iter().map(|f| f.bytes).sum();
    println!(
        "backup of {} owners ({} bytes) written to {}",
        manifest.files.len(),
        bytes,
        args.to.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The sum of the files' sizes and their owners, for the Admin owner's record.
fn summary(files: &[ManifestFile]) -> (u64, Vec<String>) {
    (
        files.iter().map(|f| f.bytes).sum(),
        files.iter().map(|f| f.owner.clone()).collect(),
    )
}

async fn backup_embedded(data: &Path, to: &Path) -> anyhow::Result<Manifest> {
    let mut files = Vec::new();
    for owner in OWNERS {
        if !data.join(format!("{owner}.db")).is_file() {
            continue;
        }
        let db = Db::sqlite_owner(data, owner).await?;
        let target = to.join(format!("{owner}.db"));
        let quoted = target.to_string_lossy().replace('\'', "''");
        db.query(&format!("VACUUM INTO '{quoted}'"))
            .execute(db.pool())
            .await
            .with_context(|| format!("copy the {owner} owner's database"))?;
        db.close().await;
        files.push(file_entry(owner, &target)?);
    }
    if files.is_empty() {
        bail!("{} holds no UltiCode data", data.display());
    }
    let (bytes, owners) = summary(&files);
    let admin = Db::sqlite_owner(data, "admin").await?;
    admin::record_backup(&admin, "embedded", &to.to_string_lossy(), bytes, &owners).await?;
    admin.close().await;
    Ok(Manifest {
        format: FORMAT,
        shape: "embedded".into(),
        ulticode_version: env!("CARGO_PKG_VERSION").into(),
        created_at_ms: now_ms(),
        role_prefix: None,
        files,
    })
}

/// The owner schemas present in the database at `url`, with their owning role.
async fn owner_schemas(url: &str) -> anyhow::Result<Vec<(String, String)>> {
    let db = Db::connect(url, None, 1).await?;
    let rows = db
        .query(
            "SELECT n.nspname::text, r.rolname::text FROM pg_namespace n \
             JOIN pg_roles r ON r.oid = n.nspowner ORDER BY n.nspname",
        )
        .fetch_all(db.pool())
        .await?;
    db.close().await;
    let mut found = Vec::new();
    for row in rows {
        let (schema, role): (String, String) = (row.try_get(0)?, row.try_get(1)?);
        if OWNERS.contains(&schema.as_str()) {
            found.push((schema, role));
        }
    }
    Ok(found)
}

fn run_tool(command: &mut std::process::Command, what: &str) -> anyhow::Result<()> {
    let output = command
        .output()
        .with_context(|| format!("run {what} (is the PostgreSQL client installed?)"))?;
    if !output.status.success() {
        bail!(
            "{what} failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

async fn backup_distributed(url: &str, to: &Path) -> anyhow::Result<Manifest> {
    let schemas = owner_schemas(url).await?;
    if schemas.is_empty() {
        bail!("the database holds no UltiCode owner schema");
    }
    let mut prefix = None;
    let mut files = Vec::new();
    for (schema, role) in &schemas {
        let role_prefix = role
            .strip_suffix(&format!("_{schema}"))
            .with_context(|| format!("schema {schema} is owned by {role}, not an owner role"))?;
        prefix.get_or_insert_with(|| role_prefix.to_string());
        let target = to.join(format!("{schema}.dump"));
        run_tool(
            std::process::Command::new("pg_dump")
                .args(["--format=custom", "--schema", schema, "--file"])
                .arg(&target)
                .arg(url),
            &format!("pg_dump of the {schema} owner"),
        )?;
        files.push(file_entry(schema, &target)?);
    }
    let (bytes, owners) = summary(&files);
    let prefix = prefix.unwrap_or_default();
    if owners.iter().any(|o| o == "admin") {
        let admin_url = platform::db::provision_owner(url, "admin", &prefix).await?;
        let admin = Db::connect(&admin_url, Some("admin"), 1).await?;
        admin::record_backup(&admin, "distributed", &to.to_string_lossy(), bytes, &owners).await?;
        admin.close().await;
    }
    Ok(Manifest {
        format: FORMAT,
        shape: "distributed".into(),
        ulticode_version: env!("CARGO_PKG_VERSION").into(),
        created_at_ms: now_ms(),
        role_prefix: Some(prefix),
        files,
    })
}

pub fn restore(args: RestoreArgs) -> anyhow::Result<ExitCode> {
    let manifest = read_manifest(&args.from)?;
    runtime()?.block_on(async {
        match (
            manifest.shape.as_str(),
            &args.target.data_dir,
            &args.target.database_url,
        ) {
            ("embedded", Some(data), _) => restore_embedded(&manifest, &args.from, data).await,
            ("distributed", _, Some(url)) => restore_distributed(&manifest, &args.from, url).await,
            (shape, _, _) => bail!(
                "this is a backup of the {shape} shape: restore it with {}",
                if shape == "embedded" {
                    "--data-dir"
                } else {
                    "--database-url"
                }
            ),
        }
    })?;
    println!(
        "restored {} owners from {}",
        manifest.files.len(),
        args.from.display()
    );
    Ok(ExitCode::SUCCESS)
}

async fn restore_embedded(manifest: &Manifest, from: &Path, data: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(data).with_context(|| format!("create {}", data.display()))?;
    let _lock = super::data_dir::DataDirLock::acquire(data)?;
    for owner in OWNERS {
        if data.join(format!("{owner}.db")).exists() {
            bail!(
                "{} already holds data ({owner}.db): restore into a new data directory",
                data.display()
            );
        }
    }
    for file in &manifest.files {
        if !OWNERS.contains(&file.owner.as_str()) {
            bail!("unknown owner {:?} in the manifest", file.owner);
        }
        let target = data.join(format!("{}.db", file.owner));
        let partial = data.join(format!("{}.db.restoring", file.owner));
        std::fs::copy(from.join(&file.name), &partial)?;
        std::fs::File::open(&partial)?.sync_all()?;
        std::fs::rename(&partial, &target)?;
        let db = Db::sqlite_owner(data, &file.owner).await?;
        let check: String = db
            .query("PRAGMA integrity_check")
            .fetch_one(db.pool())
            .await?
            .try_get(0)?;
        db.close().await;
        if check != "ok" {
            bail!("{}: integrity check says {check}", file.name);
        }
    }
    Ok(())
}

async fn restore_distributed(manifest: &Manifest, from: &Path, url: &str) -> anyhow::Result<()> {
    let prefix = manifest
        .role_prefix
        .clone()
        .context("the manifest names no role prefix")?;
    let existing = owner_schemas(url).await?;
    if let Some((schema, _)) = existing
        .iter()
        .find(|(s, _)| manifest.files.iter().any(|f| &f.owner == s))
    {
        bail!("the database already has the {schema} schema: restore into a new database");
    }
    for file in &manifest.files {
        if !OWNERS.contains(&file.owner.as_str()) {
            bail!("unknown owner {:?} in the manifest", file.owner);
        }
        platform::db::ensure_owner_role(url, &file.owner, &prefix).await?;
        run_tool(
            std::process::Command::new("pg_restore")
                .args(["--exit-on-error", "--single-transaction", "--dbname", url])
                .arg(from.join(&file.name)),
            &format!("pg_restore of the {} owner", file.owner),
        )?;
    }
    Ok(())
}
