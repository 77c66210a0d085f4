//! `ulticode bench http`: the API under a mixed load. Starts `ulticode up` on a scratch data
//! directory, registers users (a few per client address, as the registration limit allows),
//! holds SSE subscribers on their notification streams, then for a fixed time sends reads
//! (problem list, problem page, submission status) and submissions at fixed rates (open
//! loop: a slow answer does not slow the load down). Reports throughput, latency
//! percentiles per endpoint, errors, how far judging kept up and the server's memory.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use clap::Args;
use serde::Serialize;
use serde_json::{json, Value};

use super::bench_web::{percentile, start_server};

#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Seconds of mixed load.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Reads per second, spread evenly over the problem list, a problem page and a
    /// submission's status.
    #[arg(long, default_value_t = 5000)]
    read_rate: u32,
    /// Submissions per second (each judged in the sandbox); 0 for reads only.
    #[arg(long, default_value_t = 20)]
    submit_rate: u32,
    /// SSE subscribers held on notification streams for the whole run.
    #[arg(long, default_value_t = 1000)]
    subscribers: usize,
    /// The submissions' language: `python3`, `c`, `cpp17` or `bash` (an accepted A+B). C by
    /// default: Python's start-up alone (~15 ms of CPU per test, 8 tests per submission)
    /// would need more than this 2-core machine to judge 20 submissions a second.
    #[arg(long, default_value = "c")]
    language: String,
    /// Judge workers in the server [default: one per core].
    #[arg(long)]
    workers: Option<usize>,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

/// An accepted solution of the example problem `aplusb` per language.
pub(super) fn aplusb(language: &str) -> anyhow::Result<&'static str> {
    Ok(match language {
        "python3" => "a, b = map(int, input().split())\nprint(a + b)\n",
        "c" => "#include <stdio.h>\nint main(void) { long long a, b; scanf(\"%lld %lld\", &a, &b); printf(\"%lld\\n\", a + b); return 0; }\n",
        "cpp17" => "#include <iostream>\nint main() { long long a, b; std::cin >> a >> b; std::cout << a + b << '\\n'; }\n",
        "bash" => "read a b\necho $((a + b))\n",
        other => bail!("no A+B solution in {other}: use python3, c, cpp17 or bash"),
    })
}

/// Registrations a client address may make (the Auth owner's limit: 5 an hour).
const USERS_PER_ADDRESS: usize = 5;
/// Connections one client address may hold (the edge's limit is 128): subscribers and
/// readers come from many loopback addresses, as many clients would.
const CONNECTIONS_PER_ADDRESS: usize = 100;
/// Loopback addresses the reads come from, round robin.
const READ_ADDRESSES: u8 = 8;
/// The submission limit refills one a second per user; stay under it.
const SUBMISSIONS_PER_USER_PER_SECOND: f64 = 0.8;

#[derive(Debug, Serialize)]
struct EndpointFigures {
    endpoint: &'static str,
    requests: usize,
    per_second: f64,
    errors: usize,
    p50_ms: f64,
    p90_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

#[derive(Debug, Serialize)]
struct Figures {
    seconds: u64,
    endpoints: Vec<EndpointFigures>,
    reads_per_second: f64,
    read_errors: usize,
    /// Why requests failed: status codes or transport errors, with counts.
    error_reasons: BTreeMap<String, usize>,
    submissions_accepted: usize,
    /// Submissions refused (429, 503) or failed in transport.
    submission_errors: usize,
    /// Judged (any verdict) by the end of the load, and by the end of the drain.
    judged_during_load: usize,
    judged_after_drain: usize,
    verdicts: BTreeMap<String, usize>,
    /// Subscribers connected at the start, still connected at the end, events they got.
    subscribers: usize,
    subscribers_held: usize,
    subscriber_events: usize,
    rss_before_subscribers_mib: f64,
    rss_with_subscribers_mib: f64,
    rss_peak_mib: f64,
    rss_end_mib: f64,
}

pub(super) struct User {
    pub(super) token: String,
    /// A submission of this user's whose status is read.
    submission: Option<i64>,
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

pub(super) fn loopback(third: u8, fourth: u8) -> Option<IpAddr> {
    Some(IpAddr::V4(Ipv4Addr::new(127, 0, third, fourth)))
}

pub(super) fn client_from(address: Option<IpAddr>) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .local_address(address)
        .pool_max_idle_per_host(1024)
        .timeout(Duration::from_secs(30))
        .build()?)
}

/// A client for event streams: connecting is bounded, the stream itself is not.
fn stream_client_from(address: Option<IpAddr>) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .local_address(address)
        .connect_timeout(Duration::from_secs(30))
        .build()?)
}

async fn json_call(
    request: reqwest::RequestBuilder,
    body: &Value,
    what: &str,
) -> anyhow::Result<Value> {
    let response = request.json(body).send().await?;
    let status = response.status();
    let text = response.text().await?;
    if !status.is_success() {
        bail!("{what}: {status} {text}");
    }
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// `count` users, registered and logged in from distinct loopback addresses.
pub(super) async fn register_users(base: &str, count: usize) -> anyhow::Result<Vec<User>> {
    let mut users = Vec::with_capacity(count);
    for index in 0..count {
        let client = client_from(loopback(0, 2 + (index / USERS_PER_ADDRESS) as u8))?;
        let credentials =
            json!({"username": format!("bench-{index}"), "password": "bench password 1"});
        json_call(
            client.post(format!("{base}/api/v1/auth/register")),
            &credentials,
            "register",
        )
        .await?;
        let login = json_call(
            client.post(format!("{base}/api/v1/auth/login")),
            &credentials,
            "login",
        )
        .await?;
        let token = login["access_token"]
            .as_str()
            .ok_or_else(|| anyhow!("login gave no token"))?;
        users.push(User {
            token: token.to_string(),
            submission: None,
        });
    }
    Ok(users)
}

pub(super) async fn submit(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    body: &Value,
) -> anyhow::Result<i64> {
    let answer = json_call(
        client
            .post(format!("{base}/api/v1/submissions"))
            .bearer_auth(token),
        body,
        "submit",
    )
    .await?;
    answer["id"]
        .as_i64()
        .ok_or_else(|| anyhow!("a submission without an id"))
}

/// Holds a notification stream open, counting its events, until `stop`.
async fn subscribe(
    client: reqwest::Client,
    url: String,
    token: String,
    connected: Arc<AtomicUsize>,
    events: Arc<AtomicUsize>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> bool {
    let Ok(response) = client.get(&url).bearer_auth(&token).send().await else {
        return false;
    };
    if !response.status().is_success() {
        return false;
    }
    connected.fetch_add(1, Ordering::SeqCst);
    let mut response = response;
    loop {
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => return true,
            chunk = response.chunk() => match chunk {
                Ok(Some(bytes)) => {
                    let text = String::from_utf8_lossy(&bytes);
                    events.fetch_add(text.matches("event: unread").count(), Ordering::Relaxed);
                }
                _ => return false,
            },
        }
    }
}

/// Verdicts of `ids`, read as their authors; `None` while one is still judged.
async fn verdicts(
    client: &reqwest::Client,
    base: &str,
    ids: &[(i64, String)],
) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for (id, token) in ids {
        let view: Value = match client
            .get(format!("{base}/api/v1/submissions/{id}"))
            .bearer_auth(token)
            .send()
            .await
        {
            Ok(response) => response.json().await.unwrap_or(Value::Null),
            Err(_) => Value::Null,
        };
        let verdict = match view["status"]["state"].as_str() {
            Some("done") => view["status"]["verdict"]
                .as_str()
                .unwrap_or("?")
                .to_string(),
            _ => "pending".to_string(),
        };
        *counts.entry(verdict).or_insert(0) += 1;
    }
    counts
}

fn judged(counts: &BTreeMap<String, usize>) -> usize {
    counts
        .iter()
        .filter(|(verdict, _)| verdict.as_str() != "pending")
        .map(|(_, n)| n)
        .sum()
}

type Samples = Vec<(usize, Option<Duration>)>;

fn transport_error(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timeout".into()
    } else if error.is_connect() {
        "connect".into()
    } else {
        "transport".into()
    }
}

pub fn run(args: HttpArgs) -> anyhow::Result<ExitCode> {
    let source = aplusb(&args.language)?;
    let workers = args.workers.map(|w| w.to_string());
    let mut extra = vec!["--max-unjudged", "100000"];
    if let Some(workers) = &workers {
        extra.extend(["--workers", workers.as_str()]);
    }
    let server = start_server(&extra)?;
    let pid = server.pid();
    let base = server.base.clone();
    let runtime = tokio::runtime::Runtime::new()?;
    let args = &args;
    let figures = runtime.block_on(async move {
        let user_count = ((f64::from(args.submit_rate) / SUBMISSIONS_PER_USER_PER_SECOND).ceil()
            as usize)
            .max(1);
        let mut users = register_users(&base, user_count)
            .await
            .context("registering the bench's users")?;
        let client = client_from(None)?;
        let submission = json!({"problem": "aplusb", "language": args.language, "source": source});
        for user in &mut users {
            user.submission = Some(submit(&client, &base, &user.token, &submission).await?);
        }
        // Warm up: connections open, caches fill, the first submissions are judged.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let rss_before_subscribers = rss_mib(pid);

        let (stop, stopped) = tokio::sync::watch::channel(false);
        let (connected, events) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let mut streams = Vec::new();
        for group in 0..args.subscribers.div_ceil(CONNECTIONS_PER_ADDRESS) {
            streams.push(stream_client_from(loopback(1, 1 + group as u8))?);
        }
        let mut subscribers = Vec::with_capacity(args.subscribers);
        for index in 0..args.subscribers {
            subscribers.push(tokio::spawn(subscribe(
                streams[index / CONNECTIONS_PER_ADDRESS].clone(),
                format!("{base}/api/v1/notifications/stream"),
                users[index % users.len()].token.clone(),
                connected.clone(),
                events.clone(),
                stopped.clone(),
            )));
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while connected.load(Ordering::SeqCst) < args.subscribers && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        let rss_with_subscribers = rss_mib(pid);

        // The mixed load, open loop: one task per request, started on the schedule.
        let endpoints = [
            "GET /api/v1/problems",
            "GET /api/v1/problems/{slug}",
            "GET /api/v1/submissions/{id}",
        ];
        let read_period = Duration::from_secs_f64(1.0 / f64::from(args.read_rate.max(1)));
        let submit_rate = args.submit_rate;
        let submit_period = Duration::from_secs_f64(1.0 / f64::from(submit_rate.max(1)));
        let start = tokio::time::Instant::now();
        let end = start + Duration::from_secs(args.seconds);
        let users = Arc::new(users);
        let sampler = {
            let stopped = stopped.clone();
            tokio::spawn(async move {
                let mut peak: f64 = 0.0;
                while !*stopped.borrow() {
                    peak = peak.max(rss_mib(pid));
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                peak
            })
        };
        let submitter = {
            let (client, base, users, submission) = (
                client.clone(),
                base.clone(),
                users.clone(),
                submission.clone(),
            );
            tokio::spawn(async move {
                let mut tasks = Vec::new();
                let mut i: u32 = 0;
                loop {
                    let at = start + submit_period * i;
                    if at >= end || submit_rate == 0 {
                        break;
                    }
                    tokio::time::sleep_until(at).await;
                    let user = &users[i as usize % users.len()];
                    let (client, base, token, body) = (
                        client.clone(),
                        base.clone(),
                        user.token.clone(),
                        submission.clone(),
                    );
                    tasks.push(tokio::spawn(async move {
                        let began = Instant::now();
                        let id = submit(&client, &base, &token, &body).await;
                        (
                            began.elapsed(),
                            id.map(|id| (id, token)).map_err(|e| e.to_string()),
                        )
                    }));
                    i += 1;
                }
                let mut results = Vec::new();
                for task in tasks {
                    if let Ok(result) = task.await {
                        results.push(result);
                    }
                }
                results
            })
        };
        let mut readers = Vec::new();
        for address in 0..READ_ADDRESSES {
            readers.push(client_from(loopback(2, 1 + address))?);
        }
        let mut reads = Vec::new();
        let mut i: u32 = 0;
        loop {
            let at = start + read_period * i;
            if at >= end {
                break;
            }
            tokio::time::sleep_until(at).await;
            let kind = i as usize % endpoints.len();
            let user = &users[(i as usize / endpoints.len()) % users.len()];
            let client = &readers[i as usize % readers.len()];
            let request = match kind {
                0 => client.get(format!("{base}/api/v1/problems?limit=20")),
                1 => client.get(format!("{base}/api/v1/problems/aplusb")),
                _ => client
                    .get(format!(
                        "{base}/api/v1/submissions/{}",
                        user.submission.unwrap_or_default()
                    ))
                    .bearer_auth(&user.token),
            };
            reads.push(tokio::spawn(async move {
                let began = Instant::now();
                let outcome = match request.send().await {
                    Ok(response) if response.status().is_success() => {
                        match response.bytes().await {
                            Ok(_) => Ok(began.elapsed()),
                            Err(e) => Err(format!("body: {e}")),
                        }
                    }
                    Ok(response) => Err(response.status().to_string()),
                    Err(e) => Err(transport_error(&e)),
                };
                (kind, outcome)
            }));
            i += 1;
        }
        let mut samples: Samples = Vec::with_capacity(reads.len());
        let mut error_reasons = BTreeMap::new();
        for read in reads {
            let (kind, outcome) = read.await.unwrap_or((0, Err("task failed".into())));
            if let Err(reason) = &outcome {
                *error_reasons.entry(reason.clone()).or_insert(0) += 1;
            }
            samples.push((kind, outcome.ok()));
        }
        let submitted = submitter.await?;
        let load_seconds = start.elapsed().as_secs_f64();
        let accepted: Vec<(i64, String)> = submitted
            .iter()
            .filter_map(|(_, id)| id.clone().ok())
            .collect();
        for (_, outcome) in &submitted {
            if let Err(reason) = outcome {
                let reason = reason.split(" {").next().unwrap_or_default().to_string();
                *error_reasons.entry(reason).or_insert(0) += 1;
            }
        }
        let at_end = verdicts(&client, &base, &accepted).await;

        let _ = stop.send(true);
        let peak = sampler.await.unwrap_or_default();
        let mut held = 0;
        for subscriber in subscribers {
            held += usize::from(subscriber.await.unwrap_or(false));
        }
        let rss_end = rss_mib(pid);
        // Drain: wait (up to 2 minutes) for the backlog to be judged.
        let drain_deadline = Instant::now() + Duration::from_secs(120);
        let mut drained = at_end.clone();
        while drained.contains_key("pending") && Instant::now() < drain_deadline {
            tokio::time::sleep(Duration::from_secs(1)).await;
            drained = verdicts(&client, &base, &accepted).await;
        }

        let mut figures = Vec::new();
        for (kind, endpoint) in endpoints.iter().enumerate() {
            let of_kind: Vec<&(usize, Option<Duration>)> =
                samples.iter().filter(|(k, _)| *k == kind).collect();
            let mut latencies: Vec<Duration> = of_kind.iter().filter_map(|(_, l)| *l).collect();
            latencies.sort();
            figures.push(endpoint_figures(
                endpoint,
                of_kind.len(),
                &latencies,
                load_seconds,
            ));
        }
        let mut submit_latencies: Vec<Duration> = submitted
            .iter()
            .filter(|(_, id)| id.is_ok())
            .map(|(l, _)| *l)
            .collect();
        submit_latencies.sort();
        figures.push(endpoint_figures(
            "POST /api/v1/submissions",
            submitted.len(),
            &submit_latencies,
            load_seconds,
        ));
        let read_ok = samples.iter().filter(|(_, l)| l.is_some()).count();
        anyhow::Ok(Figures {
            seconds: args.seconds,
            endpoints: figures,
            reads_per_second: read_ok as f64 / load_seconds,
            read_errors: samples.len() - read_ok,
            error_reasons,
            submissions_accepted: accepted.len(),
            submission_errors: submitted.len() - accepted.len(),
            judged_during_load: judged(&at_end),
            judged_after_drain: judged(&drained),
            verdicts: drained,
            subscribers: args.subscribers,
            subscribers_held: held,
            subscriber_events: events.load(Ordering::Relaxed),
            rss_before_subscribers_mib: rss_before_subscribers,
            rss_with_subscribers_mib: rss_with_subscribers,
            rss_peak_mib: peak,
            rss_end_mib: rss_end,
        })
    })?;
    drop(server);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
    } else {
        print_figures(&figures, args);
    }
    Ok(ExitCode::SUCCESS)
}

fn endpoint_figures(
    endpoint: &'static str,
    requests: usize,
    sorted: &[Duration],
    seconds: f64,
) -> EndpointFigures {
    EndpointFigures {
        endpoint,
        requests,
        per_second: sorted.len() as f64 / seconds,
        errors: requests - sorted.len(),
        p50_ms: percentile(sorted, 0.50),
        p90_ms: percentile(sorted, 0.90),
        p99_ms: percentile(sorted, 0.99),
        max_ms: percentile(sorted, 1.0),
    }
}

fn print_figures(f: &Figures, args: &HttpArgs) {
    println!(
        "{} s of {} reads/s and {} submissions/s ({}) with {} SSE subscribers, open loop, on loopback",
        f.seconds, args.read_rate, args.submit_rate, args.language, f.subscribers
    );
    println!(
        "{:<30} {:>9} {:>9} {:>7} {:>8} {:>8} {:>8} {:>8}",
        "endpoint", "requests", "per s", "errors", "p50 ms", "p90 ms", "p99 ms", "max ms"
    );
    for e in &f.endpoints {
        println!(
            "{:<30} {:>9} {:>9.1} {:>7} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            e.endpoint, e.requests, e.per_second, e.errors, e.p50_ms, e.p90_ms, e.p99_ms, e.max_ms
        );
    }
    println!(
        "reads: {:.0} req/s answered, {} errors",
        f.reads_per_second, f.read_errors
    );
    if !f.error_reasons.is_empty() {
        println!("errors by reason: {:?}", f.error_reasons);
    }
    println!(
        "submissions: {} accepted, {} refused or failed; judged {} by the end of the load, {} after the drain; verdicts {:?}",
        f.submissions_accepted, f.submission_errors, f.judged_during_load, f.judged_after_drain, f.verdicts
    );
    println!(
        "SSE: {} of {} subscribers held to the end, {} events",
        f.subscribers_held, f.subscribers, f.subscriber_events
    );
    println!(
        "server RSS: {:.1} MiB before the subscribers, {:.1} MiB with them (+{:.1}), peak {:.1}, end {:.1}",
        f.rss_before_subscribers_mib,
        f.rss_with_subscribers_mib,
        f.rss_with_subscribers_mib - f.rss_before_subscribers_mib,
        f.rss_peak_mib,
        f.rss_end_mib
    );
}
