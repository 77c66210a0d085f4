//! Input validation, as `problem verify` does it: every input validator of the package runs on
//! every test input (with the group's `input_validator_args`) and must accept it, and every
//! input under `data/invalid_input/` must be rejected by at least one of them. Validators run
//! in the sandbox: programs are compiled like the output validator (exit 42 accepts, 43
//! rejects), `.ctd` scripts run under checktestdata (exit 0 accepts). A validator that cannot
//! run here (checktestdata not installed) is reported as not run, by name, never skipped
//! silently.

use std::path::{Path, PathBuf};

use sandbox::{Bind, Limits, Profile, RunOutcome, RunSpec, Stdin};
use serde::Serialize;

use crate::judging::{Compiled, Judge, JudgeError};
use crate::package::{InputValidator, InputValidatorKind, Problem, TestCase};

/// Where checktestdata (PyPI's `checktestdata`, unpacked with `pip install --target`) lives:
/// `$ULTICODE_CHECKTESTDATA`, else the cache directory `scripts/test.sh` installs it into.
pub fn checktestdata_dir() -> PathBuf {
    std::env::var_os("ULTICODE_CHECKTESTDATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(
                std::env::var("ULTICODE_CACHE_DIR")
                    .unwrap_or_else(|_| "/var/cache/ulticode".into()),
            )
            .join("checktestdata")
        })
}

/// What one input validator found.
#[derive(Debug, Clone, Serialize)]
pub struct InputValidation {
    pub validator: String,
    /// Test inputs it accepted.
    pub accepted: usize,
    /// Problems: an input it rejected, an invalid input nobody rejected, a crash.
    pub failures: Vec<String>,
    /// Why it did not run at all.
    pub not_run: Option<String>,
}

enum Runner {
    /// A compiled validator; `true` for a testlib validator (exit 0 accepts).
    Program(Box<Compiled>, bool),
    /// The script with the package's constants filled in, and checktestdata's directory.
    Checktestdata {
        script: tempfile::NamedTempFile,
        dir: PathBuf,
    },
}

const SCRIPT_MOUNT: &str = "/validator/script.ctd";
const CHECKTESTDATA_MOUNT: &str = "/opt/checktestdata";

/// Runs every input validator on every input; `Err` only for a judge failure.
pub fn validate_inputs(
    judge: &Judge<'_>,
    problem: &Problem,
) -> Result<Vec<InputValidation>, JudgeError> {
    validate_inputs_with(judge, problem, &checktestdata_dir())
}

/// [`validate_inputs`] with checktestdata in `checktestdata`.
pub fn validate_inputs_with(
    judge: &Judge<'_>,
    problem: &Problem,
    checktestdata: &Path,
) -> Result<Vec<InputValidation>, JudgeError> {
    let cases = problem.test_cases();
    let mut reports = Vec::new();
    let mut rejected_invalid = vec![false; problem.invalid_inputs.len()];
    for validator in &problem.input_validators {
        let mut report = InputValidation {
            validator: validator.name.clone(),
            accepted: 0,
            failures: Vec::new(),
            not_run: None,
        };
        let runner = match prepare(judge, problem, validator, checktestdata) {
            Ok(runner) => runner,
            Err(reason) => {
                report.not_run = Some(reason);
                reports.push(report);
                continue;
            }
        };
        for case in &cases {
            let args = case_args(problem, case, &validator.name);
            match verdict(
                judge,
                problem,
                &runner,
                &case.input,
                case.files.as_deref(),
                &args,
            ) {
                Ok(true) => report.accepted += 1,
                Ok(false) => report
                    .failures
                    .push(format!("rejected {}", display(problem, &case.input))),
                Err(e) => report
                    .failures
                    .push(format!("{}: {e}", display(problem, &case.input))),
            }
        }
        for (index, input) in problem.invalid_inputs.iter().enumerate() {
            match verdict(judge, problem, &runner, input, None, &[]) {
                Ok(false) => rejected_invalid[index] = true,
                Ok(true) => {}
                Err(e) => report
                    .failures
                    .push(format!("{}: {e}", display(problem, input))),
            }
        }
        reports.push(report);
    }
    let ran = reports.iter().any(|r| r.not_run.is_none());
    if ran {
        for (input, rejected) in problem.invalid_inputs.iter().zip(rejected_invalid) {
            if !rejected {
                if let Some(first) = reports.iter_mut().find(|r| r.not_run.is_none()) {
                    first.failures.push(format!(
                        "no input validator rejected {}",
                        display(problem, input)
                    ));
                }
            }
        }
    }
    Ok(reports)
}

fn display(problem: &Problem, path: &Path) -> String {
    path.strip_prefix(&problem.dir)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The arguments of `validator` for `case`: from the settings of the case's group.
fn case_args(problem: &Problem, case: &TestCase, validator: &str) -> Vec<String> {
    problem
        .data
        .settings_of(case)
        .map(|settings| settings.input_validator_args.of(validator).to_vec())
        .unwrap_or_default()
}

fn prepare(
    judge: &Judge<'_>,
    problem: &Problem,
    validator: &InputValidator,
    checktestdata: &Path,
) -> Result<Runner, String> {
    match &validator.kind {
        InputValidatorKind::Checktestdata(script) => {
            let dir = checktestdata.to_path_buf();
            if !dir.join("checktestdata").is_dir() {
                return Err(format!(
                    "input validator {} not run: checktestdata is not installed in {} (scripts/test.sh installs it)",
                    validator.name,
                    dir.display()
                ));
            }
            let text = std::fs::read(script).map_err(|e| format!("{}: {e}", script.display()))?;
            let filled = tempfile::NamedTempFile::new()
                .and_then(|mut file| {
                    std::io::Write::write_all(&mut file, &problem.constants.substitute(&text))?;
                    // Read by the run's own identity inside the sandbox.
                    std::fs::set_permissions(
                        file.path(),
                        std::os::unix::fs::PermissionsExt::from_mode(0o644),
                    )?;
                    Ok(file)
                })
                .map_err(|e| format!("input validator {}: {e}", validator.name))?;
            Ok(Runner::Checktestdata {
                script: filled,
                dir,
            })
        }
        InputValidatorKind::Program(source) => judge
            .compile_package_program(problem, source)
            .map(|program| Runner::Program(Box::new(program), source.testlib))
            .map_err(|e| format!("input validator {} does not build: {e}", validator.name)),
    }
}

/// Whether the validator accepts `input` (with the test's `.files` in its working
/// directory); `Err` when it neither accepts nor rejects.
fn verdict(
    judge: &Judge<'_>,
    problem: &Problem,
    runner: &Runner,
    input: &Path,
    files: Option<&Path>,
    args: &[String],
) -> Result<bool, String> {
    let limits = &problem.limits;
    let sandbox_limits = Limits {
        cpu_time_ms: limits.validation_time_s * 1000,
        wall_time_ms: limits.validation_time_s * 2000,
        memory_bytes: limits.validation_memory_mib << 20,
        output_bytes: limits.validation_output_mib << 20,
        ..Limits::default()
    };
    let mut private_dir = None;
    let (spec, accepts): (RunSpec, fn(&RunOutcome) -> Option<bool>) = match runner {
        Runner::Program(program, testlib) => {
            let mut spec = program.spec(limits.validation_memory_mib, args, sandbox_limits);
            spec.limits.memory_bytes += program.memory_overhead_mib() << 20;
            private_dir = program
                .private_dir(files, false)
                .map_err(|e| format!("working directory: {e}"))?;
            if let Some(dir) = &private_dir {
                spec = spec.job_dir(dir.path(), false);
            }
            let accepts: fn(&RunOutcome) -> Option<bool> = if *testlib {
                |outcome| match outcome.exit_code {
                    Some(0) => Some(true),
                    Some(_) => Some(false),
                    None => None,
                }
            } else {
                |outcome| match outcome.exit_code {
                    Some(42) => Some(true),
                    Some(43) => Some(false),
                    _ => None,
                }
            };
            (spec, accepts)
        }
        Runner::Checktestdata { script, dir } => (
            RunSpec::new("/usr/bin/python3")
                .args([
                    "-m".to_string(),
                    "checktestdata".into(),
                    SCRIPT_MOUNT.into(),
                ])
                .env("PYTHONPATH", CHECKTESTDATA_MOUNT)
                .bind(Bind::read_only(script.path(), SCRIPT_MOUNT))
                .bind(Bind::read_only(dir, CHECKTESTDATA_MOUNT))
                .profile(Profile::Python)
                .limits(sandbox_limits),
            |outcome| match outcome.exit_code {
                Some(0) => Some(true),
                Some(1) => Some(false),
                _ => None,
            },
        ),
    };
    let spec = spec.stdin(Stdin::File(input.to_path_buf()));
    let outcome = judge
        .sandbox()
        .run(&spec)
        .map_err(|e| format!("invalid validator run: {e}"))?;
    drop(private_dir);
    accepts(&outcome).ok_or_else(|| {
        let stderr = String::from_utf8_lossy(&outcome.stderr);
        format!(
            "the validator ended as {} (exit {:?}): {}",
            outcome.status,
            outcome.exit_code,
            stderr.lines().last().unwrap_or_default()
        )
    })
}
