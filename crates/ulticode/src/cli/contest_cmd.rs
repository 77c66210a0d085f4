//! `ulticode contest import|export`: CLICS contest packages to and from a running UltiCode
//! (either shape) through its API, as an account that may manage contests.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum ContestCommand {
    /// Import a contest package (a directory or a zip): the contest, its teams and
    /// accounts, clarifications, and its submissions with their judgements (the board is
    /// reproduced without judging unless `--rejudge`). The problems must exist by id.
    Import {
        /// The package directory or zip archive.
        package: PathBuf,
        /// Judge the package's submissions afresh instead of taking its judgements.
        #[arg(long)]
        rejudge: bool,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Export a contest as a package: a zip archive when OUT ends in `.zip`, else a directory.
    Export {
        /// The contest's slug.
        slug: String,
        /// Where to write it.
        out: PathBuf,
        #[command(flatten)]
        server: ServerArgs,
    },
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The UltiCode to talk to.
    #[arg(long, default_value = "http://127.0.0.1:8080", env = "ULTICODE_URL")]
    url: String,
    #[arg(long, default_value = "admin", env = "ULTICODE_USERNAME")]
    username: String,
    /// The account's password (a secret: never logged).
    #[arg(long, env = "ULTICODE_PASSWORD", hide_env_values = true)]
    password: String,
}

impl ServerArgs {
    async fn login(&self, http: &reqwest::Client) -> anyhow::Result<String> {
        let response = http
            .post(format!(
                "{}/api/v1/auth/login",
                self.url.trim_end_matches('/')
            ))
            .json(&serde_json::json!({ "username": self.username, "password": self.password }))
            .send()
            .await
            .with_context(|| format!("reach {}", self.url))?;
        let status = response.status();
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        if !status.is_success() {
            bail!("log in as {}: {status} {}", self.username, body["detail"]);
        }
        body["access_token"]
            .as_str()
            .map(str::to_string)
            .context("the login answer has no access token")
    }
}

impl ContestCommand {
    pub fn run(self) -> anyhow::Result<ExitCode> {
        let runtime = tokio::runtime::Runtime::new()?;
        runtime.block_on(async move {
            let http = reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(600))
                .build()?;
            match self {
                ContestCommand::Import {
                    package,
                    rejudge,
                    server,
                } => {
                    let archive = if package.is_dir() {
                        let files = app::contest::package::read_dir(&package)?;
                        app::contest::package::write_zip(&files)?
                    } else {
                        std::fs::read(&package)
                            .with_context(|| format!("read {}", package.display()))?
                    };
                    let token = server.login(&http).await?;
                    let response = http
                        .post(format!(
                            "{}/api/v1/contests/import?rejudge={rejudge}",
                            server.url.trim_end_matches('/')
                        ))
                        .bearer_auth(token)
                        .header("content-type", "application/zip")
                        .body(archive)
                        .send()
                        .await?;
                    let status = response.status();
                    let body: serde_json::Value = response.json().await.unwrap_or_default();
                    if !status.is_success() {
                        bail!("import refused ({status}): {}", body["detail"]);
                    }
                    println!(
                        "imported {}: {} problems, {} teams, {} submissions, {} clarifications",
                        body["contest"],
                        body["problems"],
                        body["teams"],
                        body["submissions"],
                        body["clarifications"]
                    );
                }
                ContestCommand::Export { slug, out, server } => {
                    let token = server.login(&http).await?;
                    let response = http
                        .get(format!(
                            "{}/api/v1/contests/{slug}/package",
                            server.url.trim_end_matches('/')
                        ))
                        .bearer_auth(token)
                        .send()
                        .await?;
                    let status = response.status();
                    if !status.is_success() {
                        let body: serde_json::Value = response.json().await.unwrap_or_default();
                        bail!("export refused ({status}): {}", body["detail"]);
                    }
                    let archive = response.bytes().await?;
                    if out.extension().is_some_and(|e| e == "zip") {
                        std::fs::write(&out, &archive)
                            .with_context(|| format!("write {}", out.display()))?;
                    } else {
                        for (path, data) in app::contest::package::read_zip(&archive)? {
                            let target = out.join(&path);
                            if let Some(parent) = target.parent() {
                                std::fs::create_dir_all(parent)?;
                            }
                            std::fs::write(&target, data)
                                .with_context(|| format!("write {}", target.display()))?;
                        }
                    }
                    println!("exported {slug} to {}", out.display());
                }
            }
            Ok(ExitCode::SUCCESS)
        })
    }
}
