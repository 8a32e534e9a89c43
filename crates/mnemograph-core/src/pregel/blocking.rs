//! Running a node's future on a thread of tokio's blocking pool (`NodeOptions::blocking`), so
//! work that does not yield holds that thread rather than one of the runtime's own.

use std::future::Future;

use futures_util::future::{abortable, AbortHandle};
use tokio::runtime::Handle;
use tracing::instrument::WithSubscriber;

use crate::error::BoxError;

/// Drives `fut` to its end on a blocking thread and returns its output; in place when no tokio
/// runtime is current. A panic in `fut` resumes here, where it would have surfaced had `fut`
/// run in place. Dropping the returned future stops `fut` at its next await.
pub(crate) async fn on_blocking_thread<F, T>(fut: F) -> Result<T, BoxError>
where
    F: Future<Output = Result<T, BoxError>> + Send + 'static,
    T: Send + 'static,
{
    let Ok(handle) = Handle::try_current() else { return fut.await };
    // The subscriber of the caller's thread (a test's or a scoped one) is thread-local: the
    // blocking thread gets it explicitly, so the node's events and spans reach it.
    let (fut, abort) = abortable(fut.with_current_subscriber());
    let _stop = StopOnDrop(abort);
    let driver = handle.clone();
    match handle.spawn_blocking(move || driver.block_on(fut)).await {
        Ok(Ok(out)) => out,
        // Only `_stop` aborts, and it does so when this future is dropped: never observed here.
        Ok(Err(_aborted)) => Err("the node was stopped: its run was dropped".into()),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_cancelled) => Err("the node's blocking thread was cancelled: its runtime shut down".into()),
    }
}

/// Aborts the node's future when the run stops waiting for it.
struct StopOnDrop(AbortHandle);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
