//! The conformance suite fails on savers that break it: `InMemoryCheckpointer` behind a wrapper
//! that breaks one behaviour at a time, and for each fault the checks that cover that behaviour
//! must fail. The same wrapper with no fault passes every check, so each failure comes from the
//! fault and not from the wrapper.

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap};
use std::panic::AssertUnwindSafe;
use std::sync::Once;

use futures_util::FutureExt as _;
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, ExpectParent, InMemoryCheckpointer, ListOptions, PruneStrategy,
};
use mnemograph_core::value::ChannelValue;
use mnemograph_test::conformance;
use parking_lot::Mutex;

/// The one behaviour a [`Broken`] saver gets wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    /// None: the control.
    Nothing,
    /// `list` ignores `before`.
    ListIgnoresBefore,
    /// `list` ignores `limit`.
    ListIgnoresLimit,
    /// `list` ignores the metadata filter.
    ListIgnoresFilter,
    /// Saving a task's writes again adds them again instead of keeping the first.
    PutWritesNotIdempotent,
    /// `get_tuple` reads the root namespace whatever the config names.
    GetTupleIgnoresNamespace,
    /// Pending writes are stored but never returned.
    PendingWritesDropped,
    /// `commit` saves without checking the parent.
    ParentNotChecked,
    /// `delete_thread` deletes nothing.
    DeleteDoesNothing,
    /// The extended capabilities are left at their `Unsupported` defaults.
    ExtendedUnsupported,
    /// `prune` keeps everything.
    PruneDoesNothing,
    /// `copy_thread` copies the checkpoints without their pending writes.
    CopyDropsWrites,
}

/// Marks a task id as a repeated save of [`Fault::PutWritesNotIdempotent`]; removed on read, so
/// the repeated writes come back under the task's own id.
const REPEAT: char = '\u{0}';

/// A task at a checkpoint: thread, namespace, checkpoint id, task id.
type TaskAt = (String, String, Option<String>, String);

/// `InMemoryCheckpointer` with one [`Fault`].
struct Broken {
    inner: InMemoryCheckpointer,
    fault: Fault,
    /// How often each task saved writes against each checkpoint.
    saves: Mutex<HashMap<TaskAt, usize>>,
}

impl Broken {
    fn new(fault: Fault) -> Self {
        Self { inner: InMemoryCheckpointer::new(), fault, saves: Mutex::new(HashMap::new()) }
    }

    /// A tuple as this saver returns it.
    fn shown(&self, mut tuple: CheckpointTuple) -> CheckpointTuple {
        match self.fault {
            Fault::PendingWritesDropped => tuple.pending_writes.clear(),
            Fault::PutWritesNotIdempotent => {
                for write in &mut tuple.pending_writes {
                    if let Some(at) = write.task_id.find(REPEAT) {
                        write.task_id.truncate(at);
                    }
                }
            }
            _ => {}
        }
        tuple
    }
}

impl Checkpointer for Broken {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let mut config = config.clone();
        if self.fault == Fault::GetTupleIgnoresNamespace {
            config.checkpoint_ns = String::new();
        }
        Ok(self.inner.get_tuple(&config).await?.map(|t| self.shown(t)))
    }

    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        mut options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        match self.fault {
            Fault::ListIgnoresBefore => options.before = None,
            Fault::ListIgnoresLimit => options.limit = None,
            Fault::ListIgnoresFilter => options.filter = None,
            _ => {}
        }
        let listed = self.inner.list(config, options).await?;
        Ok(listed.into_iter().map(|t| self.shown(t)).collect())
    }

    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.inner.put(config, checkpoint, metadata, new_versions).await
    }

    async fn commit(&self, mut commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        if self.fault == Fault::ParentNotChecked {
            commit.expect = ExpectParent::Any;
        }
        self.inner.commit(commit).await
    }

    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        let mut task = task_id.to_owned();
        if self.fault == Fault::PutWritesNotIdempotent {
            let key = (
                config.thread_id.clone(),
                config.checkpoint_ns.clone(),
                config.checkpoint_id.clone(),
                task_id.to_owned(),
            );
            let saved_before = {
                let mut saves = self.saves.lock();
                let n = saves.entry(key).or_insert(0);
                *n += 1;
                *n - 1
            };
            if saved_before > 0 {
                // Stored as another task, so the inner saver keeps both copies.
                task = format!("{task_id}{REPEAT}{saved_before}");
            }
        }
        self.inner.put_writes(config, writes, &task, task_path).await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        if self.fault == Fault::DeleteDoesNothing {
            return Ok(());
        }
        self.inner.delete_thread(thread_id).await
    }

    async fn delete_for_runs(&self, run_ids: &[String]) -> Result<(), CheckpointError> {
        if self.fault == Fault::ExtendedUnsupported {
            return Err(CheckpointError::unsupported("delete_for_runs"));
        }
        self.inner.delete_for_runs(run_ids).await
    }

    async fn copy_thread(
        &self,
        source_thread_id: &str,
        target_thread_id: &str,
    ) -> Result<(), CheckpointError> {
        match self.fault {
            Fault::ExtendedUnsupported => Err(CheckpointError::unsupported("copy_thread")),
            Fault::CopyDropsWrites => {
                let source = CheckpointConfig::thread(source_thread_id);
                let mut namespaces = Vec::new();
                for tuple in self.inner.list(None, ListOptions::new()).await? {
                    if tuple.config.thread_id == source.thread_id {
                        namespaces.push(tuple);
                    }
                }
                // Oldest first, each under its own parent, without `put_writes`.
                for tuple in namespaces.into_iter().rev() {
                    let mut at = tuple.parent_config.unwrap_or_else(|| tuple.config.clone());
                    at.thread_id = target_thread_id.to_owned();
                    at.checkpoint_ns = tuple.config.checkpoint_ns.clone();
                    if at.checkpoint_id == tuple.config.checkpoint_id {
                        at.checkpoint_id = None;
                    }
                    let versions = tuple.checkpoint.channel_versions.clone();
                    self.inner.put(&at, tuple.checkpoint, tuple.metadata, versions).await?;
                }
                Ok(())
            }
            _ => self.inner.copy_thread(source_thread_id, target_thread_id).await,
        }
    }

    async fn prune(&self, thread_ids: &[String], strategy: PruneStrategy) -> Result<(), CheckpointError> {
        match self.fault {
            Fault::ExtendedUnsupported => Err(CheckpointError::unsupported("prune")),
            Fault::PruneDoesNothing => Ok(()),
            _ => Checkpointer::prune(&self.inner, thread_ids, strategy).await,
        }
    }
}

thread_local! {
    /// Whether this thread is running a check whose panic is expected and caught.
    static IN_CHECK: Cell<bool> = const { Cell::new(false) };
}

/// Keeps the panics of the checks run below out of the output (dozens of expected failures would
/// bury a real one); any other panic is reported as usual.
fn quiet_checks() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_CHECK.with(Cell::get) {
                report(info);
            }
        }));
    });
}

/// The names of the suite's checks that fail on a saver with `fault`.
async fn failing_checks(fault: Fault) -> BTreeSet<&'static str> {
    quiet_checks();
    let saver = Broken::new(fault);
    let mut failed = BTreeSet::new();
    for (name, check) in conformance::checks() {
        // A check reports a failure by panicking, as a test does. The test runtime is
        // single-threaded, so the check runs on this thread.
        IN_CHECK.with(|c| c.set(true));
        let outcome = AssertUnwindSafe(check(&saver)).catch_unwind().await;
        IN_CHECK.with(|c| c.set(false));
        if outcome.is_err() {
            failed.insert(name);
        }
    }
    eprintln!("{fault:?}: {} checks fail: {failed:?}", failed.len());
    failed
}

/// Asserts the checks named in `expected` all fail with `fault`.
async fn caught(fault: Fault, expected: &[&str]) {
    let failed = failing_checks(fault).await;
    let missed: Vec<&&str> = expected.iter().filter(|name| !failed.contains(**name)).collect();
    assert!(missed.is_empty(), "{fault:?}: these checks passed on the broken saver: {missed:?}");
}

#[tokio::test]
async fn the_wrapper_without_a_fault_passes_every_check() {
    let failed = failing_checks(Fault::Nothing).await;
    assert!(failed.is_empty(), "the control fails {failed:?}");
    // The listed checks are the ones the macro runs.
    let listed = conformance::checks();
    let names: BTreeSet<&str> = listed.iter().map(|(name, _)| *name).collect();
    assert_eq!(names.len(), listed.len(), "a check is listed twice");
    assert_eq!(conformance::run_all(&Broken::new(Fault::Nothing)).await, listed.len());
}

#[tokio::test]
async fn list_ignoring_before_is_caught() {
    caught(Fault::ListIgnoresBefore, &["list_before", "list_limit_and_before"]).await;
}

#[tokio::test]
async fn list_ignoring_limit_is_caught() {
    caught(Fault::ListIgnoresLimit, &["list_limit", "list_limit_and_before"]).await;
}

#[tokio::test]
async fn list_ignoring_the_filter_is_caught() {
    let filters =
        ["list_filter_one_key", "list_filter_several_keys", "list_filter_custom_key", "list_filter_step"];
    caught(Fault::ListIgnoresFilter, &filters).await;
}

#[tokio::test]
async fn put_writes_that_is_not_idempotent_is_caught() {
    caught(Fault::PutWritesNotIdempotent, &["put_writes_is_idempotent", "special_channel_writes_upsert"])
        .await;
}

#[tokio::test]
async fn get_tuple_ignoring_the_namespace_is_caught() {
    caught(Fault::GetTupleIgnoresNamespace, &["namespaces_isolate_checkpoints", "namespaces_isolate_writes"])
        .await;
}

#[tokio::test]
async fn dropped_pending_writes_are_caught() {
    let checks = [
        "put_writes_is_idempotent",
        "special_channel_writes_upsert",
        "writes_belong_to_one_checkpoint",
        "pending_writes_ordered_by_task_and_idx",
        "namespaces_isolate_writes",
        "commit_stores_writes_then_checkpoint",
    ];
    caught(Fault::PendingWritesDropped, &checks).await;
}

#[tokio::test]
async fn an_unchecked_parent_is_caught() {
    let checks = [
        "commit_expecting_latest_refuses_a_moved_parent",
        "put_on_an_older_parent_forks_without_conflict",
        "racing_commits_exactly_one_wins",
        "commit_on_a_moved_parent_conflicts",
    ];
    caught(Fault::ParentNotChecked, &checks).await;
}

#[tokio::test]
async fn a_delete_that_deletes_nothing_is_caught() {
    caught(Fault::DeleteDoesNothing, &["delete_thread_removes_all_namespaces_and_writes"]).await;
}

#[tokio::test]
async fn extended_capabilities_left_unsupported_are_caught() {
    let extended: Vec<&str> = conformance::checks()
        .into_iter()
        .map(|(name, _)| name)
        .filter(|n| {
            n.starts_with("delete_for_runs") || n.starts_with("copy_thread") || n.starts_with("prune")
        })
        .collect();
    assert_eq!(extended.len(), 22);
    caught(Fault::ExtendedUnsupported, &extended).await;
}

#[tokio::test]
async fn a_prune_that_prunes_nothing_is_caught() {
    let checks = [
        "prune_keep_latest_keeps_only_the_latest",
        "prune_keep_latest_on_several_threads",
        "prune_keep_latest_keeps_the_latest_of_each_namespace",
        "prune_delete_removes_everything",
    ];
    caught(Fault::PruneDoesNothing, &checks).await;
}

#[tokio::test]
async fn a_copy_without_pending_writes_is_caught() {
    caught(Fault::CopyDropsWrites, &["copy_thread_keeps_pending_writes"]).await;
}
