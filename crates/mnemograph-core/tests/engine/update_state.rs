//! `update_state` against concurrent writers, and the metadata it stores.

use std::sync::atomic::{AtomicBool, Ordering};

use mnemograph_core::checkpoint::backend::uuid6;
use mnemograph_core::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource,
    CheckpointTuple, Checkpointer, Commit, ListOptions,
};
use mnemograph_core::prelude::*;

use crate::support::*;

/// An in-memory saver that, once armed, lets "another writer" commit a child of the checkpoint
/// right after `get_tuple` read it: the window in which a concurrent run moves the thread.
#[derive(Debug, Default)]
struct MovedAfterRead {
    inner: InMemoryCheckpointer,
    armed: AtomicBool,
}

impl Checkpointer for MovedAfterRead {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        let read = self.inner.get_tuple(config).await?;
        if let Some(t) = read.as_ref().filter(|_| self.armed.swap(false, Ordering::SeqCst)) {
            let step = t.metadata.step + 1;
            let child = Checkpoint { id: uuid6(step), ..t.checkpoint.clone() };
            let meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
            self.inner.put(&t.config, child, meta, ChannelVersions::new()).await?;
        }
        Ok(read)
    }
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.inner.list(config, options).await
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
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        self.inner.commit(commit).await
    }
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, mnemograph_core::value::ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.inner.put_writes(config, writes, task_id, task_path).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.inner.delete_thread(thread_id).await
    }
}

fn one_node() -> StateGraph<S> {
    StateGraph::<S>::new().add_node("a", logger("a")).add_edge(START, "a")
}

/// Updating the latest state while another writer moves the thread stores nothing and reports a
/// conflict, instead of forking the thread behind the other writer's back.
#[tokio::test]
async fn test_update_state_conflicts_when_the_thread_moved() {
    let saver = std::sync::Arc::new(MovedAfterRead::default());
    let shared: std::sync::Arc<dyn mnemograph_core::checkpoint::DynCheckpointer> = saver.clone();
    let g = one_node().compile().unwrap().with_shared_checkpointer(shared);
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let before = g.get_state_history(&cfg, ListOptions::new()).await.unwrap().len();

    saver.armed.store(true, Ordering::SeqCst);
    let err = g.update_state(&cfg, SUpdate::log(vec!["edited".into()]), Some("a")).await.unwrap_err();
    assert!(err.is_conflict(), "{err:?}");
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), before + 1, "only the other writer's checkpoint was added");
    assert!(history.iter().all(|s| !s.values.log.contains(&"edited".to_owned())));

    // With the thread quiet again the same update goes through, on top of the other writer's.
    g.update_state(&cfg, SUpdate::log(vec!["edited".into()]), Some("a")).await.unwrap();
    assert_eq!(g.get_state(&cfg).await.unwrap().values.log, ["a", "edited"]);
}

/// An update addressed to an explicit older checkpoint is a fork by request, never a conflict.
#[tokio::test]
async fn test_update_state_on_an_old_checkpoint_forks() {
    let g = one_node().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let history = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    let old = history.last().unwrap().config.clone().unwrap();
    let at_old = RunConfig::thread("t").checkpoint_id(old.checkpoint_id.unwrap());
    g.update_state(&at_old, SUpdate::log(vec!["forked".into()]), None).await.unwrap();
    assert_eq!(g.get_state(&cfg).await.unwrap().values.log, ["forked"]);
}

/// Scalar `RunConfig` metadata is stored with the update's checkpoint, as LangGraph merges it.
#[tokio::test]
async fn test_update_state_keeps_config_metadata() {
    let g = one_node().compile_with(InMemoryCheckpointer::new()).unwrap();
    let cfg = RunConfig::thread("t").metadata("migrated_from", "legacy").metadata("rows", 3);
    g.update_state(&cfg, SUpdate::log(vec!["seed".into()]), None).await.unwrap();
    let meta = g.get_state(&cfg).await.unwrap().metadata.unwrap();
    assert_eq!(meta.source, CheckpointSource::Update);
    assert_eq!(meta.extra.get("migrated_from"), Some(&serde_json::json!("legacy")));
    assert_eq!(meta.extra.get("rows"), Some(&serde_json::json!(3)));
}
