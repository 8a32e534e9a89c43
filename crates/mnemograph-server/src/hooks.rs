//! [`RunHooks`]: the application's own work around each run of a graph — rebuilding a thread
//! from an archive before it runs, archiving what a run produced after it — so an application
//! keeps that code and stops writing routes, run bookkeeping and cancellation.

use mnemograph_core::{BoxError, BoxFuture, CompiledGraph, RunConfig, State};
use serde_json::{Map, Value};

use crate::auth::Identity;

/// The run a hook is called for.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunContext {
    /// The thread the run is on.
    pub thread_id: String,
    /// The run's id.
    pub run_id: String,
    /// The thread's metadata merged with the run's (what the run's checkpoints record). On a
    /// server with [`Auth`](crate::auth::Auth), the caller's grant is stamped over it, so a client
    /// cannot name someone else here.
    pub metadata: Map<String, Value>,
    /// Who started the run, on a server with [`Auth`](crate::auth::Auth); `None` without.
    pub identity: Option<Identity>,
}

impl RunContext {
    /// The context of run `run_id` on `thread_id`, configured by `config`.
    pub(crate) fn of(thread_id: String, run_id: String, config: &RunConfig) -> Self {
        Self {
            thread_id,
            run_id,
            metadata: config.metadata.clone(),
            identity: Identity::of(&config.configurable),
        }
    }
}

/// How a run ended, as [`RunHooks::after_run`] learns it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunEnd {
    /// The run finished, or stopped at an interrupt or a breakpoint.
    Success,
    /// The run failed with this message.
    Error(String),
    /// The run was cancelled (by a client, or by a newer run's multitask strategy).
    Cancelled,
}

/// What the server calls around each run of one graph. Both methods do nothing by default.
pub trait RunHooks<S: State, C = ()>: Send + Sync + 'static {
    /// Called when the run starts, before the graph runs. It may adjust the run's
    /// configuration (durability, limits). An error fails the run: clients get an `error`
    /// event and the thread's status becomes `error`.
    fn before_run<'a>(
        &'a self,
        graph: &'a CompiledGraph<S, C>,
        run: &'a RunContext,
        config: &'a mut RunConfig,
    ) -> BoxFuture<'a, Result<(), BoxError>> {
        let _ = (graph, run, config);
        Box::pin(async { Ok(()) })
    }

    /// Called after the run ended, before clients waiting on it are answered.
    fn after_run<'a>(
        &'a self,
        graph: &'a CompiledGraph<S, C>,
        run: &'a RunContext,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, ()> {
        let _ = (graph, run, end);
        Box::pin(async {})
    }
}

/// No hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl<S: State, C: Send + Sync + 'static> RunHooks<S, C> for NoHooks {}
