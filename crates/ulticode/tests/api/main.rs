//! The HTTP API as a client sees it, on real processes: `ulticode up` (SQLite, SQL stream,
//! in-process workers) and `ulticode serve` + `dispatcher` + `judge-worker` (PostgreSQL,
//! Redis), each on its own data directory, database and Redis key prefix, port 0.

mod backup;
mod clics;
mod console;
mod contest_packages;
mod contests;
mod durability;
mod flow;
mod functions;
mod hardening;
mod harness;
mod judge0;
mod keys;
mod notifications;
mod openapi;
mod packages;
mod replicas;
mod runs;
mod search;
mod security;
