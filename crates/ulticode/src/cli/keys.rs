//! `ulticode keys ...`: the token-signing keys of the Auth owner, from outside the serving
//! processes (which pick a rotation up at their next keyring reload, within 30 s).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use auth::{AuthConfig, AuthService, KeyEncryptionKey};
use clap::{Args, Subcommand};

use super::backup::Source;

/// Where the key that seals the signing keys at rest comes from.
#[derive(Debug, Clone, Args)]
pub struct KeyEncryptionArgs {
    /// A file holding the key-encryption key (64 hex digits) that seals the token-signing
    /// keys at rest; or set ULTICODE_KEY_ENCRYPTION_KEY to the digits themselves. Once keys
    /// are sealed, every process of the deployment needs it.
    #[arg(long, env = "ULTICODE_KEY_ENCRYPTION_KEY_FILE")]
    key_encryption_key_file: Option<PathBuf>,
}

impl KeyEncryptionArgs {
    pub fn key(&self) -> anyhow::Result<Option<KeyEncryptionKey>> {
        let text = match &self.key_encryption_key_file {
            Some(path) => std::fs::read_to_string(path)
                .with_context(|| format!("read the key-encryption key {}", path.display()))?,
            None => match std::env::var("ULTICODE_KEY_ENCRYPTION_KEY") {
                Ok(text) => text,
                Err(_) => return Ok(None),
            },
        };
        Ok(Some(KeyEncryptionKey::from_hex(&text)?))
    }

    /// The Auth owner's configuration with this key.
    pub fn auth_config(&self) -> anyhow::Result<AuthConfig> {
        Ok(AuthConfig {
            key_encryption: self.key()?,
            ..AuthConfig::default()
        })
    }
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Start signing with a new key. The current keys go on verifying until the access
    /// tokens they signed have expired (their lifetime plus a margin for processes that have
    /// not reloaded yet), and are deleted at a later rotation.
    Rotate {
        #[command(flatten)]
        source: Source,
        #[command(flatten)]
        encryption: KeyEncryptionArgs,
    },
    /// List the signing keys: which signs, which retire and when, whether sealed at rest.
    List {
        #[command(flatten)]
        source: Source,
    },
}

impl KeysCommand {
    pub fn run(self) -> anyhow::Result<ExitCode> {
        tokio::runtime::Runtime::new()?.block_on(async move {
            match self {
                KeysCommand::Rotate { source, encryption } => {
                    let db = source.owner("auth").await?;
                    let auth = AuthService::open(db.clone(), encryption.auth_config()?)
                        .await
                        .context("open the auth owner")?;
                    let rotation = auth.rotate_signing_key().await?;
                    println!("signing with {}", rotation.new_kid);
                    for kid in &rotation.retiring {
                        println!("{kid} verifies until {} (epoch ms)", rotation.retire_at_ms);
                    }
                    if rotation.removed > 0 {
                        println!("{} retired keys removed", rotation.removed);
                    }
                    db.close().await;
                }
                KeysCommand::List { source } => {
                    let db = source.owner("auth").await?;
                    for line in auth::keyring::describe(&db).await? {
                        println!("{line}");
                    }
                    db.close().await;
                }
            }
            anyhow::Ok(ExitCode::SUCCESS)
        })
    }
}
