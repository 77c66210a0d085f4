//! Contracts between owners and workers. Plain data and port traits only: no I/O, no
//! storage, no runtime. An owner implements a port; another owner or a worker calls it through
//! an in-process or a remote adapter, and neither sees the other's entities.

pub mod admin;
pub mod contest;
pub mod events;
pub mod execution;
mod facts;
mod identity;
mod ids;
pub mod jobs;
mod judging;
pub mod search;
mod verdict;

pub use facts::{
    FactsError, FactsRejection, ProblemFacts, SubmissionFactsSnapshot, FACTS_SCHEMA_VERSION,
};
pub use identity::{
    AccountProvisioner, PasswordCheck, Permission, Principal, Recipient, Recipients, Role,
    TokenRejection, TokenVerifier, UserDirectory,
};
pub use ids::{AttemptId, Generation, ProblemId, SubmissionId, UserId};
pub use judging::{
    wire, Acquired, CaseDetail, CaseError, CaseFrame, FinishedTest, JudgeJob, JudgeMessage,
    JudgeProgress, JudgeResult, JudgingPort, PackagePreparer, PortError, ProblemPackagePort,
    StaleReason, TestOutcome,
};
pub use verdict::Verdict;
