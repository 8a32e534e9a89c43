//! The checkpointer conformance suite: one `async fn` per required behaviour of a
//! [`Checkpointer`](mnemograph_core::checkpoint::Checkpointer), after LangGraph's
//! `langgraph-checkpoint-conformance` package and its savers' tests, plus the concurrency
//! guarantee of [`commit`](mnemograph_core::checkpoint::Checkpointer::commit) expecting the latest
//! parent (a stale parent is refused, a fork through `put` is not, racing writers yield one
//! winner).
//!
//! Run it against a backend with [`checkpointer_conformance!`](crate::checkpointer_conformance),
//! or call the functions one by one. A function may be given an empty or a shared saver: it only
//! touches threads whose ids start with a fresh random prefix, so the whole suite can run in
//! parallel against one database or Redis server.
//!
//! Values are read back with [`ChannelValue::decode`] and compared decoded, because a backend
//! that stores bytes returns [`ChannelValue::Encoded`] values, not the live ones it was given.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use mnemograph_core::checkpoint::backend::{checkpoint_id, uuid6};
use mnemograph_core::checkpoint::CheckpointSource::{Fork, Input, Loop, Update};
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    DynCheckpointer, ListOptions, PendingWrite, PruneStrategy, CHECKPOINT_VERSION,
};
use mnemograph_core::value::ChannelValue;
use serde_json::{json, Value};

mod bad_input;
mod chain;
mod conflict;
mod copy;
mod list;
mod namespaces;
mod prune;
mod put_get;
mod runs;
mod values;
mod writes;

pub use bad_input::{
    hostile_thread_ids_and_namespaces_round_trip_exactly, long_multi_byte_thread_ids_round_trip,
    multi_megabyte_values_round_trip, odd_channel_names_keep_their_values, round_trip_two_steps, save_step,
    step_view, thread_ids_are_compared_exactly, Bystander, StepView,
};
pub use chain::{
    commit_keeps_special_characters_verbatim, commit_links_each_checkpoint_to_the_one_before,
    commit_on_a_moved_parent_conflicts, commit_stores_writes_then_checkpoint,
};
pub use conflict::{
    commit_expecting_latest_refuses_a_moved_parent, put_on_an_older_parent_forks_without_conflict,
    racing_commits_exactly_one_wins,
};
pub use copy::*;
pub use list::*;
pub use namespaces::*;
pub use prune::*;
pub use put_get::*;
pub use runs::*;
pub use values::*;
pub use writes::*;

/// Expands to a module `checkpointer_conformance` with one `#[tokio::test]` per function of
/// [`conformance`](crate::conformance), each given a saver made by `$factory`.
///
/// `$factory` is the path of an `async fn() -> T` where `T:`
/// [`Checkpointer`](mnemograph_core::checkpoint::Checkpointer), resolved from the module that invokes
/// the macro. The invoking crate needs `tokio` with the `macros` and `rt` features.
///
/// # Example
/// ```
/// use mnemograph_core::checkpoint::InMemoryCheckpointer;
///
/// async fn saver() -> InMemoryCheckpointer {
///     InMemoryCheckpointer::new()
/// }
///
/// mnemograph_test::checkpointer_conformance!(saver);
/// # fn main() {}
/// ```
///
/// A live backend's factory may return `Option<saver>` instead and be passed as
/// `checkpointer_conformance!(optional saver)`: on `None` (the factory has already printed why, or
/// panicked when `CI` demands the server) every test returns without running.
///
/// The suite covers LangGraph's extended capabilities too
/// ([`delete_for_runs`](mnemograph_core::checkpoint::Checkpointer::delete_for_runs),
/// [`copy_thread`](mnemograph_core::checkpoint::Checkpointer::copy_thread),
/// [`prune`](mnemograph_core::checkpoint::Checkpointer::prune)). A saver that leaves them at their
/// `Unsupported` defaults runs the rest with `checkpointer_conformance!(base saver)` (or
/// `base optional saver`), as LangGraph's suite tests only the capabilities a saver has.
#[macro_export]
macro_rules! checkpointer_conformance {
    // Every function of the suite: the base list and LangGraph's extended capabilities, handed
    // to the arm named by the first tokens.
    (@names $($arm:tt)*) => {
        $crate::checkpointer_conformance! { @base_names @extended [$($arm)*] }
    };
    (@extended [$($arm:tt)*]; $($base:ident),* $(,)?) => {
        $crate::checkpointer_conformance! { $($arm)*;
            $($base,)*
            delete_for_runs_removes_one_run,
            delete_for_runs_removes_several_runs,
            delete_for_runs_leaves_other_runs,
            delete_for_runs_removes_writes,
            delete_for_runs_of_no_runs_is_a_no_op,
            delete_for_runs_of_unknown_runs_is_a_no_op,
            delete_for_runs_covers_every_namespace,
            copy_thread_copies_every_checkpoint,
            copy_thread_keeps_metadata,
            copy_thread_keeps_namespaces,
            copy_thread_keeps_pending_writes,
            copy_thread_leaves_the_source_unchanged,
            copy_thread_of_a_missing_source_copies_nothing,
            copy_thread_onto_a_thread_with_checkpoints_is_refused,
            prune_keep_latest_keeps_only_the_latest,
            prune_keep_latest_on_several_threads,
            prune_keep_latest_keeps_the_latest_of_each_namespace,
            prune_keep_latest_keeps_the_latest_writes,
            prune_delete_removes_everything,
            prune_leaves_other_threads,
            prune_of_no_threads_is_a_no_op,
            prune_of_missing_threads_is_a_no_op,
        }
    };
    // The functions of LangGraph's five base operations and `commit`.
    (@base_names $($arm:tt)*) => {
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
            commit_expecting_latest_refuses_a_moved_parent,
            put_on_an_older_parent_forks_without_conflict,
            racing_commits_exactly_one_wins,
            commit_stores_writes_then_checkpoint,
            commit_links_each_checkpoint_to_the_one_before,
            commit_on_a_moved_parent_conflicts,
            commit_keeps_special_characters_verbatim,
            hostile_thread_ids_and_namespaces_round_trip_exactly,
            thread_ids_are_compared_exactly,
            long_multi_byte_thread_ids_round_trip,
            odd_channel_names_keep_their_values,
            multi_megabyte_values_round_trip,
        }
    };
    (@tests $mode:tt $factory:path; $($test:ident),* $(,)?) => {
        /// The checkpointer conformance suite (`mnemograph_test::checkpointer_conformance!`).
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
    (@checks; $($test:ident),* $(,)?) => {
        vec![$((stringify!($test), {
            fn check<'a>(
                saver: &'a dyn ::mnemograph_core::checkpoint::DynCheckpointer,
            ) -> ::std::pin::Pin<::std::boxed::Box<dyn ::std::future::Future<Output = ()> + 'a>> {
                ::std::boxed::Box::pin($crate::conformance::$test(saver))
            }
            check as $crate::conformance::Check
        })),*]
    };
    (@run always $factory:path, $test:ident) => {
        let saver = $factory().await;
        $crate::conformance::$test(&saver).await;
    };
    (@run optional $factory:path, $test:ident) => {
        if let Some(saver) = $factory().await {
            $crate::conformance::$test(&saver).await;
        }
    };
    // A saver of the base operations only (the extended ones left at their `Unsupported`
    // defaults): the base list.
    (base optional $factory:path) => {
        $crate::checkpointer_conformance!(@base_names @tests optional $factory);
    };
    (base $factory:path) => {
        $crate::checkpointer_conformance!(@base_names @tests always $factory);
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

/// One check of the suite, callable on any saver: it panics, naming what differs, when the saver
/// does not behave as required.
pub type Check = for<'a> fn(&'a dyn DynCheckpointer) -> Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Every check of the suite with its name, in the order
/// [`checkpointer_conformance!`](crate::checkpointer_conformance) runs them: for running them
/// one by one and collecting which fail, e.g. to show that the suite catches a broken saver.
pub fn checks() -> Vec<(&'static str, Check)> {
    crate::checkpointer_conformance!(@names @checks)
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
// A path to the macro, so the submodules (declared above it) reach it through `super::*`.
use decoded;

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
