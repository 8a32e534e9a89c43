//! Delta mode's settings ([`DeltaChannels`]) and what a saver keeps for it ([`DeltaState`]).

use std::collections::BTreeSet;

use super::cache::Cache;
use crate::params::url_params;

/// Longest delta chain a read follows; also the largest [`DeltaChannels::snapshot_every`].
/// Bounds the work (and the rows fetched) to reconstruct one value whatever wrote the chain.
pub(crate) const MAX_CHAIN: u32 = 1024;

/// Which channels a [`MySqlCheckpointer`](crate::MySqlCheckpointer) stores as deltas, and how
/// often it writes a full snapshot. Off unless set with
/// [`with_delta`](crate::MySqlCheckpointer::with_delta) /
/// [`with_delta_channels`](crate::MySqlCheckpointer::with_delta_channels) or the `delta-channels`
/// URL parameter.
///
/// # Compatibility
/// Delta mode is **Rust-only**. Rows of type `delta-msgpack` are not something LangGraph's Python
/// savers know: `PyMySQLSaver.get_tuple`/`list` on such a checkpoint raise
/// `NotImplementedError: Unknown serialization type: delta-msgpack` (they never return a silently
/// shortened history). Checkpoints whose delta channels are at a snapshot version, and every
/// checkpoint of threads written in plain mode, stay readable by Python, and Python can continue a
/// thread from such a checkpoint (what it writes is plain, and this crate reads both).
///
/// Every [`MySqlCheckpointer`](crate::MySqlCheckpointer) reads delta rows, delta mode on or not;
/// `prune` keeps the chains that kept checkpoints need, and `delete_thread` removes them.
///
/// # How a value is stored
/// The base of a delta is the value this saver (or a clone) last wrote or read with `get_tuple`
/// for that thread, namespace and channel, held in a bounded in-memory cache
/// ([`cache_bytes`](Self::cache_bytes)); a graph reads the thread before each run, so the base is
/// normally the parent's value. The delta row is inserted only if its base row still exists
/// (`INSERT IGNORE … SELECT`, which takes a shared lock on the base), otherwise the full value is
/// stored: a cache that is stale because another process deleted or pruned the thread never
/// produces a dangling delta. Servers logging with `binlog_format = STATEMENT` flag that statement
/// as unsafe for replication (a warning; `MIXED` and `ROW` log it as a row).
///
/// # Example
/// ```no_run
/// # async fn demo() -> Result<(), mnemograph_checkpoint_mysql::Error> {
/// use mnemograph_checkpoint_mysql::{DeltaChannels, MySqlCheckpointer};
///
/// let saver = MySqlCheckpointer::connect("mysql://root@127.0.0.1:3306/app")
///     .await?
///     .with_delta(DeltaChannels::new(["messages"]).snapshot_every(64));
/// // Or: MySqlCheckpointer::connect("mysql://…/app?delta-channels=messages&delta-snapshot-every=64")
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeltaChannels {
    /// Channel names.
    channels: BTreeSet<String>,
    /// Full value at least every this many versions of a channel.
    snapshot_every: u32,
    /// Budget of the per-saver cache of last stored values.
    cache_bytes: usize,
}

impl DeltaChannels {
    /// Default of [`snapshot_every`](Self::snapshot_every).
    pub const DEFAULT_SNAPSHOT_EVERY: u32 = 32;
    /// Default of [`cache_bytes`](Self::cache_bytes): 64 MiB.
    pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

    /// Delta storage for these channels, a snapshot every
    /// [`DEFAULT_SNAPSHOT_EVERY`](Self::DEFAULT_SNAPSHOT_EVERY) versions.
    pub fn new<I, S>(channels: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            channels: channels.into_iter().map(Into::into).collect(),
            snapshot_every: Self::DEFAULT_SNAPSHOT_EVERY,
            cache_bytes: Self::DEFAULT_CACHE_BYTES,
        }
    }

    /// Stores a channel's full value at least every `n` versions (one snapshot, then up to
    /// `n - 1` deltas). Reading a value costs up to `n - 1` deltas spliced onto a snapshot;
    /// storage grows as O(N² / n) for a list of N items. Clamped to `1..=1024`; 1 stores
    /// snapshots only, like plain mode.
    #[must_use]
    pub fn snapshot_every(mut self, n: u32) -> Self {
        self.snapshot_every = n.clamp(1, MAX_CHAIN);
        self
    }

    /// Bytes of last stored values the saver (and its clones) keep in memory, least recently used
    /// threads dropped first. A value not in the cache (evicted, or written by another process)
    /// is stored as a snapshot at its next version, so this bounds memory, not correctness.
    #[must_use]
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }

    /// The channels stored as deltas.
    pub fn channels(&self) -> impl Iterator<Item = &str> {
        self.channels.iter().map(String::as_str)
    }

    /// The snapshot interval.
    pub fn snapshot_interval(&self) -> u32 {
        self.snapshot_every
    }

    /// Reads the `delta-channels` (comma-separated names) and `delta-snapshot-every` parameters
    /// of a connection URL, percent-decoded; `None` when `delta-channels` is absent or empty.
    ///
    /// # Errors
    /// [`sqlx::Error::Configuration`] when `url` is not a URL or `delta-snapshot-every` is not a
    /// positive integer.
    pub(crate) fn from_url(url: &str) -> Result<Option<Self>, sqlx::Error> {
        let mut channels = None;
        let mut every = None;
        for (key, value) in url_params(url)? {
            match key.as_str() {
                "delta-channels" | "delta_channels" => {
                    channels = Some(
                        value.split(',').filter(|c| !c.is_empty()).map(str::to_owned).collect::<Vec<_>>(),
                    )
                }
                "delta-snapshot-every" | "delta_snapshot_every" => {
                    let n = value.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                        sqlx::Error::Configuration(
                            format!("URL parameter `{key}={value}`: expected a positive integer").into(),
                        )
                    })?;
                    every = Some(n);
                }
                _ => {}
            }
        }
        let Some(delta) = channels.map(Self::new).filter(|d| !d.channels.is_empty()) else {
            return Ok(None);
        };
        Ok(Some(match every {
            Some(n) => delta.snapshot_every(n),
            None => delta,
        }))
    }
}

/// Delta settings and the cache, shared by a saver's clones.
#[derive(Debug)]
pub(crate) struct DeltaState {
    /// The settings.
    pub(crate) config: DeltaChannels,
    /// Last stored value per thread and delta channel.
    pub(super) cache: Cache,
}

impl DeltaState {
    /// State for `config`, with an empty cache.
    pub(crate) fn new(config: DeltaChannels) -> Self {
        let cache = Cache::new(config.cache_bytes);
        Self { config, cache }
    }

    /// Whether `channel` is stored as deltas.
    pub(crate) fn is_delta(&self, channel: &str) -> bool {
        self.config.channels.contains(channel)
    }

    /// Forgets what was stored for a thread (deleted or pruned).
    pub(crate) fn forget_thread(&self, thread_id: &str) {
        self.cache.forget_thread(thread_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_parameters() {
        let d =
            DeltaChannels::from_url("mysql://h/db?ssl-mode=disabled&delta-channels=messages,log").unwrap();
        let d = d.unwrap();
        assert_eq!(d.channels().collect::<Vec<_>>(), ["log", "messages"]);
        assert_eq!(d.snapshot_interval(), DeltaChannels::DEFAULT_SNAPSHOT_EVERY);
        let d =
            DeltaChannels::from_url("mysql://h/db?delta-snapshot-every=8&delta-channels=messages").unwrap();
        assert_eq!(d.unwrap().snapshot_interval(), 8);
        assert_eq!(DeltaChannels::from_url("mysql://h/db").unwrap(), None);
        assert_eq!(DeltaChannels::from_url("mysql://h/db?delta-channels=").unwrap(), None);
        let d =
            DeltaChannels::from_url("mysql://h/db?delta-channels=a%3Ab,c&delta-snapshot-every=%34").unwrap();
        let d = d.unwrap();
        assert_eq!((d.channels().collect::<Vec<_>>(), d.snapshot_interval()), (vec!["a:b", "c"], 4));
        for bad in ["0", "-1", "many", ""] {
            let url = format!("mysql://h/db?delta-channels=m&delta-snapshot-every={bad}");
            let err = DeltaChannels::from_url(&url).unwrap_err();
            assert!(err.to_string().contains("delta-snapshot-every"), "{err}");
        }
    }

    #[test]
    fn the_interval_is_clamped() {
        assert_eq!(DeltaChannels::new(["m"]).snapshot_every(0).snapshot_interval(), 1);
        assert_eq!(DeltaChannels::new(["m"]).snapshot_every(5000).snapshot_interval(), MAX_CHAIN);
    }
}
