//! [`ThreadUpdates`]: the state updates made to threads through the API, as they happen, for
//! the thread streams open in this process (`stream_modes=state_update`).

use axum::body::Bytes;
use tokio::sync::broadcast;

/// How many updates a slow thread stream may fall behind before it misses some.
const BACKLOG: usize = 256;

/// One thread's state update: the thread and the event's JSON data.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadUpdate {
    /// The thread updated.
    pub thread_id: String,
    /// The `state_update` event's payload.
    pub data: Bytes,
}

/// The state updates of every thread, sent to every thread stream of this process.
#[derive(Debug, Clone)]
pub struct ThreadUpdates(broadcast::Sender<ThreadUpdate>);

impl Default for ThreadUpdates {
    fn default() -> Self {
        Self(broadcast::channel(BACKLOG).0)
    }
}

impl ThreadUpdates {
    /// Tells the streams open here; none listening is no error.
    pub fn send(&self, update: ThreadUpdate) {
        let _ = self.0.send(update);
    }

    /// The updates from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ThreadUpdate> {
        self.0.subscribe()
    }
}
