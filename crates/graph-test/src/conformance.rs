//! The checkpointer conformance suite: one `async fn` per required behaviour of a
//! [`Checkpointer`], after LangGraph's `langgraph-checkpoint-conformance` and saver tests.
//!
//! Run it against a backend with [`checkpointer_conformance!`](crate::checkpointer_conformance),
//! or call the functions one by one. Every function takes an empty or shared saver: it uses only
//! thread ids that start with a fresh random prefix, so the whole suite can run in parallel
//! against one database or Redis server.
//!
//! Values are read back with [`ChannelValue::decode`] and compared decoded, because a backend
//! that stores bytes returns [`ChannelValue::Encoded`] values rather than the live ones it was
//! given.

use std::collections::BTreeMap;

use graph_core::checkpoint::{
    checkpoint_id, uuid6, ChannelValue, ChannelVersions, Checkpoint, CheckpointConfig,
    CheckpointMetadata, CheckpointSource, CheckpointTuple, DynCheckpointer, ListOptions,
    CHECKPOINT_VERSION,
};
use serde_json::json;

/// Expands to a module `checkpointer_conformance` holding one `#[tokio::test]` per behaviour of
/// this module, each run on a saver made by `$factory`.
///
/// `$factory` is the path of an `async fn() -> T` where `T:`
/// [`Checkpointer`](graph_core::checkpoint::Checkpointer); it is resolved from the module that
/// invokes the macro. The invoking crate needs `tokio` with the `macros` and `rt` features.
///
/// # Example
/// ```ignore
/// async fn saver() -> graph_core::checkpoint::InMemoryCheckpointer {
///     graph_core::checkpoint::InMemoryCheckpointer::new()
/// }
/// graph_test::checkpointer_conformance!(saver);
/// ```
#[macro_export]
macro_rules! checkpointer_conformance {
    ($factory:path) => {
        $crate::checkpointer_conformance!(@tests $factory;
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
        );
    };
    (@tests $factory:path; $($test:ident),* $(,)?) => {
        /// The checkpointer conformance suite (`graph_test::checkpointer_conformance!`).
        mod checkpointer_conformance {
            // Brings the factory into scope when it was given as a bare name.
            #[allow(unused_imports)]
            use super::*;
            $(
                #[::tokio::test]
                async fn $test() {
                    let saver = $factory().await;
                    $crate::conformance::$test(&saver).await;
                }
            )*
        }
    };
}

/// Thread ids private to one test: a random prefix plus a label.
struct Threads(String);

impl Threads {
    fn new() -> Self {
        // uuid6 is unique within the process (its timestamp strictly increases) and carries 48
        // random bits, which keeps concurrent test processes apart on a shared server.
        Self(format!("conf-{}", uuid6(0)))
    }
    fn id(&self, label: &str) -> String {
        format!("{}-{label}", self.0)
    }
    fn root(&self, label: &str) -> CheckpointConfig {
        CheckpointConfig::thread(self.id(label))
    }
}

/// A checkpoint under construction plus the `new_versions` to save it with.
struct Cp {
    step: i64,
    checkpoint: Checkpoint,
    new_versions: ChannelVersions,
}

/// An empty checkpoint with a fresh id for `step`.
fn cp(step: i64) -> Cp {
    Cp {
        step,
        checkpoint: Checkpoint {
            v: CHECKPOINT_VERSION,
            id: checkpoint_id(step),
            ts: "2026-01-02T03:04:05.678901+00:00".to_owned(),
            ..Checkpoint::default()
        },
        new_versions: ChannelVersions::new(),
    }
}

/// `cp` saved under an existing `id` (the same id in another namespace, or after a delete).
fn with_id(mut cp: Cp, id: String) -> Cp {
    cp.checkpoint.id = id;
    cp
}

/// LangGraph-shaped version `n`.
fn ver(n: u64) -> String {
    format!("{n:032}.0.{n}")
}

impl Cp {
    /// `channel` gets `value` at a new version `n`.
    fn set(mut self, channel: &str, n: u64, value: ChannelValue) -> Self {
        self.checkpoint
            .channel_values
            .insert(channel.to_owned(), value);
        self.checkpoint
            .channel_versions
            .insert(channel.to_owned(), ver(n));
        self.new_versions.insert(channel.to_owned(), ver(n));
        self
    }
    /// `channel` keeps version `n`, whose value an earlier checkpoint saved.
    fn keep(mut self, channel: &str, n: u64) -> Self {
        self.checkpoint
            .channel_versions
            .insert(channel.to_owned(), ver(n));
        self
    }
    fn id(&self) -> String {
        self.checkpoint.id.clone()
    }
}

fn meta(step: i64) -> CheckpointMetadata {
    let source = if step < 0 {
        CheckpointSource::Input
    } else {
        CheckpointSource::Loop
    };
    CheckpointMetadata::new(source, step)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Saves `cp` with the metadata of its step.
async fn put(saver: &dyn DynCheckpointer, config: &CheckpointConfig, cp: Cp) -> CheckpointConfig {
    let metadata = meta(cp.step);
    put_meta(saver, config, cp, metadata).await
}

async fn put_meta(
    saver: &dyn DynCheckpointer,
    config: &CheckpointConfig,
    cp: Cp,
    metadata: CheckpointMetadata,
) -> CheckpointConfig {
    let id = cp.id();
    let saved = saver
        .put(config, cp.checkpoint, metadata, cp.new_versions)
        .await
        .expect("put failed");
    assert_eq!(
        saved.checkpoint_id.as_deref(),
        Some(id.as_str()),
        "put must return the new checkpoint's id"
    );
    saved
}

async fn get(saver: &dyn DynCheckpointer, config: &CheckpointConfig) -> CheckpointTuple {
    saver
        .get_tuple(config)
        .await
        .expect("get_tuple failed")
        .unwrap_or_else(|| panic!("no checkpoint at {config:?}"))
}

async fn list(
    saver: &dyn DynCheckpointer,
    config: &CheckpointConfig,
    options: ListOptions,
) -> Vec<CheckpointTuple> {
    saver
        .list(Some(config), options)
        .await
        .expect("list failed")
}

fn ids(tuples: &[CheckpointTuple]) -> Vec<String> {
    tuples.iter().map(|t| t.checkpoint.id.clone()).collect()
}

/// The value of `channel`, which must be present.
fn value<'a>(tuple: &'a CheckpointTuple, channel: &str) -> &'a ChannelValue {
    tuple
        .checkpoint
        .channel_values
        .get(channel)
        .unwrap_or_else(|| {
            let present: Vec<_> = tuple.checkpoint.channel_values.keys().collect();
            panic!(
                "channel `{channel}` missing from {}; present: {present:?}",
                tuple.checkpoint.id
            )
        })
}

fn strs(v: &ChannelValue) -> Vec<String> {
    v.decode::<Vec<String>>().expect("not a list of strings")
}

/// `(task_id, channel, value as JSON)` of each pending write, in order.
fn writes(tuple: &CheckpointTuple) -> Vec<(String, String, serde_json::Value)> {
    tuple
        .pending_writes
        .iter()
        .map(|w| {
            (
                w.task_id.clone(),
                w.channel.clone(),
                w.value.decode::<serde_json::Value>().expect("decode write"),
            )
        })
        .collect()
}

fn write(
    task: &str,
    channel: &str,
    value: serde_json::Value,
) -> (String, String, serde_json::Value) {
    (task.to_owned(), channel.to_owned(), value)
}

async fn put_writes(
    saver: &dyn DynCheckpointer,
    config: &CheckpointConfig,
    task: &str,
    items: Vec<(&str, serde_json::Value)>,
) {
    let items = items
        .into_iter()
        .map(|(c, v)| (c.to_owned(), ChannelValue::new(v)))
        .collect();
    saver
        .put_writes(config, items, task, "")
        .await
        .expect("put_writes failed");
}

fn filter(value: serde_json::Value) -> ListOptions {
    let serde_json::Value::Object(map) = value else {
        panic!("filter must be an object")
    };
    ListOptions::new().filter(map)
}

/// Saves steps -1..=3 of one thread as a parent chain (source `input` then `loop`, custom key
/// `run` = `first` for steps < 1 and `second` after); returns their configs, oldest first.
async fn history(saver: &dyn DynCheckpointer, config: &CheckpointConfig) -> Vec<CheckpointConfig> {
    let mut parent = config.clone();
    let mut out = Vec::new();
    for step in -1..=3_i64 {
        let mut m = meta(step);
        m.extra.insert(
            "run".into(),
            json!(if step < 1 { "first" } else { "second" }),
        );
        let n = (step + 2) as u64;
        parent = put_meta(
            saver,
            &parent,
            cp(step).set("a", n, ChannelValue::new(vec![format!("s{step}")])),
            m,
        )
        .await;
        out.push(parent.clone());
    }
    out
}

/// `put` returns the thread, namespace and new id; the checkpoint reads back at that address.
pub async fn put_returns_config_with_new_id(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let first = cp(-1).set("a", 1, ChannelValue::new(strings(&["x"])));
    let first_id = first.id();
    let saved = put(saver, &config, first).await;
    assert_eq!(saved, config.clone().with_checkpoint_id(first_id.clone()));
    let tuple = get(saver, &saved).await;
    assert_eq!(tuple.config, saved);
    assert_eq!(tuple.checkpoint.id, first_id);
    // With a parent in the config, the returned id is still the new checkpoint's.
    let second = cp(0).keep("a", 1);
    let second_id = second.id();
    let saved2 = put(saver, &saved, second).await;
    assert_eq!(saved2, config.with_checkpoint_id(second_id));
}

/// `get_tuple` without an id returns the checkpoint with the greatest id, whatever the put order.
pub async fn get_tuple_without_id_returns_newest(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let (a, b, c) = (cp(0), cp(1), cp(2));
    let newest = c.id();
    put(saver, &config, b.set("x", 2, ChannelValue::new(2_i64))).await;
    put(saver, &config, c.set("x", 3, ChannelValue::new(3_i64))).await;
    put(saver, &config, a.set("x", 1, ChannelValue::new(1_i64))).await;
    let tuple = get(saver, &config).await;
    assert_eq!(tuple.checkpoint.id, newest);
    assert_eq!(tuple.config, config.with_checkpoint_id(newest));
    assert_eq!(value(&tuple, "x").decode::<i64>().unwrap(), 3);
}

/// An unknown id, thread or namespace yields `None`.
pub async fn get_tuple_unknown_is_none(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let saved = put(saver, &config, cp(0).set("a", 1, ChannelValue::new(1_i64))).await;
    assert!(saver.get_tuple(&saved).await.unwrap().is_some());
    let unknown = config.clone().with_checkpoint_id(checkpoint_id(0));
    assert!(
        saver.get_tuple(&unknown).await.unwrap().is_none(),
        "unknown id"
    );
    assert!(
        saver.get_tuple(&t.root("other")).await.unwrap().is_none(),
        "unknown thread"
    );
    let other_ns = saved.clone().with_ns("child:1");
    assert!(
        saver.get_tuple(&other_ns).await.unwrap().is_none(),
        "unknown namespace"
    );
}

/// `parent_config` is the `checkpoint_id` of the config given to `put`, in the same namespace.
pub async fn get_tuple_returns_parent_config(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    for config in [t.root("t"), t.root("t").with_ns("child:1")] {
        let first = put(saver, &config, cp(-1).set("a", 1, ChannelValue::new(1_i64))).await;
        let second = put(saver, &first, cp(0).keep("a", 1)).await;
        assert_eq!(get(saver, &first).await.parent_config, None);
        assert_eq!(get(saver, &second).await.parent_config, Some(first.clone()));
        assert_eq!(get(saver, &config).await.parent_config, Some(first));
    }
}

/// Every field of a checkpoint survives a round trip.
pub async fn checkpoint_fields_round_trip(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let mut c = cp(3)
        .set("a", 4, ChannelValue::new(strings(&["v"])))
        .keep("b", 2);
    c.checkpoint.versions_seen = BTreeMap::from([
        ("__input__".to_owned(), ChannelVersions::new()),
        (
            "node".to_owned(),
            ChannelVersions::from([("a".to_owned(), ver(3)), ("b".to_owned(), ver(2))]),
        ),
    ]);
    c.checkpoint.updated_channels = Some(strings(&["a"]));
    let expected = c.checkpoint.clone();
    let saved = put(saver, &config, c).await;
    let got = get(saver, &saved).await.checkpoint;
    assert_eq!(got.v, expected.v);
    assert_eq!(got.id, expected.id);
    assert_eq!(got.ts, expected.ts);
    assert_eq!(got.channel_versions, expected.channel_versions);
    assert_eq!(got.versions_seen, expected.versions_seen);
    assert_eq!(got.updated_channels, expected.updated_channels);
    // `b` has a version but no saved value: it has no value.
    assert_eq!(got.channel_values.keys().collect::<Vec<_>>(), ["a"]);

    let saved = put(saver, &saved, cp(4).keep("a", 4)).await;
    assert_eq!(get(saver, &saved).await.checkpoint.updated_channels, None);
}

/// Only channels in `new_versions` get a new value; the others are read from the value saved
/// with their version by an older checkpoint, which itself keeps its own values.
pub async fn incremental_channel_update(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    // Lists, not primitives: SQL savers inline primitives in each checkpoint (as LangGraph does),
    // which would bypass the blob path this test is about.
    let list = |s: &str| ChannelValue::new(strings(&[s]));
    let c1 = put(
        saver,
        &config,
        cp(0).set("a", 1, list("a1")).set("b", 1, list("b1")),
    )
    .await;
    let c2 = put(saver, &c1, cp(1).set("a", 2, list("a2")).keep("b", 1)).await;
    let c3 = put(saver, &c2, cp(2).keep("a", 2).set("b", 2, list("b2"))).await;

    let t1 = get(saver, &c1).await;
    assert_eq!(
        (strs(value(&t1, "a")), strs(value(&t1, "b"))),
        (strings(&["a1"]), strings(&["b1"]))
    );
    let t2 = get(saver, &c2).await;
    assert_eq!(
        (strs(value(&t2, "a")), strs(value(&t2, "b"))),
        (strings(&["a2"]), strings(&["b1"]))
    );
    let t3 = get(saver, &c3).await;
    assert_eq!(
        (strs(value(&t3, "a")), strs(value(&t3, "b"))),
        (strings(&["a2"]), strings(&["b2"]))
    );
}

/// A channel dropped from `channel_versions` has no value in the new checkpoint only.
pub async fn channel_removed_from_versions_disappears(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let list = |s: &str| ChannelValue::new(strings(&[s]));
    let c1 = put(
        saver,
        &config,
        cp(0).set("a", 1, list("a1")).set("b", 1, list("b1")),
    )
    .await;
    let c2 = put(saver, &c1, cp(1).set("a", 2, list("a2"))).await;
    let t2 = get(saver, &c2).await;
    assert_eq!(
        t2.checkpoint.channel_values.keys().collect::<Vec<_>>(),
        ["a"]
    );
    assert!(!t2.checkpoint.channel_versions.contains_key("b"));
    assert_eq!(strs(value(&get(saver, &c1).await, "b")), strings(&["b1"]));
}

/// A `Null` value (Python's `None`, carried by edge channels) reads back as null; a channel in
/// `new_versions` without a value (LangGraph's `"empty"` blob) reads back as absent.
pub async fn null_value_kept_and_missing_value_omitted(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let mut c =
        cp(0)
            .set("branch:to:x", 1, ChannelValue::Null)
            .set("a", 1, ChannelValue::new(1_i64));
    c.checkpoint.channel_versions.insert("empty".into(), ver(1));
    c.new_versions.insert("empty".into(), ver(1));
    let saved = put(saver, &t.root("t"), c).await;
    let tuple = get(saver, &saved).await;
    assert!(
        value(&tuple, "branch:to:x").is_null(),
        "{:?}",
        tuple.checkpoint.channel_values
    );
    assert!(!tuple.checkpoint.channel_values.contains_key("empty"));
    assert_eq!(tuple.checkpoint.channel_versions.len(), 3);
}

/// The same checkpoint id and channel version in two namespaces are two separate checkpoints.
pub async fn namespaces_isolate_checkpoints(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let root = t.root("t");
    let child = root.clone().with_ns("child:1");
    let shared = cp(0);
    let id = shared.id();
    let child_cp = with_id(cp(0), id.clone());
    put(
        saver,
        &root,
        shared.set("a", 1, ChannelValue::new(strings(&["root"]))),
    )
    .await;
    put(
        saver,
        &child,
        child_cp.set("a", 1, ChannelValue::new(strings(&["child"]))),
    )
    .await;
    let newer_child = put(
        saver,
        &child,
        cp(1).set("a", 2, ChannelValue::new(strings(&["child2"]))),
    )
    .await;

    let r = get(saver, &root).await;
    assert_eq!(
        (r.checkpoint.id.as_str(), r.config.checkpoint_ns.as_str()),
        (id.as_str(), "")
    );
    assert_eq!(strs(value(&r, "a")), strings(&["root"]));
    let c = get(saver, &child.clone().with_checkpoint_id(id.clone())).await;
    assert_eq!(c.config.checkpoint_ns, "child:1");
    assert_eq!(strs(value(&c, "a")), strings(&["child"]));
    assert_eq!(get(saver, &child).await.config, newer_child);
    assert!(saver
        .get_tuple(&newer_child.clone().with_ns(""))
        .await
        .unwrap()
        .is_none());
}

/// Writes saved against a checkpoint id in one namespace are invisible in another.
pub async fn namespaces_isolate_writes(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let root = t.root("t");
    let child = root.clone().with_ns("child:1");
    let c = cp(0);
    let id = c.id();
    let child_cp = with_id(cp(0), id);
    let root_saved = put(saver, &root, c.set("a", 1, ChannelValue::new(1_i64))).await;
    let child_saved = put(
        saver,
        &child,
        child_cp.set("a", 1, ChannelValue::new(2_i64)),
    )
    .await;
    put_writes(saver, &root_saved, "task", vec![("a", json!("root"))]).await;
    put_writes(
        saver,
        &child_saved,
        "task",
        vec![("a", json!("child")), ("b", json!("child b"))],
    )
    .await;
    assert_eq!(
        writes(&get(saver, &root_saved).await),
        [write("task", "a", json!("root"))]
    );
    assert_eq!(
        writes(&get(saver, &child_saved).await),
        [
            write("task", "a", json!("child")),
            write("task", "b", json!("child b"))
        ]
    );
}

/// `list` returns only the checkpoints of the namespace in the config.
pub async fn list_by_namespace(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let root = t.root("t");
    let child = root.clone().with_ns("child:1");
    let root_ids = vec![
        put(saver, &root, cp(0).set("a", 1, ChannelValue::new(1_i64))).await,
        put(saver, &root, cp(1).set("a", 2, ChannelValue::new(2_i64))).await,
    ];
    let mut child_ids = Vec::new();
    for step in 0..3 {
        child_ids.push(put(saver, &child, cp(step).set("b", 1, ChannelValue::new(step))).await);
    }
    let listed_root = list(saver, &root, ListOptions::new()).await;
    let listed_child = list(saver, &child, ListOptions::new()).await;
    assert_eq!(
        listed_root
            .iter()
            .map(|t| t.config.clone())
            .collect::<Vec<_>>(),
        root_ids.into_iter().rev().collect::<Vec<_>>()
    );
    assert_eq!(
        listed_child
            .iter()
            .map(|t| t.config.clone())
            .collect::<Vec<_>>(),
        child_ids.into_iter().rev().collect::<Vec<_>>()
    );
}

/// Saving the same `(task_id, idx)` again keeps the first value.
pub async fn put_writes_is_idempotent(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let saved = put(
        saver,
        &t.root("t"),
        cp(0).set("a", 1, ChannelValue::new(1_i64)),
    )
    .await;
    put_writes(
        saver,
        &saved,
        "task-1",
        vec![("a", json!(1)), ("b", json!(2))],
    )
    .await;
    put_writes(
        saver,
        &saved,
        "task-1",
        vec![("a", json!(10)), ("b", json!(20))],
    )
    .await;
    put_writes(saver, &saved, "task-1", vec![("a", json!(100))]).await;
    put_writes(saver, &saved, "task-2", vec![("a", json!(3))]).await;
    assert_eq!(
        writes(&get(saver, &saved).await),
        [
            write("task-1", "a", json!(1)),
            write("task-1", "b", json!(2)),
            write("task-2", "a", json!(3))
        ]
    );
}

/// `__error__` and `__interrupt__` writes round-trip, and a second write replaces the first.
pub async fn special_channel_writes_upsert(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let saved = put(
        saver,
        &t.root("t"),
        cp(0).set("a", 1, ChannelValue::new(1_i64)),
    )
    .await;
    let interrupt = json!([{"value": "approve?", "id": "abc123"}]);
    put_writes(saver, &saved, "task", vec![("__error__", json!("boom"))]).await;
    put_writes(
        saver,
        &saved,
        "task",
        vec![("__interrupt__", interrupt.clone())],
    )
    .await;
    let got = writes(&get(saver, &saved).await);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got.contains(&write("task", "__error__", json!("boom"))),
        "{got:?}"
    );
    assert!(
        got.contains(&write("task", "__interrupt__", interrupt)),
        "{got:?}"
    );

    put_writes(saver, &saved, "task", vec![("__error__", json!("boom 2"))]).await;
    put_writes(
        saver,
        &saved,
        "task",
        vec![("__interrupt__", json!([{"value": "again?", "id": "def"}]))],
    )
    .await;
    let got = writes(&get(saver, &saved).await);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(
        got.contains(&write("task", "__error__", json!("boom 2"))),
        "{got:?}"
    );
    assert!(
        got.contains(&write(
            "task",
            "__interrupt__",
            json!([{"value": "again?", "id": "def"}])
        )),
        "{got:?}"
    );
}

/// Writes are attached to the checkpoint id they were saved against, not to its successors.
pub async fn writes_belong_to_one_checkpoint(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let c1 = put(saver, &config, cp(0).set("a", 1, ChannelValue::new(1_i64))).await;
    put_writes(saver, &c1, "task", vec![("a", json!("w1"))]).await;
    let c2 = put(saver, &c1, cp(1).set("a", 2, ChannelValue::new(2_i64))).await;
    assert!(
        get(saver, &config).await.pending_writes.is_empty(),
        "the newest checkpoint has no writes yet"
    );
    put_writes(
        saver,
        &c2,
        "task",
        vec![("a", json!("w2")), ("b", json!("w2b"))],
    )
    .await;
    assert_eq!(
        writes(&get(saver, &c1).await),
        [write("task", "a", json!("w1"))]
    );
    assert_eq!(writes(&get(saver, &c2).await).len(), 2);
}

/// Pending writes come back ordered by `(task_id, idx)`; special channels have negative indexes.
pub async fn pending_writes_ordered_by_task_and_idx(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let saved = put(
        saver,
        &t.root("t"),
        cp(0).set("a", 1, ChannelValue::new(1_i64)),
    )
    .await;
    put_writes(
        saver,
        &saved,
        "task-b",
        vec![("x", json!(1)), ("y", json!(2)), ("z", json!(3))],
    )
    .await;
    put_writes(saver, &saved, "task-a", vec![("x", json!(4))]).await;
    put_writes(saver, &saved, "task-a", vec![("__error__", json!("e"))]).await;
    assert_eq!(
        writes(&get(saver, &saved).await),
        [
            write("task-a", "__error__", json!("e")),
            write("task-a", "x", json!(4)),
            write("task-b", "x", json!(1)),
            write("task-b", "y", json!(2)),
            write("task-b", "z", json!(3)),
        ]
    );
}

/// `list` returns newest first by id, whatever the put order.
pub async fn list_newest_first(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let cps: Vec<Cp> = (0..5).map(cp).collect();
    let mut expected: Vec<String> = cps.iter().map(Cp::id).collect();
    expected.reverse();
    let mut slots: Vec<Option<Cp>> = cps.into_iter().map(Some).collect();
    for i in [2, 0, 4, 1, 3] {
        let c = slots[i].take().expect("each checkpoint is saved once");
        put(
            saver,
            &config,
            c.set("a", i as u64 + 1, ChannelValue::new(i as i64)),
        )
        .await;
    }
    let listed = list(saver, &config, ListOptions::new()).await;
    assert_eq!(ids(&listed), expected);
    assert_eq!(
        listed.iter().map(|t| t.metadata.step).collect::<Vec<_>>(),
        [4, 3, 2, 1, 0]
    );
    assert!(listed
        .iter()
        .all(|t| t.config.checkpoint_id.as_ref() == Some(&t.checkpoint.id)));
}

/// Listed tuples are complete: config, values, metadata, parent and pending writes.
pub async fn list_returns_full_tuples(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let c1 = put(
        saver,
        &config,
        cp(0).set("a", 1, ChannelValue::new(strings(&["a1"]))),
    )
    .await;
    let mut m = meta(1);
    m.extra.insert("k".into(), json!("v"));
    let c2 = put_meta(
        saver,
        &c1,
        cp(1)
            .keep("a", 1)
            .set("b", 1, ChannelValue::new(strings(&["b1"]))),
        m.clone(),
    )
    .await;
    put_writes(saver, &c2, "task", vec![("a", json!("w"))]).await;
    let listed = list(saver, &config, ListOptions::new()).await;
    assert_eq!(listed.len(), 2);
    let newest = &listed[0];
    assert_eq!(newest.config, c2);
    assert_eq!(newest.parent_config, Some(c1.clone()));
    assert_eq!(newest.metadata, m);
    assert_eq!(
        (strs(value(newest, "a")), strs(value(newest, "b"))),
        (strings(&["a1"]), strings(&["b1"]))
    );
    assert_eq!(writes(newest), [write("task", "a", json!("w"))]);
    assert_eq!(listed[1].config, c1);
    assert_eq!(listed[1].parent_config, None);
    assert!(listed[1].pending_writes.is_empty());
}

/// `before` keeps only ids strictly smaller than the given one.
pub async fn list_before(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let h = history(saver, &config).await;
    let before = h[2].checkpoint_id.clone().unwrap();
    let listed = list(saver, &config, ListOptions::new().before(before)).await;
    assert_eq!(
        listed.iter().map(|t| t.config.clone()).collect::<Vec<_>>(),
        [h[1].clone(), h[0].clone()]
    );
}

/// `limit` returns the newest `limit` checkpoints; 0 returns none.
pub async fn list_limit(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let h = history(saver, &config).await;
    let listed = list(saver, &config, ListOptions::new().limit(2)).await;
    assert_eq!(
        listed.iter().map(|t| t.config.clone()).collect::<Vec<_>>(),
        [h[4].clone(), h[3].clone()]
    );
    assert_eq!(
        list(saver, &config, ListOptions::new().limit(10))
            .await
            .len(),
        5
    );
    assert!(list(saver, &config, ListOptions::new().limit(0))
        .await
        .is_empty());
}

/// `limit` applies after `before`.
pub async fn list_limit_and_before(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let h = history(saver, &config).await;
    let before = h[3].checkpoint_id.clone().unwrap();
    let listed = list(saver, &config, ListOptions::new().before(before).limit(2)).await;
    assert_eq!(
        listed.iter().map(|t| t.config.clone()).collect::<Vec<_>>(),
        [h[2].clone(), h[1].clone()]
    );
}

/// A filter on `source` keeps only matching checkpoints.
pub async fn list_filter_one_key(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let h = history(saver, &config).await;
    let inputs = list(saver, &config, filter(json!({"source": "input"}))).await;
    assert_eq!(
        inputs.iter().map(|t| t.config.clone()).collect::<Vec<_>>(),
        [h[0].clone()]
    );
    assert_eq!(inputs[0].metadata.source, CheckpointSource::Input);
    assert_eq!(
        list(saver, &config, filter(json!({"source": "loop"})))
            .await
            .len(),
        4
    );
}

/// Every key of a filter must match.
pub async fn list_filter_several_keys(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let h = history(saver, &config).await;
    let listed = list(
        saver,
        &config,
        filter(json!({"source": "loop", "step": 1, "run": "second"})),
    )
    .await;
    assert_eq!(ids(&listed), [h[2].checkpoint_id.clone().unwrap()]);
    assert!(list(
        saver,
        &config,
        filter(json!({"source": "input", "step": 1}))
    )
    .await
    .is_empty());
    let firsts = list(
        saver,
        &config,
        filter(json!({"source": "loop", "run": "first"})),
    )
    .await;
    assert_eq!(ids(&firsts), [h[1].checkpoint_id.clone().unwrap()]);
}

/// A filter on a user key works like one on a built-in key, and combines with `limit`.
pub async fn list_filter_custom_key(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let h = history(saver, &config).await;
    let second = list(saver, &config, filter(json!({"run": "second"}))).await;
    assert_eq!(
        ids(&second),
        [&h[4], &h[3], &h[2]].map(|c| c.checkpoint_id.clone().unwrap())
    );
    let newest_first = list(saver, &config, filter(json!({"run": "first"})).limit(1)).await;
    assert_eq!(ids(&newest_first), [h[1].checkpoint_id.clone().unwrap()]);
    assert!(list(saver, &config, filter(json!({"run": "third"})))
        .await
        .is_empty());
}

/// A filter on `step` matches the step number, including -1.
pub async fn list_filter_step(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let h = history(saver, &config).await;
    for (i, step) in (-1..=3_i64).enumerate() {
        let listed = list(saver, &config, filter(json!({ "step": step }))).await;
        assert_eq!(
            ids(&listed),
            [h[i].checkpoint_id.clone().unwrap()],
            "step {step}"
        );
        assert_eq!(listed[0].metadata.step, step);
    }
}

/// Unknown threads and namespaces, unmatched filters and a `before` at the oldest id list nothing.
pub async fn list_empty_results(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    assert!(list(saver, &config, ListOptions::new()).await.is_empty());
    let h = history(saver, &config).await;
    assert!(list(saver, &t.root("other"), ListOptions::new())
        .await
        .is_empty());
    assert!(list(
        saver,
        &config.clone().with_ns("child:1"),
        ListOptions::new()
    )
    .await
    .is_empty());
    assert!(list(saver, &config, filter(json!({"step": 99})))
        .await
        .is_empty());
    assert!(list(saver, &config, filter(json!({"source": "fork"})))
        .await
        .is_empty());
    let oldest = h[0].checkpoint_id.clone().unwrap();
    assert!(list(saver, &config, ListOptions::new().before(oldest))
        .await
        .is_empty());
}

/// `list(None, ..)` returns the checkpoints of every thread and namespace, newest first.
pub async fn list_all_threads(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let a = put(
        saver,
        &t.root("a"),
        cp(0).set("x", 1, ChannelValue::new(1_i64)),
    )
    .await;
    let b = put(
        saver,
        &t.root("b"),
        cp(0).set("x", 1, ChannelValue::new(2_i64)),
    )
    .await;
    let a_child = put(
        saver,
        &t.root("a").with_ns("child:1"),
        cp(1).set("x", 1, ChannelValue::new(3_i64)),
    )
    .await;
    let all = saver
        .list(None, ListOptions::new())
        .await
        .expect("list failed");
    // A shared server may hold other tests' threads: look only at this test's.
    let mine: Vec<CheckpointConfig> = all
        .iter()
        .filter(|t2| t2.config.thread_id.starts_with(&t.0))
        .map(|t2| t2.config.clone())
        .collect();
    assert_eq!(mine, [a_child, b, a]);
    let all_ids = ids(&all);
    assert!(
        all_ids.windows(2).all(|w| w[0] >= w[1]),
        "not newest first: {all_ids:?}"
    );
}

/// A config pinned to a checkpoint id lists only that checkpoint.
pub async fn list_pinned_checkpoint_id(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let h = history(saver, &config).await;
    let listed = list(saver, &h[2], ListOptions::new()).await;
    assert_eq!(
        listed.iter().map(|t| t.config.clone()).collect::<Vec<_>>(),
        [h[2].clone()]
    );
}

/// `delete_thread` removes the checkpoints, values and writes of every namespace of the thread.
pub async fn delete_thread_removes_all_namespaces_and_writes(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let root = t.root("t");
    let child = root.clone().with_ns("child:1");
    let list_a = || ChannelValue::new(strings(&["old"]));
    let old = cp(0);
    let old_id = old.id();
    let r1 = put(saver, &root, old.set("a", 1, list_a())).await;
    put_writes(saver, &r1, "task", vec![("a", json!("w"))]).await;
    let r2 = put(saver, &r1, cp(1).keep("a", 1)).await;
    let c1 = put(saver, &child, cp(0).set("b", 1, list_a())).await;
    put_writes(saver, &c1, "task", vec![("b", json!("w"))]).await;

    saver
        .delete_thread(&root.thread_id)
        .await
        .expect("delete_thread failed");
    for config in [&root, &child, &r1, &r2, &c1] {
        assert!(
            saver.get_tuple(config).await.unwrap().is_none(),
            "{config:?} survived"
        );
    }
    assert!(list(saver, &root, ListOptions::new()).await.is_empty());
    assert!(list(saver, &child, ListOptions::new()).await.is_empty());

    // Saving again under the old id and version must find neither the old value nor old writes.
    let again = with_id(cp(0), old_id);
    let again = put(saver, &root, again.keep("a", 1)).await;
    let tuple = get(saver, &again).await;
    assert!(
        tuple.checkpoint.channel_values.is_empty(),
        "values survived: {:?}",
        tuple.checkpoint.channel_values
    );
    assert!(tuple.pending_writes.is_empty(), "writes survived");
}

/// `delete_thread` leaves other threads untouched.
pub async fn delete_thread_leaves_other_threads(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let (doomed, kept) = (t.root("doomed"), t.root("kept"));
    let list_v = |s: &str| ChannelValue::new(strings(&[s]));
    put(saver, &doomed, cp(0).set("a", 1, list_v("doomed"))).await;
    let k1 = put(saver, &kept, cp(0).set("a", 1, list_v("kept"))).await;
    put_writes(saver, &k1, "task", vec![("a", json!("w"))]).await;
    let k2 = put(
        saver,
        &kept.clone().with_ns("child:1"),
        cp(1).set("a", 1, list_v("kept child")),
    )
    .await;

    saver
        .delete_thread(&doomed.thread_id)
        .await
        .expect("delete_thread failed");
    let tuple = get(saver, &kept).await;
    assert_eq!(tuple.config, k1);
    assert_eq!(strs(value(&tuple, "a")), strings(&["kept"]));
    assert_eq!(writes(&tuple), [write("task", "a", json!("w"))]);
    assert_eq!(
        strs(value(&get(saver, &k2).await, "a")),
        strings(&["kept child"])
    );
    let all = saver.list(None, ListOptions::new()).await.unwrap();
    assert!(all.iter().all(|t2| t2.config.thread_id != doomed.thread_id));
    assert_eq!(
        all.iter()
            .filter(|t2| t2.config.thread_id == kept.thread_id)
            .count(),
        2
    );
}

/// Metadata round-trips: every source, step, parents and user keys (unicode included).
pub async fn metadata_round_trip(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("t");
    let mut parent = config.clone();
    let sources = [
        CheckpointSource::Input,
        CheckpointSource::Loop,
        CheckpointSource::Update,
        CheckpointSource::Fork,
    ];
    for (step, source) in (-1..).zip(sources) {
        let mut m = CheckpointMetadata::new(source, step);
        m.parents.insert(String::new(), checkpoint_id(0));
        m.parents.insert("node:abc".into(), checkpoint_id(1));
        m.extra.insert("run_id".into(), json!("run-42"));
        m.extra.insert("用户".into(), json!("张三"));
        m.extra.insert("score".into(), json!(0.5));
        m.extra.insert("flag".into(), json!(true));
        m.extra.insert("count".into(), json!(-7));
        parent = put_meta(
            saver,
            &parent,
            cp(step).set("a", 1, ChannelValue::new(1_i64)),
            m.clone(),
        )
        .await;
        assert_eq!(get(saver, &parent).await.metadata, m);
    }
    let plain = CheckpointMetadata::new(CheckpointSource::Loop, 9);
    let saved = put_meta(saver, &parent, cp(9).keep("a", 1), plain.clone()).await;
    assert_eq!(get(saver, &saved).await.metadata, plain);
}

/// Values of common types read back equal after decoding.
pub async fn values_of_several_types_round_trip(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let map = BTreeMap::from([
        ("k".to_owned(), strings(&["v1", "v2"])),
        ("e".to_owned(), Vec::new()),
    ]);
    let object = json!({"name": "x", "nested": {"list": [1, 2.5, null, "s"], "ok": false}});
    let c = cp(0)
        .set("int", 1, ChannelValue::new(-42_i64))
        .set("big", 1, ChannelValue::new(i64::MAX))
        .set("float", 1, ChannelValue::new(0.1_f64))
        .set("bool", 1, ChannelValue::new(true))
        .set("text", 1, ChannelValue::new("hello".to_owned()))
        .set("empty_text", 1, ChannelValue::new(String::new()))
        .set("ints", 1, ChannelValue::new(vec![1_i64, -2, 3]))
        .set("map", 1, ChannelValue::new(map.clone()))
        .set("object", 1, ChannelValue::new(object.clone()))
        .set("some", 1, ChannelValue::new(Some(5_i64)))
        .set("none", 1, ChannelValue::new(None::<i64>));
    let saved = put(saver, &t.root("t"), c).await;
    let tuple = get(saver, &saved).await;
    assert_eq!(value(&tuple, "int").decode::<i64>().unwrap(), -42);
    assert_eq!(value(&tuple, "big").decode::<i64>().unwrap(), i64::MAX);
    assert_eq!(value(&tuple, "float").decode::<f64>().unwrap(), 0.1);
    assert!(value(&tuple, "bool").decode::<bool>().unwrap());
    assert_eq!(value(&tuple, "text").decode::<String>().unwrap(), "hello");
    assert_eq!(value(&tuple, "empty_text").decode::<String>().unwrap(), "");
    assert_eq!(
        value(&tuple, "ints").decode::<Vec<i64>>().unwrap(),
        [1, -2, 3]
    );
    assert_eq!(
        value(&tuple, "map")
            .decode::<BTreeMap<String, Vec<String>>>()
            .unwrap(),
        map
    );
    assert_eq!(
        value(&tuple, "object")
            .decode::<serde_json::Value>()
            .unwrap(),
        object
    );
    assert_eq!(
        value(&tuple, "some").decode::<Option<i64>>().unwrap(),
        Some(5)
    );
    let none = tuple
        .checkpoint
        .channel_values
        .get("none")
        .map(|v| v.decode::<Option<i64>>().unwrap());
    assert_eq!(
        none.flatten(),
        None,
        "None must read back as None or as no value"
    );
}

/// A 10 KB value round-trips intact, as a channel value and as a write.
pub async fn large_value_round_trip(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let text: String = (0..10_240_u32)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let lines: Vec<String> = (0..400)
        .map(|i| format!("line {i:04} {}", "x".repeat(20)))
        .collect();
    let c = cp(0).set("text", 1, ChannelValue::new(text.clone())).set(
        "lines",
        1,
        ChannelValue::new(lines.clone()),
    );
    let saved = put(saver, &t.root("t"), c).await;
    put_writes(saver, &saved, "task", vec![("text", json!(text))]).await;
    let tuple = get(saver, &saved).await;
    assert_eq!(value(&tuple, "text").decode::<String>().unwrap(), text);
    assert_eq!(
        value(&tuple, "lines").decode::<Vec<String>>().unwrap(),
        lines
    );
    assert_eq!(writes(&tuple), [write("task", "text", json!(text))]);
}

/// Chinese (and other non-ASCII) text round-trips in thread ids, values and writes.
pub async fn unicode_values_and_thread_ids(saver: &dyn DynCheckpointer) {
    let t = Threads::new();
    let config = t.root("线程-中文");
    let text = "你好，世界！🌏 Grüße";
    let map = BTreeMap::from([("问题".to_owned(), strings(&["答案", "第二"]))]);
    let c = cp(0)
        .set("text", 1, ChannelValue::new(text.to_owned()))
        .set("map", 1, ChannelValue::new(map.clone()));
    let saved = put(saver, &config, c).await;
    put_writes(saver, &saved, "任务", vec![("text", json!("写入"))]).await;
    let tuple = get(saver, &config).await;
    assert_eq!(tuple.config, saved);
    assert_eq!(tuple.config.thread_id, t.id("线程-中文"));
    assert_eq!(value(&tuple, "text").decode::<String>().unwrap(), text);
    assert_eq!(
        value(&tuple, "map")
            .decode::<BTreeMap<String, Vec<String>>>()
            .unwrap(),
        map
    );
    assert_eq!(writes(&tuple), [write("任务", "text", json!("写入"))]);
    assert_eq!(
        ids(&list(saver, &config, ListOptions::new()).await),
        [saved.checkpoint_id.unwrap()]
    );
    saver.delete_thread(&config.thread_id).await.unwrap();
    assert!(saver.get_tuple(&config).await.unwrap().is_none());
}

/// `get_next_version` counts up from 1 and its versions sort as strings.
pub async fn next_version_increments(saver: &dyn DynCheckpointer) {
    let v1 = saver.get_next_version(None);
    assert!(v1.starts_with(&format!("{:032}.", 1)), "{v1}");
    let v2 = saver.get_next_version(Some(&v1));
    assert!(v2.starts_with(&format!("{:032}.", 2)), "{v2}");
    assert!(v2 > v1);
    let v10 = saver.get_next_version(Some(&ver(9)));
    assert!(
        v10.starts_with(&format!("{:032}.", 10)) && v10 > ver(9),
        "{v10}"
    );
}
