//! Converting a run's channel table to LangGraph's checkpoint model and back.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::channels::Channels;
use super::plan::{ChannelKind, Layout};
pub(crate) use super::version_text::VersionText;
use crate::checkpoint::CheckpointError;
use crate::checkpoint::{ChannelVersions, Checkpoint, CHECKPOINT_VERSION};
use crate::error::{Error, Result};
use crate::value::ChannelValue;
use crate::State;
use mnemograph_checkpoint::__private::channel_versions_from_sorted;

/// The `versions_seen` key under which the versions at the last resume are kept.
const INTERRUPT: &str = "__interrupt__";

/// The `versions_seen` key LangGraph always writes, for the input.
const INPUT: &str = "__input__";

/// `e` with `thread_id` filled in when it is a decode error: [`from_checkpoint`] knows the
/// checkpoint and channel but not the thread, and an error about stored data must say where the
/// data is.
pub(crate) fn in_thread(e: Error, thread_id: &str) -> Error {
    match e {
        Error::Checkpoint(CheckpointError::Decode { checkpoint_id, channel, source, .. }) => {
            Error::Checkpoint(CheckpointError::Decode {
                thread_id: thread_id.to_owned(),
                checkpoint_id,
                channel,
                source,
            })
        }
        other => other,
    }
}

/// What the previous checkpoint of a run already built, reused while it has not changed.
pub(crate) struct CheckpointCache {
    /// Field values already wrapped for a checkpoint, by version: an unchanged field is not
    /// cloned again.
    fields: Vec<Option<(u64, ChannelValue)>>,
    /// Each node's `versions_seen` map and the versions it was built from: a node's entry
    /// changes only when the node runs, so most checkpoints share all but one with the previous.
    seen: Vec<Option<(Vec<u64>, ChannelVersions)>>,
    /// Positions of the entries of the map being built.
    scratch: Vec<usize>,
    /// The `versions_seen` keys `__input__` and `__interrupt__`, allocated once per run.
    keys: (Arc<str>, Arc<str>),
}

impl Default for CheckpointCache {
    fn default() -> Self {
        Self {
            fields: Vec::new(),
            seen: Vec::new(),
            scratch: Vec::new(),
            keys: (INPUT.into(), INTERRUPT.into()),
        }
    }
}

impl CheckpointCache {
    /// The field value of channel version `v` of field `f`.
    fn field<S: State>(&mut self, state: &S, f: usize, v: u64) -> ChannelValue {
        match &self.fields[f] {
            Some((cached, value)) if *cached == v => value.clone(),
            _ => {
                let value = state.get_field(f);
                self.fields[f] = Some((v, value.clone()));
                value
            }
        }
    }
}

/// The `(channel, version)` entries of the channels with a version: `version(k)` is the version
/// of channel `name(k)` (0 for none), and `order` lists the positions in the order of the names.
/// `scratch` is a buffer for the positions that have a version.
fn entries<'a>(
    name: impl Fn(usize) -> &'a Arc<str>,
    version: impl Fn(usize) -> u64,
    order: &[usize],
    scratch: &mut Vec<usize>,
    vt: &mut VersionText,
) -> ChannelVersions {
    scratch.clear();
    scratch.extend(order.iter().copied().filter(|k| version(*k) > 0));
    channel_versions_from_sorted(scratch.iter().map(|&k| (Arc::clone(name(k)), vt.text(version(k)))))
}

/// The versions of the channels whose version moved past `saved` (their versions at the last
/// saved checkpoint): a put's `new_versions`.
pub(crate) fn new_versions<S: State, C>(
    layout: &Layout<S, C>,
    ch: &Channels<S>,
    saved: &[u64],
    vt: &mut VersionText,
    cache: &mut CheckpointCache,
) -> ChannelVersions {
    let name = |i: usize| &layout.channels[i].name;
    let moved = |i: usize| match ch.versions[i] {
        v if v > saved.get(i).copied().unwrap_or(0) => v,
        _ => 0,
    };
    entries(name, moved, &layout.channel_order, &mut cache.scratch, vt)
}

pub(crate) fn to_checkpoint<S: State, C>(
    layout: &Layout<S, C>,
    ch: &Channels<S>,
    id: String,
    updated: &[usize],
    vt: &mut VersionText,
    cache: &mut CheckpointCache,
) -> Result<Checkpoint> {
    // Both maps are collected from sorted entries rather than inserted into one by one: a bulk
    // build compares each key once with its neighbour, where an insert searches every key of the
    // node before it.
    let mut values = Vec::with_capacity(layout.channel_order.len());
    cache.fields.resize(S::FIELDS.len(), None);
    cache.seen.resize_with(layout.nodes.len(), || None);
    // In name order, so `versions` is built sorted.
    for &i in &layout.channel_order {
        let spec = &layout.channels[i];
        let v = ch.versions[i];
        if v == 0 {
            continue;
        }
        let value = match &spec.kind {
            ChannelKind::Field(f) => Some(cache.field(&ch.state, *f, v)),
            kind => ch.value(kind, i)?,
        };
        if let Some(value) = value {
            values.push((Arc::clone(&spec.name), value));
        }
    }
    let mut values: BTreeMap<Arc<str>, ChannelValue> = values.into_iter().collect();
    let name = |i: usize| &layout.channels[i].name;
    let mut versions = entries(name, |i| ch.versions[i], &layout.channel_order, &mut cache.scratch, vt);
    if !ch.foreign.is_empty() {
        // Channels of a checkpoint written by another version of the graph: kept as they were.
        let foreign = ch.foreign.iter().map(|(name, (version, _))| (name.clone(), version.clone()));
        versions.extend(foreign);
        for (name, (_, value)) in &ch.foreign {
            if let Some(value) = value {
                values.insert(name.clone(), value.clone());
            }
        }
    }
    let mut seen: Vec<(Arc<str>, ChannelVersions)> = Vec::with_capacity(layout.nodes.len() + 2);
    seen.extend(ch.foreign_seen.iter().map(|(k, v)| (Arc::clone(k), v.clone())));
    if !ch.foreign_seen.contains_key(INPUT) {
        // LangGraph always writes it.
        seen.push((Arc::clone(&cache.keys.0), ChannelVersions::new()));
    }
    if ch.interrupt_seen.iter().any(|v| *v > 0) {
        let at_interrupt =
            entries(name, |i| ch.interrupt_seen[i], &layout.channel_order, &mut cache.scratch, vt);
        seen.push((Arc::clone(&cache.keys.1), at_interrupt));
    }
    for (n, def) in layout.nodes.iter().enumerate() {
        let now = &ch.versions_seen[n];
        let entry = match &mut cache.seen[n] {
            Some((built_from, entry)) if built_from == now => entry.clone(),
            slot => {
                let name = |k: usize| &layout.channels[def.triggers[k]].name;
                let entry = entries(name, |k| now[k], &def.trigger_order, &mut cache.scratch, vt);
                match slot {
                    Some((built_from, cached)) => {
                        built_from.copy_from_slice(now);
                        cached.clone_from(&entry);
                    }
                    None => *slot = Some((now.clone(), entry.clone())),
                }
                entry
            }
        };
        if !entry.is_empty() || ch.ran[n] {
            seen.push((Arc::clone(&def.name), entry));
        }
    }
    // Keys are unique: node names are, and `__input__`/`__interrupt__` are reserved.
    let seen: BTreeMap<Arc<str>, ChannelVersions> = seen.into_iter().collect();
    Ok(Checkpoint {
        v: CHECKPOINT_VERSION,
        id,
        ts: crate::checkpoint::backend::now_iso(),
        channel_values: values,
        channel_versions: versions,
        versions_seen: seen,
        updated_channels: Some(updated.iter().map(|c| Arc::clone(&layout.channels[*c].name)).collect()),
    })
}

pub(crate) fn from_checkpoint<S: State, C>(
    layout: &Layout<S, C>,
    cp: &Checkpoint,
    vt: &mut VersionText,
) -> Result<Channels<S>> {
    let mut ch = Channels::new(layout);
    let decode_err = |channel: &str, source| CheckpointError::Decode {
        thread_id: String::new(),
        checkpoint_id: cp.id.clone(),
        channel: channel.to_owned(),
        source,
    };
    for (name, version) in &cp.channel_versions {
        let n = vt.learn(version)?;
        let value = cp.channel_values.get(name);
        let Some(&i) = layout.channel_index.get(&**name) else {
            ch.foreign.insert(name.clone(), (version.clone(), value.cloned()));
            continue;
        };
        ch.versions[i] = n;
        let Some(value) = value else { continue };
        ch.restore(&layout.channels[i].kind, i, value, |e| decode_err(name, e))?;
    }
    for (node, seen) in &cp.versions_seen {
        if &**node == INTERRUPT {
            for (name, v) in seen {
                if let Some(&i) = layout.channel_index.get(&**name) {
                    ch.interrupt_seen[i] = vt.learn(v)?;
                }
            }
            continue;
        }
        let Some(n) = layout.node(node) else {
            ch.foreign_seen.insert(node.clone(), seen.clone());
            continue;
        };
        ch.ran[n] = true;
        for (k, trig) in layout.nodes[n].triggers.iter().enumerate() {
            if let Some(v) = seen.get(&layout.channels[*trig].name) {
                ch.versions_seen[n][k] = vt.learn(v)?;
            }
        }
    }
    Ok(ch)
}
