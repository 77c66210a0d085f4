//! The Judge0-compatible API's wiring: its settings on the command line, the languages it
//! offers (ours, under Judge0's ids), its own listener and its callbacks; and the choice of
//! where programs run (`--runner`).

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use contracts::execution::CodeRunner;
use judge::Languages;
use platform::Shutdown;

/// Where programs run without judging (the execution API's runs and the Judge0 API's jobs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerChoice {
    /// This machine's sandbox.
    Sandbox,
    /// An external Judge0 at this URL.
    Judge0(String),
}

impl std::str::FromStr for RunnerChoice {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.split_once('=') {
            None if text == "sandbox" => Ok(RunnerChoice::Sandbox),
            Some(("judge0", url)) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(RunnerChoice::Judge0(url.to_string()))
            }
            _ => Err(format!(
                "{text:?}: expected `sandbox` or `judge0=http://HOST:PORT`"
            )),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct Judge0Args {
    /// Serve the Judge0 CE 1.13.1-compatible API on this address too (Judge0's customary
    /// one is 127.0.0.1:2358; port 0 picks a free port).
    #[arg(long)]
    pub judge0_listen: Option<SocketAddr>,
    /// Serve the Judge0 API under this path on the main listener (`/judge0`).
    #[arg(long, value_parser = path_prefix)]
    pub judge0_prefix: Option<String>,
    /// `X-Auth-Token` values (space-separated) the Judge0 API requires (a secret: never
    /// logged) [default: none, no authentication].
    #[arg(long, env = "ULTICODE_JUDGE0_AUTH_TOKEN", hide_env_values = true)]
    pub judge0_auth_token: Option<String>,
    /// `X-Auth-User` values (space-separated) that may list and delete submissions
    /// [default: none, listing and deleting are refused].
    #[arg(long, env = "ULTICODE_JUDGE0_AUTHZ_TOKEN", hide_env_values = true)]
    pub judge0_authz_token: Option<String>,
    /// Submissions queued or running beyond which new ones are refused (503).
    #[arg(long, default_value_t = 1_000)]
    pub judge0_max_queue: u64,
    /// Judge0 submissions run at once [default: one per core].
    #[arg(long)]
    pub judge0_workers: Option<usize>,
    /// Where programs run without judging: `sandbox`, or `judge0=URL` for an external
    /// Judge0 (function problems still need the sandbox).
    #[arg(long, default_value = "sandbox")]
    pub runner: RunnerChoice,
    /// The `X-Auth-Token` of the external Judge0 of `--runner judge0=URL`.
    #[arg(long, env = "ULTICODE_RUNNER_TOKEN", hide_env_values = true)]
    pub runner_token: Option<String>,
}

/// A path to mount under: `/word[/word...]`, outside the API's and the console's paths.
fn path_prefix(text: &str) -> Result<String, String> {
    let words: Vec<&str> = text.strip_prefix('/').unwrap_or("").split('/').collect();
    let valid = words.iter().all(|w| {
        !w.is_empty()
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    });
    let taken = ["api", "internal", "health", "metrics", "assets", "manage"];
    if !valid || taken.contains(&words[0]) {
        return Err(format!(
            "{text:?}: expected a path such as /judge0, outside {}",
            taken.map(|t| format!("/{t}")).join(", ")
        ));
    }
    Ok(text.to_string())
}

impl Judge0Args {
    /// The runner `--runner` names; `None` for this machine's sandbox.
    pub fn external_runner(&self) -> anyhow::Result<Option<Arc<dyn CodeRunner>>> {
        match &self.runner {
            RunnerChoice::Sandbox => Ok(None),
            RunnerChoice::Judge0(url) => {
                let runner = judge0::client::Judge0Runner::new(url, self.runner_token.clone())
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                Ok(Some(Arc::new(runner)))
            }
        }
    }

    pub fn workers(&self) -> usize {
        self.judge0_workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }

    fn config(&self) -> judge0::Judge0Config {
        let tokens = |text: &Option<String>| -> Vec<String> {
            text.as_deref()
                .unwrap_or("")
                .split_whitespace()
                .map(str::to_string)
                .collect()
        };
        judge0::Judge0Config {
            max_queue_size: self.judge0_max_queue,
            authn_tokens: tokens(&self.judge0_auth_token),
            authz_tokens: tokens(&self.judge0_authz_token),
            ..judge0::Judge0Config::default()
        }
    }
}

/// Our languages that work here, as the Judge0 API offers them. A compile step that only
/// checks syntax is not a compile step there (execution jobs skip it).
fn available(languages: &Languages) -> Vec<judge0::Available> {
    languages
        .available
        .iter()
        .map(|l| judge0::Available {
            id: l.config.id.clone(),
            version: l.version.clone(),
            source_file: l.config.source_file.clone(),
            compile: l
                .config
                .compile
                .clone()
                .filter(|_| !l.config.compile_checks_only),
            run: l.config.run.clone(),
        })
        .collect()
}

/// The Judge0 API over `jobs`.
pub fn api(
    args: &Judge0Args,
    jobs: Arc<dyn contracts::jobs::ExecutionJobs>,
    languages: &Languages,
) -> judge0::Judge0 {
    judge0::Judge0::new(
        jobs,
        args.config(),
        judge0::Languages::new(&available(languages)),
        judge0::ServerInfo {
            sandbox: "UltiCode native sandbox: Linux namespaces, seccomp and cgroups \
                      (Judge0's isolate is not used)\n"
                .into(),
            license: "UltiCode is licensed under the Apache License, Version 2.0.\n\
                      Its Judge0-compatible API is an independent implementation of \
                      Judge0 CE 1.13.1's documented behaviour.\n"
                .into(),
            workers: args.workers(),
        },
    )
}

/// Binds the Judge0 listener (when asked for) and starts serving it and the callbacks;
/// prints where it serves.
pub async fn start(
    args: &Judge0Args,
    api: &judge0::Judge0,
    shutdown: &Shutdown,
) -> anyhow::Result<Vec<tokio::task::JoinHandle<()>>> {
    let mut tasks = vec![tokio::spawn(judge0::callbacks::run(
        api.clone(),
        shutdown.clone(),
    ))];
    if let Some(addr) = args.judge0_listen {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listen on {addr} for the Judge0 API"))?;
        println!(
            "  Judge0 API: http://{} (Judge0 CE {})",
            listener.local_addr()?,
            judge0::VERSION
        );
        let router = platform::edge::with_security_headers(api.router());
        let shutdown = shutdown.clone();
        tasks.push(tokio::spawn(async move {
            let closing = shutdown.clone();
            if let Err(e) = platform::edge::serve(
                listener,
                router,
                platform::edge::ConnectionPolicy::default(),
                async move { closing.triggered().await },
            )
            .await
            {
                tracing::error!(error = %e, "the Judge0 listener stopped");
            }
        }));
    }
    if let Some(prefix) = &args.judge0_prefix {
        println!("  Judge0 API: under {prefix} on the main listener");
    }
    Ok(tasks)
}
