//! Writing a run's events to its Redis stream as they come. A write that fails keeps its events
//! and is tried again, waiting longer each time, with the events that came meanwhile; while Redis
//! stays away, the events kept are bounded by the stream's length, and the oldest beyond it are
//! given up (the stream would have trimmed them) and counted in the log.
//!
//! A batch goes in one `MULTI`/`EXEC`, all of it or none; a connection lost after Redis ran it
//! and before the answer came makes the retry write the batch again, so a client may see an
//! event twice but never misses one.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc;

use super::Ledger;

/// The wait after the first failed write.
const BACKOFF: Duration = Duration::from_millis(100);
/// The longest wait between two tries.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Writes the events from `rx` to `run_id`'s stream until `rx` closes and every event kept is
/// written.
pub(super) async fn write_events(
    ledger: Arc<Ledger>,
    run_id: String,
    mut rx: mpsc::UnboundedReceiver<(String, Value)>,
) {
    let bound = ledger.events.max_len();
    let mut kept: VecDeque<(String, Value)> = VecDeque::new();
    let (mut backoff, mut given_up, mut open, mut failing) = (BACKOFF, 0_usize, true, false);
    loop {
        if kept.is_empty() {
            if !open {
                break;
            }
            match rx.recv().await {
                Some(event) => kept.push_back(event),
                None => break,
            }
        }
        loop {
            match rx.try_recv() {
                Ok(event) => kept.push_back(event),
                Err(mpsc::error::TryRecvError::Empty) => break,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        // Only while Redis is away: a live reader gets every event of a stream Redis accepts.
        while failing && kept.len() > bound {
            kept.pop_front();
            given_up += 1;
        }
        match ledger.events.append(&run_id, kept.make_contiguous()).await {
            Ok(()) => {
                kept.clear();
                backoff = BACKOFF;
                failing = false;
            }
            Err(e) => {
                tracing::warn!(run_id = %run_id, error = %e, kept = kept.len(), "writing a run's events failed; retrying");
                failing = true;
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
    if given_up > 0 {
        tracing::error!(
            run_id = %run_id,
            given_up,
            "Redis stayed away longer than a stream's length of events: the oldest were given up"
        );
    }
}
