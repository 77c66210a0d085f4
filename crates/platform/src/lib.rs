//! The small shared layer every owner and worker builds on. It holds mechanisms, never domain
//! rules: a database handle that speaks PostgreSQL or SQLite, per-owner migrations, singleton
//! leases with fence tokens, shutdown coordination, Prometheus metrics and the shared HTTP
//! edge (problem details, caller identity, rate limits).

pub mod cache;
pub mod calendar;
pub mod db;
pub mod digest;
pub mod edge;
pub mod events;
pub mod html;
pub mod http;
pub mod leases;
pub mod lifecycle;
pub mod metrics;
pub mod rate;
pub mod testing;

pub use db::{Backend, Db, DbError, Migration};
pub use leases::{Lease, Leases};
pub use lifecycle::Shutdown;
pub use metrics::Metrics;
