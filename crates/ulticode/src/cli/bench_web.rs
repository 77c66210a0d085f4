//! `ulticode bench web`: the console's pages under a steady load. Starts `ulticode up` on a
//! scratch data directory, then requests each page at a fixed rate (open loop: a slow answer
//! does not slow the load down) and reports latency percentiles, anonymous and logged in.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use clap::Args;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct WebArgs {
    /// Requests per second, per page.
    #[arg(long, default_value_t = 200)]
    rate: u32,
    /// Seconds of load per page and visitor.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Pages to load [default: /problems and /problems/aplusb].
    #[arg(long = "page")]
    pages: Vec<String>,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct PageFigures {
    page: String,
    visitor: &'static str,
    requests: usize,
    errors: usize,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    bytes: usize,
}

/// `ulticode up` on a scratch directory, stopped on drop.
pub(super) struct Server {
    child: Child,
    pub base: String,
    /// What it printed before it said where it serves.
    pub announced: Vec<String>,
    _data: tempfile::TempDir,
}

impl Server {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

/// `ulticode up` with `extra` arguments (one judge worker unless they say `--workers`),
/// once it serves.
pub(super) fn start_server(extra: &[&str]) -> anyhow::Result<Server> {
    let data = tempfile::tempdir()?;
    let workers: &[&str] = if extra.contains(&"--workers") {
        &[]
    } else {
        &["--workers", "1"]
    };
    let mut child = Command::new(std::env::current_exe()?)
        .args(["up", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        .args(workers)
        .args(extra)
        .env("ULTICODE_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("start ulticode up")?;
    let stdout = child.stdout.take().ok_or_else(|| anyhow!("no stdout"))?;
    let (mut base, mut announced) = (None, Vec::new());
    let mut lines = BufReader::new(stdout).lines();
    for line in lines.by_ref() {
        let line = line?;
        if let Some(rest) = line.strip_prefix("UltiCode is serving on ") {
            base = Some(rest.trim().to_string());
            break;
        }
        announced.push(line);
    }
    // Keep reading: a server whose stdout is closed fails at its next line.
    std::thread::spawn(move || lines.for_each(drop));
    let base = base.ok_or_else(|| anyhow!("ulticode up exited before serving"))?;
    Ok(Server {
        child,
        base,
        announced,
        _data: data,
    })
}

pub(super) fn percentile(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[index].as_secs_f64() * 1_000.0
}

async fn load(
    client: &reqwest::Client,
    url: &str,
    cookie: Option<&str>,
    rate: u32,
    seconds: u64,
) -> (Vec<Duration>, usize, usize) {
    let total = (u64::from(rate) * seconds) as usize;
    let period = Duration::from_secs_f64(1.0 / f64::from(rate.max(1)));
    let start = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(total);
    for i in 0..total {
        tokio::time::sleep_until(start + period * i as u32).await;
        let mut request = client.get(url);
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        tasks.push(tokio::spawn(async move {
            let began = Instant::now();
            let response = request.send().await.ok()?;
            let ok = response.status().is_success();
            let bytes = response.bytes().await.ok()?.len();
            ok.then_some((began.elapsed(), bytes))
        }));
    }
    let (mut latencies, mut errors, mut bytes) = (Vec::with_capacity(total), 0, 0);
    for task in tasks {
        match task.await.ok().flatten() {
            Some((latency, size)) => {
                latencies.push(latency);
                bytes = size;
            }
            None => errors += 1,
        }
    }
    latencies.sort();
    (latencies, errors, bytes)
}

async fn session_cookie(client: &reqwest::Client, base: &str) -> anyhow::Result<String> {
    let credentials = serde_json::json!({"username": "bench", "password": "bench password 1"});
    let registered = client
        .post(format!("{base}/api/v1/auth/register"))
        .json(&credentials)
        .send()
        .await?;
    if !registered.status().is_success() {
        bail!("register: {}", registered.status());
    }
    let login = client
        .post(format!("{base}/api/v1/auth/login"))
        .json(&credentials)
        .send()
        .await?;
    let cookies: Vec<String> = login
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok()?.split(';').next().map(str::to_string))
        .collect();
    if cookies.is_empty() {
        bail!("login set no cookies: {}", login.status());
    }
    Ok(cookies.join("; "))
}

pub fn run(args: WebArgs) -> anyhow::Result<ExitCode> {
    let server = start_server(&[])?;
    let pages = if args.pages.is_empty() {
        vec!["/problems".to_string(), "/problems/aplusb".to_string()]
    } else {
        args.pages.clone()
    };
    let runtime = tokio::runtime::Runtime::new()?;
    let figures = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(256)
            .timeout(Duration::from_secs(30))
            .build()?;
        let cookie = session_cookie(&client, &server.base).await?;
        let mut figures = Vec::new();
        for page in &pages {
            let url = format!("{}{page}", server.base);
            // Warm up: the first requests open connections and fill caches.
            let _ = load(&client, &url, None, 50, 1).await;
            for (visitor, cookie) in [("anonymous", None), ("logged in", Some(cookie.as_str()))] {
                let (latencies, errors, bytes) =
                    load(&client, &url, cookie, args.rate, args.seconds).await;
                figures.push(PageFigures {
                    page: page.clone(),
                    visitor,
                    requests: latencies.len() + errors,
                    errors,
                    p50_ms: percentile(&latencies, 0.50),
                    p90_ms: percentile(&latencies, 0.90),
                    p99_ms: percentile(&latencies, 0.99),
                    max_ms: percentile(&latencies, 1.0),
                    bytes,
                });
            }
        }
        anyhow::Ok(figures)
    })?;
    drop(server);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
    } else {
        println!(
            "{} req/s per page for {} s, open loop, on loopback (latency as the client sees it)",
            args.rate, args.seconds
        );
        println!(
            "{:<20} {:<10} {:>8} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8}",
            "page",
            "visitor",
            "requests",
            "errors",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms",
            "bytes"
        );
        for f in &figures {
            println!(
                "{:<20} {:<10} {:>8} {:>6} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8}",
                f.page,
                f.visitor,
                f.requests,
                f.errors,
                f.p50_ms,
                f.p90_ms,
                f.p99_ms,
                f.max_ms,
                f.bytes
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
