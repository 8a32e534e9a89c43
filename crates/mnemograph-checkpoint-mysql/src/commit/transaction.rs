//! One put transaction from its connection to its release: the parent check, the rows, the
//! `COMMIT`, and another attempt when InnoDB broke a deadlock or the parent was busy.
//!
//! What a put stores is handed over as a value ([`Body`]), and written by the module of its
//! layout once the parent check has passed: [`super::full_rows`] or [`super::shallow_rows`].

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointError};

use super::check_with_commit::{self, Failure};
use super::connections::{Lease, Writers};
use super::first_lock::FirstCheckpointLock;
use super::full_rows::{self, Rows};
use super::parent_check::lock_and_check;
use super::retry::{backoff, is_deadlock, DEADLOCK_ATTEMPTS};
use super::shallow_rows::{self, ShallowRows};
use super::tx::Mark;
use super::tx::Tx;
use crate::delta::Stored;
use crate::error::backend;
use crate::fence::Fence;
use crate::keys::ns_hash;
use crate::sql::Layout;
use crate::texts::Texts;

/// What a put transaction stores after its parent check.
pub(crate) enum Body<'a> {
    /// Full layout: the rows of each checkpoint of a chain, each the child of the one before.
    Full(&'a [Rows<'a>]),
    /// Shallow layout: the namespace's one checkpoint.
    Shallow(&'a ShallowRows<'a>),
}

impl Body<'_> {
    /// The layout the rows belong to.
    fn layout(&self) -> Layout {
        match self {
            Body::Full(_) => Layout::Full,
            Body::Shallow(_) => Layout::Shallow,
        }
    }

    /// Stores the rows on `tx`; returns what delta mode stored for each checkpoint (nothing in
    /// the shallow layout).
    async fn write(&self, tx: &mut Tx) -> Result<Vec<Vec<Option<Stored>>>, CheckpointError> {
        match self {
            Body::Full(all) => full_rows::write_all(tx, all).await,
            Body::Shallow(rows) => shallow_rows::write(tx, rows).await.map(|()| Vec::new()),
        }
    }
}

/// Stores `body` in one put transaction: with `expect_latest`, the parent check (and, for a
/// namespace's first checkpoint, its [`FirstCheckpointLock`]) comes first, comparing the
/// parent's row with `texts` when given (see [`lock_and_check`]); then `fence`, when given, whose
/// failure refuses the put with [`CheckpointError::Fenced`]. A transaction that InnoDB
/// rolled back to break a deadlock did nothing, and is run again after a short pause, up to
/// [`DEADLOCK_ATTEMPTS`] times. What the body queues on the [`Tx`] is sent with the `COMMIT`.
///
/// Returns what delta mode stored for each checkpoint of a full-layout body.
pub(crate) async fn run(
    writers: &Writers,
    config: &CheckpointConfig,
    expect_latest: bool,
    texts: Option<&Texts>,
    fence: Option<&Fence>,
    body: Body<'_>,
) -> Result<Vec<Vec<Option<Stored>>>, CheckpointError> {
    let hash = ns_hash(&config.checkpoint_ns);
    // A put that expects the namespace to be empty waits for the namespace's named lock.
    let mut first = match expect_latest && config.checkpoint_id.is_none() {
        true => Some(FirstCheckpointLock::acquire(writers.pool(), config).await?),
        false => None,
    };
    let conn = match first.as_mut().and_then(FirstCheckpointLock::take) {
        Some(conn) => Lease::Pooled(conn),
        None => writers.acquire().await.map_err(backend)?,
    };
    let mut tx = Tx::new(conn);
    let mut attempt = 1;
    let result = loop {
        tx.begin();
        // What the body queued goes with the COMMIT, so a deadlock can surface there too.
        let written = async {
            if expect_latest {
                lock_and_check(&mut tx, body.layout(), config, &hash, texts).await?;
            }
            if let Some(fence) = fence {
                tx.queue_marked(&fence.statement(), Mark::Fence).await.map_err(backend)?;
            }
            let value = body.write(&mut tx).await?;
            tx.commit().await.map_err(backend)?;
            Ok(value)
        }
        .await;
        match written {
            Ok(value) => break Ok(value),
            Err(e) => {
                tx.rollback().await;
                if let (Some(fence), Some((Mark::Fence, check_with_commit::ER_DATA_OUT_OF_RANGE))) =
                    (fence, tx.failed_mark())
                {
                    break Err(fence.refused());
                }
                match check_with_commit::failure(&tx) {
                    Some(Failure::Moved) => {
                        break Err(check_with_commit::conflict(writers.pool(), config, &hash).await)
                    }
                    Some(Failure::Busy) => {
                        // Another writer holds the parent: wait for it, outside the COMMIT's script.
                        tx.wait_for_checks();
                        continue;
                    }
                    None => {}
                }
                if !(is_deadlock(&e) && attempt < DEADLOCK_ATTEMPTS) {
                    break Err(e);
                }
                tracing::debug!(attempt, thread_id = %config.thread_id, "put deadlocked; retrying");
                backoff(attempt).await;
                attempt += 1;
            }
        }
    };
    // A connection that may hold an open transaction is closed, which frees the lock too.
    match (first, tx.into_connection()) {
        (Some(mut lock), Some(Lease::Pooled(conn))) => {
            lock.restore(conn);
            lock.release(config).await;
        }
        (None, Some(lease)) => writers.release(lease),
        _ => {}
    }
    result
}
