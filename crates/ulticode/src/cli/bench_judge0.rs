//! `ulticode bench judge0`: the Judge0-compatible API as its clients feel it, on `ulticode
//! up` over loopback: `wait=true` round trips (Python, and C once its build is cached), a
//! batch of 20 submissions of one C source (compiled once), and a sustained open-loop rate
//! of trivial submissions with the latency from request to finished answer.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use clap::Args;
use serde::Serialize;
use serde_json::{json, Value};

use super::bench_web::{percentile, start_server};

#[derive(Debug, Args)]
pub struct Judge0BenchArgs {
    /// Round trips per language.
    #[arg(long, default_value_t = 100)]
    round_trips: usize,
    /// Submissions per second of the sustained load.
    #[arg(long, default_value_t = 100)]
    rate: u32,
    /// Seconds of sustained load.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Judge0 submissions the server runs at once [default: the server's, one per core].
    #[arg(long)]
    workers: Option<usize>,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Serialize)]
struct Latencies {
    series: String,
    count: usize,
    errors: usize,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

impl Latencies {
    fn of(series: impl Into<String>, mut samples: Vec<Duration>, errors: usize) -> Self {
        samples.sort();
        Self {
            series: series.into(),
            count: samples.len(),
            errors,
            p50_ms: percentile(&samples, 0.50),
            p90_ms: percentile(&samples, 0.90),
            p99_ms: percentile(&samples, 0.99),
            max_ms: percentile(&samples, 1.0),
        }
    }
}

const C_HELLO: &str = "#include <stdio.h>\nint main(){puts(\"hello\");return 0;}\n";

/// One `wait=true` submission; its latency when it was accepted.
async fn round_trip(
    client: &reqwest::Client,
    base: &str,
    body: &Value,
) -> anyhow::Result<Duration> {
    let began = Instant::now();
    let response = client
        .post(format!(
            "{base}/submissions?wait=true&fields=status_id,stdout"
        ))
        .json(body)
        .send()
        .await?;
    let answer: Value = response.json().await?;
    let elapsed = began.elapsed();
    if answer["status_id"] != 3 {
        bail!("not accepted: {answer}");
    }
    Ok(elapsed)
}

async fn round_trips(
    client: &reqwest::Client,
    base: &str,
    body: &Value,
    n: usize,
) -> (Vec<Duration>, usize) {
    let (mut samples, mut errors) = (Vec::with_capacity(n), 0);
    for _ in 0..n {
        match round_trip(client, base, body).await {
            Ok(latency) => samples.push(latency),
            Err(e) => {
                errors += 1;
                eprintln!("round trip: {e}");
            }
        }
    }
    (samples, errors)
}

/// A batch of 20 of `source`, from the POST until GET shows all 20 finished.
async fn batch(client: &reqwest::Client, base: &str, source: &str) -> anyhow::Result<Duration> {
    let began = Instant::now();
    let submissions: Vec<Value> = (0..20)
        .map(|i| json!({"source_code": source, "language_id": 50, "stdin": i.to_string()}))
        .collect();
    let created: Value = client
        .post(format!("{base}/submissions/batch"))
        .json(&json!({"submissions": submissions}))
        .send()
        .await?
        .json()
        .await?;
    let tokens: Vec<&str> = created
        .as_array()
        .ok_or_else(|| anyhow!("batch refused: {created}"))?
        .iter()
        .filter_map(|slot| slot["token"].as_str())
        .collect();
    if tokens.len() != 20 {
        bail!("batch refused: {created}");
    }
    let url = format!(
        "{base}/submissions/batch?fields=status_id&tokens={}",
        tokens.join(",")
    );
    loop {
        let listed: Value = client.get(&url).send().await?.json().await?;
        let statuses: Vec<u64> = listed["submissions"]
            .as_array()
            .ok_or_else(|| anyhow!("no submissions: {listed}"))?
            .iter()
            .map(|s| s["status_id"].as_u64().unwrap_or(0))
            .collect();
        if statuses.iter().all(|s| *s > 2) {
            if statuses.iter().any(|s| *s != 3) {
                bail!("not all accepted: {statuses:?}");
            }
            return Ok(began.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// `rate` submissions per second for `seconds` (open loop), each `wait=true`.
async fn sustained(
    client: &reqwest::Client,
    base: &str,
    rate: u32,
    seconds: u64,
) -> (Vec<Duration>, usize) {
    let body = json!({"source_code": "int main(){return 0;}", "language_id": 50});
    let total = (u64::from(rate) * seconds) as usize;
    let period = Duration::from_secs_f64(1.0 / f64::from(rate.max(1)));
    let start = tokio::time::Instant::now();
    let mut tasks = Vec::with_capacity(total);
    for i in 0..total {
        tokio::time::sleep_until(start + period * i as u32).await;
        let (client, base, body) = (client.clone(), base.to_string(), body.clone());
        tasks.push(tokio::spawn(async move {
            round_trip(&client, &base, &body).await
        }));
    }
    let (mut samples, mut errors) = (Vec::with_capacity(total), 0);
    for task in tasks {
        match task.await {
            Ok(Ok(latency)) => samples.push(latency),
            Ok(Err(e)) => {
                errors += 1;
                eprintln!("sustained: {e}");
            }
            Err(_) => errors += 1,
        }
    }
    (samples, errors)
}

pub fn run(args: Judge0BenchArgs) -> anyhow::Result<ExitCode> {
    let server = start_server(&[
        "--judge0-listen",
        "127.0.0.1:0",
        "--judge0-max-queue",
        "10000",
    ])?;
    let base = server
        .announced
        .iter()
        .find_map(|line| {
            let rest = line.trim().strip_prefix("Judge0 API: ")?;
            rest.split_whitespace().next().map(str::to_string)
        })
        .ok_or_else(|| anyhow!("the Judge0 listener was not announced"))?;
    let runtime = tokio::runtime::Runtime::new()?;
    let figures = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(512)
            .timeout(Duration::from_secs(60))
            .build()?;
        let python = json!({"source_code": "print('hello')", "language_id": 71});
        let c = json!({"source_code": C_HELLO, "language_id": 50});
        // Warm up: connections, caches, and the C build.
        let _ = round_trips(&client, &base, &python, 5).await;
        let first_c = round_trip(&client, &base, &c).await?;
        let (py, py_errors) = round_trips(&client, &base, &python, args.round_trips).await;
        let (cc, c_errors) = round_trips(&client, &base, &c, args.round_trips).await;
        // A fresh source: the batch compiles it once; then the same batch again (cached).
        let fresh = format!(
            "#include <stdio.h>\nint main(){{int a;scanf(\"%d\",&a);printf(\"%d\\n\",a);return 0;}}\n/* {} */\n",
            std::process::id()
        );
        let batch_fresh = batch(&client, &base, &fresh).await?;
        let mut batches = Vec::new();
        for _ in 0..10 {
            batches.push(batch(&client, &base, &fresh).await?);
        }
        let (load, load_errors) = sustained(&client, &base, args.rate, args.seconds).await;
        anyhow::Ok(vec![
            Latencies::of("C wait=true, first (with its compile)", vec![first_c], 0),
            Latencies::of("Python hello wait=true", py, py_errors),
            Latencies::of("C hello wait=true (build cached)", cc, c_errors),
            Latencies::of("batch of 20 C, new source (1 compile)", vec![batch_fresh], 0),
            Latencies::of("batch of 20 C, same source again", batches, 0),
            Latencies::of(
                format!("sustained {} submissions/s for {} s (wait=true)", args.rate, args.seconds),
                load,
                load_errors,
            ),
        ])
    })?;
    drop(server);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("Judge0 API on `ulticode up`, loopback, latency as the client sees it");
    println!(
        "{:<52} {:>6} {:>6} {:>8} {:>8} {:>8} {:>8}",
        "series", "count", "errors", "p50 ms", "p90 ms", "p99 ms", "max ms"
    );
    for f in &figures {
        println!(
            "{:<52} {:>6} {:>6} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            f.series, f.count, f.errors, f.p50_ms, f.p90_ms, f.p99_ms, f.max_ms
        );
    }
    Ok(ExitCode::SUCCESS)
}
