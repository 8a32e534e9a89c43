//! The update path for superseded facts: the [`Consolidator`] finds a new memory's most similar
//! older memories of the same user, asks a [`SupersedeDecider`] which it replaces, and retires
//! those (see [`Retire`]).

use std::collections::HashSet;

use crate::decide::{Candidate, SupersedeDecider};
use crate::error::{Error, Result};
use crate::memory::Memory;
use crate::record::{now_secs, MemoryRecord, NewMemory, RetrieveQuery, SearchMode};
use crate::retire::{Retire, Retirement};

/// How candidates are found.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ConsolidateOptions {
    /// Dense similarity from which an older memory is shown to the decider (default 0.5). Lower
    /// finds facts that changed in other words, at the price of longer prompts.
    pub min_similarity: f64,
    /// At most this many candidates per new memory, most similar first (default 5).
    pub max_candidates: usize,
}

impl Default for ConsolidateOptions {
    fn default() -> Self {
        Self { min_similarity: 0.5, max_candidates: 5 }
    }
}

impl ConsolidateOptions {
    /// Sets the candidate threshold (clamped to `[0, 1]`).
    #[must_use]
    pub fn min_similarity(mut self, threshold: f64) -> Self {
        self.min_similarity = threshold.clamp(0.0, 1.0);
        self
    }
    /// Sets how many candidates the decider sees.
    #[must_use]
    pub fn max_candidates(mut self, n: usize) -> Self {
        self.max_candidates = n;
        self
    }
}

/// What a consolidation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConsolidateReport {
    /// New memories checked.
    pub checked: usize,
    /// Candidates shown to the decider, over all checked memories.
    pub candidates: usize,
    /// What was retired, with the audit trail each memory got.
    pub retired: Vec<Retirement>,
}

impl ConsolidateReport {
    /// Adds `other`'s counts and retirements.
    pub fn merge(&mut self, other: ConsolidateReport) {
        self.checked += other.checked;
        self.candidates += other.candidates;
        self.retired.extend(other.retired);
    }
    /// Ids of the retired memories.
    pub fn retired_ids(&self) -> Vec<i64> {
        self.retired.iter().map(|r| r.id).collect()
    }
}

/// Retires what new memories supersede: on the hot path ([`save_turn`](Self::save_turn)), for a
/// stored memory ([`consolidate`](Self::consolidate)), over a session in the background
/// ([`consolidate_session`](Self::consolidate_session)), or after compaction
/// ([`compact_and_consolidate`](crate::compact_and_consolidate)).
///
/// ```
/// use mnemograph_checkpoint::store::HashingEmbeddings;
/// use mnemograph_memory::{Consolidator, EmbeddedMemory, Memory, NewMemory, RetrieveQuery, RuleDecider};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> mnemograph_memory::Result<()> {
/// let memory = EmbeddedMemory::new(HashingEmbeddings::new(256));
/// let old = NewMemory::turn("ann", "s1", "My phone number is 555-0101", "Noted.").created_at(1_000);
/// memory.save_turn(old).await?;
/// let consolidator = Consolidator::new(RuleDecider::default().min_similarity(0.6));
/// let new = NewMemory::turn("ann", "s2", "My phone number is 555-0199", "Noted.").created_at(2_000);
/// let (_, report) = consolidator.save_turn(&memory, new).await?;
/// assert_eq!(report.retired.len(), 1);
/// let hits = memory.retrieve(RetrieveQuery::new("ann", "what is my phone number")).await?;
/// assert!(hits.iter().all(|h| !h.record.content.contains("0101")));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Consolidator<D> {
    /// Who decides.
    decider: D,
    /// How candidates are found.
    options: ConsolidateOptions,
}

impl<D: SupersedeDecider> Consolidator<D> {
    /// A consolidator with default options.
    pub fn new(decider: D) -> Self {
        Self { decider, options: ConsolidateOptions::default() }
    }
    /// Sets how candidates are found.
    #[must_use]
    pub fn options(mut self, options: ConsolidateOptions) -> Self {
        self.options = options;
        self
    }
    /// The decider.
    pub fn decider(&self) -> &D {
        &self.decider
    }

    /// The candidates of `new`: the same user's live memories strictly older than it, at least
    /// `min_similarity` similar (dense, no decay), most similar first, without `exclude`.
    ///
    /// The search is a [`Memory::retrieve`], so it carries the backend's escaped user filter;
    /// the checks after it are a second line, and what makes "older" strict (a same-second pair
    /// cannot retire each other).
    ///
    /// # Errors
    /// Memory errors.
    pub async fn candidates<M: Memory>(
        &self,
        memory: &M,
        new: &MemoryRecord,
        exclude: &HashSet<i64>,
    ) -> Result<Vec<Candidate>> {
        if self.options.max_candidates == 0 {
            return Ok(Vec::new());
        }
        // One extra, and those excluded: the new memory itself may be among the hits.
        let k = self.options.max_candidates + 1 + exclude.len();
        let query = RetrieveQuery::new(&new.user_id, &new.content)
            .mode(SearchMode::Dense)
            .rerank(false)
            .until(new.created_at)
            .top_k(k);
        let hits = memory.retrieve(query).await?;
        Ok(hits
            .into_iter()
            .filter(|h| h.record.user_id == new.user_id && h.record.id != new.id)
            .filter(|h| h.record.created_at < new.created_at && !h.record.is_retired())
            .filter(|h| h.relevance >= self.options.min_similarity && !exclude.contains(&h.record.id))
            .take(self.options.max_candidates)
            .map(|h| Candidate::new(h.record, h.relevance))
            .collect())
    }

    /// Retires what the stored memory `new` supersedes; `exclude` names memories never to
    /// retire (e.g. a summary's own sources).
    ///
    /// All or nothing per memory: when the decider fails or names something it was not shown,
    /// nothing is retired.
    ///
    /// # Errors
    /// [`Error::Decider`], [`Error::MalformedDecision`], [`Error::UnknownCandidate`]; memory
    /// errors.
    pub async fn consolidate_excluding<M: Retire>(
        &self,
        memory: &M,
        new: &MemoryRecord,
        exclude: &HashSet<i64>,
    ) -> Result<ConsolidateReport> {
        let mut report = ConsolidateReport { checked: 1, ..ConsolidateReport::default() };
        if new.is_retired() {
            return Ok(report);
        }
        let candidates = self.candidates(memory, new, exclude).await?;
        report.candidates = candidates.len();
        if candidates.is_empty() {
            return Ok(report);
        }
        let decisions = self.decider.decide(new, &candidates).await?;
        // Validate every decision before retiring any, so a bad answer retires nothing.
        if let Some(bad) = decisions.iter().find(|d| !candidates.iter().any(|c| c.record.id == d.id)) {
            return Err(Error::UnknownCandidate { candidate: bad.id });
        }
        if decisions.is_empty() {
            return Ok(report);
        }
        let at = now_secs();
        let retirements: Vec<Retirement> =
            decisions.into_iter().map(|d| Retirement::new(d.id, new.id, at, d.reason)).collect();
        let done = memory.retire(&new.user_id, &retirements).await?;
        report.retired = retirements.into_iter().filter(|r| done.contains(&r.id)).collect();
        Ok(report)
    }

    /// [`consolidate_excluding`](Self::consolidate_excluding) with nothing excluded.
    ///
    /// # Errors
    /// As [`consolidate_excluding`](Self::consolidate_excluding).
    pub async fn consolidate<M: Retire>(&self, memory: &M, new: &MemoryRecord) -> Result<ConsolidateReport> {
        self.consolidate_excluding(memory, new, &HashSet::new()).await
    }

    /// The opt-in hot path: [`Memory::save_turn`], then retires what the turn supersedes.
    /// The turn is dated now unless it has a time, so that it is newer than what it replaces.
    ///
    /// The turn is stored even when consolidation then fails (the error is returned): losing the
    /// user's newest words would be worse than keeping a stale one a while longer.
    ///
    /// # Errors
    /// As [`Memory::save_turn`] and [`consolidate`](Self::consolidate).
    pub async fn save_turn<M: Retire>(
        &self,
        memory: &M,
        turn: NewMemory,
    ) -> Result<(i64, ConsolidateReport)> {
        let mut turn = turn;
        let created_at = *turn.created_at.get_or_insert_with(now_secs);
        let id = memory.save_turn(turn.clone()).await?;
        let record = MemoryRecord::saved(id, turn, created_at);
        let report = self.consolidate(memory, &record).await?;
        Ok((id, report))
    }

    /// The background job: consolidates every live memory of a session, oldest first, each
    /// against the user's older memories (earlier sessions included). Idempotent: a second run
    /// finds nothing more to retire, since retired memories are no longer candidates.
    ///
    /// # Errors
    /// As [`consolidate`](Self::consolidate); retirements made before an error stay.
    pub async fn consolidate_session<M: Retire>(
        &self,
        memory: &M,
        user_id: &str,
        session_id: &str,
    ) -> Result<ConsolidateReport> {
        let records = memory.session_records(user_id, session_id).await?;
        let mut report = ConsolidateReport::default();
        // Retired during this run: the listing above predates those marks.
        let mut retired: HashSet<i64> = HashSet::new();
        for record in records.iter().filter(|r| !r.is_retired()) {
            if retired.contains(&record.id) {
                continue;
            }
            let one = self.consolidate(memory, record).await?;
            retired.extend(one.retired_ids());
            report.merge(one);
        }
        Ok(report)
    }
}
