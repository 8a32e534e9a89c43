//! Committing a run's checkpoints, with the parent check that keeps two runs of one thread from
//! forking it.
//!
//! A run that starts from the latest checkpoint of its thread (no `checkpoint_id` in the config)
//! commits every checkpoint expecting its parent to be the latest
//! ([`ExpectParent::Latest`]): if another run committed to the thread meanwhile, the saver refuses
//! atomically and the run fails with [`CheckpointError::Conflict`], leaving the thread a single
//! chain. A run started from an explicit checkpoint (time travel) commits its first checkpoint
//! expecting nothing, because forking from an older checkpoint is what it asked for; its later
//! checkpoints build on that first one and are checked again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::checkpoint::{
    ChainLink, ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, Commit,
    DynCheckpointer, ExpectParent, WriteBatch,
};
use crate::config::Durability;
use crate::error::Result;
use crate::pregel::saver_spans::{saver_span, SaverOp};

/// Whether the run's first commit has succeeded: shared with its committer, so that it can be
/// told after the run failed.
#[derive(Clone, Default)]
pub(crate) struct Committed(Arc<AtomicBool>);

impl Committed {
    /// Records a successful commit.
    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Release);
    }

    /// Whether a commit succeeded.
    pub(crate) fn get(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

/// The result of a checkpoint save running in the background.
type Inflight = JoinHandle<std::result::Result<CheckpointConfig, CheckpointError>>;

/// The run's committer: where checkpoints go and what was saved last.
pub(crate) struct Committer {
    /// The saver.
    pub(crate) saver: Arc<dyn DynCheckpointer>,
    /// The checkpoint save still running under `Durability::Async`.
    inflight: Option<Inflight>,
    /// Address of the last saved checkpoint (the parent of the next one).
    pub(crate) saved: CheckpointConfig,
    /// Channel versions at the last save, to compute `new_versions`.
    pub(crate) saved_versions: Vec<u64>,
    /// When checkpoints are written.
    pub(crate) durability: Durability,
    /// Whether the next checkpoint may only be committed while its parent is the latest of the
    /// thread. False only before the first checkpoint of a run started from an explicit one.
    expect_latest: bool,
    /// A checkpoint not stored yet, to be stored with the next one in one commit (a run's
    /// input checkpoint, followed by a step that only routes the input): its parent's address,
    /// the link, and whether it expects that parent to be the latest.
    held: Option<(CheckpointConfig, ChainLink, ExpectParent)>,
    /// Told of every successful commit, when the run wants to know (see
    /// [`remembered`](super::run::remembered)).
    pub(crate) committed: Option<Committed>,
}

impl Committer {
    /// Committer continuing from `saved`; `from_latest` when the run started from the thread's
    /// latest checkpoint rather than from an explicit one.
    pub(crate) fn new(
        saver: Arc<dyn DynCheckpointer>,
        saved: CheckpointConfig,
        durability: Durability,
        from_latest: bool,
    ) -> Self {
        Self {
            saver,
            inflight: None,
            saved,
            saved_versions: Vec::new(),
            durability,
            expect_latest: from_latest,
            held: None,
            committed: None,
        }
    }

    /// Saves `checkpoint` as the child of the last saved one, after `writes` (the last writes of
    /// the step it follows, saved against its parent): now (sync), or in the background after
    /// the previous background save finished (async). With `hold`, it is kept instead, and
    /// stored together with the next one, or by [`flush`](Self::flush).
    ///
    /// # Errors
    /// [`CheckpointError::Conflict`] when another writer committed to the thread since this run's
    /// last checkpoint (under async durability, the conflict of the *previous* save surfaces
    /// here or at [`flush`](Self::flush)); any other saver failure.
    pub(crate) async fn commit(
        &mut self,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        writes: Option<WriteBatch>,
        hold: bool,
    ) -> Result<()> {
        // Every checkpoint after the first builds on this run's own previous one, which must
        // still be the thread's latest.
        let expect = match std::mem::replace(&mut self.expect_latest, true) {
            true => ExpectParent::Latest,
            false => ExpectParent::Any,
        };
        // Where the checkpoint will be, known in advance (it is the new id); built only where it
        // is needed before the save returns it.
        let address = |saved: &CheckpointConfig, id: &str| CheckpointConfig {
            thread_id: saved.thread_id.clone(),
            checkpoint_ns: saved.checkpoint_ns.clone(),
            checkpoint_id: Some(id.to_owned()),
        };
        if hold {
            self.store_held().await?;
            let next = address(&self.saved, &checkpoint.id);
            let link = ChainLink { writes, checkpoint, metadata, new_versions };
            self.held = Some((std::mem::replace(&mut self.saved, next), link, expect));
            return Ok(());
        }
        let next = (self.durability == Durability::Async).then(|| address(&self.saved, &checkpoint.id));
        let link = ChainLink { writes, checkpoint, metadata, new_versions };
        let (parent, chain, expect) = match self.held.take() {
            Some((parent, first, expects)) => (Some(parent), vec![first, link], expects),
            None => (None, vec![link], expect),
        };
        if let Some(next) = next {
            // Save while the next superstep runs; saves stay in order because each one waits for
            // the previous before it starts.
            self.wait_inflight().await?;
            let saver = Arc::clone(&self.saver);
            let parent = parent.unwrap_or_else(|| std::mem::replace(&mut self.saved, next.clone()));
            self.saved = next;
            let span = saver_span(SaverOp::Commit, &parent);
            let commit = Commit::new(parent, chain, expect);
            self.inflight = Some(tokio::spawn(async move { saver.commit(commit).instrument(span).await }));
        } else {
            let parent = parent.unwrap_or_else(|| self.saved.clone());
            let span = saver_span(SaverOp::Commit, &parent);
            let saved = self.saver.commit(Commit::new(parent, chain, expect)).instrument(span).await?;
            tracing::debug!(checkpoint_id = ?saved.checkpoint_id, "checkpoint saved");
            self.saved = saved;
            self.note_commit();
        }
        Ok(())
    }

    /// Stores the held checkpoint, if any, on its own (before anything that needs it stored).
    ///
    /// # Errors
    /// As [`commit`](Self::commit).
    pub(crate) async fn store_held(&mut self) -> Result<()> {
        let Some((parent, link, expect)) = self.held.take() else { return Ok(()) };
        self.wait_inflight().await?;
        let span = saver_span(SaverOp::Commit, &parent);
        let saved = self.saver.commit(Commit::new(parent, vec![link], expect)).instrument(span).await?;
        tracing::debug!(checkpoint_id = ?saved.checkpoint_id, "checkpoint saved");
        self.note_commit();
        Ok(())
    }

    /// Tells whoever asked that a commit succeeded.
    fn note_commit(&self) {
        if let Some(committed) = &self.committed {
            committed.set();
        }
    }

    /// Whether a checkpoint is held (see [`commit`](Self::commit)).
    pub(crate) fn holds(&self) -> bool {
        self.held.is_some()
    }

    /// Stores the held checkpoint and waits for the checkpoint save still running under
    /// `Durability::Async`, if any: afterwards every checkpoint of the run is durable.
    ///
    /// # Errors
    /// The failure of those saves.
    pub(crate) async fn flush(&mut self) -> Result<()> {
        self.wait_inflight().await?;
        self.store_held().await
    }

    /// Waits for the background save, if any.
    async fn wait_inflight(&mut self) -> Result<()> {
        if let Some(handle) = self.inflight.take() {
            let saved = handle.await.map_err(|e| CheckpointError::Backend(Box::new(e)))??;
            tracing::debug!(checkpoint_id = ?saved.checkpoint_id, "checkpoint saved");
            self.note_commit();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! Engine-level behaviour of two runs on one thread, with the in-memory saver.

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::sync::Notify;

    use crate::checkpoint::{
        CheckpointConfig, CheckpointError, CheckpointTuple, Checkpointer, DynCheckpointer,
        InMemoryCheckpointer, ListOptions,
    };
    use crate::messages::{Message, MessagesState, MessagesStateUpdate};
    use crate::{CompiledGraph, Durability, Error, RunConfig, StateGraph, START};

    /// Holds the first run whose last message is `slow` inside its node until released.
    #[derive(Default)]
    struct Gate {
        /// Set once a run has entered the node (only the first `slow` run waits).
        taken: AtomicBool,
        /// Notified when that run is inside the node.
        entered: Notify,
        /// Notified to let it go on.
        release: Notify,
    }

    /// `START -> reply -> END`: `reply` answers the last message with `re: <text>`.
    fn chat(saver: Arc<dyn DynCheckpointer>, gate: Arc<Gate>) -> CompiledGraph<MessagesState> {
        let reply = move |s: MessagesState| {
            let gate = Arc::clone(&gate);
            async move {
                let last = s.messages.last().map(Message::text).unwrap_or_default();
                if last == "slow" && !gate.taken.swap(true, Ordering::SeqCst) {
                    gate.entered.notify_one();
                    gate.release.notified().await;
                }
                // Lets other runs of the thread interleave with this one, as a model call would.
                tokio::task::yield_now().await;
                Ok::<_, Error>(MessagesStateUpdate::messages(vec![Message::ai(format!("re: {last}"))]))
            }
        };
        let graph = StateGraph::<MessagesState>::new().add_node("reply", reply).add_edge(START, "reply");
        graph.compile().expect("valid graph").with_shared_checkpointer(saver)
    }

    fn say(text: &str) -> MessagesStateUpdate {
        MessagesStateUpdate::messages(vec![Message::human(text)])
    }

    fn texts(state: &MessagesState) -> Vec<String> {
        state.messages.iter().map(Message::text).collect()
    }

    /// Every checkpoint of the thread, oldest first; asserts each one's parent is the one before.
    async fn single_chain(saver: &dyn DynCheckpointer, thread: &str) -> Vec<String> {
        let config = CheckpointConfig::thread(thread);
        let mut listed = saver.list(Some(&config), ListOptions::new()).await.expect("list");
        listed.reverse();
        let mut parent = None;
        for t in &listed {
            assert_eq!(t.parent_config.as_ref().and_then(|p| p.checkpoint_id.clone()), parent, "forked");
            parent = t.config.checkpoint_id.clone();
        }
        listed.into_iter().filter_map(|t| t.config.checkpoint_id).collect()
    }

    /// Starts a run that stops inside `reply` (after committing its input checkpoint); returns
    /// the run's handle once it is there.
    async fn start_slow(
        graph: &CompiledGraph<MessagesState>,
        gate: &Gate,
        run: impl FnOnce(CompiledGraph<MessagesState>) -> tokio::task::JoinHandle<crate::Result<MessagesState>>,
    ) -> tokio::task::JoinHandle<crate::Result<MessagesState>> {
        let handle = run(graph.clone());
        tokio::time::timeout(Duration::from_secs(5), gate.entered.notified())
            .await
            .expect("slow run started");
        handle
    }

    #[tokio::test]
    async fn run_whose_parent_moved_fails_with_conflict_and_thread_stays_one_chain() {
        let saver: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
        let gate = Arc::new(Gate::default());
        let graph = chat(Arc::clone(&saver), Arc::clone(&gate));
        let config = RunConfig::thread("t");
        let slow = start_slow(&graph, &gate, |g| {
            tokio::spawn(async move { g.invoke(say("slow"), &RunConfig::thread("t")).await.map(|o| o.state) })
        })
        .await;
        // A second worker commits its whole run while the first one is inside its node.
        let fast = graph.invoke(say("fast"), &config).await.expect("second run commits");
        assert_eq!(texts(&fast), ["slow", "fast", "re: fast"]);
        gate.release.notify_one();
        let err = slow.await.expect("join").expect_err("the first run's parent moved");
        assert!(err.is_conflict(), "{err:?}");
        let Error::Checkpoint(CheckpointError::Conflict { thread_id, expected, found, .. }) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(thread_id, "t");
        assert_ne!(expected, found);
        // Nothing of the refused step is stored: the latest state is the second run's.
        let chain = single_chain(&*saver, "t").await;
        assert_eq!(found.as_ref(), chain.last());
        assert_eq!(texts(&graph.get_state(&config).await.expect("state").values), texts(&fast));
    }

    #[tokio::test]
    async fn run_from_an_explicit_older_checkpoint_forks_without_conflict() {
        let saver: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
        let graph = chat(Arc::clone(&saver), Arc::default());
        let config = RunConfig::thread("t");
        graph.invoke(say("one"), &config).await.expect("first");
        let first = graph.get_state(&config).await.expect("state").config.expect("saved");
        graph.invoke(say("two"), &config).await.expect("second");
        // Time travel: continue from the end of the first turn, not from the latest checkpoint.
        let from_first = config.clone().checkpoint_id(first.checkpoint_id.clone().expect("id"));
        let forked = graph.invoke(say("again"), &from_first).await.expect("a fork is not a conflict");
        assert_eq!(texts(&forked), ["one", "re: one", "again", "re: again"]);
        let latest = graph.get_state(&config).await.expect("state");
        assert_eq!(texts(&latest.values), texts(&forked));
        // update_state on an old checkpoint is a fork too.
        let updated = graph.update_state(&from_first, say("edit"), Some("reply")).await.expect("update");
        assert_eq!(saver.get_tuple(&updated).await.expect("read").expect("saved").parent_config, Some(first));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn conflicting_runs_are_retried_on_the_latest_state_when_nothing_was_committed() {
        let saver: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
        let graph = chat(Arc::clone(&saver), Arc::default());
        // `Exit`: a run commits once, at its end, so a refused run committed nothing and its retry
        // applies the input as if the calls had been queued.
        let config = RunConfig::thread("t").durability(Durability::Exit);
        graph.invoke(say("one"), &config).await.expect("first");
        let mut runs = Vec::new();
        for i in 0..10 {
            let (graph, config) = (graph.clone(), config.clone());
            runs.push(tokio::spawn(async move {
                graph.invoke_retrying_conflicts(say(&format!("m{i}")), &config, 100).await
            }));
        }
        for run in runs {
            run.await.expect("join").expect("retried until committed");
        }
        assert_eq!(single_chain(&*saver, "t").await.len(), 11);
        let all = texts(&graph.get_state(&config).await.expect("state").values);
        assert_eq!(all.len(), 22, "{all:?}");
        for turn in all.chunks(2) {
            assert_eq!(turn[1], format!("re: {}", turn[0]), "{all:?}");
        }
        for i in 0..10 {
            let m = format!("m{i}");
            assert_eq!(all.iter().filter(|t| **t == m).count(), 1, "{m} in {all:?}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn conflict_after_a_commit_is_reported_not_retried() {
        let saver: Arc<dyn DynCheckpointer> = Arc::new(InMemoryCheckpointer::new());
        let gate = Arc::new(Gate::default());
        let graph = chat(Arc::clone(&saver), Arc::clone(&gate));
        let slow = start_slow(&graph, &gate, |g| {
            tokio::spawn(async move {
                g.invoke_retrying_conflicts(say("slow"), &RunConfig::thread("t"), 5).await.map(|o| o.state)
            })
        })
        .await;
        graph.invoke(say("fast"), &RunConfig::thread("t")).await.expect("second run commits");
        gate.release.notify_one();
        // The slow run's input checkpoint was committed before its node ran: running the input
        // again could apply it twice, so the conflict is returned.
        let err = slow.await.expect("join").expect_err("not retried");
        assert!(err.is_conflict(), "{err:?}");
        single_chain(&*saver, "t").await;
    }

    /// A saver that forwards the five operations to the in-memory one and keeps the trait's
    /// default `commit`, as a saver written against the five operations alone would.
    struct DefaultCheck(InMemoryCheckpointer);

    impl Checkpointer for DefaultCheck {
        async fn get_tuple(&self, c: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
            Checkpointer::get_tuple(&self.0, c).await
        }
        async fn list(
            &self,
            c: Option<&CheckpointConfig>,
            o: ListOptions,
        ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
            Checkpointer::list(&self.0, c, o).await
        }
        async fn put(
            &self,
            c: &CheckpointConfig,
            cp: crate::checkpoint::Checkpoint,
            m: crate::checkpoint::CheckpointMetadata,
            v: crate::checkpoint::ChannelVersions,
        ) -> Result<CheckpointConfig, CheckpointError> {
            Checkpointer::put(&self.0, c, cp, m, v).await
        }
        async fn put_writes(
            &self,
            c: &CheckpointConfig,
            w: Vec<(String, crate::value::ChannelValue)>,
            task_id: &str,
            task_path: &str,
        ) -> Result<(), CheckpointError> {
            Checkpointer::put_writes(&self.0, c, w, task_id, task_path).await
        }
        async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
            Checkpointer::delete_thread(&self.0, thread_id).await
        }
    }

    #[tokio::test]
    async fn saver_with_the_default_check_still_refuses_a_run_whose_parent_moved() {
        let saver: Arc<dyn DynCheckpointer> = Arc::new(DefaultCheck(InMemoryCheckpointer::new()));
        let gate = Arc::new(Gate::default());
        let graph = chat(Arc::clone(&saver), Arc::clone(&gate));
        let slow = start_slow(&graph, &gate, |g| {
            tokio::spawn(async move { g.invoke(say("slow"), &RunConfig::thread("t")).await.map(|o| o.state) })
        })
        .await;
        graph.invoke(say("fast"), &RunConfig::thread("t")).await.expect("second run commits");
        gate.release.notify_one();
        let err = slow.await.expect("join").expect_err("the first run's parent moved");
        assert!(err.is_conflict(), "{err:?}");
        single_chain(&*saver, "t").await;
    }
}
