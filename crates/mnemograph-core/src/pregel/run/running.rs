//! The tasks of a superstep while they run: spawned on the runtime's worker threads, so they
//! run in parallel, or polled inside the run's own future, concurrently on one thread.

use std::future::Future;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::task::{Id, JoinSet};
use tracing::instrument::WithSubscriber;

use crate::pregel::task::JobResult;
use crate::State;

/// A step's running tasks; [`next`](Self::next) hands over each one's result as it finishes.
pub(super) enum Running<F: Future> {
    /// Polled inside the run's future: on a current-thread runtime (where spawning adds nothing
    /// but cost), outside tokio, or when the graph keeps its tasks in place.
    InPlace(FuturesUnordered<F>),
    /// Spawned on a multi-thread runtime's workers. Dropping the set (the run was dropped, or it
    /// returned early with an error) aborts the tasks still running.
    Spawned {
        set: JoinSet<F::Output>,
        /// Each spawned task's id with its position in the step, to report a task the runtime
        /// cancelled.
        positions: Vec<(Id, usize)>,
    },
}

impl<S, F> Running<F>
where
    S: State,
    F: Future<Output = JobResult<S>> + Send + 'static,
{
    /// Starts `tasks` (each one's position in the step with its future): spawned when `spawn`
    /// allows it and the current runtime is a multi-thread one, in place otherwise.
    pub(super) fn start(tasks: impl IntoIterator<Item = (usize, F)>, spawn: bool) -> Self {
        let Some(handle) = spawn.then(workers).flatten() else {
            return Self::InPlace(tasks.into_iter().map(|(_, f)| f).collect());
        };
        let mut set = JoinSet::new();
        let mut positions = Vec::new();
        for (i, f) in tasks {
            // The caller's subscriber may be thread-local (a test's, or one set with
            // `tracing::subscriber::set_default`): each task takes it along to its worker, so its
            // node span, its events and the spans of what it calls reach the same subscriber.
            let abort = set.spawn_on(f.with_current_subscriber(), &handle);
            positions.push((abort.id(), i));
        }
        Self::Spawned { set, positions }
    }

    /// Whether every task's result has been handed over.
    pub(super) fn is_empty(&self) -> bool {
        match self {
            Self::InPlace(running) => running.is_empty(),
            Self::Spawned { set, .. } => set.is_empty(),
        }
    }

    /// The next task to finish, `None` once all have. A task that panicked resumes its panic
    /// here, in the run's future, as it would have had it been polled in place; one the runtime
    /// cancelled (it is shutting down) fails.
    pub(super) async fn next(&mut self) -> Option<JobResult<S>> {
        match self {
            Self::InPlace(running) => running.next().await,
            Self::Spawned { set, positions } => {
                let joined = set.join_next().await?;
                Some(match joined {
                    Ok(result) => result,
                    Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                    Err(e) => {
                        let i = positions.iter().find(|(id, _)| *id == e.id()).map_or(0, |(_, i)| *i);
                        (i, Err("the task was cancelled: its runtime is shutting down".into()), None)
                    }
                })
            }
        }
    }
}

/// The current runtime, if it is a multi-thread one: only its workers can run tasks in parallel.
fn workers() -> Option<Handle> {
    let handle = Handle::try_current().ok()?;
    (handle.runtime_flavor() == RuntimeFlavor::MultiThread).then_some(handle)
}
