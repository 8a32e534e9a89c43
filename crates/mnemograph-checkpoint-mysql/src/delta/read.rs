//! Reading delta channels: every `delta-msgpack` blob of the selected checkpoints is spliced onto
//! its chain, the chains of all of them fetched in one extra statement.

use std::collections::HashMap;
use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::backend::version_number;
use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::{MySqlPool, Row as _};

use super::cache::Stored;
use super::format::{self, DELTA_TYPE};
use super::settings::{DeltaState, MAX_CHAIN};
use super::write::ordered;
use crate::error::backend;
use crate::keys::ns_hash;
use crate::read_io::ReadIo;
use crate::rows::RawTuple;

/// Range conditions per statement; each binds five values.
const RANGES_PER_STATEMENT: usize = 200;

/// The chain of a delta that was resolved, for the cache.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// Index of the tuple in the slice given to [`resolve`].
    pub(crate) tuple: usize,
    /// The channel.
    pub(crate) channel: String,
    /// The chain's snapshot version.
    pub(crate) root: String,
    /// Deltas from the snapshot.
    pub(crate) depth: u32,
}

/// `(thread_id, checkpoint_ns, channel)`: where a chain's rows are.
type Key = (String, String, String);

/// One stored row of a chain.
#[derive(Debug)]
enum Link {
    /// A blob of another type: `msgpack` is a snapshot, anything else cannot be in a chain.
    Plain(String, Vec<u8>),
    /// A `delta-msgpack` blob.
    Delta(Vec<u8>),
}

/// A reconstructed list.
#[derive(Debug, Clone)]
struct Built {
    /// Items.
    count: u64,
    /// The items' bytes.
    items: Arc<[u8]>,
    /// The snapshot the chain starts at.
    root: String,
    /// Deltas applied to it.
    depth: u32,
}

/// A delta blob to resolve: where it is and the version range its chain lies in.
#[derive(Debug)]
struct Tip {
    tuple: usize,
    blob: usize,
    key: usize,
    version: String,
}

/// Replaces each `delta-msgpack` blob of `tuples` by the complete list, as a plain `msgpack`
/// blob, so that decoding it gives what a plain saver would have returned. Costs nothing when
/// there is none; one statement (per 200 chains) otherwise.
///
/// # Errors
/// [`CheckpointError::Corrupt`] naming the thread, checkpoint and channel when a blob of a chain
/// is missing or malformed, or the chain is longer than allowed; `Backend` when the read fails.
pub(crate) async fn resolve(
    pool: &MySqlPool,
    tuples: &mut [RawTuple],
    io: &mut ReadIo,
) -> Result<Vec<Resolved>, CheckpointError> {
    let mut keys: Vec<Key> = Vec::new();
    let mut key_index: HashMap<Key, usize> = HashMap::new();
    let mut tips = Vec::new();
    let mut ranges: Vec<(usize, String, String)> = Vec::new();
    let mut store: HashMap<(usize, String), Link> = HashMap::new();
    for (t, tuple) in tuples.iter().enumerate() {
        for (b, blob) in tuple.blobs.iter().enumerate().filter(|(_, b)| b.kind == DELTA_TYPE) {
            let fail = |what: String| tuple.corrupt(format!("channel `{}`: {what}", blob.channel));
            let version =
                tuple.version_of(&blob.channel).ok_or_else(|| fail("no version in the document".into()))?;
            let delta = format::decode(&blob.bytes).map_err(|e| fail(format!("delta blob: {e}")))?;
            let chained =
                ordered(delta.base, version) && (delta.root == delta.base || ordered(delta.root, delta.base));
            if !chained {
                return Err(fail(format!(
                    "delta at version `{version}` has base `{}` and root `{}` out of order",
                    delta.base, delta.root
                )));
            }
            let key = (tuple.thread_id.clone(), tuple.checkpoint_ns.clone(), blob.channel.clone());
            let k = *key_index.entry(key.clone()).or_insert_with(|| {
                keys.push(key);
                keys.len() - 1
            });
            ranges.push((k, counter(delta.root).to_owned(), counter(version).to_owned()));
            store.insert((k, version.to_owned()), Link::Delta(blob.bytes.clone()));
            tips.push(Tip { tuple: t, blob: b, key: k, version: version.to_owned() });
        }
    }
    if tips.is_empty() {
        return Ok(Vec::new());
    }
    fetch(pool, &keys, &key_index, merge(ranges), &mut store, io).await?;

    let mut built: HashMap<(usize, String), Built> = HashMap::new();
    let mut resolved = Vec::with_capacity(tips.len());
    for tip in tips {
        let tuple = &mut tuples[tip.tuple];
        let list = build(&store, &mut built, tip.key, &tip.version)
            .and_then(|b| Ok((format::list(b.count, &b.items).ok_or("list too long")?, b)))
            .map_err(|e| tuple.corrupt(format!("channel `{}`: {e}", keys[tip.key].2)))?;
        let (bytes, chain) = list;
        let blob = &mut tuple.blobs[tip.blob];
        "msgpack".clone_into(&mut blob.kind);
        blob.bytes = bytes;
        resolved.push(Resolved {
            tuple: tip.tuple,
            channel: blob.channel.clone(),
            root: chain.root,
            depth: chain.depth,
        });
    }
    Ok(resolved)
}

impl DeltaState {
    /// After a read (with its deltas resolved): records the lists of the delta channels of
    /// `tuples[index]`, so the next `put` of the thread can store its extension as a delta.
    pub(crate) fn remember_read(&self, tuples: &[RawTuple], index: usize, resolved: &[Resolved]) {
        let Some(tuple) = tuples.get(index) else { return };
        for blob in tuple.blobs.iter().filter(|b| b.kind == "msgpack" && self.is_delta(&b.channel)) {
            let (Some(version), Some((count, header_len))) =
                (tuple.version_of(&blob.channel), format::array_header(&blob.bytes))
            else {
                continue;
            };
            let chain = resolved.iter().find(|r| r.tuple == index && r.channel == blob.channel);
            let stored = Stored {
                version: version.to_owned(),
                root: chain.map_or_else(|| version.to_owned(), |r| r.root.clone()),
                depth: chain.map_or(0, |r| r.depth),
                count,
                list: blob.bytes.as_slice().into(),
                header_len,
            };
            self.cache.put(&tuple.thread_id, &tuple.checkpoint_ns, &blob.channel, stored);
        }
    }
}

/// The counter part of a version (before the first `.`).
fn counter(version: &str) -> &str {
    version.split_once('.').map_or(version, |(n, _)| n)
}

/// Merges overlapping `[lo, hi)` counter ranges of each key. The bounds are bare counters: every
/// version with a counter in the range sorts between them whatever the column's collation, since
/// they are digit strings of one width and a version extends its counter with `.`.
fn merge(mut ranges: Vec<(usize, String, String)>) -> Vec<(usize, String, String)> {
    let number = |c: &str| version_number(c).unwrap_or(0);
    ranges.sort_by_key(|a| (a.0, number(&a.1)));
    let mut merged: Vec<(usize, String, String)> = Vec::with_capacity(ranges.len());
    for (key, lo, hi) in ranges {
        match merged.last_mut() {
            Some(last) if last.0 == key && number(&lo) <= number(&last.2) => {
                if number(&hi) > number(&last.2) {
                    last.2 = hi;
                }
            }
            _ => merged.push((key, lo, hi)),
        }
    }
    merged
}

/// Reads the rows of the ranges into `store`.
async fn fetch(
    pool: &MySqlPool,
    keys: &[Key],
    key_index: &HashMap<Key, usize>,
    ranges: Vec<(usize, String, String)>,
    store: &mut HashMap<(usize, String), Link>,
    io: &mut ReadIo,
) -> Result<(), CheckpointError> {
    for batch in ranges.chunks(RANGES_PER_STATEMENT) {
        let condition =
            "(thread_id = ? AND checkpoint_ns_hash = ? AND channel = ? AND version >= ? AND version < ?)";
        let text = format!(
            "SELECT thread_id, checkpoint_ns, channel, version, type, `blob` FROM checkpoint_blobs WHERE {}",
            vec![condition; batch.len()].join(" OR ")
        );
        let mut query = sqlx::query(&text);
        for (k, lo, hi) in batch {
            let (thread_id, ns, channel) = &keys[*k];
            query = query.bind(thread_id).bind(ns_hash(ns).to_vec()).bind(channel).bind(lo).bind(hi);
        }
        io.statement();
        for row in query.fetch_all(pool).await.map_err(backend)? {
            let text = |i: usize| row.try_get_unchecked::<String, _>(i).map_err(backend);
            // The conditions compare under the columns' collation: keep the exact keys only.
            let key: Key = (text(0)?, text(1)?, text(2)?);
            let Some(&k) = key_index.get(&key) else { continue };
            let (version, kind) = (text(3)?, text(4)?);
            let bytes: Option<Vec<u8>> = row.try_get(5).map_err(backend)?;
            io.received(bytes.as_ref().map_or(0, Vec::len));
            let link = match (kind.as_str(), bytes) {
                (DELTA_TYPE, Some(bytes)) => Link::Delta(bytes),
                (_, bytes) => Link::Plain(kind, bytes.unwrap_or_default()),
            };
            store.entry((k, version)).or_insert(link);
        }
    }
    Ok(())
}

/// The list at `version` of chain `key`: follows the bases down to a snapshot (or a version
/// already built), then applies the deltas upwards, checking each link's recorded root and depth.
fn build(
    store: &HashMap<(usize, String), Link>,
    built: &mut HashMap<(usize, String), Built>,
    key: usize,
    version: &str,
) -> Result<Built, String> {
    let mut pending: Vec<(String, format::Delta<'_>)> = Vec::new();
    let mut current = version.to_owned();
    let mut list = loop {
        if let Some(done) = built.get(&(key, current.clone())) {
            break done.clone();
        }
        if pending.len() > MAX_CHAIN as usize {
            return Err(format!("delta chain longer than {MAX_CHAIN} links"));
        }
        match store.get(&(key, current.clone())) {
            None if pending.is_empty() => return Err(format!("version `{current}` is missing")),
            None => return Err(format!("delta base version `{current}` is missing")),
            Some(Link::Plain(kind, bytes)) => {
                let (count, header) =
                    format::array_header(bytes).filter(|_| kind == "msgpack").ok_or_else(|| {
                        format!("delta base version `{current}` is a `{kind}` blob, not a list")
                    })?;
                let snapshot =
                    Built { count, items: bytes[header..].into(), root: current.clone(), depth: 0 };
                built.insert((key, current), snapshot.clone());
                break snapshot;
            }
            Some(Link::Delta(bytes)) => {
                let delta =
                    format::decode(bytes).map_err(|e| format!("delta at version `{current}`: {e}"))?;
                if !ordered(delta.base, &current) {
                    return Err(format!(
                        "delta at version `{current}` has base `{}` out of order",
                        delta.base
                    ));
                }
                let base = delta.base.to_owned();
                pending.push((std::mem::replace(&mut current, base), delta));
            }
        }
    };
    while let Some((at, delta)) = pending.pop() {
        if delta.root != list.root || delta.depth != list.depth + 1 {
            return Err(format!(
                "delta at version `{at}` records root `{}` depth {}, its chain has root `{}` depth {}",
                delta.root,
                delta.depth,
                list.root,
                list.depth + 1
            ));
        }
        let mut items = Vec::with_capacity(list.items.len() + delta.items.len());
        items.extend_from_slice(&list.items);
        items.extend_from_slice(delta.items);
        list = Built {
            count: list.count + delta.count,
            items: items.into(),
            root: list.root,
            depth: delta.depth,
        };
        built.insert((key, at), list.clone());
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u64) -> String {
        format!("{n:032}.0.25")
    }

    /// A chain `snapshot(1) <- delta(2) <- delta(3)` of one-byte items.
    fn chain() -> HashMap<(usize, String), Link> {
        let mut store = HashMap::new();
        store.insert((0, v(1)), Link::Plain("msgpack".into(), vec![0x92, 0x01, 0x02]));
        store.insert((0, v(2)), Link::Delta(format::encode(&v(1), &v(1), 1, 1, &[0x03]).unwrap()));
        store.insert((0, v(3)), Link::Delta(format::encode(&v(2), &v(1), 2, 2, &[0x04, 0x05]).unwrap()));
        store
    }

    #[test]
    fn chains_splice_and_share_work() {
        let store = chain();
        let mut built = HashMap::new();
        let top = build(&store, &mut built, 0, &v(3)).unwrap();
        assert_eq!((top.count, &top.items[..], top.depth), (5, &[1, 2, 3, 4, 5][..], 2));
        assert_eq!(built.len(), 3, "every link built once");
        assert_eq!(build(&store, &mut built, 0, &v(2)).unwrap().count, 3);
    }

    #[test]
    fn broken_chains_are_errors() {
        let mut store = chain();
        store.remove(&(0, v(1)));
        let err = build(&store, &mut HashMap::new(), 0, &v(3)).unwrap_err();
        assert!(err.contains("base version") && err.contains(&v(1)), "{err}");

        let mut store = chain();
        store.insert((0, v(2)), Link::Delta(format::encode(&v(1), &v(1), 5, 1, &[0x03]).unwrap()));
        let err = build(&store, &mut HashMap::new(), 0, &v(3)).unwrap_err();
        assert!(err.contains("depth"), "{err}");

        let mut store = chain();
        store.insert((0, v(1)), Link::Plain("null".into(), Vec::new()));
        assert!(build(&store, &mut HashMap::new(), 0, &v(2)).unwrap_err().contains("not a list"));

        let mut store = chain();
        // A base that points upwards would loop; it is refused.
        store.insert((0, v(2)), Link::Delta(format::encode(&v(3), &v(1), 1, 1, &[0x03]).unwrap()));
        assert!(build(&store, &mut HashMap::new(), 0, &v(3)).unwrap_err().contains("out of order"));
    }

    #[test]
    fn ranges_merge_per_key() {
        let r = |k, lo: u64, hi: u64| (k, format!("{lo:032}"), format!("{hi:032}"));
        let merged = merge(vec![r(0, 5, 9), r(1, 1, 2), r(0, 1, 5), r(0, 20, 30), r(0, 6, 7)]);
        assert_eq!(merged, [r(0, 1, 9), r(0, 20, 30), r(1, 1, 2)]);
    }
}
