//! Several [`mnemograph_server`] processes serving the same threads: thread, run, assistant and
//! cron records and the durable run queue in MySQL/MariaDB, run events and wake-ups in Redis.
//!
//! ```no_run
//! use mnemograph_checkpoint_mysql::MySqlCheckpointer;
//! use mnemograph_core::prelude::*;
//! use mnemograph_server::Server;
//! use mnemograph_server_cluster::Cluster;
//!
//! #[derive(State, Clone, Default, Debug)]
//! struct Chat {
//!     #[reducer(append)]
//!     log: Vec<String>,
//! }
//!
//! async fn hello(_: Chat) -> Result<ChatUpdate> {
//!     Ok(ChatUpdate::log(vec!["hello".to_owned()]))
//! }
//!
//! # async fn run() -> std::result::Result<(), Box<dyn std::error::Error>> {
//! let url = "mysql://root@127.0.0.1:3306/app";
//! let saver = MySqlCheckpointer::connect(url).await?;
//! saver.setup().await?;
//! let cluster = Cluster::connect(url, "redis://127.0.0.1:6379/").await?.with_saver(saver.clone()).with_workers(32);
//! let graph = StateGraph::<Chat>::new().add_node("hello", hello).add_edge(START, "hello").compile()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:2024").await?;
//! Server::new(saver).with_backend(cluster).graph("chat", graph)?.serve(listener).await?;
//! # Ok(()) }
//! ```
//!
//! Any process answers any request. A run request is queued; whichever process has a free worker
//! claims the run under a lease and runs it, writing its events to a Redis stream that the
//! process streaming it to the client reads. A process that dies stops renewing its leases, and
//! another takes its runs over, resuming each from the thread's last checkpoint. A thread runs
//! one run at a time across all processes, in the order the runs were queued. Every process
//! serves the same graphs on the same saver and on a store they share.
//!
//! A claimed run's checkpoints are written only while its worker still holds the claim: with
//! [`Cluster::with_saver`], inside the saver's own transaction with a lock on the run's row;
//! otherwise just before each write, with a margin of lease left, and the saver's parent check
//! catches what slips past.
//!
//! Crons fire once per tick whichever processes are up; assistants, crons, threads and runs are
//! searched and paged in SQL, the caller's grant among the conditions.
//!
//! The [`queue`] module holds the run queue alone, with [`queue::Worker`]s that run queued runs
//! from code, without an HTTP server.

/// Runs the block in a transaction (`$tx` names it inside), again when the server broke a
/// deadlock; commits when the block decides `Ok`, rolls back when it decides `Err` (the block
/// returns `sqlx::Result<Result<T, ServerError>>`).
macro_rules! in_tx {
    ($pool:expr, |$tx:ident| $body:block) => {{
        let mut attempt = 0;
        loop {
            let mut txn = $pool.begin().await.map_err(crate::queue::mysql::db)?;
            let result: sqlx::Result<std::result::Result<_, mnemograph_server::ServerError>> = async {
                let $tx = &mut txn;
                $body
            }
            .await;
            match result {
                Ok(Ok(value)) => {
                    txn.commit().await.map_err(crate::queue::mysql::db)?;
                    break Ok(value);
                }
                Ok(Err(refused)) => {
                    txn.rollback().await.map_err(crate::queue::mysql::db)?;
                    break Err(refused);
                }
                Err(e)
                    if crate::queue::mysql::is_deadlock(&e)
                        && attempt < crate::queue::mysql::DEADLOCK_RETRIES =>
                {
                    attempt += 1;
                    let _ = txn.rollback().await;
                }
                Err(e) => break Err(crate::queue::mysql::db(e)),
            }
        }
    }};
}

mod assistant_rows;
mod assistants;
mod cluster;
mod conditions;
mod cron_rows;
mod crons;
mod events;
mod expiry;
mod fence;
mod keeper;
mod lease;
mod ledger;
pub mod queue;
mod search;
mod tables;
mod webhook;
mod worker;
mod writer;

pub use cluster::{Cluster, STREAM_MAX_LEN, WORKERS};

use assistants::ClusterAssistants;
use crons::ClusterCrons;
use keeper::ClusterRecords;
use ledger::Ledger;
