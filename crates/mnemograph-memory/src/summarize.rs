//! The background job: compacting a long session into a few summary memories.

use std::future::Future;

use mnemograph_checkpoint::BoxError;

use std::collections::HashSet;

use crate::consolidate::{ConsolidateReport, Consolidator};
use crate::decide::SupersedeDecider;
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::record::{now_secs, MemoryRecord, NewMemory, ROLE_EXCHANGE, ROLE_SUMMARY};
use crate::retire::{Retire, Retirement};

/// Turns consecutive memories into a few summaries. Usually an LLM call; this crate depends on no
/// model crate, so the caller supplies it (a closure works through [`summarizer_fn`]).
pub trait Summarizer: Send + Sync {
    /// Summaries of `records` (consecutive, oldest first); an empty vector keeps nothing.
    fn summarize(
        &self,
        records: &[MemoryRecord],
    ) -> impl Future<Output = Result<Vec<String>, BoxError>> + Send;
}

/// A [`Summarizer`] from a closure; see [`summarizer_fn`].
#[derive(Debug, Clone, Copy)]
pub struct FnSummarizer<F>(F);

/// Adapts `f(records) -> future of summaries` into a [`Summarizer`].
///
/// ```
/// use mnemograph_memory::{summarizer_fn, MemoryRecord};
/// let s = summarizer_fn(|records: Vec<MemoryRecord>| async move {
///     Ok(vec![format!("{} exchanges about travel", records.len())])
/// });
/// # let _ = s;
/// ```
pub fn summarizer_fn<F, Fut>(f: F) -> FnSummarizer<F>
where
    F: Fn(Vec<MemoryRecord>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<String>, BoxError>> + Send,
{
    FnSummarizer(f)
}

impl<F, Fut> Summarizer for FnSummarizer<F>
where
    F: Fn(Vec<MemoryRecord>) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Vec<String>, BoxError>> + Send,
{
    fn summarize(
        &self,
        records: &[MemoryRecord],
    ) -> impl Future<Output = Result<Vec<String>, BoxError>> + Send {
        (self.0)(records.to_vec())
    }
}

/// When and how [`compact_session`] compacts.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct CompactOptions {
    /// Do nothing until the session has this many exchanges (default 20).
    pub min_records: usize,
    /// Leave the newest exchanges as they are (default 4): they are still the live context.
    pub keep_recent: usize,
    /// Exchanges per summarizer call (default 10).
    pub chunk_size: usize,
    /// Importance floor of summaries (default 0.7): a summary stands for many exchanges.
    pub summary_importance: f32,
    /// Delete the exchanges once their summaries are stored (default true).
    pub delete_compacted: bool,
}

impl Default for CompactOptions {
    fn default() -> Self {
        Self {
            min_records: 20,
            keep_recent: 4,
            chunk_size: 10,
            summary_importance: 0.7,
            delete_compacted: true,
        }
    }
}

impl CompactOptions {
    /// Sets the trigger threshold.
    #[must_use]
    pub fn min_records(mut self, n: usize) -> Self {
        self.min_records = n;
        self
    }
    /// Sets how many newest exchanges are kept.
    #[must_use]
    pub fn keep_recent(mut self, n: usize) -> Self {
        self.keep_recent = n;
        self
    }
    /// Sets the chunk size (at least 1).
    #[must_use]
    pub fn chunk_size(mut self, n: usize) -> Self {
        self.chunk_size = n.max(1);
        self
    }
    /// Keeps the compacted exchanges when `false`.
    #[must_use]
    pub fn delete_compacted(mut self, on: bool) -> Self {
        self.delete_compacted = on;
        self
    }
}

/// What [`compact_session`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactReport {
    /// Exchanges summarized.
    pub compacted: usize,
    /// Ids of the stored summaries.
    pub summary_ids: Vec<i64>,
    /// What the summaries superseded ([`compact_and_consolidate`] only).
    pub consolidation: ConsolidateReport,
    /// The summarized exchanges, each retired in favour of its summary ([`compact_and_retire`]
    /// only).
    pub retired: Vec<Retirement>,
}

/// Summarizes all but the newest live exchanges of a session into summary memories (role
/// `summary`), then deletes the summarized exchanges. Retired exchanges (see
/// [`Retire`]) are neither summarized nor counted: a summary must not bring a stale fact back.
///
/// Each summary is dated like the newest exchange it covers, so time decay treats it as that
/// recent, and records `source_ids`, `from` and `to` in its metadata. Summaries are never
/// summarized again. Run it off the hot path, e.g. `tokio::spawn` after a session ends.
///
/// Per chunk, summaries are stored before the exchanges are deleted: a crash in between leaves
/// both (a duplicate), never neither.
///
/// # Errors
/// [`Error::Summarizer`] when the summarizer fails; memory errors.
pub async fn compact_session<M: Memory, S: Summarizer>(
    memory: &M,
    summarizer: &S,
    user_id: &str,
    session_id: &str,
    options: CompactOptions,
) -> Result<CompactReport> {
    compact(memory, summarizer, user_id, session_id, options).await.map(|(report, _)| report)
}

/// [`compact_session`], then retires what each new summary supersedes among the user's older
/// memories (other sessions included), with `consolidator`: the background job for long
/// sessions. A summary's own source exchanges are never among its candidates (deleting them is
/// [`CompactOptions::delete_compacted`]'s job).
///
/// Consolidation runs once compaction is complete, so an error there (a malformed model answer)
/// leaves a finished compaction and retires nothing for that summary; rerun the consolidation
/// alone with [`Consolidator::consolidate_session`].
///
/// # Errors
/// As [`compact_session`] and [`Consolidator::consolidate`].
pub async fn compact_and_consolidate<M: Retire, S: Summarizer, D: SupersedeDecider>(
    memory: &M,
    summarizer: &S,
    consolidator: &Consolidator<D>,
    user_id: &str,
    session_id: &str,
    options: CompactOptions,
) -> Result<CompactReport> {
    let (mut report, summaries) = compact(memory, summarizer, user_id, session_id, options).await?;
    for (summary, sources) in &summaries {
        let one = consolidator.consolidate_excluding(memory, summary, sources).await?;
        report.consolidation.merge(one);
    }
    Ok(report)
}

/// Reason recorded on an exchange that [`compact_and_retire`] replaced by a summary.
pub const COMPACTED_REASON: &str = "compacted into a summary";

/// [`compact_session`], retiring the summarized exchanges instead of deleting them: each gets
/// the [`Retire`] marks with `superseded_by` = its summary's id and [`COMPACTED_REASON`], so
/// retrieval returns the summary in its place while the exchange stays readable for audits and
/// can be brought back with [`Retire::restore`]. [`CompactOptions::delete_compacted`] is not
/// used.
///
/// A chunk whose summarizer returns no summary keeps its exchanges live: nothing stands in for
/// them. Per chunk, the summaries are stored before the exchanges are retired: a crash in between
/// leaves both live, never neither.
///
/// # Errors
/// As [`compact_session`] and [`Retire::retire`].
pub async fn compact_and_retire<M: Retire, S: Summarizer>(
    memory: &M,
    summarizer: &S,
    user_id: &str,
    session_id: &str,
    options: CompactOptions,
) -> Result<CompactReport> {
    let options = options.delete_compacted(false);
    let (mut report, summaries) = compact(memory, summarizer, user_id, session_id, options).await?;
    let at = now_secs();
    for (summary, sources) in &summaries {
        let mut ids: Vec<i64> = sources.iter().copied().collect();
        ids.sort_unstable();
        let retirements: Vec<Retirement> =
            ids.iter().map(|&id| Retirement::new(id, summary.id, at, COMPACTED_REASON)).collect();
        // A chunk with several summaries retires its exchanges once, for the first of them.
        let done = memory.retire(user_id, &retirements).await?;
        report.retired.extend(retirements.into_iter().filter(|r| done.contains(&r.id)));
    }
    // Only what a summary now stands in for counts: a chunk without a summary stays live.
    report.compacted = report.retired.len();
    Ok(report)
}

/// A summary's sources, excluded from its consolidation.
type Sources = HashSet<i64>;

/// The compaction itself; also returns each stored summary with its sources.
async fn compact<M: Memory, S: Summarizer>(
    memory: &M,
    summarizer: &S,
    user_id: &str,
    session_id: &str,
    options: CompactOptions,
) -> Result<(CompactReport, Vec<(MemoryRecord, Sources)>)> {
    let exchanges: Vec<MemoryRecord> = memory
        .session_records(user_id, session_id)
        .await?
        .into_iter()
        .filter(|r| r.role == ROLE_EXCHANGE && !r.is_retired())
        .collect();
    let mut stored = Vec::new();
    let mut report = CompactReport::default();
    if exchanges.len() < options.min_records.max(1) || exchanges.len() <= options.keep_recent {
        return Ok((report, stored));
    }
    let older = &exchanges[..exchanges.len() - options.keep_recent];
    for chunk in older.chunks(options.chunk_size.max(1)) {
        let texts = summarizer.summarize(chunk).await.map_err(Error::Summarizer)?;
        let from = chunk.iter().map(|r| r.created_at).min().unwrap_or_default();
        let to = chunk.iter().map(|r| r.created_at).max().unwrap_or_default();
        let importance = chunk.iter().map(|r| r.importance).fold(options.summary_importance, f32::max);
        let ids: Vec<i64> = chunk.iter().map(|r| r.id).collect();
        let summaries: Vec<NewMemory> = texts
            .into_iter()
            .map(|text| {
                NewMemory::new(user_id, session_id, ROLE_SUMMARY, text)
                    .created_at(to)
                    .importance(importance)
                    .meta("type", "summary")
                    .meta("source_ids", ids.clone())
                    .meta("from", from)
                    .meta("to", to)
            })
            .collect();
        let summary_ids = memory.save(summaries.clone()).await?;
        let sources: Sources = ids.iter().copied().collect();
        for (id, m) in summary_ids.iter().zip(summaries) {
            stored.push((MemoryRecord::saved(*id, m, to), sources.clone()));
        }
        report.summary_ids.extend(summary_ids);
        if options.delete_compacted {
            memory.delete(user_id, &ids).await?;
        }
        report.compacted += chunk.len();
    }
    Ok((report, stored))
}

#[cfg(test)]
mod tests {
    use mnemograph_checkpoint::store::HashingEmbeddings;

    use super::*;
    use crate::record::RetrieveQuery;
    use crate::EmbeddedMemory;

    /// One summary per chunk listing the user lines, or none for a chunk of small talk.
    fn user_lines() -> impl Summarizer {
        summarizer_fn(|records: Vec<MemoryRecord>| async move {
            let lines: Vec<&str> = records
                .iter()
                .filter_map(|r| r.content.lines().next())
                .filter(|l| !l.contains("weather"))
                .collect();
            Ok(if lines.is_empty() { Vec::new() } else { vec![lines.join("\n")] })
        })
    }

    #[tokio::test]
    async fn compacted_exchanges_are_retired_for_their_summary_not_deleted() {
        let memory = EmbeddedMemory::new(HashingEmbeddings::new(128));
        for (i, q) in ["My dog is called Biscuit", "I live in Lisbon", "Nice weather", "Sunny weather"]
            .into_iter()
            .enumerate()
        {
            let turn = NewMemory::turn("ada", "monday", q, "Noted").created_at(100 + i as i64);
            memory.save_turn(turn).await.unwrap();
        }
        let options = CompactOptions::default().min_records(2).keep_recent(0).chunk_size(2);
        let report = compact_and_retire(&memory, &user_lines(), "ada", "monday", options).await.unwrap();

        // The small-talk chunk got no summary and stays live.
        assert_eq!(report.summary_ids.len(), 1, "{report:?}");
        assert_eq!(report.compacted, 2);
        let records = memory.session_records("ada", "monday").await.unwrap();
        assert_eq!(records.len(), 5, "nothing deleted: {records:?}");
        let summary = records.iter().find(|r| r.role == ROLE_SUMMARY).unwrap();
        assert_eq!(summary.id, report.summary_ids[0]);
        let retired: Vec<&MemoryRecord> = records.iter().filter(|r| r.is_retired()).collect();
        assert_eq!(retired.len(), 2);
        for r in &retired {
            assert_eq!(r.superseded_by(), Some(summary.id), "{r:?}");
            assert_eq!(r.metadata["superseded_reason"], COMPACTED_REASON);
            assert!(!r.content.contains("weather"));
        }
        assert_eq!(report.retired.iter().map(|r| r.id).collect::<HashSet<_>>().len(), 2);

        // Retrieval returns the summary in place of the exchanges.
        let hits =
            memory.retrieve(RetrieveQuery::new("ada", "what is my dog called?").top_k(10)).await.unwrap();
        assert!(hits.iter().any(|h| h.record.id == summary.id), "{hits:?}");
        assert!(hits.iter().all(|h| !h.record.is_retired()), "{hits:?}");

        // Run again: the summary is never summarized again, the small talk still has none.
        let again = compact_and_retire(&memory, &user_lines(), "ada", "monday", options).await.unwrap();
        assert_eq!((again.compacted, again.summary_ids.len()), (0, 0), "{again:?}");
    }
}
