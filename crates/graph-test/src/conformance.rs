//! The checkpointer conformance suite: one `async fn` per required behaviour of a
//! [`Checkpointer`](graph_core::checkpoint::Checkpointer), after LangGraph's
//! `langgraph-checkpoint-conformance` package and its savers' tests, plus the concurrency
//! guarantee of [`put_expecting_latest`](graph_core::checkpoint::Checkpointer::put_expecting_latest)
//! (a stale parent is refused, a fork through `put` is not, racing writers yield one winner).
//!
//! Run it against a backend with [`checkpointer_conformance!`](crate::checkpointer_conformance),
//! or call the functions one by one. A function may be given an empty or a shared saver: it only
//! touches threads whose ids start with a fresh random prefix, so the whole suite can run in
//! parallel against one database or Redis server.
//!
//! Values are read back with [`ChannelValue::decode`] and compared decoded, because a backend
//! that stores bytes returns [`ChannelValue::Encoded`] values, not the live ones it was given.

use std::collections::BTreeMap;
use std::sync::Arc;

use graph_core::checkpoint::CheckpointSource::{Fork, Input, Loop, Update};
use graph_core::checkpoint::{
    checkpoint_id, uuid6, ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointMetadata,
    CheckpointTuple, DynCheckpointer, ListOptions, PendingWrite, CHECKPOINT_VERSION,
};
use serde_json::{json, Value};

mod chain;
mod conflict;

pub use chain::{
    put_chain_links_each_checkpoint_to_the_one_before, put_chain_on_a_moved_parent_conflicts,
    put_chain_stores_writes_then_checkpoint,
};
pub use conflict::{
    put_expecting_latest_refuses_a_moved_parent, put_on_an_older_parent_forks_without_conflict,
    racing_puts_exactly_one_wins,
};

/// Expands to a module `checkpointer_conformance` with one `#[tokio::test]` per function of
/// [`conformance`](crate::conformance), each given a saver made by `$factory`.
///
/// `$factory` is the path of an `async fn() -> T` where `T:`
/// [`Checkpointer`](graph_core::checkpoint::Checkpointer), resolved from the module that invokes
/// the macro. The invoking crate needs `tokio` with the `macros` and `rt` features.
///
/// # Example
/// ```
/// use graph_core::checkpoint::InMemoryCheckpointer;
///
/// async fn saver() -> InMemoryCheckpointer {
///     InMemoryCheckpointer::new()
/// }
///
/// graph_test::checkpointer_conformance!(saver);
/// # fn main() {}
/// ```
///
/// A live backend's factory may return `Option<saver>` instead and be passed as
/// `checkpointer_conformance!(optional saver)`: on `None` (the factory has already printed why, or
/// panicked when `CI` demands the server) every test returns without running.
#[macro_export]
macro_rules! checkpointer_conformance {
    // The one list of the suite's functions, handed to the arm named by the first tokens.
    (@names $($arm:tt)*) => {
        $crate::checkpointer_conformance! { $($arm)*;
            put_returns_config_with_new_id,
            get_tuple_without_id_returns_newest,
            get_tuple_unknown_is_none,
            get_tuple_returns_parent_config,
            checkpoint_fields_round_trip,
            incremental_channel_update,
            channel_removed_from_versions_disappears,
            null_value_kept_and_missing_value_omitted,
            namespaces_isolate_checkpoints,
            namespaces_isolate_writes,
            list_by_namespace,
            put_writes_is_idempotent,
            special_channel_writes_upsert,
            writes_belong_to_one_checkpoint,
            pending_writes_ordered_by_task_and_idx,
            list_newest_first,
            list_returns_full_tuples,
            list_before,
            list_limit,
            list_limit_and_before,
            list_filter_one_key,
            list_filter_several_keys,
            list_filter_custom_key,
            list_filter_step,
            list_empty_results,
            list_all_threads,
            list_pinned_checkpoint_id,
            delete_thread_removes_all_namespaces_and_writes,
            delete_thread_leaves_other_threads,
            metadata_round_trip,
            values_of_several_types_round_trip,
            large_value_round_trip,
            unicode_values_and_thread_ids,
            next_version_increments,
            put_expecting_latest_refuses_a_moved_parent,
            put_on_an_older_parent_forks_without_conflict,
            racing_puts_exactly_one_wins,
            put_chain_stores_writes_then_checkpoint,
            put_chain_links_each_checkpoint_to_the_one_before,
            put_chain_on_a_moved_parent_conflicts,
        }
    };
    (@tests $mode:tt $factory:path; $($test:ident),* $(,)?) => {
        /// The checkpointer conformance suite (`graph_test::checkpointer_conformance!`).
        mod checkpointer_conformance {
            // Brings the factory into scope when it was given as a bare name.
            #[allow(unused_imports)]
            use super::*;
            $(
                #[::tokio::test]
                async fn $test() {
                    $crate::checkpointer_conformance!(@run $mode $factory, $test);
                }
            )*
        }
    };
    (@sequence $saver:expr; $($test:ident),* $(,)?) => {{
        let mut ran = 0_usize;
        $(
            eprintln!("conformance: {}", stringify!($test));
            $crate::conformance::$test($saver).await;
            ran += 1;
        )*
        ran
    }};
    (@run always $factory:path, $test:ident) => {
        let saver = $factory().await;
        $crate::conformance::$test(&saver).await;
    };
    (@run optional $factory:path, $test:ident) => {
        if let Some(saver) = $factory().await {
            $crate::conformance::$test(&saver).await;
        }
    };
    // A factory returning `Option<saver>`: `None` means the backend is unavailable and the factory
    // has already reported it (printed a skip, or panicked under CI), so the test returns.
    (optional $factory:path) => {
        $crate::checkpointer_conformance!(@names @tests optional $factory);
    };
    ($factory:path) => {
        $crate::checkpointer_conformance!(@names @tests always $factory);
    };
}

/// Runs every function of the suite one after another on `saver` and returns how many ran: for a
/// backend whose tests share one expensive fixture (a Redis Cluster the test starts), where
/// [`checkpointer_conformance!`](crate::checkpointer_conformance) would build one per test.
pub async fn run_all(saver: &dyn DynCheckpointer) -> usize {
    crate::checkpointer_conformance!(@names @sequence saver)
}

/// A pending write as compared by the tests: `(task_id, channel, value as JSON)`.
type Write = (String, String, Value);

/// A map value used by several tests.
type Map = BTreeMap<String, Vec<String>>;

/// One test's view of the saver: its thread-id prefix, and calls that panic with context.
struct Ctx<'a> {
    /// The saver under test.
    saver: &'a dyn DynCheckpointer,
    /// Starts every thread id of this test.
    prefix: String,
}

impl<'a> Ctx<'a> {
    fn new(saver: &'a dyn DynCheckpointer) -> Self {
        // uuid6 is unique within the process (its timestamp strictly increases) and carries 48
        // random bits, which keeps concurrent test processes apart on a shared server.
        let prefix = format!("conf-{}", uuid6(0));
        Self { saver, prefix }
    }

    /// The root namespace of this test's thread `label`.
    fn thread(&self, label: &str) -> CheckpointConfig {
        CheckpointConfig::thread(format!("{}-{label}", self.prefix))
    }

    /// Saves `cp` with `input`/`loop` metadata for its step.
    async fn put(&self, config: &CheckpointConfig, cp: Cp) -> CheckpointConfig {
        let metadata = meta(cp.step);
        self.put_meta(config, cp, metadata).await
    }

    async fn put_meta(&self, at: &CheckpointConfig, cp: Cp, m: CheckpointMetadata) -> Config {
        let id = cp.checkpoint.id.clone();
        let saver = self.saver;
        let saved = saver.put(at, cp.checkpoint, m, cp.new_versions).await;
        let saved = saved.expect("put failed");
        assert_eq!(saved.checkpoint_id, Some(id), "put must return the new id");
        saved
    }

    async fn find(&self, config: &CheckpointConfig) -> Option<CheckpointTuple> {
        let found = self.saver.get_tuple(config).await;
        found.expect("get_tuple failed")
    }

    async fn get(&self, config: &CheckpointConfig) -> CheckpointTuple {
        let found = self.find(config).await;
        found.unwrap_or_else(|| panic!("no checkpoint at {config:?}"))
    }

    async fn list_at(&self, config: Option<&Config>, o: ListOptions) -> Vec<CheckpointTuple> {
        let listed = self.saver.list(config, o).await;
        listed.expect("list failed")
    }

    async fn list(&self, config: &CheckpointConfig, o: ListOptions) -> Vec<CheckpointTuple> {
        self.list_at(Some(config), o).await
    }

    /// The configs listed at `config`.
    async fn listed(&self, config: &CheckpointConfig, o: ListOptions) -> Vec<Config> {
        let listed = self.list(config, o).await;
        listed.into_iter().map(|t| t.config).collect()
    }

    /// The ids listed at `config`.
    async fn ids(&self, config: &CheckpointConfig, o: ListOptions) -> Vec<String> {
        ids(&self.list(config, o).await)
    }

    /// How many checkpoints are listed at `config`.
    async fn count(&self, config: &CheckpointConfig, o: ListOptions) -> usize {
        self.list(config, o).await.len()
    }

    async fn write(&self, config: &CheckpointConfig, task: &str, items: &[(&str, Value)]) {
        let value = |v: &Value| ChannelValue::new(v.clone());
        let items = items.iter().map(|(c, v)| ((*c).to_owned(), value(v)));
        let saved = self.saver.put_writes(config, items.collect(), task, "");
        saved.await.expect("put_writes failed");
    }

    /// The pending writes of the checkpoint at `config`.
    async fn writes(&self, config: &CheckpointConfig) -> Vec<Write> {
        writes(&self.get(config).await)
    }

    async fn delete(&self, config: &CheckpointConfig) {
        let deleted = self.saver.delete_thread(&config.thread_id).await;
        deleted.expect("delete_thread failed");
    }

    /// Saves steps -1..=3 of a thread as a parent chain (source `input` then `loop`, user key
    /// `run` = `first` before step 1 and `second` from it); returns their configs, oldest first.
    async fn history(&self, config: &CheckpointConfig) -> Vec<CheckpointConfig> {
        let mut out: Vec<CheckpointConfig> = Vec::new();
        for step in -1..=3_i64 {
            let mut m = meta(step);
            let run = if step < 1 { "first" } else { "second" };
            m.extra.insert("run".into(), json!(run));
            let c = cp(step).set("a", (step + 2) as u64, one(&format!("s{step}")));
            let saved = self.put_meta(out.last().unwrap_or(config), c, m).await;
            out.push(saved);
        }
        out
    }
}

/// Short for [`CheckpointConfig`].
type Config = CheckpointConfig;

/// A checkpoint under construction plus the `new_versions` to save it with.
struct Cp {
    /// The step its metadata gets.
    step: i64,
    /// The checkpoint.
    checkpoint: Checkpoint,
    /// The channels `set` so far.
    new_versions: ChannelVersions,
}

/// An empty checkpoint with a fresh id for `step`.
fn cp(step: i64) -> Cp {
    let checkpoint = Checkpoint {
        v: CHECKPOINT_VERSION,
        id: checkpoint_id(step),
        ts: "2026-01-02T03:04:05.678901+00:00".to_owned(),
        ..Checkpoint::default()
    };
    let new_versions = ChannelVersions::new();
    Cp { step, checkpoint, new_versions }
}

impl Cp {
    /// `channel` gets `value` at a new version `n`.
    fn set(mut self, channel: &str, n: u64, value: ChannelValue) -> Self {
        let values = &mut self.checkpoint.channel_values;
        values.insert(channel.into(), value);
        self.new_versions.insert(channel.into(), ver(n));
        self.keep(channel, n)
    }
    /// `channel` is at version `n`, whose value an earlier checkpoint saved.
    fn keep(mut self, channel: &str, n: u64) -> Self {
        let versions = &mut self.checkpoint.channel_versions;
        versions.insert(channel.into(), ver(n));
        self
    }
    /// `channel` is unchanged at version `n` but its value is passed along, as the engine does.
    fn same(mut self, channel: &str, n: u64, value: ChannelValue) -> Self {
        self.checkpoint.channel_values.insert(channel.into(), value);
        self.keep(channel, n)
    }
    /// Saved under an existing id (the same id in another namespace, or again after a delete).
    fn with_id(mut self, id: &str) -> Self {
        id.clone_into(&mut self.checkpoint.id);
        self
    }
    fn id(&self) -> String {
        self.checkpoint.id.clone()
    }
}

/// A LangGraph-shaped version with counter `n`.
fn ver(n: u64) -> Arc<str> {
    format!("{n:032}.0.{n}").into()
}

fn meta(step: i64) -> CheckpointMetadata {
    let input = step < 0;
    let source = if input { Input } else { Loop };
    CheckpointMetadata::new(source, step)
}

/// A one-item list of strings. Lists, not primitives, for values that must go through a saver's
/// blob path: SQL savers inline primitives into every checkpoint, as LangGraph does.
fn one(s: &str) -> ChannelValue {
    ChannelValue::new(vec![s.to_owned()])
}

fn int(n: i64) -> ChannelValue {
    ChannelValue::new(n)
}

/// The value of `channel` of a tuple, decoded as `$ty`.
macro_rules! decoded {
    ($tuple:expr, $channel:expr, $ty:ty) => {
        value(&$tuple, $channel).decode::<$ty>().expect("decode")
    };
}

/// The value of `channel`, which must be present.
fn value<'t>(tuple: &'t CheckpointTuple, channel: &str) -> &'t ChannelValue {
    let found = tuple.checkpoint.channel_values.get(channel);
    found.unwrap_or_else(|| panic!("no `{channel}`; present: {:?}", channels(tuple)))
}

/// The item of the [`one`]-item list in `channel`.
fn item(tuple: &CheckpointTuple, channel: &str) -> String {
    let list = decoded!(tuple, channel, Vec<String>);
    assert_eq!(list.len(), 1, "{channel}: {list:?}");
    list[0].clone()
}

fn channels(tuple: &CheckpointTuple) -> Vec<&str> {
    let values = &tuple.checkpoint.channel_values;
    values.keys().map(|k| &**k).collect()
}

fn writes(tuple: &CheckpointTuple) -> Vec<Write> {
    let decode = |v: &ChannelValue| v.decode::<Value>().expect("cannot decode write");
    let writes = tuple.pending_writes.iter();
    let write = |w: &PendingWrite| (w.task_id.clone(), w.channel.clone(), decode(&w.value));
    writes.map(write).collect()
}

fn w(task: &str, channel: &str, value: Value) -> Write {
    (task.to_owned(), channel.to_owned(), value)
}

fn ids(tuples: &[CheckpointTuple]) -> Vec<String> {
    tuples.iter().map(|t| t.checkpoint.id.clone()).collect()
}

fn id(config: &CheckpointConfig) -> String {
    let id = config.checkpoint_id.clone();
    id.expect("config without checkpoint id")
}

fn all() -> ListOptions {
    ListOptions::new()
}

fn filter(value: Value) -> ListOptions {
    let Value::Object(map) = value else { panic!("a filter is a JSON object") };
    all().filter(map)
}

/// `put` returns the thread, namespace and new id; the checkpoint reads back at that address.
pub async fn put_returns_config_with_new_id(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let first = cp(-1).set("a", 1, one("x"));
    let first_id = first.id();
    let saved = s.put(&config, first).await;
    assert_eq!(saved, config.clone().with_checkpoint_id(&first_id));
    let tuple = s.get(&saved).await;
    assert_eq!((&tuple.config, tuple.checkpoint.id), (&saved, first_id));
    // With a parent in the config, the returned id is still the new checkpoint's.
    let second = cp(0).keep("a", 1);
    let expected = config.with_checkpoint_id(second.id());
    assert_eq!(s.put(&saved, second).await, expected);
}

/// `get_tuple` without an id returns the checkpoint with the greatest id, whatever the put order.
pub async fn get_tuple_without_id_returns_newest(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let (a, b, c) = (cp(0), cp(1), cp(2));
    let newest = c.id();
    s.put(&config, b.set("x", 2, int(2))).await;
    s.put(&config, c.set("x", 3, int(3))).await;
    s.put(&config, a.set("x", 1, int(1))).await;
    let tuple = s.get(&config).await;
    assert_eq!(tuple.config, config.with_checkpoint_id(newest));
    assert_eq!(decoded!(tuple, "x", i64), 3);
}

/// An unknown id, thread or namespace yields `None`.
pub async fn get_tuple_unknown_is_none(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let saved = s.put(&config, cp(0).set("a", 1, int(1))).await;
    assert!(s.find(&saved).await.is_some());
    let unknown_id = config.with_checkpoint_id(checkpoint_id(0));
    assert!(s.find(&unknown_id).await.is_none(), "unknown id");
    assert!(s.find(&s.thread("other")).await.is_none(), "unknown thread");
    let other_ns = saved.with_ns("child:1");
    assert!(s.find(&other_ns).await.is_none(), "unknown namespace");
}

/// `parent_config` is the `checkpoint_id` of the config given to `put`, in the same namespace.
pub async fn get_tuple_returns_parent_config(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    for config in [s.thread("t"), s.thread("t").with_ns("child:1")] {
        let first = s.put(&config, cp(-1).set("a", 1, int(1))).await;
        let second = s.put(&first, cp(0).keep("a", 1)).await;
        assert_eq!(s.get(&first).await.parent_config, None);
        assert_eq!(s.get(&second).await.parent_config, Some(first.clone()));
        assert_eq!(s.get(&config).await.parent_config, Some(first));
    }
}

/// Every field of a checkpoint survives a round trip.
pub async fn checkpoint_fields_round_trip(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let mut c = cp(3).set("a", 4, one("v")).keep("b", 2);
    let seen: [(Arc<str>, _); 2] = [("a".into(), ver(3)), ("b".into(), ver(2))];
    let input = ("__input__".into(), ChannelVersions::new());
    let node = ("node".into(), ChannelVersions::from(seen));
    c.checkpoint.versions_seen = BTreeMap::from([input, node]);
    c.checkpoint.updated_channels = Some(vec!["a".into()]);
    let expected = c.checkpoint.clone();
    let saved = s.put(&s.thread("t"), c).await;
    let got = s.get(&saved).await.checkpoint;
    assert_eq!((got.v, &got.id, &got.ts), (4, &expected.id, &expected.ts));
    assert_eq!(got.channel_versions, expected.channel_versions);
    assert_eq!(got.versions_seen, expected.versions_seen);
    assert_eq!(got.updated_channels, expected.updated_channels);
    // `b` has a version but no value was ever saved for it.
    assert_eq!(got.channel_values.keys().map(|k| &**k).collect::<Vec<_>>(), ["a"]);
    let next = s.put(&saved, cp(4).keep("a", 4)).await;
    assert_eq!(s.get(&next).await.checkpoint.updated_channels, None);
}

/// Only channels in `new_versions` get a new value; the others are read from the value saved
/// with their version by an older checkpoint, which itself keeps its own values.
pub async fn incremental_channel_update(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let first = cp(0).set("a", 1, one("a1")).set("b", 1, one("b1"));
    let c1 = s.put(&s.thread("t"), first).await;
    let c2 = s.put(&c1, cp(1).set("a", 2, one("a2")).keep("b", 1)).await;
    let c3 = s.put(&c2, cp(2).same("a", 2, one("a2")).set("b", 2, one("b2"))).await;
    for (config, a, b) in [(c1, "a1", "b1"), (c2, "a2", "b1"), (c3, "a2", "b2")] {
        let t = s.get(&config).await;
        assert_eq!([item(&t, "a"), item(&t, "b")], [a, b], "{config:?}");
    }
}

/// A channel dropped from `channel_versions` has no value in the new checkpoint only.
pub async fn channel_removed_from_versions_disappears(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let first = cp(0).set("a", 1, one("a1")).set("b", 1, one("b1"));
    let c1 = s.put(&s.thread("t"), first).await;
    let c2 = s.put(&c1, cp(1).set("a", 2, one("a2"))).await;
    let t2 = s.get(&c2).await;
    assert_eq!(channels(&t2), ["a"]);
    assert!(!t2.checkpoint.channel_versions.contains_key("b"));
    assert_eq!(item(&s.get(&c1).await, "b"), "b1");
}

/// A `Null` value (Python's `None`, carried by edge channels) reads back as null; a channel in
/// `new_versions` without a value (LangGraph's `"empty"` blob) reads back as absent.
pub async fn null_value_kept_and_missing_value_omitted(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let mut c = cp(0).set("branch:to:x", 1, ChannelValue::Null);
    c.checkpoint.channel_versions.insert("empty".into(), ver(1));
    c.new_versions.insert("empty".into(), ver(1));
    let saved = s.put(&s.thread("t"), c.set("a", 1, int(1))).await;
    let tuple = s.get(&saved).await;
    assert_eq!(channels(&tuple), ["a", "branch:to:x"]);
    assert!(value(&tuple, "branch:to:x").is_null());
    assert_eq!(tuple.checkpoint.channel_versions.len(), 3);
}

/// The same checkpoint id and channel version in two namespaces are two separate checkpoints.
pub async fn namespaces_isolate_checkpoints(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let child = root.clone().with_ns("child:1");
    let shared = cp(0);
    let shared_id = shared.id();
    s.put(&root, shared.set("a", 1, one("root"))).await;
    let child_cp = cp(0).with_id(&shared_id).set("a", 1, one("child"));
    s.put(&child, child_cp).await;
    let newer_child = s.put(&child, cp(1).set("a", 2, one("child2"))).await;

    let r = s.get(&root).await;
    assert_eq!(r.config, root.clone().with_checkpoint_id(&shared_id));
    assert_eq!(item(&r, "a"), "root");
    let c = s.get(&child.clone().with_checkpoint_id(shared_id)).await;
    assert_eq!(c.config.checkpoint_ns, "child:1");
    assert_eq!(item(&c, "a"), "child");
    assert_eq!(s.get(&child).await.config, newer_child);
    assert!(s.find(&newer_child.with_ns("")).await.is_none());
    assert_eq!(s.count(&root, all()).await, 1);
}

/// Writes saved against a checkpoint id in one namespace are invisible in another.
pub async fn namespaces_isolate_writes(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let c = cp(0);
    let child_cp = cp(0).with_id(&c.id()).set("a", 1, int(2));
    let rs = s.put(&root, c.set("a", 1, int(1))).await;
    let cs = s.put(&root.with_ns("child:1"), child_cp).await;
    s.write(&rs, "task", &[("a", json!("root"))]).await;
    let child_writes = [("a", json!("child")), ("b", json!("child b"))];
    s.write(&cs, "task", &child_writes).await;
    assert_eq!(s.writes(&rs).await, [w("task", "a", json!("root"))]);
    let expected = child_writes.map(|(c, v)| w("task", c, v));
    assert_eq!(s.writes(&cs).await, expected);
}

/// `list` returns only the checkpoints of the namespace in the config.
pub async fn list_by_namespace(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let child = root.clone().with_ns("child:1");
    let mut root_saved = vec![s.put(&root, cp(0).set("a", 1, int(1))).await];
    root_saved.push(s.put(&root, cp(1).set("a", 2, int(2))).await);
    let mut child_saved = Vec::new();
    for step in 0..3 {
        child_saved.push(s.put(&child, cp(step).set("b", 1, int(step))).await);
    }
    root_saved.reverse();
    child_saved.reverse();
    assert_eq!(s.listed(&root, all()).await, root_saved);
    assert_eq!(s.listed(&child, all()).await, child_saved);
}

/// Saving the same `(task_id, idx)` again keeps the first value.
pub async fn put_writes_is_idempotent(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let c = s.put(&s.thread("t"), cp(0).set("a", 1, int(1))).await;
    s.write(&c, "task-1", &[("a", json!(1)), ("b", json!(2))]).await;
    s.write(&c, "task-1", &[("a", json!(10)), ("b", json!(20))]).await;
    s.write(&c, "task-1", &[("a", json!(100))]).await;
    s.write(&c, "task-2", &[("a", json!(3))]).await;
    let expected = [w("task-1", "a", json!(1)), w("task-1", "b", json!(2)), w("task-2", "a", json!(3))];
    assert_eq!(s.writes(&c).await, expected);
}

/// `__error__` and `__interrupt__` writes round-trip, and a second write replaces the first.
pub async fn special_channel_writes_upsert(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let c = s.put(&s.thread("t"), cp(0).set("a", 1, int(1))).await;
    for (round, error) in [(1, "boom"), (2, "boom again")] {
        let interrupt = json!([{"value": "approve?", "id": "abc", "round": round}]);
        s.write(&c, "task", &[("__error__", json!(error))]).await;
        s.write(&c, "task", &[("__interrupt__", interrupt.clone())]).await;
        // `(task_id, idx)` order: `__interrupt__` is idx -3, `__error__` -1.
        let expected = [w("task", "__interrupt__", interrupt), w("task", "__error__", json!(error))];
        assert_eq!(s.writes(&c).await, expected, "round {round}");
    }
}

/// Writes are attached to the checkpoint id they were saved against, not to its successors.
pub async fn writes_belong_to_one_checkpoint(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let c1 = s.put(&config, cp(0).set("a", 1, int(1))).await;
    s.write(&c1, "task", &[("a", json!("w1"))]).await;
    let c2 = s.put(&c1, cp(1).set("a", 2, int(2))).await;
    assert_eq!(s.writes(&config).await, [], "the new checkpoint has no writes");
    s.write(&c2, "task", &[("a", json!("w2")), ("b", json!("w2b"))]).await;
    assert_eq!(s.writes(&c1).await, [w("task", "a", json!("w1"))]);
    let expected = [w("task", "a", json!("w2")), w("task", "b", json!("w2b"))];
    assert_eq!(s.writes(&c2).await, expected);
}

/// Pending writes come back ordered by `(task_id, idx)`; special channels have negative indexes.
pub async fn pending_writes_ordered_by_task_and_idx(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let c = s.put(&s.thread("t"), cp(0).set("a", 1, int(1))).await;
    let b_writes = [("x", json!(1)), ("y", json!(2)), ("z", json!(3))];
    s.write(&c, "task-b", &b_writes).await;
    s.write(&c, "task-a", &[("x", json!(4))]).await;
    s.write(&c, "task-a", &[("__error__", json!("e"))]).await;
    let expected = [
        w("task-a", "__error__", json!("e")),
        w("task-a", "x", json!(4)),
        w("task-b", "x", json!(1)),
        w("task-b", "y", json!(2)),
        w("task-b", "z", json!(3)),
    ];
    assert_eq!(s.writes(&c).await, expected);
}

/// `list` returns newest first by id, whatever the put order.
pub async fn list_newest_first(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let mut slots: Vec<Option<Cp>> = (0..5).map(|step| Some(cp(step))).collect();
    let mut expected: Vec<String> = slots.iter().flatten().map(Cp::id).collect();
    expected.reverse();
    for step in [2, 0, 4, 1, 3] {
        let c = slots[step].take().expect("each checkpoint is saved once");
        s.put(&config, c.set("a", step as u64 + 1, int(step as i64))).await;
    }
    let listed = s.list(&config, all()).await;
    assert_eq!(ids(&listed), expected);
    let steps: Vec<i64> = listed.iter().map(|t| t.metadata.step).collect();
    assert_eq!(steps, [4, 3, 2, 1, 0]);
    let addressed = |t: &CheckpointTuple| t.config.checkpoint_id == Some(t.checkpoint.id.clone());
    assert!(listed.iter().all(addressed));
}

/// Listed tuples are complete: config, values, metadata, parent and pending writes.
pub async fn list_returns_full_tuples(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let c1 = s.put(&config, cp(0).set("a", 1, one("a1"))).await;
    let mut m = meta(1);
    m.extra.insert("k".into(), json!("v"));
    let second = cp(1).keep("a", 1).set("b", 1, one("b1"));
    let c2 = s.put_meta(&c1, second, m.clone()).await;
    s.write(&c2, "task", &[("a", json!("w"))]).await;
    let listed = s.list(&config, all()).await;
    assert_eq!(listed.len(), 2);
    let (newest, oldest) = (&listed[0], &listed[1]);
    assert_eq!(newest.config, c2);
    assert_eq!(newest.parent_config, Some(c1.clone()));
    assert_eq!(newest.metadata, m);
    assert_eq!([item(newest, "a"), item(newest, "b")], ["a1", "b1"]);
    assert_eq!(writes(newest), [w("task", "a", json!("w"))]);
    assert_eq!((&oldest.config, &oldest.parent_config), (&c1, &None));
    assert_eq!(oldest.metadata, meta(0));
    assert_eq!(channels(oldest), ["a"]);
    assert_eq!(writes(oldest), []);
}

/// `before` keeps only ids strictly smaller than the given one.
pub async fn list_before(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let listed = s.listed(&config, all().before(id(&h[2]))).await;
    assert_eq!(listed, [h[1].clone(), h[0].clone()]);
}

/// `limit` returns the newest `limit` checkpoints; 0 returns none.
pub async fn list_limit(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let listed = s.listed(&config, all().limit(2)).await;
    assert_eq!(listed, [h[4].clone(), h[3].clone()]);
    assert_eq!(s.count(&config, all().limit(10)).await, 5);
    assert_eq!(s.count(&config, all().limit(0)).await, 0);
}

/// `limit` applies after `before`.
pub async fn list_limit_and_before(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let listed = s.listed(&config, all().before(id(&h[3])).limit(2)).await;
    assert_eq!(listed, [h[2].clone(), h[1].clone()]);
}

/// A filter on `source` keeps only matching checkpoints.
pub async fn list_filter_one_key(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let inputs = s.list(&config, filter(json!({"source": "input"}))).await;
    assert_eq!(ids(&inputs), [id(&h[0])]);
    assert_eq!(inputs[0].metadata.source, Input);
    let loops = s.ids(&config, filter(json!({"source": "loop"}))).await;
    assert_eq!(loops, [id(&h[4]), id(&h[3]), id(&h[2]), id(&h[1])]);
}

/// Every key of a filter must match.
pub async fn list_filter_several_keys(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let second = json!({"source": "loop", "step": 1, "run": "second"});
    assert_eq!(s.ids(&config, filter(second)).await, [id(&h[2])]);
    let first = json!({"source": "loop", "run": "first"});
    assert_eq!(s.ids(&config, filter(first)).await, [id(&h[1])]);
    let none = json!({"source": "input", "step": 1});
    assert_eq!(s.count(&config, filter(none)).await, 0);
}

/// A filter on a user key works like one on a built-in key, and combines with `limit`.
pub async fn list_filter_custom_key(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    let second = s.ids(&config, filter(json!({"run": "second"}))).await;
    assert_eq!(second, [id(&h[4]), id(&h[3]), id(&h[2])]);
    let first = s.ids(&config, filter(json!({"run": "first"})).limit(1)).await;
    assert_eq!(first, [id(&h[1])]);
    let third = filter(json!({"run": "third"}));
    assert_eq!(s.count(&config, third).await, 0);
}

/// A filter on `step` matches the step number, including -1.
pub async fn list_filter_step(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    let h = s.history(&config).await;
    for (saved, step) in h.iter().zip(-1_i64..) {
        let listed = s.list(&config, filter(json!({ "step": step }))).await;
        assert_eq!(ids(&listed), [id(saved)], "step {step}");
        assert_eq!(listed[0].metadata.step, step);
    }
}

/// Unknown threads and namespaces, unmatched filters and a `before` at the oldest id list nothing.
pub async fn list_empty_results(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("t");
    assert_eq!(s.count(&config, all()).await, 0);
    let h = s.history(&config).await;
    assert_eq!(s.count(&s.thread("other"), all()).await, 0);
    assert_eq!(s.count(&config.clone().with_ns("child:1"), all()).await, 0);
    assert_eq!(s.count(&config, filter(json!({"step": 99}))).await, 0);
    assert_eq!(s.count(&config, filter(json!({"source": "fork"}))).await, 0);
    assert_eq!(s.count(&config, all().before(id(&h[0]))).await, 0);
}

/// `list(None, ..)` returns the checkpoints of every thread and namespace, newest first.
pub async fn list_all_threads(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let a = s.put(&s.thread("a"), cp(0).set("x", 1, int(1))).await;
    let b = s.put(&s.thread("b"), cp(0).set("x", 1, int(2))).await;
    let a_child = s.thread("a").with_ns("child:1");
    let a_child = s.put(&a_child, cp(1).set("x", 1, int(3))).await;
    let listed = s.list_at(None, all()).await;
    // A shared server may hold other tests' threads: look only at this test's.
    let mine = listed.iter().filter(|t| t.config.thread_id.starts_with(&s.prefix));
    let mine: Vec<CheckpointConfig> = mine.map(|t| t.config.clone()).collect();
    assert_eq!(mine, [a_child, b, a]);
    let listed = ids(&listed);
    let newest_first = listed.windows(2).all(|pair| pair[0] >= pair[1]);
    assert!(newest_first, "not newest first: {listed:?}");
}

/// A config pinned to a checkpoint id lists only that checkpoint.
pub async fn list_pinned_checkpoint_id(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let h = s.history(&s.thread("t")).await;
    assert_eq!(s.listed(&h[2], all()).await, [h[2].clone()]);
}

/// `delete_thread` removes the checkpoints, values and writes of every namespace of the thread.
pub async fn delete_thread_removes_all_namespaces_and_writes(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let root = s.thread("t");
    let child = root.clone().with_ns("child:1");
    let old = cp(0);
    let old_id = old.id();
    let r1 = s.put(&root, old.set("a", 1, one("old"))).await;
    s.write(&r1, "task", &[("a", json!("w"))]).await;
    let r2 = s.put(&r1, cp(1).keep("a", 1)).await;
    let c1 = s.put(&child, cp(0).set("b", 1, one("old"))).await;
    s.write(&c1, "task", &[("b", json!("w"))]).await;

    s.delete(&root).await;
    for config in [&root, &child, &r1, &r2, &c1] {
        assert!(s.find(config).await.is_none(), "{config:?} survived");
    }
    assert_eq!(s.count(&root, all()).await, 0);
    assert_eq!(s.count(&child, all()).await, 0);
    // Saved again under the old id and version, it must find neither the old value nor writes.
    let again = s.put(&root, cp(0).with_id(&old_id).keep("a", 1)).await;
    let tuple = s.get(&again).await;
    assert_eq!(channels(&tuple), Vec::<&str>::new(), "values survived");
    assert_eq!(writes(&tuple), [], "writes survived");
}

/// `delete_thread` leaves other threads untouched.
pub async fn delete_thread_leaves_other_threads(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let (doomed, kept) = (s.thread("doomed"), s.thread("kept"));
    s.put(&doomed, cp(0).set("a", 1, one("doomed"))).await;
    let k1 = s.put(&kept, cp(0).set("a", 1, one("kept"))).await;
    s.write(&k1, "task", &[("a", json!("w"))]).await;
    let kept_child = kept.clone().with_ns("child:1");
    let k2 = s.put(&kept_child, cp(1).set("a", 1, one("kept child"))).await;

    s.delete(&doomed).await;
    let tuple = s.get(&kept).await;
    assert_eq!(tuple.config, k1);
    assert_eq!(item(&tuple, "a"), "kept");
    assert_eq!(writes(&tuple), [w("task", "a", json!("w"))]);
    assert_eq!(item(&s.get(&k2).await, "a"), "kept child");
    let listed = s.list_at(None, all()).await;
    let threads: Vec<&str> = listed.iter().map(|t| t.config.thread_id.as_str()).collect();
    assert!(!threads.contains(&doomed.thread_id.as_str()), "{threads:?}");
    let kept_count = threads.iter().filter(|t| **t == kept.thread_id).count();
    assert_eq!(kept_count, 2, "{threads:?}");
}

/// Metadata round-trips: every source, step, parents and user keys (unicode included).
pub async fn metadata_round_trip(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let mut parent = s.thread("t");
    let extra = json!({"run_id": "r-42", "用户": "张三", "score": 0.5, "ok": true, "n": -7});
    let Value::Object(extra) = extra else { unreachable!() };
    for (step, source) in (-1..).zip([Input, Loop, Update, Fork]) {
        let mut m = CheckpointMetadata::new(source, step);
        m.parents.insert(String::new(), checkpoint_id(0));
        m.parents.insert("node:abc".into(), checkpoint_id(1));
        m.extra.clone_from(&extra);
        let c = cp(step).set("a", 1, int(1));
        parent = s.put_meta(&parent, c, m.clone()).await;
        assert_eq!(s.get(&parent).await.metadata, m);
    }
    let plain = CheckpointMetadata::new(Loop, 9);
    let saved = s.put_meta(&parent, cp(9).keep("a", 1), plain.clone()).await;
    assert_eq!(s.get(&saved).await.metadata, plain);
}

/// Values of common types read back equal after decoding.
pub async fn values_of_several_types_round_trip(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let map = Map::from([("k".into(), vec!["v1".into()]), ("e".into(), vec![])]);
    let object = json!({"name": "x", "nested": {"list": [1, 2.5, null, "s"], "ok": false}});
    let c = cp(0)
        .set("int", 1, int(-42))
        .set("big", 1, int(i64::MAX))
        .set("float", 1, ChannelValue::new(0.1_f64))
        .set("bool", 1, ChannelValue::new(true))
        .set("text", 1, ChannelValue::new("hello".to_owned()))
        .set("empty_text", 1, ChannelValue::new(String::new()))
        .set("ints", 1, ChannelValue::new(vec![1_i64, -2, 3]))
        .set("map", 1, ChannelValue::new(map.clone()))
        .set("object", 1, ChannelValue::new(object.clone()))
        .set("some", 1, ChannelValue::new(Some(5_i64)))
        .set("none", 1, ChannelValue::new(None::<i64>));
    let t = s.get(&s.put(&s.thread("t"), c).await).await;
    assert_eq!(decoded!(t, "int", i64), -42);
    assert_eq!(decoded!(t, "big", i64), i64::MAX);
    assert_eq!(decoded!(t, "float", f64), 0.1);
    assert!(decoded!(t, "bool", bool));
    assert_eq!(decoded!(t, "text", String), "hello");
    assert_eq!(decoded!(t, "empty_text", String), "");
    assert_eq!(decoded!(t, "ints", Vec<i64>), [1, -2, 3]);
    assert_eq!(decoded!(t, "map", Map), map);
    assert_eq!(decoded!(t, "object", Value), object);
    assert_eq!(decoded!(t, "some", Option<i64>), Some(5));
    // A saver may store `None` as a null value or as no value; either reads back as `None`.
    let none = t.checkpoint.channel_values.get("none");
    let none = none.map(|v| v.decode::<Option<i64>>().expect("decode"));
    assert_eq!(none.flatten(), None);
}

/// A 10 KB value round-trips intact, as a channel value and as a write.
pub async fn large_value_round_trip(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let letter = |i: u32| char::from(b'a' + (i % 26) as u8);
    let text: String = (0..10_240).map(letter).collect();
    let line = |i: u32| format!("line {i:04} {}", "x".repeat(20));
    let lines: Vec<String> = (0..400).map(line).collect();
    let c = cp(0).set("text", 1, ChannelValue::new(text.clone()));
    let c = c.set("lines", 1, ChannelValue::new(lines.clone()));
    let saved = s.put(&s.thread("t"), c).await;
    s.write(&saved, "task", &[("text", json!(text))]).await;
    let tuple = s.get(&saved).await;
    assert_eq!(decoded!(tuple, "text", String), text);
    assert_eq!(decoded!(tuple, "lines", Vec<String>), lines);
    assert_eq!(writes(&tuple), [w("task", "text", json!(text))]);
}

/// Chinese (and other non-ASCII) text round-trips in thread ids, values and writes.
pub async fn unicode_values_and_thread_ids(saver: &dyn DynCheckpointer) {
    let s = Ctx::new(saver);
    let config = s.thread("线程-中文");
    let text = "你好，世界！🌏 Grüße";
    let map = Map::from([("问题".into(), vec!["答案".into(), "第二".into()])]);
    let c = cp(0).set("text", 1, ChannelValue::new(text.to_owned()));
    let saved = s.put(&config, c.set("map", 1, ChannelValue::new(map.clone()))).await;
    s.write(&saved, "任务", &[("text", json!("写入"))]).await;
    let tuple = s.get(&config).await;
    assert_eq!(tuple.config, saved);
    assert!(tuple.config.thread_id.ends_with("-线程-中文"));
    assert_eq!(decoded!(tuple, "text", String), text);
    assert_eq!(decoded!(tuple, "map", Map), map);
    assert_eq!(writes(&tuple), [w("任务", "text", json!("写入"))]);
    assert_eq!(s.listed(&config, all()).await, [saved]);
    s.delete(&config).await;
    assert!(s.find(&config).await.is_none());
}

/// `get_next_version` counts up from 1 and its versions sort as strings.
pub async fn next_version_increments(saver: &dyn DynCheckpointer) {
    let counter = |v: &str| v.split_once('.').map(|(n, _)| n.parse::<u64>());
    let v1 = saver.get_next_version(None);
    assert_eq!(counter(&v1), Some(Ok(1)), "{v1}");
    let v2 = saver.get_next_version(Some(&v1));
    assert_eq!(counter(&v2), Some(Ok(2)), "{v2}");
    assert!(v2 > v1);
    let v10 = saver.get_next_version(Some(&ver(9)));
    assert_eq!(counter(&v10), Some(Ok(10)), "{v10}");
    assert!(*v10 > *ver(9) && v10.starts_with(&format!("{:032}.", 10)));
}
