//! The Judge0 CE 1.13.1 execution API, reimplemented from its documented behaviour, over the
//! Submission owner's execution jobs ([`contracts::jobs::ExecutionJobs`]); the callbacks it
//! promises; and a Judge0 client that runs execution jobs on an external Judge0
//! ([`client::Judge0Runner`]).

pub mod callbacks;
pub mod client;
pub mod config;
pub mod languages;
mod ordered;
pub mod render;
pub mod request;
mod routes;
mod system;

pub use config::Judge0Config;
pub use languages::{Available, Languages};
pub use routes::{Judge0, ServerInfo, VERSION};
