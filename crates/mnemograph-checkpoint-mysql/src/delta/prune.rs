//! `prune` with delta chains: a blob no remaining checkpoint names directly is still kept when a
//! delta that one does name is built on it.

use std::collections::HashMap;

use mnemograph_checkpoint::checkpoint::backend::version_number;
use sqlx::{MySql, Row as _, Transaction};

use super::format::{self, DELTA_TYPE};
use crate::exact::{same, same_columns};

/// Whether a remaining checkpoint of the namespace names the blob row `bl` in its
/// `channel_versions` (the condition of the plain prune; thread ids compared exactly, see
/// [`crate::exact`]).
macro_rules! referenced {
    () => {
        concat!(
            "EXISTS (SELECT 1 FROM checkpoints c WHERE ",
            same_columns!("c.thread_id", "bl.thread_id"),
            " AND c.checkpoint_ns_hash = bl.checkpoint_ns_hash \
            AND JSON_CONTAINS(c.checkpoint, JSON_OBJECT(bl.channel, bl.version), '$.channel_versions'))"
        )
    };
}

/// The referenced delta rows of a namespace, with enough of each blob for its header: two
/// versions of at most 150 characters of at most four bytes, and a few framing bytes. Binds the
/// thread id twice, the hash, the type.
const TIPS: &str = concat!(
    "SELECT bl.channel, SUBSTRING(bl.`blob`, 1, 1300), bl.version FROM checkpoint_blobs bl WHERE ",
    same!("bl.thread_id"),
    " AND bl.checkpoint_ns_hash = ? AND bl.type = ? AND ",
    referenced!()
);

/// The unreferenced rows of a namespace (thread id twice, hash).
const CANDIDATES: &str = concat!(
    "SELECT bl.channel, bl.version FROM checkpoint_blobs bl WHERE ",
    same!("bl.thread_id"),
    " AND bl.checkpoint_ns_hash = ? AND NOT ",
    referenced!()
);

/// Rows deleted per statement.
const DELETE_BATCH: usize = 500;

/// Deletes the blobs of a namespace that no remaining checkpoint needs. Without referenced delta
/// rows this is the plain statement `unreferenced` (bound with the thread id twice and the hash);
/// otherwise every
/// blob within the version range of a referenced delta's chain (`[root, version]` of its channel)
/// is kept as well.
pub(crate) async fn prune_blobs(
    tx: &mut Transaction<'_, MySql>,
    thread_id: &str,
    hash: &[u8],
    unreferenced: &str,
) -> Result<(), sqlx::Error> {
    let tips = sqlx::query(TIPS)
        .bind(thread_id)
        .bind(thread_id)
        .bind(hash)
        .bind(DELTA_TYPE)
        .fetch_all(&mut **tx)
        .await?;
    if tips.is_empty() {
        sqlx::query(unreferenced).bind(thread_id).bind(thread_id).bind(hash).execute(&mut **tx).await?;
        return Ok(());
    }
    // Per channel, the counter ranges to keep; `None`: keep the whole channel (a header that
    // cannot be read is no reason to lose data).
    let mut keep: HashMap<String, Option<Vec<(u64, u64)>>> = HashMap::new();
    for row in &tips {
        let channel: String = row.try_get_unchecked(0)?;
        let header: Vec<u8> = row.try_get_unchecked(1)?;
        let version: String = row.try_get_unchecked(2)?;
        let range = format::decode_header(&header)
            .ok()
            .and_then(|(_, root, _, _)| Some((version_number(root)?, version_number(&version)?)));
        let entry = keep.entry(channel).or_insert_with(|| Some(Vec::new()));
        match (entry.as_mut(), range) {
            (Some(ranges), Some(range)) => ranges.push(range),
            _ => *entry = None,
        }
    }
    let candidates =
        sqlx::query(CANDIDATES).bind(thread_id).bind(thread_id).bind(hash).fetch_all(&mut **tx).await?;
    let mut doomed: Vec<(String, String)> = Vec::with_capacity(candidates.len());
    for row in candidates {
        let (channel, version): (String, String) = (row.try_get_unchecked(0)?, row.try_get_unchecked(1)?);
        if !needed(keep.get(&channel), &version) {
            doomed.push((channel, version));
        }
    }
    for batch in doomed.chunks(DELETE_BATCH) {
        // By primary key; the rows came from this thread's exact id, so a collation-equal id
        // cannot share them (the key would collide).
        let text = format!(
            "DELETE FROM checkpoint_blobs WHERE {} AND checkpoint_ns_hash = ? AND (channel, version) IN ({})",
            same!("thread_id"),
            vec!["(?, ?)"; batch.len()].join(", ")
        );
        let start = sqlx::query(&text).bind(thread_id).bind(thread_id).bind(hash);
        let query = batch.iter().fold(start, |q, (c, v)| q.bind(c).bind(v));
        query.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Whether an unreferenced blob of a channel lies in a kept chain range.
fn needed(ranges: Option<&Option<Vec<(u64, u64)>>>, version: &str) -> bool {
    match ranges {
        None => false,
        Some(None) => true,
        Some(Some(ranges)) => match version_number(version) {
            Some(n) => ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&n)),
            // Not a counter version: it cannot be a link, but keep it rather than guess.
            None => true,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_in_a_kept_range_stay() {
        let ranges = Some(vec![(3, 7)]);
        assert!(needed(Some(&ranges), "00000000000000000000000000000003.0.1"));
        assert!(needed(Some(&ranges), "00000000000000000000000000000007.0.1"));
        assert!(!needed(Some(&ranges), "00000000000000000000000000000002.0.1"));
        assert!(!needed(None, "00000000000000000000000000000005.0.1"), "a channel without deltas");
        assert!(needed(Some(&None), "00000000000000000000000000000001.0.1"), "unreadable header");
        assert!(needed(Some(&ranges), "odd"));
    }
}
