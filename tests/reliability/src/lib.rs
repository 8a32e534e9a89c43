//! Concurrency, load and server-fault tests of the savers, against the real servers.
//!
//! The tests live in `tests/`:
//! - `load.rs`: many threads at once on each saver, with throughput and latency figures;
//! - `race.rs`: two workers on one thread at once; every call commits or gets the typed conflict,
//!   and the history stays one chain;
//! - `faults.rs`: the saver's MariaDB connections or Redis client killed mid-run; typed errors,
//!   then the same saver recovers;
//! - `overhead.rs`: what the parent check of a commit costs per checkpoint.
//!
//! This library holds what they share: the graph under test ([`chat`]), the savers and their servers ([`backend`]),
//! the checks of a thread's history ([`check`]) and latency statistics ([`stats`]).
//!
//! Servers: `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`; each test uses a fresh
//! database of its own on that server) and `REDIS_URL` (default `redis://127.0.0.1:6379/`; each
//! test uses a key prefix of its own). An unreachable server skips the test with a `SKIPPED` line,
//! unless `CI` is set: then the test fails.

pub mod backend;
pub mod chat;
pub mod check;
pub mod stats;
