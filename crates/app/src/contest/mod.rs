//! Contests (the App owner): their rules, teams, problems and staff; the scoreboard as data
//! derived from Submission's events; rejudgings; clarifications; the CLICS Contest API.

pub mod board;
pub mod clarifications;
pub mod clics;
mod control;
pub mod http;
pub mod ledger;
pub mod listing;
mod membership;
pub mod model;
pub mod package;
pub mod rejudging;
pub(crate) mod schema;
pub mod scoring;
mod service;

pub use service::{ContestPorts, ContestService};
