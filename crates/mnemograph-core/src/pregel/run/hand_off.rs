//! What a run hands its saver: finished tasks' writes (or, for a step's last task, keeping them
//! for the step's checkpoint), special writes, and the checkpoints themselves.

use tracing::Instrument;

use super::{execute, Loop};
use crate::checkpoint::backend::uuid6;
use crate::checkpoint::{CheckpointMetadata, CheckpointSource, WriteBatch};
use crate::config::Durability;
use crate::error::{Error, Result};
use crate::pregel::channels::writes;
use crate::pregel::checkpoint_codec;
use crate::pregel::saver_spans::{saver_span, SaverOp};
use crate::pregel::task::{Task, TaskWrites};
use crate::stream::{StreamEvent, StreamMode};
use crate::value::ChannelValue;
use crate::State;

/// LangGraph's marker write of a task that finished without output.
const NO_WRITES: &str = "__no_writes__";

impl<S: State, C: Send + Sync + 'static> Loop<'_, S, C> {
    /// Saves a finished task's writes, or with `defer` keeps them to be saved with the step's
    /// checkpoint, which follows at once when nothing else of the step is left.
    /// A task that wrote nothing is recorded with LangGraph's `__no_writes__` marker, so every
    /// reader knows it finished; `resumed` are the answers to interrupts it used.
    pub(super) async fn save_writes(
        &mut self,
        t: &Task<S>,
        writes: &TaskWrites<S>,
        resumed: Option<Vec<serde_json::Value>>,
        defer: bool,
    ) -> Result<()> {
        let Some(p) = self.committer.as_ref().filter(|p| p.durability != Durability::Exit) else {
            return Ok(());
        };
        let mut pairs = writes::writes_to_pending(self.layout, writes)?;
        if pairs.is_empty() {
            pairs.push((NO_WRITES.to_owned(), ChannelValue::Null));
        }
        // LangGraph records the answers before the task's output.
        if let Some(answers) = resumed {
            pairs.insert(0, execute::resume_write(answers));
        }
        if defer {
            self.deferred =
                Some(WriteBatch { task_id: t.id.to_string(), task_path: t.path.to_string(), writes: pairs });
            return Ok(());
        }
        let span = saver_span(SaverOp::PutWrites, &p.saved);
        p.saver.put_writes(&p.saved, pairs, &t.id, &t.path).instrument(span).await?;
        tracing::trace!(task_id = %t.id, "pending writes saved");
        Ok(())
    }

    /// Saves what the run kept for its next checkpoint, when the run fails before that
    /// checkpoint: the held input checkpoint, then the deferred writes on their own, so that a
    /// resumed run does not repeat their task. Returns `e`, the run's failure. Called once, where
    /// every failure of the superstep loop arrives.
    pub(super) async fn save_deferred(&mut self, e: Error) -> Error {
        let Some(p) = self.committer.as_mut() else { return e };
        if let Err(saving) = p.store_held().await {
            tracing::warn!(error = %saving, "input checkpoint of a failed run not saved");
            return e;
        }
        if let Some(batch) = self.deferred.take() {
            let span = saver_span(SaverOp::PutWrites, &p.saved);
            let saved = p.saver.put_writes(&p.saved, batch.writes, &batch.task_id, &batch.task_path);
            let saved = saved.instrument(span).await;
            if let Err(saving) = saved {
                tracing::warn!(error = %saving, "pending writes of a failed step not saved");
            }
        }
        e
    }

    /// Saves a task's special writes (its interrupt or error, and the answers it used) together.
    pub(super) async fn save_special(
        &mut self,
        t: &Task<S>,
        pairs: Vec<(String, ChannelValue)>,
    ) -> Result<()> {
        let Some(p) = self.committer.as_ref().filter(|p| p.durability != Durability::Exit) else {
            return Ok(());
        };
        let span = saver_span(SaverOp::PutWrites, &p.saved);
        p.saver.put_writes(&p.saved, pairs, &t.id, &t.path).instrument(span).await?;
        Ok(())
    }

    /// Creates the checkpoint of the current step and saves it unless durability is `exit`.
    pub(super) async fn checkpoint(&mut self, source: CheckpointSource, updated: &[usize]) -> Result<()> {
        self.checkpoint_id = uuid6(self.step);
        self.dirty = true;
        let wants_event =
            self.sink.is_some_and(|s| s.wants(StreamMode::Checkpoints) || s.wants(StreamMode::Debug));
        if wants_event {
            let next = self
                .ch
                .triggered_nodes(self.layout)
                .iter()
                .map(|n| self.layout.nodes[*n].name.to_string())
                .collect();
            if let Some(sink) = self.sink {
                sink.send(StreamEvent::Checkpoint {
                    checkpoint_id: self.checkpoint_id.clone(),
                    step: self.step,
                    next,
                });
            }
        }
        match &self.committer {
            Some(p) if p.durability != Durability::Exit => self.save(source, updated).await,
            _ => Ok(()),
        }
    }

    pub(super) async fn save(&mut self, source: CheckpointSource, updated: &[usize]) -> Result<()> {
        let Some(p) = self.committer.as_mut() else { return Ok(()) };
        let cp = checkpoint_codec::to_checkpoint(
            self.layout,
            &self.ch,
            self.checkpoint_id.clone(),
            updated,
            &mut self.vt,
            &mut self.cache,
        )?;
        // LangGraph records which channels a step updated only for steps that ran tasks or took
        // input; a fork names none.
        let mut cp = cp;
        if source == CheckpointSource::Fork {
            cp.updated_channels = None;
        }
        // `new_versions`: channels whose version moved since the last saved checkpoint.
        let new_versions = checkpoint_codec::new_versions(
            self.layout,
            &self.ch,
            &p.saved_versions,
            &mut self.vt,
            &mut self.cache,
        );
        let mut metadata = CheckpointMetadata::new(source, self.step);
        metadata.parents.clone_from(&self.config.parents);
        for (k, v) in &self.config.metadata {
            // LangGraph keeps only scalar user metadata and drops its own `__` keys.
            if !k.starts_with("__") && (v.is_string() || v.is_number() || v.is_boolean()) {
                metadata.extra.insert(k.clone(), v.clone());
            }
        }
        tracing::trace!(step = self.step, source = source.as_str(), "saving checkpoint");
        // An input checkpoint is followed by a step that only routes the input: both are stored
        // together (see `run_loop`).
        let hold = source == CheckpointSource::Input;
        p.commit(cp, metadata, new_versions, self.deferred.take(), hold).await?;
        p.saved_versions.clone_from(&self.ch.versions);
        self.dirty = false;
        Ok(())
    }
}
