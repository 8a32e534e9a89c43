//! Converting a run's channel table to LangGraph's checkpoint model and back, and task writes to
//! pending writes and back.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value as Json};

use super::channels::Channels;
use super::plan::{ChannelKind, Layout};
use super::task::TaskWrites;
pub(crate) use super::version_text::VersionText;
use crate::checkpoint::serde;
use crate::checkpoint::CheckpointError;
use crate::checkpoint::{ChannelVersions, Checkpoint, PendingWrite, CHECKPOINT_VERSION};
use crate::command::Push;
use crate::error::{Error, Result};
use crate::state::{State, StateWrite};
use crate::value::ChannelValue;

/// The `versions_seen` key under which the versions at the last resume are kept.
const INTERRUPT: &str = "__interrupt__";

/// The `versions_seen` key LangGraph always writes, for the input.
const INPUT: &str = "__input__";

/// A value that cannot be written in LangGraph's form, as the engine's error.
fn ser(e: serde::SerdeError) -> Error {
    Error::Checkpoint(e.into())
}

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
    ChannelVersions::from_sorted(scratch.iter().map(|&k| (Arc::clone(name(k)), vt.text(version(k)))))
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
            ChannelKind::Start => match &ch.start {
                Some(updates) => Some(updates_value::<S>(updates)?),
                None => None,
            },
            ChannelKind::Branch => ch.present[i].then_some(ChannelValue::Null),
            ChannelKind::Deferred => {
                ch.present[i].then(|| ChannelValue::Json(json!([null, ch.finished[i]]).into()))
            }
            // A barrier and the tasks topic are stored whenever they have a version, empty or
            // not, as Python stores them (an empty `set()` / `[]`).
            ChannelKind::Join { sources } => {
                let seen = sources
                    .iter()
                    .enumerate()
                    .filter(|(b, _)| ch.seen[i] & (1 << b) != 0)
                    .map(|(_, s)| rmpv::Value::from(s.as_str()))
                    .collect();
                Some(serde::tree_value(&serde::set_value(seen).map_err(ser)?).map_err(ser)?)
            }
            ChannelKind::Tasks => {
                let pushes = ch.pushes.iter().map(push_tree).collect::<Result<_>>()?;
                Some(serde::tree_value(&rmpv::Value::Array(pushes)).map_err(ser)?)
            }
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
        ts: crate::checkpoint::now_iso(),
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
        match &layout.channels[i].kind {
            ChannelKind::Field(f) => ch.state.set_field(*f, value).map_err(|e| decode_err(name, e))?,
            ChannelKind::Start => ch.start = Some(updates_from_json::<S>(&value.to_json()?)?),
            ChannelKind::Branch => ch.present[i] = true,
            ChannelKind::Deferred => {
                ch.present[i] = true;
                ch.finished[i] = value.to_json()?.get(1).and_then(Json::as_bool).unwrap_or(false);
            }
            ChannelKind::Join { sources } => {
                let names: Vec<String> = value.decode().map_err(|e| decode_err(name, e))?;
                for (b, s) in sources.iter().enumerate() {
                    if names.contains(s) {
                        ch.seen[i] |= 1 << b;
                    }
                }
            }
            ChannelKind::Tasks => {
                if let Json::Array(items) = value.to_json()? {
                    for item in &items {
                        ch.pushes.push(push_from_json(item)?);
                    }
                }
            }
        }
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

/// The pending writes of a finished task, as `(channel, value)` pairs in write order.
pub(crate) fn writes_to_pending<S: State, C>(
    layout: &Layout<S, C>,
    w: &TaskWrites<S>,
) -> Result<Vec<(String, ChannelValue)>> {
    let mut out = Vec::new();
    for sw in &w.state {
        for (f, v) in S::update_values(&sw.update) {
            let v = if sw.overwrite { ChannelValue::Overwrite(Box::new(v)) } else { v };
            out.push((S::FIELDS[f].name.to_owned(), v));
        }
    }
    for c in &w.channels {
        out.push((String::from(&*layout.channels[*c].name), ChannelValue::Null));
    }
    for (c, bit) in &w.joins {
        if let ChannelKind::Join { sources } = &layout.channels[*c].kind {
            let source = &sources[bit.trailing_zeros() as usize];
            out.push((String::from(&*layout.channels[*c].name), ChannelValue::new(source.clone())));
        }
    }
    for p in &w.pushes {
        out.push((
            String::from(&*layout.channels[layout.tasks_channel].name),
            serde::tree_value(&push_tree(p)?).map_err(ser)?,
        ));
    }
    Ok(out)
}

/// Rebuilds a task's writes from its stored pending writes.
pub(crate) fn pending_to_writes<S: State, C>(
    layout: &Layout<S, C>,
    writes: &[&PendingWrite],
) -> Result<TaskWrites<S>> {
    let mut w = TaskWrites::empty();
    for pw in writes {
        let Some(&i) = layout.channel_index.get(pw.channel.as_str()) else { continue };
        match &layout.channels[i].kind {
            ChannelKind::Field(f) => {
                let (value, overwrite) = match &pw.value {
                    ChannelValue::Overwrite(inner) => (&**inner, true),
                    other => (other, false),
                };
                let update = S::update_from_value(*f, value)?;
                w.state.push(StateWrite { update, overwrite });
            }
            ChannelKind::Branch | ChannelKind::Deferred => w.channels.push(i),
            ChannelKind::Join { sources } => {
                let source: String = pw.value.decode()?;
                if let Some(b) = sources.iter().position(|s| *s == source) {
                    w.joins.push((i, 1 << b));
                }
            }
            ChannelKind::Tasks => w.pushes.push(push_from_json(&pw.value.to_json()?)?),
            ChannelKind::Start => {}
        }
    }
    Ok(w)
}

/// The input of the `__start__` channel as Python stores it: a map of the written fields (a later
/// update of the same field wins, as in a dict).
fn updates_value<S: State>(updates: &[S::Update]) -> Result<ChannelValue> {
    let mut fields: Vec<(&str, ChannelValue)> = Vec::new();
    for u in updates {
        for (f, v) in S::update_values(u) {
            let name = S::FIELDS[f].name;
            match fields.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = v,
                None => fields.push((name, v)),
            }
        }
    }
    serde::tree_value(&serde::fields_tree(fields).map_err(ser)?).map_err(ser)
}

fn updates_from_json<S: State>(json: &Json) -> Result<Vec<S::Update>> {
    let mut out = Vec::new();
    if let Json::Object(map) = json {
        for (k, v) in map {
            if let Some(f) = S::field_index(k) {
                out.push(S::update_from_value(f, &ChannelValue::Json(v.clone().into()))?);
            }
        }
    }
    Ok(out)
}

/// A push as Python's `Send(node, arg)`, `arg` holding every field of the pushed state.
fn push_tree<S: State>(p: &Push<S>) -> Result<rmpv::Value> {
    let fields = S::FIELDS.iter().enumerate().map(|(f, field)| (field.name, p.arg.get_field(f)));
    serde::send_value(&p.node, serde::fields_tree(fields).map_err(ser)?).map_err(ser)
}

fn push_from_json<S: State>(json: &Json) -> Result<Push<S>> {
    let node = json
        .get("node")
        .and_then(Json::as_str)
        .ok_or_else(|| Error::Checkpoint(CheckpointError::Corrupt("push without a node".into())))?;
    let mut arg = S::default();
    if let Some(Json::Object(fields)) = json.get("arg") {
        for (k, v) in fields {
            if let Some(f) = S::field_index(k) {
                arg.set_field(f, &ChannelValue::Json(v.clone().into()))?;
            }
        }
    }
    Ok(Push::new(node, arg))
}
