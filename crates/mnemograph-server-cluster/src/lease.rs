//! Keeping a claimed run's lease: renewed on the queue's own lease connections for as long as
//! the run is its worker's, and given up as soon as it could have run out.
//!
//! Another worker may take a run over once its lease ran out in the database, and that happens
//! no sooner than one lease after the last renewal that succeeded. A renewal's clock starts
//! before its request is sent, so a worker that counts one lease from there stops no later than
//! another could start: it stops the run, records nothing and calls no hook.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::{tables, Ledger};
use crate::queue::{Claim, Lease};

/// The shortest wait before a failed renewal is tried again.
const RETRY_AT_LEAST: Duration = Duration::from_millis(50);

/// A claim's lease, renewed until dropped.
pub(super) struct Held {
    /// Set once the run may be another worker's: the lease could have run out, a renewal found
    /// the run taken over, or the saver refused a write.
    pub(super) lost: Arc<AtomicBool>,
    /// Turns `true` when `lost` is set by the renewals.
    lost_rx: watch::Receiver<bool>,
    renewing: JoinHandle<()>,
}

impl Held {
    /// Starts renewing `claim`'s lease, which started no sooner than `since`.
    pub(super) fn start(ledger: Arc<Ledger>, claim: Claim, lease: Lease, since: Instant) -> Self {
        let lost = Arc::new(AtomicBool::new(false));
        let (lost_tx, lost_rx) = watch::channel(false);
        let renewing = tokio::spawn(renew(ledger, claim, lease, since, lost.clone(), lost_tx));
        Self { lost, lost_rx, renewing }
    }

    /// Whether the run may be another worker's.
    pub(super) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    /// Resolves once the renewals give the run up.
    pub(super) async fn given_up(&self) {
        let mut rx = self.lost_rx.clone();
        // The sender lives as long as the renewals; once they stop, the run is given up too.
        let _ = rx.wait_for(|lost| *lost).await;
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.renewing.abort();
    }
}

/// Renews until the lease could have run out or the run is another's; after each renewal,
/// delivers a stop request whose message was lost on the way.
async fn renew(
    ledger: Arc<Ledger>,
    claim: Claim,
    lease: Lease,
    since: Instant,
    lost: Arc<AtomicBool>,
    lost_tx: watch::Sender<bool>,
) {
    let run_id = claim.run.run_id.as_str();
    let mut last_renewed = since;
    let mut wait = lease.renew_every();
    loop {
        let deadline = last_renewed + lease.ttl;
        tokio::time::sleep_until((Instant::now() + wait).min(deadline)).await;
        let sent = Instant::now();
        if sent >= deadline {
            tracing::warn!(run_id, "no lease renewal succeeded for a whole lease: stopping the run");
            break;
        }
        match tokio::time::timeout(deadline - sent, ledger.queue.renew(&claim, lease)).await {
            Ok(Ok(true)) => {
                last_renewed = sent;
                wait = lease.renew_every();
                match tables::stop_requested(ledger.queue.pool(), run_id).await {
                    Ok(Some(how)) => ledger.deliver_stop(run_id, how),
                    Ok(None) => {}
                    Err(e) => tracing::warn!(run_id, error = %e, "reading a run's stop request failed"),
                }
            }
            Ok(Ok(false)) => {
                tracing::warn!(run_id, "the run is no longer this worker's: stopping it");
                break;
            }
            Ok(Err(e)) => {
                tracing::warn!(run_id, error = %e, "renewing a lease failed; retrying");
                wait = (lease.renew_every() / 4).max(RETRY_AT_LEAST);
            }
            // The deadline passed while the renewal waited: the next turn gives the run up.
            Err(_) => wait = Duration::ZERO,
        }
    }
    lost.store(true, Ordering::Release);
    lost_tx.send_replace(true);
    // Held until dropped, so that `Held::given_up` never sees the sender gone before the flag.
    std::future::pending::<()>().await;
}
