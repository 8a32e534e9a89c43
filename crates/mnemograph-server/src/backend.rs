//! [`Backend`]: where a server keeps its records and who runs its runs; in the process by
//! default ([`InProcess`]), in a cluster's shared stores with `mnemograph-server-cluster`.

use std::sync::Arc;
use std::time::Duration;

use mnemograph_core::checkpoint::DynCheckpointer;

use crate::app::App;
use crate::assistant::AssistantRecord;
use crate::keeper::{AssistantKeeper, CronKeeper, LocalAssistants, LocalCrons, LocalRecords, RecordKeeper};
use crate::retention::Retention;
use crate::webhook::Webhooks;

/// Where a [`Server`](crate::Server) keeps its thread, run, assistant and cron records, and who
/// runs its runs.
///
/// By default everything lives in the server's process and its runs run there. A cluster
/// (`mnemograph_server_cluster::Cluster`) keeps them in a database several processes share, runs
/// each run in whichever process has room and carries run events between the processes; it is
/// given to [`Server::with_backend`](crate::Server::with_backend). The methods are the server's
/// side of that contract and are not meant to be called from elsewhere.
pub trait Backend: Send + 'static {
    /// The saver that replaces the one the server was made with, if any.
    #[doc(hidden)]
    fn saver(&self) -> Option<Arc<dyn DynCheckpointer>> {
        None
    }

    /// The keepers of the server's records, given what the server was configured with.
    #[doc(hidden)]
    fn keepers(self: Box<Self>, setup: Setup) -> Keepers;
}

/// What a server hands its [`Backend`] when it builds its keepers.
pub struct Setup {
    /// The server's saver, which the backend's saver replaced if it names one.
    pub saver: Arc<dyn DynCheckpointer>,
    /// How long finished runs and idle threads stay.
    pub retention: Retention,
    /// How long a finished run's events stay readable.
    pub event_retention: Duration,
    /// Where runs' final records may be posted.
    pub(crate) webhooks: Webhooks,
    /// The system assistants of the graphs served.
    pub system: Vec<AssistantRecord>,
}

/// The keepers a [`Backend`] chooses, and what it starts once the server's state exists.
pub struct Keepers {
    /// The thread and run records.
    pub records: Arc<dyn RecordKeeper>,
    /// The assistants.
    pub assistants: Arc<dyn AssistantKeeper>,
    /// The crons.
    pub crons: Arc<dyn CronKeeper>,
    /// Started inside the Tokio runtime once the server's state exists: the backend's workers.
    pub start: Option<Box<dyn FnOnce(Arc<App>) + Send>>,
}

impl std::fmt::Debug for Setup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Setup").field("retention", &self.retention).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Keepers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keepers").field("start", &self.start.is_some()).finish_non_exhaustive()
    }
}

/// Records in the process, runs run by the process that received them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct InProcess;

impl Backend for InProcess {
    fn keepers(self: Box<Self>, setup: Setup) -> Keepers {
        Keepers {
            records: Arc::new(LocalRecords::new(
                setup.saver,
                setup.retention,
                setup.event_retention,
                setup.webhooks,
            )),
            assistants: Arc::new(LocalAssistants::new(setup.system)),
            crons: Arc::new(LocalCrons::default()),
            start: None,
        }
    }
}
