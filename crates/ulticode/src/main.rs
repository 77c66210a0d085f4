//! `ulticode`: the composition root. Every subcommand wires crates together; none holds logic
//! that belongs to a crate.

mod cli;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // The sandbox supervisor is this same binary, started by exec before anything else runs
    // (no runtime, no threads), so its clone() is safe. (A caller with one thread forks it
    // instead, straight into `supervisor_main`: see `sandbox::native::process`.)
    if std::env::args_os().nth(1).as_deref() == Some(sandbox::SUPERVISOR_ARG.as_ref()) {
        sandbox::supervisor_main();
    }
    let cli = cli::Cli::parse();
    match cli.run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
