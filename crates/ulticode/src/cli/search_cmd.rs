//! `ulticode search-worker`: the distributed shape's search index in a process of its own.
//! It consumes the search stream (Redis), answers `serve`'s queries on its internal route,
//! and rebuilds from `serve`'s internal documents route when its index is empty (or always,
//! with `--rebuild`). No database credentials: it writes only its own index.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use platform::{Metrics, Shutdown};
use queue::events::{run_consumer, ConsumerConfig};

use super::services::{hostname, init_logging, QueueArgs};

#[derive(Debug, Args)]
pub struct SearchWorkerArgs {
    #[command(flatten)]
    queue: QueueArgs,
    /// The index's directory (created if missing).
    #[arg(long, env = "ULTICODE_SEARCH_INDEX_DIR")]
    index_dir: PathBuf,
    /// Serve `/internal/v1/search` (for `serve --search-url`) here.
    #[arg(long, default_value = "127.0.0.1:7803")]
    listen: SocketAddr,
    /// The token `serve` presents, and this worker presents to `serve` (a secret: never
    /// logged).
    #[arg(long, env = "ULTICODE_SERVICE_TOKEN", hide_env_values = true)]
    service_token: String,
    /// `serve`'s address, whose internal route lists App's documents (for rebuilds).
    #[arg(long, env = "ULTICODE_DOCUMENTS_URL")]
    documents_url: Option<String>,
    /// Rebuild the index from `--documents-url` at start even when it is not empty.
    #[arg(long)]
    rebuild: bool,
}

pub fn run(args: SearchWorkerArgs) -> anyhow::Result<ExitCode> {
    init_logging();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let shutdown = Shutdown::new();
        shutdown.trigger_on_signals();
        let index = search::SearchIndex::open(&args.index_dir)
            .with_context(|| format!("open the index in {}", args.index_dir.display()))?;
        if let Some(url) = &args.documents_url {
            let source = search::http::HttpDocuments::new(url, &args.service_token);
            if args.rebuild {
                let n = index.rebuild(&source).await.context("rebuild the index")?;
                tracing::info!(documents = n, "search index rebuilt");
            } else {
                super::search_api::rebuild_if_empty(&index, &source).await;
            }
        }
        let streams = args.queue.open_events().await?;
        let stream = streams
            .stream(contracts::events::consumers::SEARCH)
            .context("no search stream")?;
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .context("bind the search port")?;
        tracing::info!(listen = %listener.local_addr()?, "search worker up");
        let app = search::http::internal_routes(
            index.clone(),
            platform::http::ServiceToken(args.service_token.clone().into()),
        );
        let serving = tokio::spawn({
            let shutdown = shutdown.clone();
            async move {
                let _ = platform::edge::serve(
                    listener,
                    app,
                    platform::edge::ConnectionPolicy::default(),
                    async move { shutdown.triggered().await },
                )
                .await;
            }
        });
        let consumer = format!("search-{}-{}", hostname(), std::process::id());
        run_consumer(
            stream,
            Arc::new(index),
            ConsumerConfig::new(consumer),
            Metrics::new(),
            shutdown.clone(),
        )
        .await;
        let _ = platform::lifecycle::drain(serving, Duration::from_secs(30)).await;
        Ok(ExitCode::SUCCESS)
    })
}
