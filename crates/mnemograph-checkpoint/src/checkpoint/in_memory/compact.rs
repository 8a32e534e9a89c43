//! The form [`InMemoryCheckpointer`](super::InMemoryCheckpointer) keeps a checkpoint in.
//!
//! A run writes a checkpoint per superstep and the saver keeps them all, so what each one costs
//! to store is most of a run's memory and, as fresh pages, much of its time. Stored, the
//! `versions_seen` map becomes an exact-size slice (a `BTreeMap` leaf holds room for eleven
//! entries whatever it holds), and every [`ChannelVersions`] is shared: with the checkpoint the
//! engine handed over, and with the previous checkpoint's entry for the same node when the two
//! are equal — in a chain only the node that just ran has a new one.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::checkpoint::channel_versions::cmp_shared;
use crate::checkpoint::{ChannelVersions, Checkpoint};

/// A checkpoint without its id (the saver's key for it) and values, as stored.
#[derive(Clone)]
pub(super) struct Compact {
    /// [`Checkpoint::v`].
    v: u32,
    /// [`Checkpoint::ts`].
    ts: String,
    /// [`Checkpoint::channel_versions`].
    channel_versions: ChannelVersions,
    /// [`Checkpoint::versions_seen`], sorted by node.
    versions_seen: Box<[(Arc<str>, ChannelVersions)]>,
    /// [`Checkpoint::updated_channels`].
    updated_channels: Option<Box<[Arc<str>]>>,
}

impl Compact {
    /// `checkpoint`'s everything but its values, sharing each node's `versions_seen` entry with
    /// `previous` where the two are equal.
    pub(super) fn new(checkpoint: Checkpoint, previous: Option<&Compact>) -> Self {
        let Checkpoint { v, ts, channel_versions, versions_seen, updated_channels, .. } = checkpoint;
        let earlier: &[(Arc<str>, ChannelVersions)] = previous.map_or(&[], |p| &p.versions_seen);
        let mut earlier = earlier.iter().peekable();
        let mut seen = Vec::with_capacity(versions_seen.len());
        for (node, versions) in versions_seen {
            // Both are sorted by node: advance the previous checkpoint's entries to this node.
            while earlier.next_if(|(n, _)| cmp_shared(n, &node).is_lt()).is_some() {}
            // Equal maps the engine built share their array already, so this rarely compares
            // entries; maps a caller built become shared here.
            let same = |p: &&ChannelVersions| p.ptr_eq(&versions) || **p == versions;
            let shared = earlier.next_if(|(n, _)| cmp_shared(n, &node).is_eq()).map(|(_, p)| p).filter(same);
            seen.push((node, shared.cloned().unwrap_or(versions)));
        }
        Self {
            v,
            ts,
            channel_versions,
            versions_seen: seen.into_boxed_slice(),
            updated_channels: updated_channels.map(Vec::into_boxed_slice),
        }
    }

    /// Its `channel_versions`.
    pub(super) fn channel_versions(&self) -> &ChannelVersions {
        &self.channel_versions
    }

    /// The checkpoint again, with its `id` and no channel values.
    pub(super) fn to_checkpoint(&self, id: &str) -> Checkpoint {
        Checkpoint {
            v: self.v,
            id: id.to_owned(),
            ts: self.ts.clone(),
            channel_values: BTreeMap::new(),
            channel_versions: self.channel_versions.clone(),
            versions_seen: self.versions_seen.iter().cloned().collect(),
            updated_channels: self.updated_channels.as_ref().map(|u| u.to_vec()),
        }
    }
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
        let back = Compact::new(cp.clone(), None).to_checkpoint(&cp.id);
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
            c.versions_seen.iter().find(|(n, _)| &**n == node).expect("node present").1.clone()
        };
        assert!(entry(&first, "n0").ptr_eq(&entry(&second, "n0")));
        assert!(!entry(&first, "n2").ptr_eq(&entry(&second, "n2")));
        assert_eq!(second.to_checkpoint("id").versions_seen["n2"], versions(&[("a", "2")]));
        assert_eq!(second.to_checkpoint("id").versions_seen["n1"], versions(&[("a", "2")]));
    }

    #[test]
    fn an_entry_with_more_or_other_versions_is_not_shared() {
        let first = Compact::new(checkpoint(&[("n0", &[("a", "1")])]), None);
        let more = Compact::new(checkpoint(&[("n0", &[("a", "1"), ("b", "1")])]), Some(&first));
        assert_eq!(more.to_checkpoint("id").versions_seen["n0"], versions(&[("a", "1"), ("b", "1")]));
        let other = Compact::new(checkpoint(&[("n0", &[("b", "1")])]), Some(&first));
        assert_eq!(other.to_checkpoint("id").versions_seen["n0"], versions(&[("b", "1")]));
    }
}
