//! Command-line interface: argument parsing and the wiring behind each subcommand.

/// `println!` for a command's report: a reader that went away (`ulticode problem verify P |
/// head`) ends the command as a pipe's writer ends (status 141), not with a panic.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if let Err(e) = writeln!(std::io::stdout().lock(), $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(141);
            }
            panic!("cannot write to stdout: {e}");
        }
    }};
}

mod backup;
mod bench;
mod bench_burst;
mod bench_contest;
mod bench_events;
mod bench_function;
mod bench_http;
mod bench_judge;
mod bench_judge0;
mod bench_pipeline;
mod bench_web;
mod chaos;
mod chaos_events;
mod contest_cmd;
mod contract;
mod data_dir;
mod health;
mod judge0_edge;
mod judge_cmd;
mod keys;
mod modules;
mod runner;
mod sandbox_cmd;
mod search_api;
mod search_cmd;
mod server;
mod services;
mod up;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "ulticode",
    version,
    about = "UltiCode: an online judge with a native sandbox"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run programs in the sandbox and check that it works on this machine.
    #[command(subcommand)]
    Sandbox(sandbox_cmd::SandboxCommand),
    /// Compile and judge a submission against a problem package.
    Judge(judge_cmd::JudgeArgs),
    /// Work with problem packages.
    #[command(subcommand)]
    Problem(judge_cmd::ProblemCommand),
    /// List the languages and whether this machine can use them.
    Languages(judge_cmd::LanguagesArgs),
    /// Run the Submission owner's dispatcher: outbox dispatch, lease reaper, delivery
    /// sweeper, and the internal judging port for judge workers.
    Dispatcher(services::DispatcherArgs),
    /// Run a judge worker: consume the judge queue and judge in the sandbox.
    JudgeWorker(services::WorkerArgs),
    /// Run the search worker: consume search documents into the index and answer `serve`'s
    /// queries.
    SearchWorker(search_cmd::SearchWorkerArgs),
    /// Run the whole judge in one process: SQLite, the SQL stream, in-process judge workers,
    /// the example problems and an admin account. Nothing else to install.
    Up(up::UpArgs),
    /// Serve the API against PostgreSQL and Redis (run `dispatcher` and `judge-worker`
    /// processes beside it).
    Serve(up::ServeArgs),
    /// Run the distributed shape under injected faults and check its invariants.
    Chaos(chaos::ChaosArgs),
    /// Run the event backbone (relays, audit, notifications, search) under injected faults
    /// and check its invariants.
    ChaosEvents(chaos_events::ChaosEventsArgs),
    /// Back up every owner's data (a data directory while `up` serves, or a PostgreSQL
    /// database) into a new directory.
    Backup(backup::BackupArgs),
    /// Restore a backup into a new data directory or an empty database.
    Restore(backup::RestoreArgs),
    /// Check that a running UltiCode is ready (exit status 0) or say why not (1).
    Health(health::HealthArgs),
    /// Rotate or list the token-signing keys.
    #[command(subcommand)]
    Keys(keys::KeysCommand),
    /// Import and export CLICS contest packages (through a running UltiCode's API).
    #[command(subcommand)]
    Contest(contest_cmd::ContestCommand),
    /// Benchmarks whose figures go into release notes.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
}

impl Cli {
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self.command {
            Command::Sandbox(cmd) => cmd.run(),
            Command::Judge(args) => judge_cmd::judge(args),
            Command::Problem(cmd) => judge_cmd::problem(cmd),
            Command::Languages(args) => judge_cmd::languages(args),
            Command::Dispatcher(args) => services::dispatcher(args),
            Command::JudgeWorker(args) => services::worker(args),
            Command::SearchWorker(args) => search_cmd::run(args),
            Command::Up(args) => up::up(args),
            Command::Serve(args) => up::serve(args),
            Command::Chaos(args) => chaos::run(args),
            Command::ChaosEvents(args) => chaos_events::run(args),
            Command::Bench(cmd) => cmd.run(),
            Command::Contest(cmd) => cmd.run(),
            Command::Backup(args) => backup::backup(args),
            Command::Restore(args) => backup::restore(args),
            Command::Keys(command) => command.run(),
            Command::Health(args) => health::health(args),
        }
    }
}

/// The compile cache in `dir`, bounded to `mib` MiB.
fn open_compile_cache(
    dir: &std::path::Path,
    mib: u64,
) -> anyhow::Result<std::sync::Arc<judge::compile_cache::CompileCache>> {
    let cache = judge::compile_cache::CompileCache::open(dir, mib << 20)
        .map_err(|e| anyhow::anyhow!("open the compile cache in {}: {e}", dir.display()))?;
    Ok(std::sync::Arc::new(cache))
}

/// Where a process that is not root reaches the sandbox: the socket of `ulticode sandbox
/// daemon`, run as root.
pub(crate) const SANDBOX_SOCKET_VARIABLE: &str = "ULTICODE_SANDBOX_SOCKET";

/// The native sandbox: served by the sandbox daemon when `ULTICODE_SANDBOX_SOCKET` names its
/// socket, else with this binary as its own supervisor (which needs root), forked without an
/// exec while this process has one thread.
fn native_sandbox() -> anyhow::Result<sandbox::NativeSandbox> {
    if let Some(socket) = std::env::var_os(SANDBOX_SOCKET_VARIABLE).filter(|s| !s.is_empty()) {
        return Ok(sandbox::NativeSandbox::connect(socket));
    }
    let command = sandbox::SupervisorCommand::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot locate the ulticode executable: {e}"))?
        .forked_when_alone();
    Ok(sandbox::NativeSandbox::new(command))
}
