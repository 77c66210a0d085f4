//! `ulticode bench judge`: what judging costs on top of the program's own work.
//!
//! A problem with `tests` inputs of `numbers` integers each (the answer is their sum) is
//! generated; a C and a Python solution are judged on it with every CPU busy, and the same
//! compiled program (or script) is then run bare on the same inputs with the same parallelism.
//! `overhead_ratio` is judged wall time over bare wall time: what sandboxing, checking and
//! bookkeeping add to the program's own cost.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use judge::{
    default_languages, Compilation, Coverage, Judge, JudgeOptions, Languages, Problem, Progress,
    Verdict,
};
use serde::Serialize;

const C_SOLUTION: &str = r#"#include <stdio.h>
int main(void) {
    long long n, x, sum = 0;
    if (scanf("%lld", &n) != 1) return 1;
    while (n-- > 0 && scanf("%lld", &x) == 1) sum += x;
    printf("%lld\n", sum);
    return 0;
}
"#;

const PYTHON_SOLUTION: &str =
    "import sys\ndata = sys.stdin.buffer.read().split()\nprint(sum(map(int, data[1:])))\n";

#[derive(Debug, Serialize)]
struct LanguageFigures {
    language: &'static str,
    tests: usize,
    verdict: Verdict,
    /// Wall time of judging the tests (compilation excluded).
    judged_ms: f64,
    /// Wall time of running the same program bare on the same inputs, same parallelism.
    bare_ms: f64,
    tests_per_second: f64,
    overhead_ratio: f64,
    /// (judged - bare) per test and CPU: the fixed cost of judging one test.
    overhead_ms_per_test: f64,
}

#[derive(Debug, Serialize)]
struct JudgeBench {
    concurrency: usize,
    numbers_per_test: usize,
    results: Vec<LanguageFigures>,
}

pub fn run(
    tests: usize,
    numbers: usize,
    concurrency: Option<usize>,
    only: &[String],
    json: bool,
) -> anyhow::Result<ExitCode> {
    if tests == 0 {
        bail!("--tests must be at least 1");
    }
    if concurrency == Some(0) {
        bail!("--concurrency must be at least 1");
    }
    let dir = tempfile::tempdir().context("problem directory")?;
    generate(dir.path(), tests, numbers)?;
    let problem =
        Problem::load(dir.path()).map_err(|e| anyhow::anyhow!("generated package: {e}"))?;
    let sandbox = super::native_sandbox()?;
    let wanted = BTreeSet::from(["c", "python3"]);
    let configs = default_languages()
        .into_iter()
        .filter(|c| wanted.contains(c.id.as_str()))
        .collect();
    let languages = Languages::detect(&sandbox, configs);
    if let Some(missing) = languages.unavailable.first() {
        bail!("{} is unavailable: {}", missing.name, missing.reason);
    }
    let concurrency =
        concurrency.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let judge = Judge::new(&sandbox, &languages).with_concurrency(concurrency);
    let prepared = judge.prepare(&problem)?;
    let inputs: Vec<_> = problem
        .test_cases()
        .iter()
        .map(|c| c.input.clone())
        .collect();

    let mut results = Vec::new();
    let chosen = |language: &str| only.is_empty() || only.iter().any(|l| l == language);
    for (language, source) in [("c", C_SOLUTION), ("python3", PYTHON_SOLUTION)]
        .into_iter()
        .filter(|(language, _)| chosen(language))
    {
        let compiled_at = Mutex::new(None);
        let report = judge.judge(
            &prepared,
            language,
            source.as_bytes(),
            JudgeOptions {
                coverage: Coverage::All,
                abort: None,
            },
            &|p| {
                if let Progress::Compiled { .. } = p {
                    *compiled_at.lock().unwrap() = Some(Instant::now());
                }
            },
        )?;
        let judged = compiled_at
            .lock()
            .unwrap()
            .map_or(Duration::ZERO, |t| t.elapsed());

        // The same program, bare: compiled the same way, run directly.
        let spec = languages.get(language).expect("detected");
        let files = judge::ProgramFiles::single(&spec.config, source.as_bytes());
        let compiled = match judge.compile(spec, &files, spec.config.compile_limits)? {
            Compilation::Ready(compiled, _) => compiled,
            Compilation::Failed { output, .. } => bail!("{language} does not compile: {output}"),
        };
        let (program, args) = compiled.command(256, &[]);
        let command: Vec<String> = std::iter::once(program)
            .chain(args)
            .map(|w| w.replace("/job", &compiled.dir().display().to_string()))
            .collect();
        let bare = run_bare(&command, &inputs, concurrency)?;
        let judged_ms = judged.as_secs_f64() * 1000.0;
        let bare_ms = bare.as_secs_f64() * 1000.0;
        results.push(LanguageFigures {
            language: if language == "c" { "c" } else { "python3" },
            tests: report.tests.len(),
            verdict: report.verdict,
            judged_ms,
            bare_ms,
            tests_per_second: report.tests.len() as f64 / judged.as_secs_f64(),
            overhead_ratio: judged_ms / bare_ms,
            overhead_ms_per_test: (judged_ms - bare_ms) * concurrency as f64 / tests as f64,
        });
    }
    let bench = JudgeBench {
        concurrency,
        numbers_per_test: numbers,
        results,
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&bench)?);
    } else {
        println!("{tests} tests of {numbers} integers, {concurrency} at a time");
        println!(
            "{:<9}{:>8}{:>12}{:>12}{:>12}{:>10}{:>14}",
            "language", "verdict", "judged ms", "bare ms", "tests/s", "ratio", "ms/test extra"
        );
        for r in &bench.results {
            println!(
                "{:<9}{:>8}{:>12.1}{:>12.1}{:>12.1}{:>10.3}{:>14.3}",
                r.language,
                r.verdict.as_str(),
                r.judged_ms,
                r.bare_ms,
                r.tests_per_second,
                r.overhead_ratio,
                r.overhead_ms_per_test
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a pass-fail package: each test is `n` then `n` integers, the answer their sum.
fn generate(dir: &Path, tests: usize, numbers: usize) -> anyhow::Result<()> {
    std::fs::write(
        dir.join("problem.yaml"),
        "name: Sum\nlimits:\n  time_limit: 5\n  memory: 256\n",
    )?;
    let secret = dir.join("data/secret");
    std::fs::create_dir_all(&secret)?;
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    for test in 0..tests {
        let mut input =
            std::io::BufWriter::new(std::fs::File::create(secret.join(format!("{test:04}.in")))?);
        writeln!(input, "{numbers}")?;
        let mut sum: i64 = 0;
        for i in 0..numbers {
            // xorshift: deterministic, no dependency.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let value = (state % 2_000_001) as i64 - 1_000_000;
            sum += value;
            write!(
                input,
                "{value}{}",
                if i + 1 == numbers { '\n' } else { ' ' }
            )?;
        }
        input.flush()?;
        std::fs::write(secret.join(format!("{test:04}.ans")), format!("{sum}\n"))?;
    }
    Ok(())
}

/// Runs `command` on every input, `concurrency` at a time; returns the wall time.
fn run_bare(
    command: &[String],
    inputs: &[std::path::PathBuf],
    concurrency: usize,
) -> anyhow::Result<Duration> {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let workers: Vec<_> = (0..concurrency)
            .map(|_| {
                scope.spawn(|| -> anyhow::Result<()> {
                    loop {
                        let index = next.fetch_add(1, Ordering::SeqCst);
                        let Some(input) = inputs.get(index) else {
                            return Ok(());
                        };
                        let status = Command::new(&command[0])
                            .args(&command[1..])
                            .stdin(std::fs::File::open(input)?)
                            .stdout(Stdio::piped())
                            .stderr(Stdio::null())
                            .output()?
                            .status;
                        if !status.success() {
                            bail!("bare run of {} failed: {status}", input.display());
                        }
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("bare worker panicked")?;
        }
        Ok(())
    })?;
    Ok(started.elapsed())
}
