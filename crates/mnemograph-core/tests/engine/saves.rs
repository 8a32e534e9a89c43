//! How a run's saves reach the saver: a step's last writes travel with the checkpoint that follows
//! the step, and the input checkpoint with the checkpoint of the step that routes the input, in
//! one commit; the history stored is LangGraph's all the same.

use std::sync::{Arc, Mutex};

use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointTuple,
    Checkpointer, Commit, InMemoryCheckpointer, ListOptions,
};
use mnemograph_core::prelude::*;
use mnemograph_core::value::ChannelValue;

use crate::support::*;

/// The in-memory saver, recording each call the engine makes.
#[derive(Default)]
struct Recording {
    inner: InMemoryCheckpointer,
    calls: Mutex<Vec<String>>,
}

impl Recording {
    fn record(&self, call: String) {
        self.calls.lock().unwrap().push(call);
    }
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.calls.lock().unwrap())
    }
}

impl Checkpointer for Recording {
    async fn get_tuple(&self, c: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
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
        self.record(format!("put step {}", m.step));
        Checkpointer::put(&self.inner, c, cp, m, v).await
    }
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        let links: Vec<String> = commit
            .chain
            .iter()
            .map(|l| match &l.writes {
                Some(w) => format!("{} writes + step {}", w.writes.len(), l.metadata.step),
                None => format!("step {}", l.metadata.step),
            })
            .collect();
        self.record(format!("commit [{}]", links.join(", ")));
        Checkpointer::commit(&self.inner, commit).await
    }
    async fn put_writes(
        &self,
        c: &CheckpointConfig,
        w: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.record(format!("put_writes {}", w.len()));
        Checkpointer::put_writes(&self.inner, c, w, task_id, task_path).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        Checkpointer::delete_thread(&self.inner, thread_id).await
    }
}

/// `START -> a -> b`: three commits (input with the routing step, then one per node
/// with its writes), no separate `put_writes`; every checkpoint but the last holds the writes of
/// the task that ran on it, as LangGraph's history does.
#[tokio::test]
async fn test_each_step_is_saved_with_its_last_writes() {
    let saver = Arc::new(Recording::default());
    let g = StateGraph::<S>::new()
        .add_node("a", logger("a"))
        .add_node("b", logger("b"))
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver.clone());
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(
        saver.take(),
        [
            "commit [step -1, 1 writes + step 0]",
            // `a` writes `log` and the edge to `b` (`branch:to:b`); `b` only `log`.
            "commit [2 writes + step 1]",
            "commit [1 writes + step 2]",
        ]
    );
    let history = Checkpointer::list(&saver.inner, Some(&CheckpointConfig::thread("t")), ListOptions::new())
        .await
        .unwrap();
    let writes: Vec<(i64, Vec<&str>)> = history
        .iter()
        .map(|t| (t.metadata.step, t.pending_writes.iter().map(|w| w.channel.as_str()).collect()))
        .collect();
    assert_eq!(writes[0], (2, vec![]));
    assert_eq!(writes[1], (1, vec!["log"]));
    assert_eq!(writes[2], (0, vec!["log", "branch:to:b"]));
    assert_eq!(writes[3].0, -1);
    assert!(!writes[3].1.is_empty(), "the START task's writes are on the input checkpoint");
    assert_eq!(g.get_state(&cfg).await.unwrap().values.log, ["a", "b"]);
}

/// Parallel tasks: every task but the last to finish has its writes saved as it finishes (a
/// failure of the others must not re-run it), the last one's go with the step's checkpoint.
#[tokio::test]
async fn test_parallel_tasks_save_all_but_the_last_as_they_finish() {
    let saver = Arc::new(Recording::default());
    let g = StateGraph::<S>::new()
        .add_node("a", logger("a"))
        .add_node("b", logger("b"))
        .add_node("c", logger("c"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .add_edge(START, "c")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver.clone());
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(
        saver.take(),
        ["commit [step -1, 3 writes + step 0]", "put_writes 1", "put_writes 1", "commit [1 writes + step 1]"]
    );
    let mut log = g.get_state(&cfg).await.unwrap().values.log;
    log.sort();
    assert_eq!(log, ["a", "b", "c"]);
}

/// A node that fails after the routing step: the input and routing checkpoints are stored
/// (together), then the failure as the node's `__error__` write, as LangGraph stores them.
#[tokio::test]
async fn test_a_failed_node_leaves_the_held_input_stored() {
    let saver = Arc::new(Recording::default());
    let g = StateGraph::<S>::new()
        .add_node("boom", |_s: S| async { Err::<SUpdate, _>(Error::UnknownNode("boom".into())) })
        .add_edge(START, "boom")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver.clone());
    let cfg = RunConfig::thread("t");
    assert!(g.invoke(SUpdate::default(), &cfg).await.is_err());
    assert_eq!(saver.take(), ["commit [step -1, 1 writes + step 0]", "put_writes 1"]);
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), 2, "input and the routing step are stored");
    assert_eq!(history[0].next, ["boom"]);
}
