//! `ulticode bench ...`: measured figures, never asserted in tests.

use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Subcommand;
use sandbox::{Profile, RunSpec, Sandbox, Status};
use serde::Serialize;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Judging speed: a C and a Python solution on a generated problem with many small tests,
    /// against bare runs of the same program on the same inputs.
    Judge {
        /// Number of generated tests.
        #[arg(long, default_value_t = 200)]
        tests: usize,
        /// Integers per test input.
        #[arg(long, default_value_t = 100_000)]
        numbers: usize,
        /// Tests judged (and bare runs made) at a time; by default one per CPU.
        #[arg(long)]
        concurrency: Option<usize>,
        /// Only these languages (`c`, `python3`; repeatable); by default both.
        #[arg(long = "language", value_parser = ["c", "python3"])]
        languages: Vec<String>,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Function problems: the harness's cost per case in each language (on generated two-sum
    /// cases), and compile-plus-first-case latency.
    Function(super::bench_function::FunctionArgs),
    /// The delivery path: outbox relay throughput and submit-to-verdict latency.
    Pipeline(super::bench_pipeline::PipelineArgs),
    /// The Judge0-compatible API: `wait=true` round trips, batches and a sustained rate.
    Judge0(super::bench_judge0::Judge0BenchArgs),
    /// The console's pages at a steady request rate: latency percentiles on `up`.
    Web(super::bench_web::WebArgs),
    /// The API under a mixed load on `up`: reads, submissions judged, SSE subscribers held.
    Http(super::bench_http::HttpArgs),
    /// A contest's last minutes: N submissions at once on `up`, drain time, submit-to-verdict
    /// percentiles and judging efficiency.
    Burst(super::bench_burst::BurstArgs),
    /// The event backbone: relay throughput (PostgreSQL → Redis) and change-to-audit latency.
    Events(super::bench_events::EventsArgs),
    /// Contest boards: recompute, incremental updates and scoreboard reads on a generated
    /// contest (500 teams × 13 problems × 20,000 submissions by default).
    Contest(super::bench_contest::ContestArgs),
    /// The search index: reindex time and query latency over generated problems.
    Search(super::bench_events::SearchArgs),
    /// Overhead of a sandboxed `/bin/true` over a bare spawn, sequential and 2 at a time, and
    /// `ulticode sandbox run` as a whole process (cold: it starts its own supervisor).
    Sandbox {
        /// The program to run, with its arguments [default: /bin/true].
        #[arg(last = true, value_name = "PROGRAM [ARGS]...")]
        program: Vec<String>,
        /// Runs per series.
        #[arg(long, default_value_t = 500)]
        runs: usize,
        /// Print the figures as JSON.
        #[arg(long)]
        json: bool,
    },
}

impl BenchCommand {
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            BenchCommand::Sandbox {
                program,
                runs,
                json,
            } => {
                let program = if program.is_empty() {
                    vec!["/bin/true".to_string()]
                } else {
                    program
                };
                bench_sandbox(&program, runs, json)
            }
            BenchCommand::Function(args) => super::bench_function::run(args),
            BenchCommand::Pipeline(args) => super::bench_pipeline::run(args),
            BenchCommand::Web(args) => super::bench_web::run(args),
            BenchCommand::Http(args) => super::bench_http::run(args),
            BenchCommand::Burst(args) => super::bench_burst::run(args),
            BenchCommand::Judge0(args) => super::bench_judge0::run(args),
            BenchCommand::Events(args) => super::bench_events::events(args),
            BenchCommand::Search(args) => super::bench_events::search(args),
            BenchCommand::Contest(args) => super::bench_contest::run(args),
            BenchCommand::Judge {
                tests,
                numbers,
                concurrency,
                languages,
                json,
            } => super::bench_judge::run(tests, numbers, concurrency, &languages, json),
        }
    }
}

#[derive(Debug, Serialize)]
struct Series {
    runs: usize,
    median_ms: f64,
    p99_ms: f64,
}

impl Series {
    fn from_samples(mut samples: Vec<Duration>) -> Self {
        samples.sort();
        let at = |q: f64| {
            let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
            samples[index].as_secs_f64() * 1_000.0
        };
        Self {
            runs: samples.len(),
            median_ms: at(0.5),
            p99_ms: at(0.99),
        }
    }
}

#[derive(Debug, Serialize)]
struct SandboxBench {
    program: String,
    bare_sequential: Series,
    sandbox_sequential: Series,
    bare_parallel_2: Series,
    sandbox_parallel_2: Series,
    /// Median sandboxed run minus median bare spawn, sequential.
    overhead_ms_median: f64,
    /// The same, two runs at a time.
    overhead_ms_median_parallel_2: f64,
    /// `ulticode sandbox run -- PROGRAM` as a whole process, one after another: each starts
    /// its own supervisor and returns once the outcome is known (the supervisor's cleanup
    /// goes on after).
    cli_cold: Series,
}

/// How long `command` takes to exit, with no stdio; an unsuccessful exit is an error.
fn timed(mut command: Command, what: &str) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let status = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let elapsed = started.elapsed();
    if !status.success() {
        bail!("{what} failed: {status}");
    }
    Ok(elapsed)
}

fn bare_spawn(program: &[String]) -> anyhow::Result<Duration> {
    let mut command = Command::new(&program[0]);
    command.args(&program[1..]);
    timed(command, &program.join(" "))
}

fn sandboxed(sandbox: &dyn Sandbox, program: &[String]) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let profile = if program[0].contains("python") {
        Profile::Python
    } else {
        Profile::Native
    };
    let spec = RunSpec::new(program[0].clone())
        .args(program[1..].iter().cloned())
        .profile(profile);
    let outcome = sandbox.run(&spec)?;
    let elapsed = started.elapsed();
    if outcome.status != Status::Ok {
        bail!(
            "sandboxed {} ended as {}: {}",
            program.join(" "),
            outcome.status,
            outcome.message.unwrap_or_default()
        );
    }
    Ok(elapsed)
}

fn cold_cli(program: &[String]) -> anyhow::Result<Duration> {
    let mut command = Command::new(std::env::current_exe()?);
    command
        .args(["sandbox", "run", "--"])
        .args(program)
        .env_remove(super::SANDBOX_SOCKET_VARIABLE);
    timed(
        command,
        &format!("ulticode sandbox run -- {}", program.join(" ")),
    )
}

/// `runs` samples of `one`, taken by `threads` threads at once.
fn sample<F>(runs: usize, threads: usize, one: F) -> anyhow::Result<Series>
where
    F: Fn() -> anyhow::Result<Duration> + Sync,
{
    let per_thread = runs.div_ceil(threads);
    let samples = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    (0..per_thread)
                        .map(|_| one())
                        .collect::<anyhow::Result<Vec<_>>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench thread panicked"))
            .collect::<anyhow::Result<Vec<_>>>()
    })?;
    Ok(Series::from_samples(
        samples.into_iter().flatten().collect(),
    ))
}

fn bench_sandbox(program: &[String], runs: usize, json: bool) -> anyhow::Result<ExitCode> {
    if runs == 0 {
        bail!("--runs must be at least 1");
    }
    let sandbox = super::native_sandbox()?;
    // Warm up: start both supervisors and fault in the binaries.
    let bare = || bare_spawn(program);
    let sandboxed = || sandboxed(&sandbox, program);
    sample(20, 2, sandboxed).context("sandbox warm-up")?;
    sample(20, 2, bare).context("bare warm-up")?;

    let bare_sequential = sample(runs, 1, bare)?;
    let sandbox_sequential = sample(runs, 1, sandboxed)?;
    let bare_parallel_2 = sample(runs, 2, bare)?;
    let sandbox_parallel_2 = sample(runs, 2, sandboxed)?;
    let cli_cold = sample(runs.min(100), 1, || cold_cli(program))?;
    let report = SandboxBench {
        program: program.join(" "),
        overhead_ms_median: sandbox_sequential.median_ms - bare_sequential.median_ms,
        overhead_ms_median_parallel_2: sandbox_parallel_2.median_ms - bare_parallel_2.median_ms,
        bare_sequential,
        sandbox_sequential,
        bare_parallel_2,
        sandbox_parallel_2,
        cli_cold,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{}, {runs} runs per series (ms)", report.program);
        println!("{:<22}{:>10}{:>10}", "series", "median", "p99");
        for (name, series) in [
            ("bare, sequential", &report.bare_sequential),
            ("sandbox, sequential", &report.sandbox_sequential),
            ("bare, 2 at a time", &report.bare_parallel_2),
            ("sandbox, 2 at a time", &report.sandbox_parallel_2),
            ("`sandbox run`, cold", &report.cli_cold),
        ] {
            println!(
                "{name:<22}{:>10.3}{:>10.3}",
                series.median_ms, series.p99_ms
            );
        }
        println!(
            "median overhead: {:.3} ms sequential, {:.3} ms 2 at a time",
            report.overhead_ms_median, report.overhead_ms_median_parallel_2
        );
    }
    Ok(ExitCode::SUCCESS)
}
