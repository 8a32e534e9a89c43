//! Recall@3 on the hard set, per retrieval mode and per [`Category`], plus the two properties the
//! hard set exists to check: no cross-user hit, and how often the newer of two contradicting facts
//! outranks the older one.

use std::collections::BTreeMap;

use mnemograph_memory::{Memory, MemoryHit, RetrieveQuery, SearchMode};

use super::dataset::Recall;
use super::hard_dataset::{self, Category, HardQuestion, NOW};

/// How many memories each question retrieves (the "3" of recall@3).
pub const TOP_K: usize = 3;

/// A retrieval configuration being compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Vector search only, relevance order.
    Dense,
    /// Vector search, then time decay and importance: separates what decay buys from what BM25
    /// costs or buys.
    DenseDecay,
    /// Dense + BM25 fused with RRF, relevance order.
    Hybrid,
    /// Hybrid, then time decay and importance (the crate's default retrieval).
    HybridDecay,
}

impl Mode {
    /// Every mode, in report order.
    pub const ALL: [Mode; 4] = [Mode::Dense, Mode::DenseDecay, Mode::Hybrid, Mode::HybridDecay];

    /// Short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Dense => "dense",
            Mode::DenseDecay => "dense+decay+importance",
            Mode::Hybrid => "hybrid",
            Mode::HybridDecay => "hybrid+decay+importance",
        }
    }

    /// Applies the mode to a query.
    pub fn shape(self, q: RetrieveQuery) -> RetrieveQuery {
        match self {
            Mode::Dense => q.mode(SearchMode::Dense).rerank(false),
            Mode::DenseDecay => q.mode(SearchMode::Dense).rerank(true),
            Mode::Hybrid => q.mode(SearchMode::Hybrid).rerank(false),
            Mode::HybridDecay => q.mode(SearchMode::Hybrid).rerank(true),
        }
    }
}

/// What one mode scored on the hard set.
#[derive(Debug, Clone, Default)]
pub struct HardReport {
    /// Recall@3 per category (`cross_user` counted per category too).
    pub per_category: BTreeMap<Category, Recall>,
    /// Superseded questions where the newer fact was returned and ranked above the older one
    /// (or the older one was not returned at all).
    pub newer_first: usize,
    /// Superseded questions where the outdated fact was returned at all (a stale answer leaks in).
    pub stale_returned: usize,
    /// Lexical-trap questions whose top hit was one of the traps.
    pub trap_on_top: usize,
    /// Exact-identifier questions whose top hit was a distractor about another identifier.
    pub wrong_id_on_top: usize,
}

impl HardReport {
    /// Recall over every question.
    pub fn overall(&self) -> Recall {
        self.per_category.values().fold(Recall::default(), |a, r| Recall {
            hits: a.hits + r.hits,
            total: a.total + r.total,
            cross_user: a.cross_user + r.cross_user,
        })
    }

    /// Recall of one category.
    pub fn category(&self, c: Category) -> Recall {
        self.per_category.get(&c).copied().unwrap_or_default()
    }

    /// Returned memories that belonged to another user, over all questions.
    pub fn cross_user(&self) -> usize {
        self.overall().cross_user
    }

    /// One report line: overall and per-category rates, the superseded ordering, cross-user hits.
    pub fn line(&self, label: &str, mode: Mode) -> String {
        let mut s = format!("{label} {:<24} overall {:.3}", mode.label(), self.overall().rate());
        for c in Category::ALL {
            s.push_str(&format!(" | {} {:.3}", c.label(), self.category(c).rate()));
        }
        let sup = self.category(Category::Superseded).total;
        let traps = self.category(Category::LexicalTrap).total;
        let ids = self.category(Category::ExactIdentifier).total;
        s.push_str(&format!(
            " | newer-first {}/{sup} stale-returned {}/{sup} trap-on-top {}/{traps} \
             wrong-id-on-top {}/{ids} | cross-user {}",
            self.newer_first,
            self.stale_returned,
            self.trap_on_top,
            self.wrong_id_on_top,
            self.cross_user()
        ));
        s
    }
}

/// Position of the first hit containing `marker`.
fn position(hits: &[MemoryHit], marker: &str) -> Option<usize> {
    hits.iter().position(|h| h.record.content.contains(marker))
}

/// Asks every question in `mode` and scores the answers.
pub async fn measure<M: Memory>(memory: &M, questions: &[HardQuestion], mode: Mode) -> HardReport {
    let mut report = HardReport::default();
    for q in questions {
        let query = mode.shape(RetrieveQuery::new(&q.user, &q.question).top_k(TOP_K).now(NOW));
        let hits = memory.retrieve(query).await.expect("retrieve");
        let r = report.per_category.entry(q.category).or_default();
        r.total += 1;
        r.cross_user += hits.iter().filter(|h| h.record.user_id != q.user).count();
        let found = position(&hits, &q.marker);
        if found.is_some() {
            r.hits += 1;
        }
        if let Some(stale) = &q.stale_marker {
            let old = position(&hits, stale);
            report.stale_returned += usize::from(old.is_some());
            if matches!((found, old), (Some(_), None)) || matches!((found, old), (Some(n), Some(o)) if n < o)
            {
                report.newer_first += 1;
            }
        }
        let top_is_trap = hits.first().is_some_and(|h| q.traps.iter().any(|t| h.record.content.contains(t)));
        match q.category {
            Category::LexicalTrap => report.trap_on_top += usize::from(top_is_trap),
            Category::ExactIdentifier => report.wrong_id_on_top += usize::from(top_is_trap),
            Category::Superseded | Category::LowOverlap => {}
        }
    }
    report
}

/// Saves the hard set into `memory` and measures every [`Mode`], printing one line per mode to
/// stderr (visible with `--nocapture`) so the figures are recorded with the test run.
pub async fn run_all<M: Memory>(
    label: &str,
    memory: &M,
    users: usize,
    turns: usize,
) -> Vec<(Mode, HardReport)> {
    let (memories, questions) = hard_dataset::build(users, turns);
    for chunk in memories.chunks(100) {
        memory.save(chunk.to_vec()).await.expect("save");
    }
    eprintln!(
        "{label}: hard set, {} memories, {} questions, recall@{TOP_K}",
        memories.len(),
        questions.len()
    );
    let mut out = Vec::new();
    for mode in Mode::ALL {
        let report = measure(memory, &questions, mode).await;
        eprintln!("{}", report.line(label, mode));
        out.push((mode, report));
    }
    out
}

/// The report of `mode` in the output of [`run_all`].
pub fn get(reports: &[(Mode, HardReport)], mode: Mode) -> &HardReport {
    &reports.iter().find(|(m, _)| *m == mode).expect("every mode is measured").1
}

/// Nobody sees another user's memories, in any mode: every returned memory is the asker's, even
/// though every other user holds the same kinds of facts in near-identical words.
pub fn assert_isolated(label: &str, reports: &[(Mode, HardReport)]) {
    for (mode, r) in reports {
        assert_eq!(r.cross_user(), 0, "{label} {}: cross-user hits", mode.label());
    }
}

/// Every mode still answers a fair share of the questions: a floor far below what a semantic
/// model measures, so a broken pipeline (wrong filter, lost rows, scrambled ranks) fails while
/// ordinary variation between stores passes.
pub fn assert_recall_floor(label: &str, reports: &[(Mode, HardReport)], floor: f64) {
    for (mode, r) in reports {
        let overall = r.overall();
        assert!(overall.rate() >= floor, "{label} {}: recall {overall:?} below {floor}", mode.label());
    }
}

/// Time decay exists to prefer the current version of a fact: with it, the newer fact must come
/// first at least as often as without it (both versions have the same importance, so only age
/// separates them).
pub fn assert_decay_prefers_newer(label: &str, reports: &[(Mode, HardReport)]) {
    let (plain, decay) = (get(reports, Mode::Hybrid), get(reports, Mode::HybridDecay));
    assert!(
        decay.newer_first >= plain.newer_first,
        "{label}: decay put the newer fact first {} times, plain hybrid {}",
        decay.newer_first,
        plain.newer_first
    );
}

/// Paraphrases are dense search's job: on the low-overlap questions, dense alone must recall at
/// least as many facts as hybrid, whose BM25 list can only add word-matching distractors there.
pub fn assert_dense_bridges_paraphrases(label: &str, reports: &[(Mode, HardReport)]) {
    let dense = get(reports, Mode::Dense).category(Category::LowOverlap);
    let hybrid = get(reports, Mode::Hybrid).category(Category::LowOverlap);
    assert!(dense.hits >= hybrid.hits, "{label}: low-overlap dense {dense:?} < hybrid {hybrid:?}");
}

/// Exact identifiers are BM25's job: on the exact-identifier questions, hybrid must recall at
/// least as many facts as dense alone, since the identifier's word is in the fact only and so
/// tops the BM25 list, which RRF adds to the dense one.
pub fn assert_keywords_find_identifiers(label: &str, reports: &[(Mode, HardReport)]) {
    let dense = get(reports, Mode::Dense).category(Category::ExactIdentifier);
    let hybrid = get(reports, Mode::Hybrid).category(Category::ExactIdentifier);
    assert!(hybrid.hits >= dense.hits, "{label}: exact-identifier hybrid {hybrid:?} < dense {dense:?}");
}
