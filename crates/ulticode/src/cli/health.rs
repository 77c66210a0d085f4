//! `ulticode health`: asks a running UltiCode whether it is ready — the container image's
//! health check and an operator's probe, with nothing but this binary installed.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

#[derive(Debug, Args)]
pub struct HealthArgs {
    /// The service's base URL.
    #[arg(long, default_value = "http://127.0.0.1:8080", env = "ULTICODE_URL")]
    url: String,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 5)]
    timeout_s: u64,
}

/// Exit status 0 when `/health/ready` answers 200, 1 otherwise (with the reason).
pub fn health(args: HealthArgs) -> anyhow::Result<ExitCode> {
    let url = format!("{}/health/ready", args.url.trim_end_matches('/'));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let answer = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(args.timeout_s))
            .build()?;
        let response = client.get(&url).send().await?;
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        Ok::<_, reqwest::Error>((status, body))
    });
    match answer {
        Ok((status, _)) if status.is_success() => {
            println!("ready: {url}");
            Ok(ExitCode::SUCCESS)
        }
        Ok((status, body)) => {
            println!("not ready: {url} answered {status}: {body}");
            Ok(ExitCode::FAILURE)
        }
        Err(e) => {
            println!("not ready: {url}: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}
