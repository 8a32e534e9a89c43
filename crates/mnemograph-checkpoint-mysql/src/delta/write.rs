//! Saving delta channels: deciding, before the transaction, which values become deltas, and
//! storing them inside it without ever pointing at a base that is not there.

use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::backend::version_number;
use mnemograph_checkpoint::checkpoint::CheckpointConfig;
use sqlx::MySqlConnection;

use super::cache::Stored;
use super::format::{self, DELTA_TYPE};
use super::settings::DeltaState;
use crate::commit::blobs::Blob;
use crate::exact::same;
use crate::sql;

/// A delta that references its base row, inserted only if that row exists (the `SELECT` also
/// takes a shared lock on it, so a concurrent `prune` cannot remove it before this commits).
/// Thread id and channel are compared exactly (see [`crate::exact`]), so bound twice each.
const INSERT_DELTA: &str = concat!(
    "INSERT IGNORE INTO checkpoint_blobs \
    (thread_id, checkpoint_ns, checkpoint_ns_hash, channel, version, type, `blob`) \
    SELECT ?, ?, ?, ?, ?, ?, ? FROM checkpoint_blobs WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND ",
    same!("channel"),
    " AND version = ? LIMIT 1"
);

/// Whether a `(channel, version)` row exists (thread id and channel bound twice).
const EXISTS: &str = concat!(
    "SELECT COUNT(*) FROM checkpoint_blobs WHERE ",
    same!("thread_id"),
    " AND checkpoint_ns_hash = ? AND ",
    same!("channel"),
    " AND version = ?"
);

/// A value of a delta channel to store, decided before the transaction starts.
#[derive(Debug)]
pub(crate) struct Planned<'a> {
    /// The channel.
    channel: &'a str,
    /// The new version.
    version: &'a str,
    /// The complete list, as a plain saver stores it (the snapshot, or the fallback).
    list: Arc<[u8]>,
    /// Length of `list`'s array header.
    header_len: usize,
    /// Items in `list`.
    count: u64,
    /// Present when the value extends the last one stored for the channel.
    delta: Option<PlannedDelta>,
}

/// The delta form of a [`Planned`] value.
#[derive(Debug)]
struct PlannedDelta {
    /// The version extended.
    base: String,
    /// The chain's snapshot.
    root: String,
    /// Position in the chain.
    depth: u32,
    /// The `delta-msgpack` blob.
    blob: Vec<u8>,
}

/// Takes the list values of delta channels out of `blobs` and plans each as a delta on the
/// cached value of its channel, or as a snapshot. Other blobs stay for the plain insert.
pub(crate) fn plan<'a>(
    state: &DeltaState,
    config: &CheckpointConfig,
    blobs: &mut Vec<Blob<'a>>,
) -> Vec<Planned<'a>> {
    let mut planned = Vec::new();
    let mut rest = Vec::with_capacity(blobs.len());
    for blob in blobs.drain(..) {
        let header = (blob.kind == "msgpack" && state.is_delta(blob.channel))
            .then(|| format::array_header(&blob.bytes))
            .flatten();
        // Not a list (or not a delta channel): stored as a plain saver stores it.
        let Some((count, header_len)) = header else {
            rest.push(blob);
            continue;
        };
        let list: Arc<[u8]> = blob.bytes.into();
        let cached = state.cache.get(&config.thread_id, &config.checkpoint_ns, blob.channel);
        let delta = cached.and_then(|base| {
            delta_on(&base, blob.version, &list[header_len..], count, state.config.snapshot_interval())
        });
        planned.push(Planned {
            channel: blob.channel,
            version: blob.version,
            list,
            header_len,
            count,
            delta,
        });
    }
    *blobs = rest;
    planned
}

/// The delta storing `items` (`count` of them, at `version`) on top of `base`, when that is
/// allowed and pays: `items` starts with all of `base`'s items, the chain stays under the
/// interval, the versions are ordered, and the delta is smaller than the full list.
fn delta_on(base: &Stored, version: &str, items: &[u8], count: u64, every: u32) -> Option<PlannedDelta> {
    if base.depth + 1 >= every || !ordered(&base.version, version) {
        return None;
    }
    // Byte equality of the prefix is item equality: each item is one complete msgpack value,
    // so the first `base.count` items of the new list are exactly the base's bytes.
    let suffix = items.strip_prefix(base.items()).filter(|_| count >= base.count)?;
    let depth = base.depth + 1;
    let blob = format::encode(&base.version, &base.root, depth, count - base.count, suffix)?;
    (blob.len() < items.len()).then(|| PlannedDelta {
        base: base.version.clone(),
        root: base.root.clone(),
        depth,
        blob,
    })
}

/// Whether `older`'s counter is smaller than `newer`'s, both written with the same number of
/// digits (LangGraph's zero-padded versions). Chains then only go down in counter, so a read can
/// fetch a chain as the range `[root, version)`, under any collation of the `version` column.
pub(crate) fn ordered(older: &str, newer: &str) -> bool {
    let digits = |v: &str| v.split_once('.').map_or(v.len(), |(n, _)| n.len());
    digits(older) == digits(newer)
        && matches!((version_number(older), version_number(newer)), (Some(a), Some(b)) if a < b)
}

/// Inserts the planned values inside the put transaction. Returns, for each, what is now stored
/// under its version, or `None` when a row for that version was already there (a repeated put):
/// its form is then unknown and the cache must forget it.
pub(crate) async fn insert(
    tx: &mut MySqlConnection,
    config: &CheckpointConfig,
    hash: &[u8; 16],
    planned: &[Planned<'_>],
) -> Result<Vec<Option<Stored>>, sqlx::Error> {
    let mut outcomes = Vec::with_capacity(planned.len());
    for p in planned {
        if let Some(d) = &p.delta {
            let inserted = sqlx::query(INSERT_DELTA)
                .bind(&config.thread_id)
                .bind(&config.checkpoint_ns)
                .bind(&hash[..])
                .bind(p.channel)
                .bind(p.version)
                .bind(DELTA_TYPE)
                .bind(&d.blob)
                .bind(&config.thread_id)
                .bind(&config.thread_id)
                .bind(&hash[..])
                .bind(p.channel)
                .bind(p.channel)
                .bind(&d.base)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if inserted == 1 {
                outcomes.push(Some(p.stored(d.root.clone(), d.depth)));
                continue;
            }
            let exists: i64 = sqlx::query_scalar(EXISTS)
                .bind(&config.thread_id)
                .bind(&config.thread_id)
                .bind(&hash[..])
                .bind(p.channel)
                .bind(p.channel)
                .bind(p.version)
                .fetch_one(&mut *tx)
                .await?;
            if exists > 0 {
                outcomes.push(None);
                continue;
            }
            // The base is gone (the thread was deleted or pruned since it was cached, perhaps by
            // another process): store the full value instead.
            tracing::debug!(thread_id = %config.thread_id, channel = p.channel, "delta base missing; storing a snapshot");
        }
        let text = sql::multi_row(sql::INSERT_BLOBS, sql::BLOB_ROW, 1, "");
        let inserted = sqlx::query(&text)
            .bind(&config.thread_id)
            .bind(&config.checkpoint_ns)
            .bind(&hash[..])
            .bind(p.channel)
            .bind(p.version)
            .bind("msgpack")
            .bind(&p.list[..])
            .execute(&mut *tx)
            .await?
            .rows_affected();
        outcomes.push((inserted == 1).then(|| p.stored(p.version.to_owned(), 0)));
    }
    Ok(outcomes)
}

impl Planned<'_> {
    /// The cache entry for this value stored at chain position `root`/`depth`.
    fn stored(&self, root: String, depth: u32) -> Stored {
        Stored {
            version: self.version.to_owned(),
            root,
            depth,
            count: self.count,
            list: Arc::clone(&self.list),
            header_len: self.header_len,
        }
    }
}

impl DeltaState {
    /// After the put committed: records what [`insert`] stored.
    pub(crate) fn remember(
        &self,
        config: &CheckpointConfig,
        planned: &[Planned<'_>],
        outcomes: Vec<Option<Stored>>,
    ) {
        for (p, outcome) in planned.iter().zip(outcomes) {
            match outcome {
                Some(stored) => self.cache.put(&config.thread_id, &config.checkpoint_ns, p.channel, stored),
                None => self.cache.forget(&config.thread_id, &config.checkpoint_ns, p.channel),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(n: u64) -> String {
        format!("{n:032}.0.5")
    }

    fn stored(n: u64, depth: u32, items: &[u8], count: u64) -> Stored {
        let list = format::list(count, items).unwrap();
        Stored { version: version(n), root: version(1), depth, count, list: list.into(), header_len: 1 }
    }

    #[test]
    fn versions_must_grow_in_the_same_width() {
        assert!(ordered(&version(1), &version(2)));
        assert!(!ordered(&version(2), &version(2)));
        assert!(!ordered(&version(3), &version(2)));
        assert!(!ordered("9", "10"), "not zero-padded: string order would disagree");
        assert!(ordered("1", "2"));
        assert!(!ordered("x.1", "y.2"));
    }

    /// `n` msgpack strings of 99 bytes each.
    fn items(n: u8) -> Vec<u8> {
        (0..n).flat_map(|i| [0xd9, 99].into_iter().chain(std::iter::repeat_n(b'a' + i, 99))).collect()
    }

    #[test]
    fn only_an_extension_becomes_a_delta() {
        let items = items(4);
        let base = stored(1, 0, &items[..202], 2);
        let d = delta_on(&base, &version(2), &items, 4, 32).expect("extends the base");
        let decoded = format::decode(&d.blob).unwrap();
        assert_eq!((decoded.count, decoded.items, decoded.depth), (2, &items[202..], 1));
        assert_eq!((decoded.base, decoded.root), (&*version(1), &*version(1)));

        let mut rewritten = items.clone();
        rewritten[5] = b'z';
        assert!(delta_on(&base, &version(2), &rewritten, 4, 32).is_none(), "history rewritten");
        assert!(delta_on(&base, &version(2), &items[..101], 1, 32).is_none(), "shorter");
        assert!(delta_on(&base, &version(2), &items, 1, 32).is_none(), "fewer items");
        assert!(delta_on(&base, &version(1), &items, 4, 32).is_none(), "same version");
        assert!(delta_on(&stored(1, 31, &items[..202], 2), &version(2), &items, 4, 32).is_none(), "interval");
        let empty = stored(1, 0, &[], 0);
        assert!(delta_on(&empty, &version(2), &items[..101], 1, 32).is_none(), "no smaller than the list");
        let same = delta_on(&base, &version(2), &items[..202], 2, 32).expect("an unchanged list");
        assert_eq!(format::decode(&same.blob).unwrap().count, 0);
    }
}
