//! `ulticode bench burst`: a contest's last minutes. Starts `ulticode up` with a 20-test A+B,
//! submits N accepted solutions in a mix of languages as fast as the API takes them, waits
//! until every one is judged, and reports the drain time, submissions judged per second,
//! submit-to-verdict percentiles (the server's own timestamps) and the judging efficiency:
//! the CPU time the sandboxed compilers and programs used (the sandbox cgroup's `cpuacct`)
//! over cores × wall time, and where the rest of the cores' time went.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use clap::Args;
use serde::Serialize;
use serde_json::{json, Value};

use super::bench_http::{aplusb, client_from, loopback, register_users, submit};
use super::bench_web::start_server;

#[derive(Debug, Args)]
pub struct BurstArgs {
    /// Submissions in the burst.
    #[arg(long, default_value_t = 1000)]
    submissions: usize,
    /// Languages, used round robin (python3, c, cpp17, bash).
    #[arg(long, value_delimiter = ',', default_values_t = ["c".to_string(), "cpp17".to_string(), "python3".to_string()])]
    mix: Vec<String>,
    /// Tests of the problem.
    #[arg(long, default_value_t = 20)]
    tests: usize,
    /// Judge workers in the server [default: one per core].
    #[arg(long)]
    workers: Option<usize>,
    /// Give up waiting for verdicts after this many seconds.
    #[arg(long, default_value_t = 1800)]
    timeout_s: u64,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

/// Submissions one user may make at once (the API's burst per user).
const PER_USER: usize = 20;

#[derive(Debug, Serialize)]
struct Figures {
    submissions: usize,
    languages: Vec<String>,
    tests: usize,
    cores: usize,
    submit_seconds: f64,
    drain_seconds: f64,
    judged_per_second: f64,
    submit_to_verdict_p50_ms: f64,
    submit_to_verdict_p99_ms: f64,
    submit_to_verdict_max_ms: f64,
    verdicts: BTreeMap<String, usize>,
    /// CPU the sandbox measured (compilers and programs) over cores × drain time; `None`
    /// where the sandbox's cpuacct cgroup cannot be read.
    judging_efficiency: Option<f64>,
    sandbox_cpu_seconds: Option<f64>,
    /// The cores' time from the first submission to the last verdict, by who used it.
    cores_time: Option<CoresTime>,
}

/// Shares of cores × wall time (they sum to 1).
#[derive(Debug, Serialize)]
struct CoresTime {
    /// Compilers and programs, in their runs' cgroups.
    sandboxed: f64,
    /// The server's supervisors, and the inits and setup of runs outside their cgroups.
    sandbox_setup: f64,
    /// The server's own threads: HTTP, databases, the judging threads, events.
    server: f64,
    /// Everything else: kernel threads, other services, this benchmark's client.
    other: f64,
    idle: f64,
}

/// Cumulative CPU seconds, read from `/proc` and the sandbox's cgroup.
struct CpuReading {
    /// Every CPU's time, busy or idle (`/proc/stat`).
    all: f64,
    idle: f64,
    sandboxed: f64,
    /// The server's threads.
    server: f64,
    /// The server's supervisors and what they reaped (inits, and through them the programs),
    /// and what the server reaped (supervisors that ended).
    supervisor_trees: f64,
}

impl CpuReading {
    fn take(server: u32, sandbox_cpu: &Path) -> Option<Self> {
        let tick = {
            // SAFETY: sysconf has no preconditions.
            let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
            1.0 / ticks.max(1) as f64
        };
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let fields: Vec<f64> = stat
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .take(8)
            .map(|f| f.parse().unwrap_or(0.0))
            .collect();
        // user nice system idle iowait irq softirq steal
        let idle = (fields.get(3)? + fields.get(4)?) * tick;
        let all = fields.iter().sum::<f64>() * tick;
        // (parent, own CPU, reaped children's CPU) of a process, in ticks.
        let times = |pid: &str| -> Option<(u32, f64, f64)> {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let after_name: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
            let number = |i: usize| after_name.get(i)?.parse::<f64>().ok();
            Some((
                number(1)? as u32,
                number(11)? + number(12)?,
                number(13)? + number(14)?,
            ))
        };
        let (_, own, reaped) = times(&server.to_string())?;
        let mut supervisor_trees = reaped;
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            if let Some((parent, own, reaped)) = times(pid) {
                if parent == server {
                    supervisor_trees += own + reaped;
                }
            }
        }
        Some(Self {
            all,
            idle,
            sandboxed: read_ns(sandbox_cpu)? as f64 / 1e9,
            server: own * tick,
            supervisor_trees: supervisor_trees * tick,
        })
    }

    /// What happened between `self` and the later `after`.
    fn until(&self, after: &Self) -> CoresTime {
        let all = (after.all - self.all).max(f64::MIN_POSITIVE);
        let share = |x: f64| (x / all).max(0.0);
        let sandboxed = after.sandboxed - self.sandboxed;
        let setup = (after.supervisor_trees - self.supervisor_trees) - sandboxed;
        let server = after.server - self.server;
        let idle = after.idle - self.idle;
        CoresTime {
            sandboxed: share(sandboxed),
            sandbox_setup: share(setup),
            server: share(server),
            other: share(all - sandboxed - setup - server - idle),
            idle: share(idle),
        }
    }
}

/// A package of A+B with `tests` tests (one sample), in `root/burst`.
fn write_problem(root: &Path, tests: usize) -> anyhow::Result<()> {
    let dir = root.join("burst");
    std::fs::create_dir_all(dir.join("data/sample"))?;
    std::fs::create_dir_all(dir.join("data/secret"))?;
    std::fs::write(
        dir.join("problem.yaml"),
        "problem_format_version: 2025-09\nname: Burst A+B\n",
    )?;
    for n in 1..=tests {
        let group = if n == 1 { "sample" } else { "secret" };
        let (a, b) = (n as i64 * 7919 - 3, 1_000_000_007 - n as i64 * 31);
        std::fs::write(
            dir.join(format!("data/{group}/{n}.in")),
            format!("{a} {b}\n"),
        )?;
        std::fs::write(
            dir.join(format!("data/{group}/{n}.ans")),
            format!("{}\n", a + b),
        )?;
    }
    Ok(())
}

/// `cpuacct.usage` (ns) of the sandbox's cgroup below this process's cpuacct cgroup.
fn sandbox_cpu_path() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let (controllers, path) = own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "cpuacct")
            .then(|| (controllers.to_string(), path.to_string()))
    })?;
    let file = Path::new("/sys/fs/cgroup")
        .join(controllers)
        .join(path.trim_start_matches('/'))
        .join("ulticode-sandbox/cpuacct.usage");
    file.exists().then_some(file)
}

fn read_ns(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

pub fn run(args: BurstArgs) -> anyhow::Result<ExitCode> {
    if args.submissions == 0 || args.tests == 0 || args.mix.is_empty() {
        bail!("--submissions, --tests and --mix must not be empty");
    }
    let sources: Vec<(String, &'static str)> = args
        .mix
        .iter()
        .map(|l| Ok((l.clone(), aplusb(l)?)))
        .collect::<anyhow::Result<_>>()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let problems = tempfile::tempdir()?;
    write_problem(problems.path(), args.tests)?;
    let workers = args.workers.unwrap_or(cores).to_string();
    let problems_arg = problems.path().to_string_lossy().to_string();
    let server = start_server(&[
        "--problems",
        &problems_arg,
        "--workers",
        &workers,
        "--max-unjudged",
        "1000000",
    ])?;
    let base = server.base.clone();
    let server_pid = server.pid();
    let runtime = tokio::runtime::Runtime::new()?;
    let figures = runtime.block_on(async move {
        let users = register_users(&base, args.submissions.div_ceil(PER_USER)).await?;
        let cpu_file = sandbox_cpu_path();
        let cpu_before = cpu_file.as_deref().and_then(read_ns);
        let reading_before = cpu_file
            .as_deref()
            .and_then(|file| CpuReading::take(server_pid, file));
        let started = Instant::now();
        // Every user's share at once, from as many clients as the edge allows per address.
        let mut tasks = tokio::task::JoinSet::new();
        for (index, user) in users.iter().enumerate() {
            let client = client_from(loopback(1, (index / 50) as u8 + 2))?;
            let (base, token) = (base.clone(), user.token.clone());
            // Every source differs (a comment with its number), as a contest's do: the
            // compile cache must not turn the burst into one compilation per language.
            let share: Vec<(String, String)> = (index * PER_USER
                ..((index + 1) * PER_USER).min(args.submissions))
                .map(|n| {
                    let (language, source) = &sources[n % sources.len()];
                    let comment = if language.starts_with('c') { "//" } else { "#" };
                    (
                        language.clone(),
                        format!("{source}{comment} submission {n}\n"),
                    )
                })
                .collect();
            tasks.spawn(async move {
                let mut ids = Vec::new();
                for (language, source) in share {
                    let body = json!({"problem": "burst", "language": language, "source": source});
                    ids.push((submit(&client, &base, &token, &body).await?, token.clone()));
                }
                Ok::<_, anyhow::Error>(ids)
            });
        }
        let mut ids = Vec::new();
        while let Some(done) = tasks.join_next().await {
            ids.extend(done??);
        }
        let submit_seconds = started.elapsed().as_secs_f64();
        // Wait for the last verdict: the views carry the server's own timestamps.
        let reader = Arc::new(client_from(None)?);
        let deadline = started + Duration::from_secs(args.timeout_s);
        let mut views: BTreeMap<i64, Value> = BTreeMap::new();
        loop {
            for (id, token) in &ids {
                if views.contains_key(id) {
                    continue;
                }
                let view: Value = reader
                    .get(format!("{base}/api/v1/submissions/{id}"))
                    .bearer_auth(token)
                    .send()
                    .await?
                    .json()
                    .await?;
                if view["status"]["state"] == "done" {
                    views.insert(*id, view);
                } else {
                    break; // judged in order, near enough: look again later
                }
            }
            if views.len() == ids.len() {
                break;
            }
            if Instant::now() > deadline {
                bail!(
                    "{} of {} judged after {} s",
                    views.len(),
                    ids.len(),
                    args.timeout_s
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        let cpu_after = cpu_file.as_deref().and_then(read_ns);
        let reading_after = cpu_file
            .as_deref()
            .and_then(|file| CpuReading::take(server_pid, file));
        let first_ms = views
            .values()
            .filter_map(|v| v["created_at_ms"].as_i64())
            .min();
        let last_ms = views
            .values()
            .filter_map(|v| v["judged_at_ms"].as_i64())
            .max();
        let (Some(first_ms), Some(last_ms)) = (first_ms, last_ms) else {
            bail!("the views have no timestamps");
        };
        let drain_seconds = (last_ms - first_ms) as f64 / 1000.0;
        let mut latencies: Vec<Duration> = views
            .values()
            .filter_map(|v| {
                let waited = v["judged_at_ms"].as_i64()? - v["created_at_ms"].as_i64()?;
                Some(Duration::from_millis(waited.max(0) as u64))
            })
            .collect();
        latencies.sort();
        let mut verdicts = BTreeMap::new();
        for view in views.values() {
            let verdict = view["status"]["verdict"]
                .as_str()
                .unwrap_or("?")
                .to_string();
            *verdicts.entry(verdict).or_insert(0) += 1;
        }
        let sandbox_cpu_seconds = cpu_before
            .zip(cpu_after)
            .map(|(before, after)| after.saturating_sub(before) as f64 / 1e9);
        Ok::<_, anyhow::Error>(Figures {
            submissions: ids.len(),
            languages: args.mix.clone(),
            tests: args.tests,
            cores,
            submit_seconds,
            drain_seconds,
            judged_per_second: ids.len() as f64 / drain_seconds.max(f64::MIN_POSITIVE),
            submit_to_verdict_p50_ms: super::bench_web::percentile(&latencies, 0.50),
            submit_to_verdict_p99_ms: super::bench_web::percentile(&latencies, 0.99),
            submit_to_verdict_max_ms: latencies.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
            verdicts,
            judging_efficiency: sandbox_cpu_seconds
                .map(|cpu| cpu / (cores as f64 * drain_seconds.max(f64::MIN_POSITIVE))),
            sandbox_cpu_seconds,
            cores_time: reading_before
                .zip(reading_after)
                .map(|(before, after)| before.until(&after)),
        })
    })?;
    drop(server);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&figures)?);
    } else {
        let f = &figures;
        println!(
            "{} submissions ({}) of a {}-test problem on {} cores",
            f.submissions,
            f.languages.join(", "),
            f.tests,
            f.cores
        );
        println!("submitted in {:.1} s; drained (first submit to last verdict) in {:.1} s: {:.1} judged/s", f.submit_seconds, f.drain_seconds, f.judged_per_second);
        println!(
            "submit to verdict: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
            f.submit_to_verdict_p50_ms, f.submit_to_verdict_p99_ms, f.submit_to_verdict_max_ms
        );
        println!("verdicts: {:?}", f.verdicts);
        match (f.judging_efficiency, f.sandbox_cpu_seconds) {
            (Some(e), Some(cpu)) => println!(
                "judging efficiency: {e:.2} ({cpu:.1} s of sandboxed CPU over {} cores × {:.1} s)",
                f.cores, f.drain_seconds
            ),
            _ => println!(
                "judging efficiency: UNAVAILABLE (the sandbox's cpuacct cgroup cannot be read)"
            ),
        }
        if let Some(t) = &f.cores_time {
            println!(
                "cores' time: sandboxed {:.1}%, sandbox setup {:.1}%, server {:.1}%, other {:.1}%, idle {:.1}%",
                t.sandboxed * 100.0,
                t.sandbox_setup * 100.0,
                t.server * 100.0,
                t.other * 100.0,
                t.idle * 100.0
            );
        }
    }
    let all_accepted = figures.verdicts.get("AC") == Some(&figures.submissions);
    if !all_accepted {
        return Err(anyhow!(
            "not every submission was accepted: {:?}",
            figures.verdicts
        ))
        .context("bench burst");
    }
    Ok(ExitCode::SUCCESS)
}
