//! [`RunRef`]: a run as the routes see it, whether this process runs it or another one does.

use std::sync::Arc;

use serde_json::Value;

use crate::records::RunRecord;
use crate::run::{RunHandle, Stop};
use crate::sse::Frames;

/// A run the routes answer about.
pub(crate) enum RunRef {
    /// A run of this process.
    Local(Arc<RunHandle>),
    /// A run of the cluster, which any of its processes may be running.
    #[cfg(feature = "cluster")]
    Remote(Box<crate::cluster::RemoteRun>),
}

impl RunRef {
    /// The run's record, as it was when this reference was taken.
    pub(crate) fn record(&self) -> RunRecord {
        match self {
            Self::Local(run) => run.record(),
            #[cfg(feature = "cluster")]
            Self::Remote(run) => run.record.clone(),
        }
    }

    /// The run's path, `/threads/{thread_id}/runs/{run_id}`.
    pub(crate) fn path(&self) -> String {
        let r = self.record();
        format!("/threads/{}/runs/{}", r.thread_id, r.run_id)
    }

    /// The run's events after the one with id `after`, ending when the run ends.
    pub(crate) fn frames(&self, after: Option<&str>) -> Frames {
        match self {
            Self::Local(run) => run.clone().frames(after),
            #[cfg(feature = "cluster")]
            Self::Remote(run) => run.frames(after.map(str::to_owned)),
        }
    }

    /// Waits for the run to end; what `wait` and `join` answer.
    pub(crate) async fn output(&self) -> crate::Result<Value> {
        match self {
            Self::Local(run) => {
                run.wait().await;
                Ok(run.output())
            }
            #[cfg(feature = "cluster")]
            Self::Remote(run) => run.output().await,
        }
    }

    /// What to call when the client streaming the run goes away and asked for the run to stop.
    pub(crate) fn stopper(&self) -> Box<dyn FnOnce() + Send> {
        match self {
            Self::Local(run) => {
                let run = run.clone();
                Box::new(move || run.request_stop(Stop::Interrupt))
            }
            #[cfg(feature = "cluster")]
            Self::Remote(run) => run.stopper(),
        }
    }
}
