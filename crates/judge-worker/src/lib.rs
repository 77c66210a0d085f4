//! The judge worker: consumes judging intents from the queue, judges them in the sandbox and
//! reports fenced verdicts through the Submission owner's judging port. It writes no business
//! table and serves no business HTTP; in the distributed shape it holds no database
//! credentials (it talks to Submission over HTTP with a service token).

mod http_port;
mod packages;
mod worker;

pub use http_port::HttpJudgingPort;
pub use packages::{HttpPackages, LocalPackages};
pub use worker::{to_result, Handled, JudgeWorker, WorkerConfig};
