//! The record a claimed run's webhook is told about: read when the run is claimed, since a
//! stateless run's record, or a rolled-back one's, is gone by the time the run's end is recorded.

use std::time::Duration;

use sqlx::MySqlPool;

use super::tables;
use crate::queue::Claim;
use mnemograph_server::__cluster::webhook_of;
use mnemograph_server::__cluster::RunRecord;

/// How many times reading the record is tried.
const TRIES: u32 = 3;
/// The wait after the first failed read; doubled after each.
const BACKOFF: Duration = Duration::from_millis(100);

/// The webhook a claimed run names, and the run's record; `None` when it names none.
pub(super) async fn of_claim(pool: &MySqlPool, claim: &Claim) -> Option<(String, RunRecord)> {
    let named = claim.run.payload.get("body")?.get("webhook")?.as_str()?;
    if named.is_empty() {
        return None;
    }
    let run_id = claim.run.run_id.as_str();
    let mut backoff = BACKOFF;
    for attempt in 1..=TRIES {
        match tables::run(pool, run_id).await {
            Ok(Some(record)) => {
                let target = webhook_of(&record).unwrap_or(named).to_owned();
                return Some((target, record));
            }
            Ok(None) => return None,
            Err(e) if attempt < TRIES => {
                tracing::warn!(run_id, error = %e, "reading a run's record for its webhook failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff *= 2;
            }
            Err(e) => {
                tracing::error!(run_id, error = %e, "reading a run's record failed; its webhook is not sent");
            }
        }
    }
    None
}
