//! [`RunRef`]: a run as the routes see it, whether this process runs it or another one does.

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::error::Result;
use crate::records::RunRecord;
use crate::sse::Frames;

/// What the routes need of a run, wherever it runs: each record keeper's runs implement it.
pub trait RunView: Send + Sync {
    /// The run's record, as it was when this view was taken.
    fn record(&self) -> RunRecord;

    /// The run's events after the one with id `after`, ending when the run ends.
    fn frames(&self, after: Option<&str>) -> Frames;

    /// Waits for the run to end; what `wait` and `join` answer.
    fn output(&self) -> BoxFuture<'_, Result<Value>>;

    /// What to call when the client streaming the run goes away and asked for the run to stop.
    fn stopper(&self) -> Box<dyn FnOnce() + Send>;
}

/// A run the routes answer about.
pub struct RunRef(Box<dyn RunView>);

impl std::fmt::Debug for RunRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRef").finish_non_exhaustive()
    }
}

impl RunRef {
    /// A reference to `run`.
    pub fn new(run: impl RunView + 'static) -> Self {
        Self(Box::new(run))
    }

    /// The run's record, as it was when this reference was taken.
    pub(crate) fn record(&self) -> RunRecord {
        self.0.record()
    }

    /// The run's path, `/threads/{thread_id}/runs/{run_id}`.
    pub(crate) fn path(&self) -> String {
        let r = self.record();
        format!("/threads/{}/runs/{}", r.thread_id, r.run_id)
    }

    /// The run's events after the one with id `after`, ending when the run ends.
    pub(crate) fn frames(&self, after: Option<&str>) -> Frames {
        self.0.frames(after)
    }

    /// Waits for the run to end; what `wait` and `join` answer.
    pub(crate) async fn output(&self) -> Result<Value> {
        self.0.output().await
    }

    /// What to call when the client streaming the run goes away and asked for the run to stop.
    pub(crate) fn stopper(&self) -> Box<dyn FnOnce() + Send> {
        self.0.stopper()
    }
}
