//! `ulticode sandbox run | doctor | daemon`.

use std::io::{Read, Seek, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use sandbox::{Bind, Fault, Limits, PassedFds, Profile, RunSpec, Sandbox, Stdin, Stdout};

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Run one program in the sandbox.
    ///
    /// Exit status: 0 when the program ended `ok`, 1 for any other user-fault status,
    /// 3 when the sandbox itself failed (launch_failure, config_error), 2 for usage errors.
    Run(RunArgs),
    /// Check namespaces, cgroups, seccomp and the root filesystem, and list toolchains.
    Doctor {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the sandbox to unprivileged processes (run as root; the only process that needs
    /// it). Clients set ULTICODE_SANDBOX_SOCKET to the socket; each run's host paths are used
    /// with its client's permissions, never root's.
    Daemon(DaemonArgs),
}

#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// The Unix socket to listen on (a stale socket there is replaced).
    #[arg(
        long,
        env = "ULTICODE_SANDBOX_SOCKET",
        value_name = "PATH",
        default_value = "/run/ulticode/sandbox.sock"
    )]
    socket: PathBuf,
    /// The group allowed to connect (the socket is mode 0660, root and this group).
    #[arg(long, value_name = "NAME", default_value = "ulticode")]
    group: String,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// CPU time limit of the whole process tree, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = Limits::default().cpu_time_ms)]
    time_limit: u64,
    /// Wall-clock limit in milliseconds [default: 3 × the CPU time limit].
    #[arg(long, value_name = "MS")]
    wall_time_limit: Option<u64>,
    /// Memory limit of the whole process tree, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().memory_bytes >> 20)]
    memory_limit: u64,
    /// Maximum number of processes and threads alive at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().pids)]
    pids_limit: u32,
    /// Bytes kept from stdout; more ends the run with `output_limit`.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().output_bytes)]
    output_limit: u64,
    /// Bytes kept from stderr; more ends the run with `output_limit`.
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().stderr_bytes)]
    stderr_limit: u64,
    /// Standard input: a host file, or `-` for this command's own stdin [default: /dev/null].
    #[arg(long, value_name = "FILE")]
    stdin: Option<PathBuf>,
    /// Extra bind mount, repeatable.
    #[arg(long, value_name = "SRC:DST[:rw]", value_parser = parse_bind)]
    bind: Vec<Bind>,
    /// Host directory mounted at /job (read-only unless --job-writable).
    #[arg(long, value_name = "DIR")]
    job_dir: Option<PathBuf>,
    /// Mount the job directory writable.
    #[arg(long, requires = "job_dir")]
    job_writable: bool,
    /// Environment variable for the program, repeatable.
    #[arg(long, value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// Seccomp profile family.
    #[arg(long, value_name = "NAME", default_value = "native")]
    profile: Profile,
    /// Print one JSON object describing the outcome instead of the program's output.
    #[arg(long)]
    json: bool,
    /// The program and its arguments.
    #[arg(last = true, required = true, value_name = "PROGRAM [ARGS]...")]
    command: Vec<String>,
}

fn parse_bind(text: &str) -> Result<Bind, String> {
    Bind::parse(text).map_err(|e| e.to_string())
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, got {text:?}"))?;
    Ok((key.to_string(), value.to_string()))
}

impl SandboxCommand {
    pub fn run(self) -> anyhow::Result<ExitCode> {
        match self {
            SandboxCommand::Run(args) => run(args),
            SandboxCommand::Doctor { json } => doctor(json),
            SandboxCommand::Daemon(args) => daemon(args),
        }
    }
}

impl RunArgs {
    fn spec(&self) -> anyhow::Result<RunSpec> {
        let (program, args) = self.command.split_first().expect("clap requires a program");
        let stdin = match &self.stdin {
            None => Stdin::Null,
            Some(path) if path.as_os_str() == "-" => {
                let mut bytes = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut bytes)
                    .context("read stdin")?;
                Stdin::Bytes(bytes)
            }
            Some(path) => Stdin::File(std::path::absolute(path).context("resolve --stdin")?),
        };
        let limits = Limits {
            cpu_time_ms: self.time_limit,
            wall_time_ms: self
                .wall_time_limit
                .unwrap_or_else(|| self.time_limit.saturating_mul(3)),
            memory_bytes: self.memory_limit << 20,
            pids: self.pids_limit,
            output_bytes: self.output_limit,
            stderr_bytes: self.stderr_limit,
            ..Limits::default()
        };
        let mut spec = RunSpec::new(program.clone())
            .args(args.iter().cloned())
            .stdin(stdin)
            .limits(limits)
            .profile(self.profile);
        if let Some(dir) = &self.job_dir {
            spec = spec.job_dir(
                std::path::absolute(dir).context("resolve --job-dir")?,
                self.job_writable,
            );
        }
        for bind in &self.bind {
            spec = spec.bind(Bind {
                source: std::path::absolute(&bind.source).context("resolve --bind")?,
                ..bind.clone()
            });
        }
        for (key, value) in &self.env {
            spec = spec.env(key, value);
        }
        Ok(spec)
    }
}

fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let spec = args.spec()?;
    let sandbox = super::native_sandbox()?;
    // Without --json the output streams through a file to this command's stdout, so no more
    // than a buffer of it is ever in memory; the JSON form carries it inline (up to the cap).
    let captured = if args.json {
        None
    } else {
        Some(tempfile::tempfile().context("a file for the program's output")?)
    };
    let fds = PassedFds {
        stdin: None,
        stdout: match &captured {
            Some(file) => Some(file.try_clone()?.into()),
            None => None,
        },
        stderr: None,
    };
    let spec = match captured {
        Some(_) => spec.stdout(Stdout::CaptureToFile),
        None => spec,
    };
    let outcome = sandbox
        .start(&spec, fds)
        .context("invalid sandbox request")?
        .wait();
    // The supervisor cleans up after the run on its own; this command has its answer.
    sandbox.leave();
    if args.json {
        // Written straight out: no second copy of up to two output caps in memory.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        serde_json::to_writer(&mut out, &outcome)?;
        writeln!(out)?;
        out.flush()?;
    } else {
        if let Some(mut file) = captured {
            file.rewind()?;
            std::io::copy(&mut file, &mut std::io::stdout().lock())?;
        }
        std::io::stderr().write_all(&outcome.stderr)?;
        eprintln!(
            "[sandbox] status={} exit_code={} signal={} cpu={}ms wall={}ms memory={}KiB{}{}",
            outcome.status,
            outcome.exit_code.map_or("-".into(), |c| c.to_string()),
            outcome.signal.map_or("-".into(), |s| s.to_string()),
            outcome.cpu_time_ms,
            outcome.wall_time_ms,
            outcome.memory_kib,
            if outcome.output_truncated {
                " output_truncated"
            } else {
                ""
            },
            outcome
                .message
                .as_deref()
                .map(|m| format!(" message={m}"))
                .unwrap_or_default(),
        );
    }
    Ok(match outcome.fault {
        Fault::None => ExitCode::SUCCESS,
        Fault::User => ExitCode::from(1),
        Fault::Infrastructure => ExitCode::from(3),
    })
}

fn doctor(json: bool) -> anyhow::Result<ExitCode> {
    let sandbox = super::native_sandbox()?;
    let report = sandbox::doctor::diagnose(&sandbox);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        for check in &report.checks {
            println!(
                "{} {:<17} {}",
                if check.ok { "ok  " } else { "FAIL" },
                check.name,
                check.detail
            );
        }
        println!("\ntoolchains on this host:");
        for tool in &report.toolchains {
            match &tool.path {
                Some(path) => println!(
                    "  {:<18} {} {}",
                    tool.name,
                    path.display(),
                    if tool.inside_default_root {
                        ""
                    } else {
                        "(outside /usr: needs a --bind)"
                    }
                ),
                None => println!("  {:<18} not installed", tool.name),
            }
        }
        let verdict = if report.ok {
            "the sandbox works on this machine"
        } else {
            "the sandbox cannot work here: see FAIL lines above"
        };
        println!("\n{verdict}");
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn daemon(args: DaemonArgs) -> anyhow::Result<ExitCode> {
    let group = group_id(&args.group)?;
    let command = sandbox::SupervisorCommand::current_exe()
        .context("cannot locate the ulticode executable")?;
    let identities = sandbox::IdentityRange::from_env()?;
    let daemon = sandbox::SandboxDaemon::bind(&args.socket, group, command, identities)?;
    eprintln!(
        "ulticode sandbox daemon: serving {} to root and group {} (run identities {})",
        args.socket.display(),
        args.group,
        identities.to_arg()
    );
    daemon.serve().context("accept a sandbox connection")?;
    Ok(ExitCode::SUCCESS)
}

/// The id of a group named in `/etc/group`, or a numeric id as given.
fn group_id(name: &str) -> anyhow::Result<u32> {
    if let Ok(id) = name.parse() {
        return Ok(id);
    }
    let groups = std::fs::read_to_string("/etc/group").context("read /etc/group")?;
    groups
        .lines()
        .map(|line| line.split(':').collect::<Vec<_>>())
        .find(|fields| fields.first() == Some(&name))
        .and_then(|fields| fields.get(2)?.parse().ok())
        .with_context(|| format!("no group named {name:?} in /etc/group"))
}
