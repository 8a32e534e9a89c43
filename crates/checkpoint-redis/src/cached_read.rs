//! Answering `get_tuple` from the checkpoint this saver stored last (see
//! [`RecentCheckpoints`]): the server is asked only whether that checkpoint is still the one
//! wanted and unchanged, and for its pending writes.
//!
//! Every run starts by reading its thread's latest checkpoint, and the full read ships every
//! value the checkpoint reads (a conversation's whole message list) to be decoded again. With the
//! cache, a run that follows this process's previous turn costs one small script instead. Another
//! process's checkpoint is never hidden: the script compares the namespace's newest member and
//! the stored record and blob references with what was remembered, byte for byte, and any
//! difference (another writer, a prune, a delete, expiry, a repair by hand) makes the read the
//! full one.

use graph_core::checkpoint::{ChainLink, CheckpointConfig, CheckpointTuple};

use crate::cache::Stored;
use crate::error::Result;
use crate::keys::Ns;
use crate::read;
use crate::saver::RedisCheckpointer;
use crate::scripts::READ_CACHED_SCRIPT;

impl RedisCheckpointer {
    /// Remembers the checkpoint of `link`, just stored as the child of `parent` in the form
    /// `stored`.
    pub(crate) fn remember(&self, parent: &CheckpointConfig, link: &ChainLink, stored: Stored) {
        self.recent().remember(parent, &link.checkpoint, &link.metadata, &link.new_versions, stored);
    }

    /// The tuple at `config` from memory and one small script, or `None` when the full read is
    /// needed.
    pub(crate) async fn cached_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>> {
        let Some(entry) = self.recent().candidate(config) else { return Ok(None) };
        let keys = self.thread_keys(&config.thread_id);
        let ns = Ns::new(&config.checkpoint_ns);
        let stored = &entry.fingerprint;
        let mut call = READ_CACHED_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..])
            .arg(self.refresh_ttl_ms())
            .arg(&stored.member)
            .arg(&stored.record[..])
            .arg(&stored.refs)
            .arg(if config.checkpoint_id.is_none() { "1" } else { "0" })
            .arg(ns.lex_min())
            .arg(ns.lex_max());
        let reply: redis::Value = call.invoke_async(&mut self.conn()).await?;
        let Some(writes) = read::parse_cached_reply(reply)? else { return Ok(None) };
        let at = read::readable(&config.thread_id, &stored.member);
        let pending = read::pending_writes(&keys, &at, writes)?;
        Ok(Some(entry.tuple(config, pending)))
    }
}
