//! The form [`InMemoryCheckpointer`](super::InMemoryCheckpointer) keeps a checkpoint in.
//!
//! A [`Checkpoint`] is built for reading and writing: its version maps are `BTreeMap`s, and a
//! B-tree leaf holds room for eleven entries whatever it holds, so a one-entry `versions_seen`
//! map of a node costs ~400 bytes. A run writes a checkpoint per superstep and the saver keeps
//! them all, so that slack was most of the saver's memory (~5.5 KB per checkpoint of a 10-node
//! chain) and, as fresh pages, most of a run's time. Stored, the maps become exact-size slices,
//! and each node's `versions_seen` entry is shared with the previous checkpoint's when it did not
//! change — in a chain only the node that just ran has a new one.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::checkpoint::{ChannelVersions, Checkpoint};

/// The sorted `(channel, version)` pairs of a [`ChannelVersions`] map.
type Pairs = [(Arc<str>, Arc<str>)];

/// A checkpoint without its values, as stored.
pub(super) struct Compact {
    /// [`Checkpoint::v`].
    v: u32,
    /// [`Checkpoint::id`].
    pub(super) id: String,
    /// [`Checkpoint::ts`].
    ts: String,
    /// [`Checkpoint::channel_versions`].
    channel_versions: Box<Pairs>,
    /// [`Checkpoint::versions_seen`], each node's map shareable with other checkpoints.
    versions_seen: Box<[(Arc<str>, Arc<Pairs>)]>,
    /// [`Checkpoint::updated_channels`].
    updated_channels: Option<Box<[Arc<str>]>>,
}

impl Compact {
    /// `checkpoint`'s everything but its values, sharing each node's `versions_seen` entry with
    /// `previous` where the two are equal.
    pub(super) fn new(checkpoint: Checkpoint, previous: Option<&Compact>) -> Self {
        let Checkpoint { v, id, ts, channel_versions, versions_seen, updated_channels, .. } = checkpoint;
        let earlier: &[(Arc<str>, Arc<Pairs>)] = previous.map_or(&[], |p| &p.versions_seen);
        let mut earlier = earlier.iter().peekable();
        let mut seen = Vec::with_capacity(versions_seen.len());
        for (node, versions) in versions_seen {
            // Both are sorted by node: advance the previous checkpoint's entries to this node.
            while earlier.next_if(|(n, _)| *n < node).is_some() {}
            let shared = earlier.next_if(|(n, _)| *n == node).map(|(_, p)| p).filter(|p| same(p, &versions));
            let pairs = match shared {
                Some(p) => Arc::clone(p),
                None => Arc::from(pairs(versions)),
            };
            seen.push((node, pairs));
        }
        Self {
            v,
            id,
            ts,
            channel_versions: pairs(channel_versions),
            versions_seen: seen.into_boxed_slice(),
            updated_channels: updated_channels.map(Vec::into_boxed_slice),
        }
    }

    /// The `(channel, version)` pairs of its `channel_versions`, sorted by channel.
    pub(super) fn channel_versions(&self) -> &Pairs {
        &self.channel_versions
    }

    /// The checkpoint again, with no channel values.
    pub(super) fn to_checkpoint(&self) -> Checkpoint {
        let map = |pairs: &Pairs| -> ChannelVersions { pairs.iter().cloned().collect() };
        Checkpoint {
            v: self.v,
            id: self.id.clone(),
            ts: self.ts.clone(),
            channel_values: BTreeMap::new(),
            channel_versions: map(&self.channel_versions),
            versions_seen: self.versions_seen.iter().map(|(node, p)| (Arc::clone(node), map(p))).collect(),
            updated_channels: self.updated_channels.as_ref().map(|u| u.to_vec()),
        }
    }
}

/// A map's entries as an exact-size slice.
fn pairs(versions: ChannelVersions) -> Box<Pairs> {
    let mut out = Vec::with_capacity(versions.len());
    out.extend(versions);
    out.into_boxed_slice()
}

/// Whether `pairs` holds exactly the entries of `versions`. Names and versions the engine wrote
/// are the same `Arc`s, which compare by pointer first, so this rarely reads a text.
fn same(pairs: &Pairs, versions: &ChannelVersions) -> bool {
    pairs.len() == versions.len() && pairs.iter().zip(versions).all(|((c, v), (c2, v2))| c == c2 && v == v2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(pairs: &[(&str, &str)]) -> ChannelVersions {
        pairs.iter().map(|(c, v)| ((*c).into(), (*v).into())).collect()
    }

    fn checkpoint(seen: &[(&str, &[(&str, &str)])]) -> Checkpoint {
        Checkpoint {
            v: 4,
            id: "id".into(),
            ts: "ts".into(),
            channel_values: BTreeMap::new(),
            channel_versions: versions(&[("a", "2"), ("b", "1")]),
            versions_seen: seen.iter().map(|(node, p)| ((*node).into(), versions(p))).collect(),
            updated_channels: Some(vec!["a".into()]),
        }
    }

    #[test]
    fn round_trips_everything_but_values() {
        let cp = checkpoint(&[("__input__", &[]), ("n0", &[("a", "1")]), ("n1", &[("a", "2"), ("b", "1")])]);
        let back = Compact::new(cp.clone(), None).to_checkpoint();
        assert_eq!((back.v, &back.id, &back.ts), (cp.v, &cp.id, &cp.ts));
        assert_eq!(back.channel_versions, cp.channel_versions);
        assert_eq!(back.versions_seen, cp.versions_seen);
        assert_eq!(back.updated_channels, cp.updated_channels);
    }

    #[test]
    fn unchanged_versions_seen_entries_are_shared_with_the_previous_checkpoint() {
        let first = Compact::new(checkpoint(&[("n0", &[("a", "1")]), ("n2", &[("a", "1")])]), None);
        // `n1` is new, `n2` changed, `n0` is the same.
        let second = checkpoint(&[("n0", &[("a", "1")]), ("n1", &[("a", "2")]), ("n2", &[("a", "2")])]);
        let second = Compact::new(second, Some(&first));
        let entry = |c: &Compact, node: &str| {
            Arc::clone(&c.versions_seen.iter().find(|(n, _)| &**n == node).expect("node present").1)
        };
        assert!(Arc::ptr_eq(&entry(&first, "n0"), &entry(&second, "n0")));
        assert!(!Arc::ptr_eq(&entry(&first, "n2"), &entry(&second, "n2")));
        assert_eq!(second.to_checkpoint().versions_seen["n2"], versions(&[("a", "2")]));
        assert_eq!(second.to_checkpoint().versions_seen["n1"], versions(&[("a", "2")]));
    }

    #[test]
    fn an_entry_with_more_or_other_versions_is_not_shared() {
        let first = Compact::new(checkpoint(&[("n0", &[("a", "1")])]), None);
        let more = Compact::new(checkpoint(&[("n0", &[("a", "1"), ("b", "1")])]), Some(&first));
        assert_eq!(more.to_checkpoint().versions_seen["n0"], versions(&[("a", "1"), ("b", "1")]));
        let other = Compact::new(checkpoint(&[("n0", &[("b", "1")])]), Some(&first));
        assert_eq!(other.to_checkpoint().versions_seen["n0"], versions(&[("b", "1")]));
    }
}
