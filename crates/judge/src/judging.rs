//! The judging flow: package → compile → run → check → aggregate.
//!
//! 1. [`Judge::prepare`] compiles the package's validator (once per package).
//! 2. [`Judge::judge`] compiles the submission in the sandbox; a failure is `CE` (or `SE` when
//!    the sandbox itself failed).
//! 3. Tests run in judging order on `concurrency` workers. Each test is one sandboxed run fed
//!    the `.in` file; an interactive test is two runs (submission and validator) connected by
//!    pipes, each in its own cgroup, so the submission's time is counted alone.
//! 4. Each output is checked (default validator in process; custom validators in the sandbox).
//! 5. Results are aggregated in judging order: skipping follows `on_reject: break` and the
//!    stop-at-first-failure option, applied deterministically after the (speculatively
//!    parallel) runs; the verdict is the most severe counted test verdict, time and memory the
//!    maxima, and scoring problems add up their groups' scores.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::compile_cache::CompileCache;
use sandbox::{Bind, Limits, PassedFds, RunOutcome, RunSpec, Sandbox, Stdin, Stdout};

use crate::checker::{self, default::DefaultFlags, Decision};
use crate::grading::{aggregate, max_score, Failures, Plan};
use crate::language::{CompileLimits, Language, Languages};
use crate::output::CapturedOutput;
use crate::package::{GroupSettings, Problem, ProblemKind, TestCase, Validation};
use crate::program::ProgramFiles;
use crate::verdict::{run_verdict, Verdict};

/// Something that prevents judging altogether (as opposed to a verdict).
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    #[error("{0}")]
    Language(String),
    #[error("the package's validator does not compile: {0}")]
    Validator(String),
    #[error("judging workspace: {0}")]
    Workspace(#[from] std::io::Error),
}

/// Per-judging options.
#[derive(Debug, Clone, Default)]
pub struct JudgeOptions {
    pub coverage: Coverage,
    /// Stops the judging early (a worker that lost its lease); the report is then partial.
    pub abort: Option<Abort>,
}

/// Stops a judging from another thread: no further test starts, and the submission's runs in
/// flight are cancelled.
#[derive(Clone, Default)]
pub struct Abort(Arc<AbortState>);

impl std::fmt::Debug for Abort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Abort")
            .field("aborted", &self.is_aborted())
            .finish()
    }
}

#[derive(Default)]
struct AbortState {
    aborted: std::sync::atomic::AtomicBool,
    running: Mutex<Vec<(u64, sandbox::Canceller)>>,
    next: std::sync::atomic::AtomicU64,
}

impl Abort {
    pub fn abort(&self) {
        self.0.aborted.store(true, Ordering::SeqCst);
        for (_, canceller) in self.0.running.lock().unwrap().iter() {
            canceller.cancel();
        }
    }

    pub fn is_aborted(&self) -> bool {
        self.0.aborted.load(Ordering::SeqCst)
    }

    /// Keeps a started run cancellable until [`Abort::untrack`].
    fn track(&self, run: &dyn sandbox::Run) -> u64 {
        let key = self.0.next.fetch_add(1, Ordering::SeqCst);
        self.0.running.lock().unwrap().push((key, run.canceller()));
        if self.is_aborted() {
            run.canceller().cancel();
        }
        key
    }

    fn untrack(&self, key: u64) {
        self.0.running.lock().unwrap().retain(|(k, _)| *k != key);
    }

    /// Runs `spec`, cancellable by this abort while it runs.
    pub(crate) fn run(
        &self,
        sandbox: &dyn Sandbox,
        spec: &RunSpec,
        fds: PassedFds,
    ) -> Result<RunOutcome, sandbox::SpecError> {
        let run = sandbox.start(spec, fds)?;
        let key = self.track(run.as_ref());
        let outcome = run.wait();
        self.untrack(key);
        Ok(outcome)
    }
}

/// Limits of a single execution (no test data, no checker).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecuteLimits {
    pub time_limit_ms: u64,
    pub memory_mib: u64,
    pub output_bytes: u64,
}

/// What an execution produced.
#[derive(Debug)]
pub struct Execution {
    /// `CE` / `SE` when it did not compile; otherwise `AC` for a clean exit, or the verdict of
    /// how the run ended (`RE`, `TLE`, `MLE`, `OLE`, `SE`). Output is not judged.
    pub verdict: Verdict,
    pub compile_output: String,
    /// The run, when the program compiled.
    pub outcome: Option<RunOutcome>,
}

/// Which tests are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coverage {
    /// The package decides: pass-fail problems stop at the first failure; scoring problems
    /// judge every group, each stopping early where its `on_reject` says `break`.
    #[default]
    Package,
    /// Stop at the first failing test.
    FirstFailure,
    /// Judge every test, whatever fails.
    All,
}

impl Coverage {
    /// The skipping rules for a problem of `kind`.
    pub(crate) fn rules(self, kind: ProblemKind) -> SkipRules {
        match (self, kind) {
            (Coverage::All, _) => SkipRules {
                first_failure: false,
                group_breaks: false,
            },
            (Coverage::FirstFailure, _) | (Coverage::Package, ProblemKind::PassFail) => SkipRules {
                first_failure: true,
                group_breaks: true,
            },
            (Coverage::Package, ProblemKind::Scoring) => SkipRules {
                first_failure: false,
                group_breaks: true,
            },
        }
    }
}

/// When a known failure makes later tests pointless.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SkipRules {
    /// Any failure skips every later test.
    pub(crate) first_failure: bool,
    /// A failure in a group with `on_reject: break` skips the group's later tests.
    pub(crate) group_breaks: bool,
}

/// One test's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestResult {
    /// `secret/group1/03`.
    pub name: String,
    /// The test's group, `secret/group1`.
    pub group: String,
    pub verdict: Verdict,
    /// CPU time of the submission.
    pub time_ms: u64,
    pub wall_time_ms: u64,
    pub memory_kib: u64,
    /// What the checker or the run said; never the hidden answer.
    pub message: String,
    /// The score a custom validator reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// The submission's output, for sample tests only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// An SE the package caused (its validator misbehaved), as opposed to the judge failing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub package_fault: bool,
    /// Function problems: the case's arguments, values, exception and prints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<contracts::CaseDetail>,
}

/// The result of judging one submission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeReport {
    pub verdict: Verdict,
    /// Scoring problems only.
    pub score: Option<f64>,
    pub max_score: Option<f64>,
    /// Maximum CPU time over the counted tests.
    pub time_ms: u64,
    /// Maximum peak memory over the counted tests.
    pub memory_kib: u64,
    pub compile_output: String,
    /// Counted tests in judging order (skipped tests are absent).
    pub tests: Vec<TestResult>,
    /// Scoring problems: the score of each group directly below `secret` (IOI subtasks).
    pub subtasks: Vec<contracts::contest::SubtaskScore>,
}

impl TestResult {
    /// The result with a decision's verdict, message, score and fault.
    pub(crate) fn decided(self, decision: Decision) -> Self {
        Self {
            verdict: decision.verdict,
            message: decision.message,
            score: decision.score,
            package_fault: decision.package_fault,
            ..self
        }
    }

    /// A test's result before it is judged (a system error until something better is known).
    pub(crate) fn unjudged(case: &TestCase) -> Self {
        Self {
            name: case.name.clone(),
            group: case
                .name
                .rsplit_once('/')
                .map_or(String::new(), |(g, _)| g.to_string()),
            verdict: Verdict::SE,
            time_ms: 0,
            wall_time_ms: 0,
            memory_kib: 0,
            message: String::new(),
            score: None,
            output: None,
            package_fault: false,
            detail: None,
        }
    }
}

impl JudgeReport {
    /// A system error the judge may recover from by judging again: the sandbox or the machine
    /// failed. An SE whose every failing test is the package's fault (a validator that timed
    /// out, crashed or answered nonsense) is final: judging again would fail the same way.
    pub fn needs_retry(&self) -> bool {
        let mut failed = self
            .tests
            .iter()
            .filter(|t| t.verdict == Verdict::SE)
            .peekable();
        self.verdict == Verdict::SE && (failed.peek().is_none() || failed.any(|t| !t.package_fault))
    }
}

/// Live progress, for terminals and status streams.
#[derive(Debug)]
pub enum Progress<'a> {
    Compiling,
    Compiled {
        ok: bool,
    },
    Test {
        index: usize,
        total: usize,
        result: &'a TestResult,
    },
}

/// A compiled program in its own job directory.
pub struct Compiled {
    dir: tempfile::TempDir,
    language: Language,
    /// The program's file names and entry point (the bytes are in `dir`).
    layout: ProgramFiles,
}

impl Compiled {
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The run command with its placeholders filled in, plus extra arguments.
    pub fn command(&self, memory_mib: u64, extra: &[String]) -> (String, Vec<String>) {
        let config = &self.language.config;
        let mut words = self
            .layout
            .expand(config, &config.run)
            .into_iter()
            .map(|w| w.replace("{memory_mib}", &memory_mib.to_string()));
        let program = words.next().unwrap_or_default();
        let mut args: Vec<String> = words.collect();
        args.extend_from_slice(extra);
        (program, args)
    }

    /// A working directory of one test's own, when the program's shared one will not do: a
    /// copy of it with the test's `files` (`.files/`) copied over it, or one the program may
    /// write in (`allow_file_writing`; the writes vanish with the copy). `None`: the shared,
    /// read-only directory serves.
    pub(crate) fn private_dir(
        &self,
        files: Option<&Path>,
        writable: bool,
    ) -> std::io::Result<Option<tempfile::TempDir>> {
        if files.is_none() && !writable {
            return Ok(None);
        }
        let dir = crate::workdir::dir("ulticode-test-")?;
        crate::files::copy_tree(self.dir.path(), dir.path())?;
        if let Some(files) = files {
            crate::files::copy_tree(files, dir.path())?;
        }
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )?;
        Ok(Some(dir))
    }

    pub(crate) fn language(&self) -> &Language {
        &self.language
    }

    /// Memory the language's runtime needs beyond the program's own limit.
    pub(crate) fn memory_overhead_mib(&self) -> u64 {
        self.language.config.memory_overhead_mib
    }

    pub(crate) fn spec(&self, memory_mib: u64, extra: &[String], limits: Limits) -> RunSpec {
        let (program, args) = self.command(memory_mib, extra);
        let config = &self.language.config;
        RunSpec {
            args,
            env: config.env.clone(),
            binds: config.binds.clone(),
            ..RunSpec::new(program)
                .job_dir(self.dir.path(), false)
                .profile(config.profile)
                .limits(limits)
        }
    }
}

/// The answers of a submit-answer submission, by their paths in it.
pub struct Answers {
    files: Vec<(String, Vec<u8>)>,
}

impl Answers {
    /// One file: the answer to every test.
    pub fn single(bytes: Vec<u8>) -> Self {
        Self {
            files: vec![(String::new(), bytes)],
        }
    }

    /// Files by their paths in the submission (`secret/group1/03.out`, `03.ans`, ...).
    pub fn files(files: Vec<(String, Vec<u8>)>) -> Self {
        Self { files }
    }

    /// The answer to the test `name` (its path below `data/`, such as `secret/group1/03`):
    /// the file of that path whatever its extension, else of that path below `sample/` or
    /// `secret/` (`group1/03`), else of its base name (`03`) where no other test of `tests`
    /// has it. A single file answers every test.
    pub fn for_test(&self, name: &str, tests: &[&str]) -> Option<&[u8]> {
        if let [(path, bytes)] = self.files.as_slice() {
            if path.is_empty() {
                return Some(bytes);
            }
        }
        let stem = |path: &str| -> String {
            match path.rsplit_once('/') {
                Some((dir, file)) => format!("{dir}/{}", file.split('.').next().unwrap_or(file)),
                None => path.split('.').next().unwrap_or(path).to_string(),
            }
        };
        let base = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
        let find = |wanted: &str| {
            self.files
                .iter()
                .find(|(path, _)| stem(path) == wanted)
                .map(|(_, bytes)| bytes.as_slice())
        };
        let below_top = name.split_once('/').map_or(name, |(_, rest)| rest);
        let own_base = base(name);
        let unique_base = tests.iter().filter(|t| base(t) == own_base).count() == 1;
        find(name)
            .or_else(|| find(below_top))
            .or_else(|| unique_base.then(|| find(&own_base)).flatten())
    }
}

/// The result of a compilation: the program and the compiler's output, or why it failed.
pub enum Compilation {
    Ready(Box<Compiled>, String),
    /// `CE`, or `SE` when the sandbox could not run the compiler.
    Failed {
        verdict: Verdict,
        output: String,
    },
}

/// How a prepared problem checks outputs.
enum Checker {
    Default(DefaultFlags),
    Icpc {
        program: Compiled,
        flags: Vec<String>,
    },
    Testlib(Compiled),
}

/// A problem with its validator compiled.
pub struct PreparedProblem<'p> {
    pub problem: &'p Problem,
    checker: Checker,
    /// The compiled static validator, for the static validation test cases.
    static_validator: Option<Compiled>,
}

/// Compiles and judges in the sandbox.
pub struct Judge<'a> {
    sandbox: &'a dyn Sandbox,
    languages: &'a Languages,
    concurrency: usize,
    /// Where successful compilations are kept for the next compilation of the same input.
    compile_cache: Option<&'a crate::compile_cache::CompileCache>,
}

/// Mountpoints of the data a validator sees.
const INPUT: &str = "/data/input";
const ANSWER: &str = "/data/answer";
const FEEDBACK: &str = "/feedback";
/// Where a static validator finds the submission's files (its working directory).
const SUBMISSION: &str = "/submission";
/// Output shown for sample tests, at most.
const SAMPLE_OUTPUT_BYTES: usize = 64 * 1024;

impl<'a> Judge<'a> {
    pub fn new(sandbox: &'a dyn Sandbox, languages: &'a Languages) -> Self {
        Self {
            sandbox,
            languages,
            concurrency: std::thread::available_parallelism().map_or(1, |n| n.get()),
            compile_cache: None,
        }
    }

    /// Compilations go through `cache`: a kept one is reused, a new successful one is kept.
    pub fn with_compile_cache(
        mut self,
        cache: Option<&'a crate::compile_cache::CompileCache>,
    ) -> Self {
        self.compile_cache = cache;
        self
    }

    /// How many tests run at once (default: one per CPU).
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    pub fn languages(&self) -> &Languages {
        self.languages
    }

    /// Compiles the package's validator, if it has one.
    pub fn prepare<'p>(&self, problem: &'p Problem) -> Result<PreparedProblem<'p>, JudgeError> {
        let checker = match (&problem.validation, &problem.validator) {
            (Validation::Default, _) => Checker::Default(
                DefaultFlags::parse(&problem.validator_flags).map_err(JudgeError::Validator)?,
            ),
            (Validation::Custom { .. }, Some(source)) => {
                let program = self.compile_package_program(problem, source)?;
                if source.testlib {
                    Checker::Testlib(program)
                } else {
                    Checker::Icpc {
                        program,
                        flags: problem
                            .validator_flags
                            .split_whitespace()
                            .map(str::to_string)
                            .collect(),
                    }
                }
            }
            (Validation::Custom { .. }, None) => {
                return Err(JudgeError::Validator(
                    "custom validation without a validator".into(),
                ))
            }
        };
        let static_validator = problem
            .static_validator
            .as_ref()
            .map(|source| self.compile_package_program(problem, source))
            .transpose()?;
        Ok(PreparedProblem {
            problem,
            checker,
            static_validator,
        })
    }

    pub(crate) fn sandbox(&self) -> &dyn Sandbox {
        self.sandbox
    }

    /// Compiles one of the package's own programs (a validator): its sources, or its
    /// `build` script, inside the sandbox under the package's compilation limits.
    pub fn compile_package_program(
        &self,
        problem: &Problem,
        source: &crate::package::ValidatorSource,
    ) -> Result<Compiled, JudgeError> {
        let scripts;
        let language = if source.language == crate::package::SCRIPTS {
            scripts = crate::language::scripts_language();
            &scripts
        } else {
            self.languages
                .get(&source.language)
                .ok_or_else(|| JudgeError::Validator(self.languages.why_not(&source.language)))?
        };
        let program = validator_program(language, source, &problem.constants)?;
        let limits = CompileLimits {
            cpu_time_ms: problem.limits.compilation_time_s * 1000,
            memory_mib: problem.limits.compilation_memory_mib,
            ..language.config.compile_limits
        };
        match self.compile(language, &program, limits)? {
            Compilation::Ready(program, _) => Ok(*program),
            Compilation::Failed { output, .. } => Err(JudgeError::Validator(format!(
                "{}: {output}",
                source.dir.display()
            ))),
        }
    }

    /// Writes a program's files into a fresh job directory and compiles them in the sandbox.
    pub fn compile(
        &self,
        language: &Language,
        program: &ProgramFiles,
        limits: CompileLimits,
    ) -> Result<Compilation, JudgeError> {
        let config = &language.config;
        let layout = ProgramFiles {
            files: program
                .files
                .iter()
                .map(|(name, _)| (name.clone(), Vec::new()))
                .collect(),
            ..program.clone()
        };
        let cached = match (&config.compile, self.compile_cache) {
            (Some(command), Some(cache)) => {
                let key =
                    CompileCache::key(language, &program.expand(config, command), program, &limits);
                match cache.take(&key) {
                    Ok(Some((dir, output))) => {
                        return Ok(Compilation::Ready(
                            Box::new(Compiled {
                                dir,
                                language: language.clone(),
                                layout,
                            }),
                            output,
                        ))
                    }
                    Ok(None) => Some((cache, key)),
                    Err(e) => {
                        tracing::warn!(error = %e, "compile cache unreadable; compiling");
                        None
                    }
                }
            }
            _ => None,
        };
        let dir = crate::workdir::dir("ulticode-job-")?;
        for (name, bytes) in &program.files {
            let path = dir.path().join(name);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, bytes)?;
        }
        let mut output = String::new();
        if let Some(command) = &config.compile {
            let command = program.expand(config, command);
            let (program, args) = command
                .split_first()
                .expect("compile commands are not empty");
            let spec = RunSpec {
                args: args.to_vec(),
                env: config.env.clone(),
                binds: config.binds.clone(),
                ..RunSpec::new(program.clone())
                    .job_dir(dir.path(), true)
                    .profile(config.profile)
                    .limits(limits.to_sandbox())
            };
            let outcome = self
                .sandbox
                .run(&spec)
                .map_err(|e| JudgeError::Language(e.to_string()))?;
            output = compiler_output(&outcome, limits.output_bytes as usize);
            if outcome.status != sandbox::Status::Ok {
                let verdict = match outcome.status.fault() {
                    sandbox::Fault::Infrastructure => Verdict::SE,
                    _ => Verdict::CE,
                };
                if verdict == Verdict::SE {
                    output = format!(
                        "the compiler could not run: {}",
                        outcome.message.unwrap_or_default()
                    );
                } else if outcome.status != sandbox::Status::NonzeroExit {
                    output.push_str(&format!("\n[compiler ended as {}]", outcome.status));
                }
                return Ok(Compilation::Failed { verdict, output });
            }
        }
        // The sandbox copied the compiler's output back as root's files: run identities may
        // read and execute the program, never change it.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )?;
        if let Some((cache, key)) = cached {
            if let Err(e) = cache.put(&key, dir.path(), &output) {
                tracing::warn!(error = %e, "compilation not kept in the cache");
            }
        }
        Ok(Compilation::Ready(
            Box::new(Compiled {
                dir,
                language: language.clone(),
                layout,
            }),
            output,
        ))
    }

    /// Compiles `source` and runs it once on `stdin` (no checker): the "run my code on this
    /// input" preview and the execution API. Cancellable through `abort`.
    pub fn execute(
        &self,
        language_id: &str,
        source: &[u8],
        stdin: Vec<u8>,
        limits: ExecuteLimits,
        abort: &Abort,
    ) -> Result<Execution, JudgeError> {
        let (program, compile_output) = match self.build(
            language_id,
            source,
            &crate::execution::BuildOptions::default(),
        )? {
            Compilation::Ready(program, output) => (program, output),
            Compilation::Failed { verdict, output } => {
                return Ok(Execution {
                    verdict,
                    compile_output: output,
                    outcome: None,
                })
            }
        };
        let options = crate::execution::RunOptions {
            cpu_time_ms: limits.time_limit_ms,
            cpu_extra_ms: 0,
            wall_time_ms: limits.time_limit_ms * 3 + 1_000,
            memory_kib: limits.memory_mib << 10,
            stack_kib: None,
            processes: None,
            output_bytes: limits.output_bytes,
            file_size_bytes: None,
            arguments: Vec::new(),
            redirect_stderr: false,
        };
        let outcome = self.run_built(&program, stdin, &options, abort)?;
        let verdict = run_verdict(&outcome).map_or(Verdict::AC, |(verdict, _)| verdict);
        Ok(Execution {
            verdict,
            compile_output,
            outcome: Some(outcome),
        })
    }

    /// Compiles and judges one submission.
    pub fn judge(
        &self,
        prepared: &PreparedProblem<'_>,
        language_id: &str,
        source: &[u8],
        options: JudgeOptions,
        progress: &(dyn Fn(Progress<'_>) + Sync),
    ) -> Result<JudgeReport, JudgeError> {
        if prepared.problem.submit_answer {
            let answers = Answers::single(source.to_vec());
            return Ok(self.judge_answers(prepared, &answers, options, progress));
        }
        let language = self
            .languages
            .get(language_id)
            .ok_or_else(|| JudgeError::Language(self.languages.why_not(language_id)))?;
        let program = ProgramFiles::single(&language.config, source);
        self.judge_program(prepared, language_id, program, options, progress)
    }

    /// Judges a submit-answer submission: each test's answer file goes straight to the output
    /// validator (nothing runs but the validator).
    pub fn judge_answers(
        &self,
        prepared: &PreparedProblem<'_>,
        answers: &Answers,
        options: JudgeOptions,
        progress: &(dyn Fn(Progress<'_>) + Sync),
    ) -> JudgeReport {
        let problem = prepared.problem;
        let rules = options.coverage.rules(problem.kind);
        let plan = Plan::new(&problem.data);
        let abort = options.abort.clone().unwrap_or_default();
        let names: Vec<&str> = plan.cases.iter().map(|c| c.case.name.as_str()).collect();
        let results = self.run_plan(&plan, rules, &abort, progress, &|case, settings| {
            self.check_answer(
                prepared,
                answers.for_test(&case.name, &names),
                case,
                settings,
            )
        });
        aggregate(problem, &plan, results, rules, String::new())
    }

    /// A static validation test case: the static validator reads the submission's files
    /// (its working directory) and judges them like an output validator
    /// (`language entry_point feedback_dir [args]`).
    fn run_static(
        &self,
        prepared: &PreparedProblem<'_>,
        submission: &Compiled,
        case: &TestCase,
        validation: &crate::package::StaticValidation,
    ) -> TestResult {
        let mut result = TestResult::unjudged(case);
        let Some(validator) = &prepared.static_validator else {
            result.message = "no static validator was prepared".into();
            return result;
        };
        let feedback = match feedback_dir() {
            Ok(dir) => dir,
            Err(e) => {
                result.message = format!("feedback directory: {e}");
                return result;
            }
        };
        let layout = &submission.layout;
        let entry = if layout.main_class.is_empty() {
            &layout.entry
        } else {
            &layout.main_class
        };
        let mut args = vec![
            crate::program::language_code(&submission.language.config.id).to_string(),
            entry.clone(),
            format!("{FEEDBACK}/"),
        ];
        args.extend(validation.args.iter().cloned());
        let limits = &prepared.problem.limits;
        let sandbox_limits = Limits {
            cpu_time_ms: limits.validation_time_s * 1000,
            wall_time_ms: limits.validation_time_s * 2000,
            memory_bytes: (limits.validation_memory_mib
                + validator.language.config.memory_overhead_mib)
                << 20,
            output_bytes: limits.validation_output_mib << 20,
            pids: validator.language.config.run_pids,
            ..Limits::default()
        };
        let mut spec = validator
            .spec(limits.validation_memory_mib, &args, sandbox_limits)
            .bind(Bind::read_only(submission.dir(), SUBMISSION))
            .bind(Bind {
                source: feedback.path().to_path_buf(),
                target: PathBuf::from(FEEDBACK),
                writable: true,
            });
        spec.cwd = Some(PathBuf::from(SUBMISSION));
        let decision = match self.sandbox.run(&spec) {
            Ok(outcome) => read_feedback(&outcome, feedback.path()),
            Err(e) => system_error(format!("invalid static validator run: {e}")),
        };
        result.decided(decision)
    }

    /// One test judged on an output that is given, not produced by a run: a submit-answer
    /// submission's answer, a sample's shown output during verification.
    pub(crate) fn check_answer(
        &self,
        prepared: &PreparedProblem<'_>,
        answer: Option<&[u8]>,
        case: &TestCase,
        settings: &GroupSettings,
    ) -> TestResult {
        let mut result = TestResult::unjudged(case);
        let limit = prepared.problem.limits.output_mib << 20;
        let decision = match answer {
            None => Decision::verdict(
                Verdict::WA,
                format!("the submission has no answer for {}", case.name),
            ),
            Some(bytes) if bytes.len() as u64 > limit => Decision::verdict(
                Verdict::OLE,
                format!("the answer is larger than {} MiB", limit >> 20),
            ),
            Some(bytes) => match CapturedOutput::from_bytes(bytes) {
                Ok(output) => {
                    if case.sample {
                        result.output = Some(
                            String::from_utf8_lossy(&output.head(SAMPLE_OUTPUT_BYTES)).into_owned(),
                        );
                    }
                    self.check(prepared, case, settings, &output, None)
                }
                Err(e) => system_error(format!("answer file: {e}")),
            },
        };
        result.decided(decision)
    }

    /// Judges a program of one or more files (a directory submission). The package's
    /// included files for the language are added first, replacing the program's own.
    pub fn judge_program(
        &self,
        prepared: &PreparedProblem<'_>,
        language_id: &str,
        mut files: ProgramFiles,
        options: JudgeOptions,
        progress: &(dyn Fn(Progress<'_>) + Sync),
    ) -> Result<JudgeReport, JudgeError> {
        let problem = prepared.problem;
        if problem.submit_answer {
            let answers = Answers::files(std::mem::take(&mut files.files));
            return Ok(self.judge_answers(prepared, &answers, options, progress));
        }
        let language = self
            .languages
            .get(language_id)
            .ok_or_else(|| JudgeError::Language(self.languages.why_not(language_id)))?;
        // `limits.code`: the submitted files, before the package's included files join them.
        let size: usize = files.files.iter().map(|(_, bytes)| bytes.len()).sum();
        let refused = problem.allows_language(language_id).and_then(|()| {
            if size as u64 > problem.limits.code_kib << 10 {
                Err(format!(
                    "the submission is {} KiB, more than the problem's code limit of {} KiB",
                    size.div_ceil(1024),
                    problem.limits.code_kib
                ))
            } else {
                Ok(())
            }
        });
        if let Err(reason) = refused {
            progress(Progress::Compiled { ok: false });
            return Ok(JudgeReport {
                compile_output: reason,
                ..failed_report(problem, Verdict::CE)
            });
        }
        let limits = CompileLimits {
            cpu_time_ms: problem.limits.compilation_time_s * 1000,
            memory_mib: problem
                .limits
                .compilation_memory_mib
                .max(language.config.compile_limits.memory_mib),
            ..language.config.compile_limits
        };
        if problem.function.is_some() {
            let [(_, source)] = files.files.as_slice() else {
                progress(Progress::Compiled { ok: false });
                return Ok(JudgeReport {
                    compile_output: "a function problem takes one source file".into(),
                    ..failed_report(problem, Verdict::CE)
                });
            };
            return self.judge_function(prepared, language_id, source, limits, &options, progress);
        }
        files.include(problem.included_files(&language.config.id)?);
        progress(Progress::Compiling);
        let (program, compile_output) = match self.compile(language, &files, limits)? {
            Compilation::Ready(program, output) => (program, output),
            Compilation::Failed { verdict, output } => {
                progress(Progress::Compiled { ok: false });
                return Ok(JudgeReport {
                    compile_output: output,
                    ..failed_report(problem, verdict)
                });
            }
        };
        progress(Progress::Compiled { ok: true });
        let rules = options.coverage.rules(problem.kind);
        let plan = Plan::new(&problem.data);
        let abort = options.abort.clone().unwrap_or_default();
        let results = self.run_plan(
            &plan,
            rules,
            &abort,
            progress,
            &|case, settings| match &case.static_validation {
                Some(validation) => self.run_static(prepared, &program, case, validation),
                None => self.run_test(prepared, &program, case, settings, &abort),
            },
        );
        Ok(aggregate(problem, &plan, results, rules, compile_output))
    }

    /// Runs the plan's tests on the workers, skipping what a known failure makes pointless.
    fn run_plan(
        &self,
        plan: &Plan<'_>,
        rules: SkipRules,
        abort: &Abort,
        progress: &(dyn Fn(Progress<'_>) + Sync),
        run_test: &(dyn Fn(&TestCase, &GroupSettings) -> TestResult + Sync),
    ) -> Vec<Option<TestResult>> {
        let total = plan.cases.len();
        let results: Vec<Mutex<Option<TestResult>>> =
            (0..total).map(|_| Mutex::new(None)).collect();
        let next = AtomicUsize::new(0);
        let failures = Mutex::new(Failures::default());
        std::thread::scope(|scope| {
            for _ in 0..self.concurrency.min(total) {
                scope.spawn(|| loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    if index >= total {
                        return;
                    }
                    if abort.is_aborted() {
                        return;
                    }
                    if failures.lock().unwrap().leaves_out(plan, index, rules) {
                        continue;
                    }
                    let planned = &plan.cases[index];
                    let result = run_test(planned.case, planned.settings);
                    if result.verdict != Verdict::AC {
                        failures.lock().unwrap().record(plan, index);
                    }
                    progress(Progress::Test {
                        index,
                        total,
                        result: &result,
                    });
                    *results[index].lock().unwrap() = Some(result);
                });
            }
        });
        results
            .into_iter()
            .map(|r| r.into_inner().unwrap())
            .collect()
    }

    fn run_test(
        &self,
        prepared: &PreparedProblem<'_>,
        program: &Compiled,
        case: &TestCase,
        settings: &GroupSettings,
        abort: &Abort,
    ) -> TestResult {
        let problem = prepared.problem;
        let memory_mib = problem.limits.memory_mib;
        let tl = problem.limits.time_limit_ms;
        let limits = Limits {
            cpu_time_ms: tl,
            wall_time_ms: tl * 3 + 1_000,
            memory_bytes: (memory_mib + program.language.config.memory_overhead_mib) << 20,
            pids: program.language.config.run_pids,
            output_bytes: problem.limits.output_mib << 20,
            ..Limits::default()
        };
        let mut result = TestResult::unjudged(case);
        let spec = program.spec(memory_mib, &case.args, limits);
        let private_dir =
            match program.private_dir(case.files.as_deref(), problem.allow_file_writing) {
                Ok(dir) => dir,
                Err(e) => {
                    result.message = format!("working directory: {e}");
                    return result;
                }
            };
        let spec = match &private_dir {
            Some(dir) => spec.job_dir(dir.path(), problem.allow_file_writing),
            None => spec,
        };
        // A multi-pass test runs again on the `nextpass.in` its validator wrote, up to
        // `validation_passes` times; the feedback directory persists between passes.
        let passes = if problem.multi_pass {
            problem.limits.validation_passes.max(2)
        } else {
            1
        };
        let feedback = match problem.multi_pass.then(feedback_dir).transpose() {
            Ok(dir) => dir,
            Err(e) => {
                result.message = format!("feedback directory: {e}");
                return result;
            }
        };
        // Made at a second pass only: most tests have one.
        let mut inputs: Option<tempfile::TempDir> = None;
        let mut input = case.input.clone();
        let mut pass = 1;
        let (decision, output) = loop {
            let feedback_path = feedback.as_ref().map(|d| d.path());
            let pass_of = Pass {
                case,
                input: &input,
                settings,
                feedback: feedback_path,
            };
            let (outcome, decision, output) =
                match self.run_pass(prepared, spec.clone(), pass_of, abort) {
                    Ok(ran) => ran,
                    Err(message) => {
                        result.message = message;
                        return result;
                    }
                };
            if let Some(outcome) = &outcome {
                result.time_ms = result.time_ms.max(outcome.cpu_time_ms);
                result.wall_time_ms = result.wall_time_ms.max(outcome.wall_time_ms);
                result.memory_kib = result.memory_kib.max(outcome.memory_kib);
            }
            let Some(feedback) = feedback_path else {
                break (decision, output);
            };
            let next = feedback.join("nextpass.in");
            if !next.is_file() {
                break (decision, output);
            }
            if decision.verdict != Verdict::AC {
                break (
                    package_error("the validator wrote nextpass.in but did not accept".into()),
                    output,
                );
            }
            if pass == passes {
                break (
                    package_error(format!(
                        "the validator asked for more than validation_passes ({passes}) passes"
                    )),
                    output,
                );
            }
            pass += 1;
            let dir = match &mut inputs {
                Some(dir) => dir,
                None => match crate::workdir::dir("ulticode-passes-") {
                    Ok(dir) => inputs.insert(dir),
                    Err(e) => break (system_error(format!("pass inputs: {e}")), output),
                },
            };
            input = dir.path().join(format!("pass{pass}.in"));
            if let Err(e) = std::fs::rename(&next, &input) {
                break (system_error(format!("nextpass.in: {e}")), output);
            }
        };
        if case.sample {
            if let Some(output) = &output {
                result.output =
                    Some(String::from_utf8_lossy(&output.head(SAMPLE_OUTPUT_BYTES)).into_owned());
            }
        }
        result.decided(decision)
    }

    /// One run of a test (one pass of a multi-pass test): the submission on `pass.input`, then
    /// its output checked (or, interactive, both at once). `Err` is a judge failure's message.
    fn run_pass(
        &self,
        prepared: &PreparedProblem<'_>,
        spec: RunSpec,
        pass: Pass<'_>,
        abort: &Abort,
    ) -> Result<(Option<RunOutcome>, Decision, Option<CapturedOutput>), String> {
        let Pass {
            case,
            input,
            settings,
            feedback,
        } = pass;
        // A later pass's validator reads the input that pass ran on (the `nextpass.in` the
        // previous pass wrote), as the submission does.
        let later_pass;
        let case = if input == case.input {
            case
        } else {
            later_pass = TestCase {
                input: input.to_path_buf(),
                ..case.clone()
            };
            &later_pass
        };
        if prepared.problem.interactive() {
            let spec = RunSpec {
                stdin: Stdin::Passed,
                ..spec
            };
            let (outcome, decision) = self.run_interactive(prepared, spec, case, abort, feedback);
            return Ok((outcome, decision, None));
        }
        // The output streams into a file of the judge's (never whole into memory on the
        // way); the checker reads it in place.
        let (output, fds) = CapturedOutput::create()
            .and_then(|output| {
                let fds = output.for_run()?;
                Ok((output, fds))
            })
            .map_err(|e| format!("output file: {e}"))?;
        let spec = spec
            .stdin(Stdin::File(input.to_path_buf()))
            .stdout(Stdout::CaptureToFile);
        let outcome = abort
            .run(self.sandbox, &spec, fds)
            .map_err(|e| format!("invalid run: {e}"))?;
        let decision = match run_verdict(&outcome) {
            Some((verdict, message)) => Decision::verdict(verdict, message),
            None => self.check(prepared, case, settings, &output, feedback),
        };
        Ok((Some(outcome), decision, Some(output)))
    }

    /// Checks a finished run's output.
    pub(crate) fn check(
        &self,
        prepared: &PreparedProblem<'_>,
        case: &TestCase,
        settings: &GroupSettings,
        output: &CapturedOutput,
        feedback: Option<&Path>,
    ) -> Decision {
        match &prepared.checker {
            Checker::Default(problem_flags) => {
                let flags = match &settings.output_validator_flags {
                    Some(text) => match DefaultFlags::parse(text) {
                        Ok(flags) => flags,
                        Err(e) => return package_error(format!("output_validator_flags: {e}")),
                    },
                    None => *problem_flags,
                };
                let answer = match std::fs::read(&case.answer) {
                    Ok(answer) => answer,
                    Err(e) => {
                        return system_error(format!("cannot read {}: {e}", case.answer.display()))
                    }
                };
                let output = match output.map() {
                    Ok(output) => output,
                    Err(e) => return system_error(format!("read the output: {e}")),
                };
                let checked = checker::default::check(&output, &answer, &flags);
                Decision {
                    verdict: checked.verdict,
                    message: checked.message,
                    score: None,
                    package_fault: false,
                }
            }
            Checker::Icpc { program, flags } => {
                let flags = group_flags(settings, flags);
                let reader = match output.reader() {
                    Ok(reader) => reader,
                    Err(e) => return system_error(format!("read the output: {e}")),
                };
                self.run_validator(
                    prepared,
                    program,
                    case,
                    &flags,
                    |spec| {
                        let fds = PassedFds {
                            stdin: Some(reader),
                            stdout: None,
                            stderr: None,
                        };
                        (spec.stdin(Stdin::Passed), fds)
                    },
                    feedback,
                )
            }
            Checker::Testlib(program) => {
                let feedback = match feedback_dir() {
                    Ok(dir) => dir,
                    Err(e) => return system_error(format!("feedback directory: {e}")),
                };
                let copied = output.reader().and_then(|reader| {
                    let target = std::fs::File::create(feedback.path().join("output"))?;
                    std::io::copy(&mut std::fs::File::from(reader), &mut &target)
                });
                if let Err(e) = copied {
                    return system_error(format!("write the output for the checker: {e}"));
                }
                let args = [
                    INPUT.to_string(),
                    format!("{FEEDBACK}/output"),
                    ANSWER.to_string(),
                ];
                let spec = self.validator_spec(prepared, program, case, &args, feedback.path());
                match self.sandbox.run(&spec) {
                    Ok(outcome) => checker::testlib_decision(&outcome),
                    Err(e) => system_error(format!("invalid checker run: {e}")),
                }
            }
        }
    }

    fn validator_spec(
        &self,
        prepared: &PreparedProblem<'_>,
        program: &Compiled,
        case: &TestCase,
        args: &[String],
        feedback: &Path,
    ) -> RunSpec {
        let limits = &prepared.problem.limits;
        let sandbox_limits = Limits {
            cpu_time_ms: limits.validation_time_s * 1000,
            wall_time_ms: limits.validation_time_s * 2000 + limits.time_limit_ms * 3 + 1_000,
            memory_bytes: (limits.validation_memory_mib
                + program.language.config.memory_overhead_mib)
                << 20,
            output_bytes: limits.validation_output_mib << 20,
            pids: program.language.config.run_pids,
            ..Limits::default()
        };
        program
            .spec(limits.validation_memory_mib, args, sandbox_limits)
            .bind(Bind::read_only(&case.input, INPUT))
            .bind(Bind::read_only(&case.answer, ANSWER))
            .bind(Bind {
                source: feedback.to_path_buf(),
                target: PathBuf::from(FEEDBACK),
                writable: true,
            })
    }

    /// Runs an ICPC validator (`input answer feedback_dir [flags]`) and reads its feedback.
    /// `connect` sets its stdin (and stdout, for interactive problems); `fds` are passed along.
    fn run_validator(
        &self,
        prepared: &PreparedProblem<'_>,
        program: &Compiled,
        case: &TestCase,
        flags: &[String],
        connect: impl FnOnce(RunSpec) -> (RunSpec, PassedFds),
        persistent: Option<&Path>,
    ) -> Decision {
        // A multi-pass test's feedback directory persists between passes; otherwise each
        // validation gets a fresh one.
        let fresh;
        let feedback = match persistent {
            Some(dir) => dir,
            None => match feedback_dir() {
                Ok(dir) => {
                    fresh = dir;
                    fresh.path()
                }
                Err(e) => return system_error(format!("feedback directory: {e}")),
            },
        };
        let mut args = vec![
            INPUT.to_string(),
            ANSWER.to_string(),
            format!("{FEEDBACK}/"),
        ];
        args.extend_from_slice(flags);
        let (spec, fds) = connect(self.validator_spec(prepared, program, case, &args, feedback));
        let outcome = match self.sandbox.start(&spec, fds) {
            Ok(run) => run.wait(),
            Err(e) => return system_error(format!("invalid validator run: {e}")),
        };
        read_feedback(&outcome, feedback)
    }

    /// An interactive test: the submission and the validator, connected both ways.
    fn run_interactive(
        &self,
        prepared: &PreparedProblem<'_>,
        spec: RunSpec,
        case: &TestCase,
        abort: &Abort,
        feedback: Option<&Path>,
    ) -> (Option<RunOutcome>, Decision) {
        let Checker::Icpc {
            program: validator,
            flags,
        } = &prepared.checker
        else {
            return (
                None,
                package_error("interactive problems need an ICPC-style validator".into()),
            );
        };
        let pipes = (|| -> std::io::Result<_> {
            let (submission_reads, validator_writes) = std::io::pipe()?;
            let (validator_reads, submission_writes) = std::io::pipe()?;
            Ok((
                OwnedFd::from(submission_reads),
                OwnedFd::from(submission_writes),
                OwnedFd::from(validator_reads),
                OwnedFd::from(validator_writes),
            ))
        })();
        let (submission_reads, submission_writes, validator_reads, validator_writes) = match pipes {
            Ok(pipes) => pipes,
            Err(e) => return (None, system_error(format!("pipes: {e}"))),
        };
        // The judge keeps a read end of the validator's output until the validator is done, so
        // a validator that writes after the submission stopped reading is not killed by
        // SIGPIPE (the reference runner does the same); once the submission is gone, whatever
        // the validator still writes is drained here so it cannot block either.
        let validator_output = match submission_reads.try_clone() {
            Ok(fd) => fd,
            Err(e) => return (None, system_error(format!("pipes: {e}"))),
        };
        // It also keeps a write end of the submission's input and a read end of its output
        // until the validator's verdict is acted on: the moment the validator exits, the
        // submission can neither see the end of its input nor fail writing (EPIPE), and so
        // cannot crash because of the validator before a rejection cancels it. Causality then
        // decides: a submission that ended before the validator did ended on its own.
        let held = validator_writes
            .try_clone()
            .and_then(|input| Ok((input, validator_reads.try_clone()?)));
        let held = match held {
            Ok(ends) => ends,
            Err(e) => return (None, system_error(format!("pipes: {e}"))),
        };
        let submission_spec = RunSpec {
            stdin: Stdin::Passed,
            stdout: Stdout::Passed,
            ..spec
        };
        let submission = match self.sandbox.start(
            &submission_spec,
            PassedFds {
                stdin: Some(submission_reads),
                stdout: Some(submission_writes),
                stderr: None,
            },
        ) {
            Ok(run) => run,
            Err(e) => return (None, system_error(format!("invalid run: {e}"))),
        };
        let cancel = submission.canceller();
        let tracked = abort.track(submission.as_ref());
        let (decision, outcome) = std::thread::scope(|scope| {
            let (ended, outcome) = std::sync::mpsc::channel();
            let waiting = scope.spawn(move || {
                let _ = ended.send(submission.wait());
                let _ = std::io::copy(
                    &mut std::fs::File::from(validator_output),
                    &mut std::io::sink(),
                );
            });
            let decision = self.run_validator(
                prepared,
                validator,
                case,
                flags,
                |spec| {
                    let spec = RunSpec {
                        stdin: Stdin::Passed,
                        stdout: Stdout::Passed,
                        ..spec
                    };
                    let fds = PassedFds {
                        stdin: Some(validator_reads),
                        stdout: Some(validator_writes),
                        stderr: None,
                    };
                    (spec, fds)
                },
                feedback,
            );
            // Once the validator has rejected, the submission has nothing left to say: it is
            // cancelled, and sees the end of its pipes only once it has ended. Otherwise it
            // sees them now, and ends as it will.
            let outcome = if decision.verdict != Verdict::AC {
                cancel.cancel();
                let outcome = outcome.recv();
                drop(held);
                outcome
            } else {
                drop(held);
                outcome.recv()
            };
            waiting.join().expect("the waiting thread does not panic");
            (
                decision,
                outcome.expect("the waiting thread reports the outcome"),
            )
        });
        abort.untrack(tracked);
        let decision = interactive_decision(decision, &outcome);
        (Some(outcome), decision)
    }
}

/// The report of a submission that never got to run a test (refused, or did not compile).
pub(crate) fn failed_report(problem: &Problem, verdict: Verdict) -> JudgeReport {
    JudgeReport {
        verdict,
        score: (problem.kind == ProblemKind::Scoring).then_some(0.0),
        max_score: max_score(problem),
        time_ms: 0,
        memory_kib: 0,
        compile_output: String::new(),
        tests: Vec::new(),
        subtasks: Vec::new(),
    }
}

/// The reference rule for an interactive test: a validator that could not judge decides (not
/// the submission's fault); a validator that rejected before the submission ended decides
/// (the submission was cut off: cancelled, or killed writing to the closed pipe); otherwise a
/// submission that failed on its own (crash, time, memory) gets its failure, and one that ended
/// cleanly gets the validator's verdict. Which side ended first is decided by causality in the
/// sandbox (a cancellation counts only if it is what ended the program), never by the order in
/// which the two outcomes reach the judge.
fn interactive_decision(decision: Decision, outcome: &RunOutcome) -> Decision {
    let cut_off = outcome.cancelled || outcome.signal == Some(libc::SIGPIPE);
    match (decision.verdict, run_verdict(outcome)) {
        (Verdict::SE, _) => decision,
        (_, Some((verdict, message))) if !cut_off => Decision::verdict(verdict, message),
        _ => decision,
    }
}

/// A validator's files: its one source stored as the language expects (other files keep their
/// names), or a directory program of several sources.
fn validator_program(
    language: &Language,
    source: &crate::package::ValidatorSource,
    constants: &crate::package::Constants,
) -> Result<ProgramFiles, JudgeError> {
    let mut others = Vec::new();
    let mut sources = Vec::new();
    for path in &source.files {
        let bytes = constants.substitute(&std::fs::read(path)?);
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if source.sources.contains(path) {
            sources.push((name, bytes));
        } else {
            others.push((name, bytes));
        }
    }
    if source.language == crate::package::SCRIPTS {
        return Ok(ProgramFiles {
            files: others,
            entry: "run".into(),
            main_class: "run".into(),
        });
    }
    let mut program = match sources.len() {
        1 => ProgramFiles::single(&language.config, &sources.remove(0).1),
        _ => ProgramFiles::directory(&language.config, sources, None)
            .map_err(|e| JudgeError::Validator(format!("{}: {e}", source.dir.display())))?,
    };
    // Headers and data files beside the source, without replacing it.
    others.retain(|(name, _)| !program.files.iter().any(|(n, _)| n == name));
    program.include(others);
    Ok(program)
}

/// What one run of a test is given.
struct Pass<'a> {
    case: &'a TestCase,
    /// The submission's input: the test's `.in`, or the previous pass's `nextpass.in`.
    input: &'a Path,
    settings: &'a GroupSettings,
    /// The feedback directory kept across a multi-pass test's passes.
    feedback: Option<&'a Path>,
}

fn system_error(message: String) -> Decision {
    Decision::system_error(message)
}

/// A system error the package causes (see [`Decision::package_fault`]).
fn package_error(message: String) -> Decision {
    Decision {
        package_fault: true,
        ..Decision::system_error(message)
    }
}

/// A group's `output_validator_flags` replace the problem's `validator_flags`.
fn group_flags(settings: &GroupSettings, problem_flags: &[String]) -> Vec<String> {
    match &settings.output_validator_flags {
        Some(text) => text.split_whitespace().map(str::to_string).collect(),
        None => problem_flags.to_vec(),
    }
}

fn read_feedback(outcome: &RunOutcome, feedback: &Path) -> Decision {
    let read = |name: &str| std::fs::read_to_string(feedback.join(name)).ok();
    let message = read("judgemessage.txt").unwrap_or_default();
    let score = read("score.txt");
    checker::icpc_decision(outcome, &message, score.as_deref())
}

/// A feedback directory the validator writes (a writable bind: the sandbox gives the run a
/// tmpfs of its own and copies what it wrote back here).
fn feedback_dir() -> std::io::Result<tempfile::TempDir> {
    crate::workdir::dir("ulticode-feedback-")
}

fn compiler_output(outcome: &RunOutcome, cap: usize) -> String {
    let mut text = String::from_utf8_lossy(&outcome.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&outcome.stderr));
    if text.len() > cap {
        let mut end = cap;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[compiler output truncated]");
    }
    text
}
