//! The judge runtime: takes a problem package and a submission, compiles and runs it in the
//! sandbox, checks every output and aggregates a verdict. It knows nothing of databases or
//! queues; the submission pipeline drives it.
//!
//! Flow (see `judging`): package → compile → run → check → aggregate.

mod catalog;
pub mod checker;
pub mod compile_cache;
pub mod execution;
pub mod files;
pub mod function;
mod grading;
pub mod input_validation;
pub mod jobs;
mod judging;
pub mod language;
mod output;
pub mod package;
pub mod polygon;
pub mod program;
pub mod statement;
pub mod upload;
pub mod verdict;
mod verify;
pub mod workdir;

pub use grading::graded_verdict;
pub use judging::{
    Abort, Answers, Compilation, Compiled, Coverage, ExecuteLimits, Execution, Judge, JudgeError,
    JudgeOptions, JudgeReport, PreparedProblem, Progress, TestResult,
};
pub use language::{default_languages, Language, LanguageConfig, Languages, Unavailable};
pub use package::{PackageError, Problem};
pub use program::ProgramFiles;
pub use verdict::Verdict;
pub use verify::{
    submission_language, summary_groups, verify, RowOutcome, VerifyReport, VerifyRow,
};
