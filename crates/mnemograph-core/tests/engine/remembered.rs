//! A run with new input starts from the checkpoint its saver remembers (`remembered_latest`)
//! instead of reading it back, and when that checkpoint turns out not to be the thread's latest,
//! is run again from a real read with nothing of the first attempt left behind.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::StreamExt as _;
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, InMemoryCheckpointer, ListOptions,
};
use mnemograph_core::messages::{MessagesState, MessagesStateUpdate};
use mnemograph_core::prelude::*;
use mnemograph_core::value::ChannelValue;

/// The in-memory saver, answering `remembered_latest` with whatever the test set, and counting
/// the reads the engine makes.
#[derive(Default)]
struct RemembersLatest {
    inner: InMemoryCheckpointer,
    remembered: Mutex<Option<CheckpointTuple>>,
    reads: AtomicUsize,
}

impl RemembersLatest {
    /// The thread's checkpoint at `config` (its latest when `config` has no id), as a saver
    /// remembers it: without pending writes.
    async fn latest(&self, config: &CheckpointConfig) -> CheckpointTuple {
        let mut tuple = Checkpointer::get_tuple(&self.inner, config).await.unwrap().expect("a checkpoint");
        tuple.pending_writes.clear();
        tuple
    }
    /// Remembers the thread's checkpoint at `config`.
    async fn remember(&self, config: &CheckpointConfig) {
        let tuple = self.latest(config).await;
        *self.remembered.lock().unwrap() = Some(tuple);
    }
    fn reads(&self) -> usize {
        self.reads.swap(0, Ordering::SeqCst)
    }
}

impl Checkpointer for RemembersLatest {
    async fn get_tuple(&self, c: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.reads.fetch_add(1, Ordering::SeqCst);
        Checkpointer::get_tuple(&self.inner, c).await
    }
    async fn list(
        &self,
        c: Option<&CheckpointConfig>,
        o: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        Checkpointer::list(&self.inner, c, o).await
    }
    async fn put(
        &self,
        c: &CheckpointConfig,
        cp: Checkpoint,
        m: CheckpointMetadata,
        v: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        Checkpointer::put(&self.inner, c, cp, m, v).await
    }
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        Checkpointer::commit(&self.inner, commit).await
    }
    async fn put_writes(
        &self,
        c: &CheckpointConfig,
        w: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        Checkpointer::put_writes(&self.inner, c, w, task_id, task_path).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        Checkpointer::delete_thread(&self.inner, thread_id).await
    }
    fn remembered_latest(&self, c: &CheckpointConfig) -> Option<CheckpointTuple> {
        let remembered = self.remembered.lock().unwrap().clone()?;
        (remembered.config.thread_id == c.thread_id && remembered.config.checkpoint_ns == c.checkpoint_ns)
            .then_some(remembered)
    }
}

/// Counts its calls; answers the last message with `re: <text>`.
fn reply(
    calls: Arc<AtomicUsize>,
) -> impl Fn(MessagesState) -> std::future::Ready<Result<MessagesStateUpdate>> {
    move |s: MessagesState| {
        calls.fetch_add(1, Ordering::SeqCst);
        let last = s.messages.last().map(Message::text).unwrap_or_default();
        std::future::ready(Ok(MessagesStateUpdate::messages(vec![Message::ai(format!("re: {last}"))])))
    }
}

fn say(text: &str) -> MessagesStateUpdate {
    MessagesStateUpdate::messages(vec![Message::human(text)])
}

fn texts(state: &MessagesState) -> Vec<String> {
    state.messages.iter().map(Message::text).collect()
}

/// `START -> reply -> END` on a shared `RemembersLatest` saver; the node's call counter.
fn chat(saver: &Arc<RemembersLatest>) -> (CompiledGraph<MessagesState>, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let graph = StateGraph::<MessagesState>::new()
        .add_node("reply", reply(calls.clone()))
        .add_edge(START, "reply")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver.clone());
    (graph, calls)
}

/// The thread's checkpoints, newest first, each the parent of the one before: one chain.
async fn assert_one_chain(saver: &RemembersLatest, thread: &str) -> usize {
    let history =
        Checkpointer::list(&saver.inner, Some(&CheckpointConfig::thread(thread)), ListOptions::new())
            .await
            .unwrap();
    for pair in history.windows(2) {
        assert_eq!(pair[0].parent_config.as_ref(), Some(&pair[1].config), "the thread forked");
    }
    history.len()
}

#[tokio::test]
async fn test_a_remembered_latest_checkpoint_spares_the_read() {
    let saver = Arc::new(RemembersLatest::default());
    let (graph, calls) = chat(&saver);
    let config = RunConfig::thread("t");
    graph.invoke(say("one"), &config).await.unwrap();
    saver.remember(&CheckpointConfig::thread("t")).await;
    saver.reads();
    let out = graph.invoke(say("two"), &config).await.unwrap();
    assert_eq!(saver.reads(), 0, "the run started from memory");
    assert_eq!(texts(&out.state), ["one", "re: one", "two", "re: two"]);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(assert_one_chain(&saver, "t").await, 6);
}

#[tokio::test]
async fn test_a_stale_remembered_checkpoint_is_run_again_from_the_latest() {
    let saver = Arc::new(RemembersLatest::default());
    let (graph, calls) = chat(&saver);
    let config = RunConfig::thread("t");
    graph.invoke(say("one"), &config).await.unwrap();
    // Remembered after the first turn; another writer (here: a run the memory did not see) then
    // moved the thread on.
    let stale = saver.latest(&CheckpointConfig::thread("t")).await;
    graph.invoke(say("two"), &config).await.unwrap();
    *saver.remembered.lock().unwrap() = Some(stale);
    saver.reads();
    let out = graph.invoke(say("three"), &config).await.unwrap();
    assert_eq!(saver.reads(), 1, "refused at its first commit, the run read the latest checkpoint");
    assert_eq!(texts(&out.state), ["one", "re: one", "two", "re: two", "three", "re: three"]);
    assert_eq!(calls.load(Ordering::SeqCst), 3, "the node ran once per turn");
    assert_eq!(assert_one_chain(&saver, "t").await, 9, "nothing of the first attempt was stored");
}

#[tokio::test]
async fn test_a_failure_on_a_stale_remembered_state_is_not_the_runs() {
    // Turn two's human message, removed in turn three: unknown in the stale state, where the
    // reducer refuses the removal; known in the latest one.
    let saver = Arc::new(RemembersLatest::default());
    let (graph, _) = chat(&saver);
    let config = RunConfig::thread("t");
    graph.invoke(say("one"), &config).await.unwrap();
    let stale = saver.latest(&CheckpointConfig::thread("t")).await;
    let two = MessagesStateUpdate::messages(vec![Message::human("two").with_id("h2")]);
    graph.invoke(two, &config).await.unwrap();
    *saver.remembered.lock().unwrap() = Some(stale);
    let remove = MessagesStateUpdate::messages(vec![Message::remove("h2")]);
    let out = graph.invoke(remove, &config).await.expect("the latest state has the message");
    assert!(!texts(&out.state).contains(&"two".to_owned()), "{:?}", texts(&out.state));
    assert_eq!(assert_one_chain(&saver, "t").await, 9);
}

#[tokio::test]
async fn test_streams_and_conditional_starts_read_their_checkpoint() {
    let saver = Arc::new(RemembersLatest::default());
    let (graph, _) = chat(&saver);
    let config = RunConfig::thread("t");
    graph.invoke(say("one"), &config).await.unwrap();
    saver.remember(&CheckpointConfig::thread("t")).await;
    saver.reads();
    // Streamed: events of a first attempt could not be taken back.
    let events: Vec<_> = graph.stream(say("two"), &config).collect().await;
    assert!(events.iter().all(Result::is_ok));
    assert_eq!(saver.reads(), 1);
    // Asynchronous durability: nodes run before the first commit is known to have succeeded.
    saver.remember(&CheckpointConfig::thread("t")).await;
    graph.invoke(say("three"), &config.clone().durability(Durability::Async)).await.unwrap();
    assert_eq!(saver.reads(), 1);
    // A router of the user's runs before the first commit.
    let routed = StateGraph::<MessagesState>::new()
        .add_node("reply", reply(Arc::new(AtomicUsize::new(0))))
        .add_conditional_edges(START, |_: &MessagesState| "reply".to_owned(), ["reply"])
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver.clone());
    saver.remember(&CheckpointConfig::thread("t")).await;
    routed.invoke(say("four"), &config).await.unwrap();
    assert_eq!(saver.reads(), 1);
    // Without new input (a resume), the pending writes matter: read.
    saver.remember(&CheckpointConfig::thread("t")).await;
    graph.resume(&config).await.unwrap();
    assert_eq!(saver.reads(), 1);
    assert_eq!(assert_one_chain(&saver, "t").await, 12);
}
