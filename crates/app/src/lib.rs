//! The App owner: problems (statements, limits, tags, visibility) and their test-data
//! packages, stored by content hash. It captures the facts snapshot Submission's intake
//! checks, and serves packages to judge workers (in process, or over the internal route).

pub mod contest;
pub mod http;
mod schema;
mod service;

pub use http::routes;
pub use service::{
    AppError, AppService, NewProblem, ProblemFilter, ProblemPage, ProblemPatch, ProblemView,
    Sample, Visibility,
};
