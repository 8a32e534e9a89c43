//! The Pregel engine: supersteps over channels (LangGraph's `pregel/`). It runs a [`plan`] and
//! knows nothing of the builder that made it.
//!
//! - [`plan`]: the channels and nodes a run works on, addressed by index;
//! - [`node`]: nodes as the engine calls them;
//! - [`channels`]: the run's channel table, one file per kind of channel;
//! - [`step`]: the pure halves of a superstep, `prepare_tasks` and `apply_writes`;
//! - [`task`]: tasks, their deterministic ids, routing a node's output to edge channels;
//! - [`blocking`]: running a node's future on a thread of the blocking pool;
//! - [`checkpoint_codec`]: converting the channel table to and from LangGraph's checkpoint model;
//! - [`version_text`]: the texts of a run's channel versions;
//! - [`commit`]: the [`Committer`](commit::Committer) that saves a run's checkpoints, refusing one
//!   whose parent is no longer the latest;
//! - [`saver_spans`]: the spans of the engine's calls to its saver;
//! - [`run`]: the superstep loop (IO, concurrency, retries, streaming).
//!
//! [`Pregel`] itself, a plan bound to its saver, store and context, is defined here.

mod blocking;
pub(crate) mod channels;
pub(crate) mod checkpoint_codec;
pub(crate) mod commit;
pub(crate) mod node;
pub(crate) mod plan;
pub(crate) mod run;
pub(crate) mod saver_spans;
mod step;
pub(crate) mod task;
pub(crate) mod version_text;

use std::any::Any;
use std::sync::Arc;

use crate::checkpoint::DynCheckpointer;
use crate::error::{Error, Result};
use crate::store::DynStore;
use crate::State;
use plan::Layout;

/// What the engine runs: a plan bound to what a run needs besides its input, the saver, the store
/// and the context handed to nodes (LangGraph's `Pregel`, which `CompiledStateGraph` extends).
/// Cheap to clone (shares everything).
pub(crate) struct Pregel<S: State, C> {
    /// What runs are called in traces (LangGraph's `CompiledStateGraph.name`).
    pub(crate) name: Arc<str>,
    pub(crate) layout: Arc<Layout<S, C>>,
    pub(crate) checkpointer: Option<Arc<dyn DynCheckpointer>>,
    pub(crate) context: Option<Arc<C>>,
    pub(crate) store: Option<Arc<dyn DynStore>>,
    /// Whether a step of several tasks may spawn them on a multi-thread runtime's workers.
    pub(crate) spawn_tasks: bool,
}

impl<S: State, C> Clone for Pregel<S, C> {
    fn clone(&self) -> Self {
        Self {
            name: Arc::clone(&self.name),
            layout: Arc::clone(&self.layout),
            checkpointer: self.checkpointer.clone(),
            context: self.context.clone(),
            store: self.store.clone(),
            spawn_tasks: self.spawn_tasks,
        }
    }
}

/// A graph's name until [`CompiledGraph::with_name`](crate::CompiledGraph::with_name) gives
/// another: LangGraph's default.
pub(crate) const DEFAULT_GRAPH_NAME: &str = "LangGraph";

impl<S: State, C: Send + Sync + 'static> Pregel<S, C> {
    /// A plan with nothing bound yet.
    pub(crate) fn new(layout: Layout<S, C>) -> Self {
        let name = Arc::from(DEFAULT_GRAPH_NAME);
        Self {
            name,
            layout: Arc::new(layout),
            checkpointer: None,
            context: None,
            store: None,
            spawn_tasks: true,
        }
    }

    /// The context nodes receive; graphs whose nodes take none use `()`, which needs no binding.
    pub(crate) fn context_or_unit(&self) -> Result<Arc<C>> {
        if let Some(c) = &self.context {
            return Ok(Arc::clone(c));
        }
        let unit: Arc<dyn Any + Send + Sync> = Arc::new(());
        unit.downcast::<C>().map_err(|_| Error::MissingContext(std::any::type_name::<C>()))
    }
}
