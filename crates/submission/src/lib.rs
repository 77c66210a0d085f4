//! The Submission owner: submissions, their judge state (`generation`, attempt lease),
//! verdicts and per-test results, the judge outbox and its dispatcher, and the singleton jobs
//! that recover lost work. It never reads another owner's tables: everything it knows about
//! the problem and the user arrived in the facts snapshot.

mod admin_port;
pub mod api;
pub mod changes;
pub mod dispatcher;
pub mod executions;
pub mod maintenance;
pub mod port;
pub mod runs;
pub mod schema;
pub mod store;

pub use api::SubmissionApiConfig;
pub use dispatcher::{Dispatcher, DispatcherConfig};
pub use executions::{Executions, ExecutionsConfig};
pub use maintenance::MaintenanceConfig;
pub use runs::{Runs, RunsConfig};
pub use store::{
    JudgedGeneration, Listing, Recovery, SubmissionConfig, SubmissionRecord, SubmissionStore,
    SubmitError, SubmitRequest, Submitted,
};
