//! A [`Checkpointer`](mnemograph_checkpoint::checkpoint::Checkpointer) on plain Redis 6/7: no RedisJSON, no
//! RediSearch, so it runs on any managed Redis. Meant as the short-term "running snapshot" of a
//! conversation (threads expire after 7 days by default), next to a SQL saver that keeps
//! history for good.
//!
//! ```no_run
//! use std::time::Duration;
//!
//! use mnemograph_checkpoint_redis::RedisCheckpointer;
//! use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let saver = RedisCheckpointer::builder()
//!     .ttl(Duration::from_secs(7 * 24 * 3600))
//!     .refresh_on_read(true)
//!     .connect("redis://127.0.0.1:6379/")
//!     .await?;
//! // Hand it to a graph: `graph.compile_with(saver)`. Or read a thread directly:
//! let latest = saver.get_tuple(&CheckpointConfig::thread("user-1:session-9")).await?;
//! println!("{:?}", latest.map(|t| t.metadata.step));
//! // Keep one conversation forever.
//! saver.pin("user-1:session-9").await?;
//! # Ok(())
//! # }
//! ```
//!
//! # Layout and guarantees
//!
//! * **Cluster-ready.** All keys of a thread share one hash tag built from the hex of the thread
//!   id, so every call touches one slot; [`ThreadKeys`] lists them. A thread has a fixed set of
//!   keys, however many checkpoints it holds: checkpoints, per-(channel, version) values and
//!   pending writes are separate hashes, and a sorted set orders checkpoint ids (score 0,
//!   lexicographic) for "latest" and for `list` with `before`/`limit`.
//! * **Atomic, one round trip.** `put` and `put_writes` are each one Lua script (`EVALSHA`);
//!   values, record and index entry are written together, so an index entry never points at
//!   nothing. Regular writes are insert-if-absent per `(task_id, idx)`, the special channels of
//!   `WRITES_IDX_MAP` are upserted.
//! * **Whole-thread expiry.** Every write gives all keys of the thread the same absolute
//!   deadline, so a thread expires entirely or not at all. [`RedisCheckpointerBuilder::ttl`],
//!   [`no_ttl`](RedisCheckpointerBuilder::no_ttl),
//!   [`refresh_on_read`](RedisCheckpointerBuilder::refresh_on_read),
//!   [`pin`](RedisCheckpointer::pin).
//! * **Replicas.** Redis replicates after it answers, so an acknowledged write can vanish on a
//!   failover. [`RedisCheckpointerBuilder::wait_for_replicas`] makes each checkpoint and
//!   pending-write write wait (`WAIT`) until that many replicas have it, and fail with
//!   [`RedisSaverError::NotReplicated`] when they do not answer in time.
//! * **Shallow mode** ([`RedisCheckpointerBuilder::shallow`]) keeps only the newest checkpoint of
//!   each (thread, namespace).
//! * **Read cache.** The saver remembers the checkpoint it stored last for the 1024 most
//!   recently written threads ([`RedisCheckpointerBuilder::read_cache`]); reading one back (as a
//!   run does first) is one small script that checks it is still the newest, with the same record
//!   and blob references, and returns only its pending writes. Anything another process changed
//!   makes the read the full one, so a cached read never hides newer data.
//! * **Retention.** [`RedisCheckpointer::prune`] keeps the newest checkpoints of each namespace
//!   of a thread and frees the values and pending writes only the older ones used, atomically
//!   and without touching the thread's expiry.
//! * **LangGraph's extended capabilities.**
//!   [`delete_for_runs`](mnemograph_checkpoint::checkpoint::Checkpointer::delete_for_runs) (threads found
//!   with `SCAN`, then one script per thread),
//!   [`copy_thread`](mnemograph_checkpoint::checkpoint::Checkpointer::copy_thread) (the source read by one
//!   script, the target written by another that refuses a target with checkpoints: the threads
//!   live in different slots) and [`prune`](mnemograph_checkpoint::checkpoint::Checkpointer::prune) (the
//!   retention script per thread). Each is atomic per thread, not across threads.
//! * **Serialization** is LangGraph's: values are stored as the `(type, bytes)` pairs of
//!   `dumps_typed` (msgpack) and checkpoints as the JSON document of the SQL savers.
//! * **Bad data** is reported, never repaired: a missing or unreadable field fails the read with
//!   [`CheckpointError::Corrupt`](mnemograph_checkpoint::checkpoint::CheckpointError::Corrupt) whose message
//!   names the key and field, and in readable form the thread, namespace, checkpoint and channel
//!   they encode; nothing else of the thread is changed.
//! * `list` over all threads (`config = None`) has to `SCAN` the keyspace; see its cost there.

mod builder;
mod checkpointer;
mod commit;
mod conn;
mod encode;
mod error;
mod extended;
mod keys;
mod list_all;
mod read_cache;
mod reads;
mod record;
mod replicas;
mod retention;
mod scripts;
mod stored;
mod uncached;

pub use builder::{RedisCheckpointerBuilder, DEFAULT_PREFIX, DEFAULT_RESPONSE_TIMEOUT, DEFAULT_TTL};
pub use checkpointer::RedisCheckpointer;
pub use error::{RedisSaverError, Result};
pub use keys::ThreadKeys;
