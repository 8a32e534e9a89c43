//! What the read cache ([`ReadCache`](mnemograph_checkpoint::checkpoint::backend::ReadCache)) needs of
//! the Redis saver: what each commit stored, and one small script that tells whether a remembered
//! checkpoint is still the one wanted, unchanged, with its pending writes.
//!
//! Every run starts by reading its thread's latest checkpoint, and the full read ships every
//! value the checkpoint reads (a conversation's whole message list) to be decoded again. With the
//! cache, a run that follows this process's previous turn costs one small script instead. Another
//! process's checkpoint is never hidden: the script compares the namespace's newest member and
//! the stored record and blob references with what was remembered, byte for byte, and any
//! difference (another writer, a prune, a delete, expiry, a repair by hand) makes the read the
//! full one.

use mnemograph_checkpoint::checkpoint::backend::Fingerprinted;
use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError, Commit, PendingWrite};

use crate::keys::Ns;
use crate::reads;
use crate::scripts::READ_CACHED_SCRIPT;
use crate::uncached::Uncached;

/// What was stored for a remembered checkpoint, to compare with what the server holds.
#[derive(Debug)]
pub(crate) struct Stored {
    /// Its member of the thread's index.
    pub(crate) member: String,
    /// Its record (document, metadata, parent).
    pub(crate) record: Vec<u8>,
    /// Its blob references.
    pub(crate) refs: String,
}

impl Fingerprinted for Uncached {
    type Fingerprint = Stored;

    /// The parent's stored form is not compared: the script checks its place only, so a run
    /// always reads its checkpoint (in one small script when it is remembered).
    async fn commit_fingerprinted(
        &self,
        commit: &Commit,
        _parent: Option<&Stored>,
    ) -> Result<(CheckpointConfig, Vec<Stored>), CheckpointError> {
        self.put_chain(commit).await
    }

    async fn confirm(
        &self,
        config: &CheckpointConfig,
        _id: &str,
        stored: &Stored,
    ) -> Result<Option<Vec<PendingWrite>>, CheckpointError> {
        let keys = self.thread_keys(&config.thread_id);
        let ns = Ns::new(&config.checkpoint_ns);
        let mut call = READ_CACHED_SCRIPT.prepare_invoke();
        call.key(&keys.all()[..])
            .arg(self.refresh_ttl_ms())
            .arg(&stored.member)
            .arg(&stored.record[..])
            .arg(&stored.refs)
            .arg(if config.checkpoint_id.is_none() { "1" } else { "0" })
            .arg(ns.lex_min())
            .arg(ns.lex_max());
        let reply: redis::Value =
            call.invoke_async(&mut self.conn()).await.map_err(crate::RedisSaverError::from)?;
        let Some(writes) = reads::parse_cached_reply(reply)? else { return Ok(None) };
        let at = reads::readable(&config.thread_id, &stored.member);
        Ok(Some(reads::pending_writes(&keys, &at, writes)?))
    }
}
