//! How Redis stays a compact running snapshot of each thread: what is kept, and when it is
//! written.
//!
//! **Only the latest checkpoint is kept** ([`RedisCheckpointerBuilder::shallow`]): each put
//! removes the thread's older checkpoints, the channel values only they used and their pending
//! writes, in the same atomic script. The archive in MySQL is the conversation's history, so an
//! older checkpoint has no reader; the next round needs only the latest messages.
//!
//! **A round is written once, when it completes** ([`Durability::Exit`]): the run keeps its
//! supersteps in memory and commits the final state in one put, checked against the checkpoint
//! it started from. A round that is cancelled (the client left) or fails commits nothing, so
//! the snapshot stays exactly what it was before the round and a question asked again is not
//! there twice.
//!
//! Keeping every checkpoint grows a thread's keys without bound, committing every superstep or once
//! a round (the example's README measures each layout with `MEMORY USAGE`). Pruning to the newest
//! checkpoint after each round ([`RedisCheckpointer::prune`]) and shallow mode both stay flat, but
//! pruning is a second script after every round that reads the whole thread, and until it runs the
//! old checkpoints are still there (for good, if the process stops in between). Shallow mode drops
//! them inside the put itself, so it is the one used.

use mnemograph_checkpoint_redis::{RedisCheckpointer, RedisCheckpointerBuilder};
use mnemograph_core::{Durability, RunConfig};

use crate::config::Config;
use crate::error::Result;

/// Connects the checkpointer: shallow (latest checkpoint only), keys under
/// `config.redis_prefix`, expiring `config.checkpoint_ttl` after a thread's last write.
///
/// # Errors
/// [`Error::Redis`](crate::Error::Redis) when Redis cannot be reached.
pub async fn connect_saver(config: &Config) -> Result<RedisCheckpointer> {
    Ok(saver_builder(config).connect(&config.redis_url).await?)
}

/// The checkpointer's settings (what [`connect_saver`] connects with).
pub fn saver_builder(config: &Config) -> RedisCheckpointerBuilder {
    RedisCheckpointer::builder()
        .key_prefix(config.redis_prefix.as_str())
        .ttl(config.checkpoint_ttl)
        .shallow(true)
}

/// The run configuration of one round on `thread_id`: commit once, at the end.
pub fn round_config(thread_id: &str) -> RunConfig {
    RunConfig::thread(thread_id).durability(Durability::Exit)
}
