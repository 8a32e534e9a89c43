//! The update path on the hard set: how often the newer of two contradicting facts comes first
//! with decay alone, and after consolidation retired what it superseded; plus what consolidation
//! retired that it should not have.

use std::collections::HashSet;
use std::sync::Arc;

use mnemograph_checkpoint::messages::Message;
use mnemograph_memory::{
    ConsolidateOptions, Consolidator, LlmDecider, Memory, MemoryRecord, Retire, RetrieveQuery, RuleDecider,
    SupersedeDecider,
};

use super::hard_dataset::{self, Category, HardQuestion, NOW, SESSION_AGES};
use super::hard_recall::{measure, HardReport, Mode, TOP_K};

/// What one decider did to one mode's figures.
#[derive(Debug, Clone)]
pub struct UpdateReport {
    /// Decay only (no memory retired).
    pub decay: HardReport,
    /// After consolidating every session, oldest first.
    pub updated: HardReport,
    /// Memories retired.
    pub retired: usize,
    /// Of those, outdated versions of a superseded fact (the intended retirements).
    pub stale_retired: usize,
    /// Of those, facts some question needs (collateral that costs answers).
    pub facts_retired: usize,
    /// Candidates shown to the decider, over all memories.
    pub candidates: usize,
    /// Retired memories returned by retrieval afterwards (must be 0).
    pub retired_returned: usize,
}

impl UpdateReport {
    /// One report line.
    pub fn line(&self, label: &str, decider: &str, mode: Mode) -> String {
        let sup = self.decay.category(Category::Superseded).total;
        format!(
            "{label} update-path {decider:<22} {:<24} newer-first {}/{sup} -> {}/{sup} | stale-returned {}/{sup} -> {}/{sup} \
             | overall {:.3} -> {:.3} | retired {} (stale {}, needed facts {}, other {}) of {} candidates \
             | retired-returned {} | cross-user {}",
            mode.label(),
            self.decay.newer_first,
            self.updated.newer_first,
            self.decay.stale_returned,
            self.updated.stale_returned,
            self.decay.overall().rate(),
            self.updated.overall().rate(),
            self.retired,
            self.stale_retired,
            self.facts_retired,
            self.retired - self.stale_retired - self.facts_retired,
            self.candidates,
            self.retired_returned,
            self.updated.cross_user(),
        )
    }
}

/// An LLM decider whose "model" answers from the dataset's ground truth: it names a candidate
/// exactly when the new memory is the newer version of a superseded fact and the candidate its
/// older version. It goes through the real prompt and parser, so it measures everything but a
/// model's judgement: whether the candidate search surfaces the old fact, and what retiring it
/// does to retrieval (the ceiling of a real model's result).
pub fn oracle(questions: &[HardQuestion]) -> LlmDecider<impl mnemograph_checkpoint::messages::ChatCall> {
    let pairs: Arc<Vec<(String, String)>> = Arc::new(
        questions.iter().filter_map(|q| Some((q.marker.clone(), q.stale_marker.clone()?))).collect(),
    );
    LlmDecider::new(mnemograph_checkpoint::messages::chat_fn(move |messages: Vec<Message>| {
        let pairs = Arc::clone(&pairs);
        async move {
            let prompt = messages.last().map(Message::text).unwrap_or_default();
            let (new, older) = prompt.split_once("\n\nOlder memories:\n").unwrap_or((&prompt, ""));
            let mut picks = Vec::new();
            for (_, stale) in pairs.iter().filter(|(fresh, _)| new.contains(fresh.as_str())) {
                for (i, line) in older.lines().enumerate() {
                    if line.contains(stale.as_str()) {
                        picks.push(format!(r#"{{"candidate": {}, "reason": "oracle"}}"#, i + 1));
                    }
                }
            }
            Ok(Message::ai(format!(r#"{{"superseded": [{}]}}"#, picks.join(", "))))
        }
    }))
}

/// Every memory of the hard set's users, retired ones included.
async fn all_records<M: Memory>(memory: &M, users: &[String]) -> Vec<MemoryRecord> {
    let mut out = Vec::new();
    for user in users {
        for s in 0..SESSION_AGES.len() {
            out.extend(memory.session_records(user, &format!("s{s}")).await.expect("session records"));
        }
    }
    out
}

/// Measures `mode` with decay only, consolidates every session of every user (oldest first) with
/// `consolidator`, measures again, counts what was retired, then restores it all so the next
/// decider starts from the same memory.
pub async fn measure_update_path<M: Retire, D: SupersedeDecider>(
    memory: &M,
    consolidator: &Consolidator<D>,
    n_users: usize,
    questions: &[HardQuestion],
    mode: Mode,
) -> UpdateReport {
    let users = hard_dataset::users(n_users);
    let decay = measure(memory, questions, mode).await;
    let mut candidates = 0;
    for user in &users {
        for s in 0..SESSION_AGES.len() {
            let r =
                consolidator.consolidate_session(memory, user, &format!("s{s}")).await.expect("consolidate");
            candidates += r.candidates;
        }
    }
    let updated = measure(memory, questions, mode).await;
    let retired: Vec<MemoryRecord> =
        all_records(memory, &users).await.into_iter().filter(|r| r.is_retired()).collect();
    let retired_ids: HashSet<i64> = retired.iter().map(|r| r.id).collect();
    let mut retired_returned = 0;
    for q in questions {
        let query = mode.shape(RetrieveQuery::new(&q.user, &q.question).top_k(TOP_K).now(NOW));
        let hits = memory.retrieve(query).await.expect("retrieve");
        retired_returned +=
            hits.iter().filter(|h| h.record.is_retired() || retired_ids.contains(&h.record.id)).count();
    }
    let is_stale = |r: &MemoryRecord| {
        questions.iter().any(|q| {
            q.user == r.user_id && q.stale_marker.as_ref().is_some_and(|s| r.content.contains(s.as_str()))
        })
    };
    let is_fact = |r: &MemoryRecord| {
        questions.iter().any(|q| q.user == r.user_id && r.content.contains(q.marker.as_str()))
    };
    let report = UpdateReport {
        decay,
        updated,
        retired: retired.len(),
        stale_retired: retired.iter().filter(|r| is_stale(r)).count(),
        facts_retired: retired.iter().filter(|r| is_fact(r)).count(),
        candidates,
        retired_returned,
    };
    for user in &users {
        let mine: Vec<i64> = retired.iter().filter(|r| &r.user_id == user).map(|r| r.id).collect();
        let restored = memory.restore(user, &mine).await.expect("restore");
        assert_eq!(restored.len(), mine.len(), "every retired memory is restorable");
    }
    report
}

/// Which deciders and retrieval modes [`run_update_paths`] measures.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// The retrieval modes, each measured with every decider.
    pub modes: &'static [Mode],
    /// Whether the oracle LLM decider is measured (candidates from similarity 0.3).
    pub oracle: bool,
    /// The rule decider's thresholds to measure.
    pub rules: &'static [f64],
}

impl Plan {
    /// Every decider in the default retrieval (hybrid + decay) and in dense + decay: the figures of
    /// docs/benchmarks/memory-quality.md. Six consolidations of the whole set, so meant for the
    /// in-process memory; on Milvus Lite, whose every search is a round trip to a single-threaded
    /// server, it takes minutes.
    pub const FULL: Plan =
        Plan { modes: &[Mode::HybridDecay, Mode::DenseDecay], oracle: true, rules: &[0.9, 0.75] };

    /// One decider in the default retrieval: the update path end to end on a server.
    pub const fn one(oracle: bool, rules: &'static [f64]) -> Plan {
        Plan { modes: &[Mode::HybridDecay], oracle, rules }
    }
}

/// Saves the hard set of `n_users` into an empty `memory`, then measures the update path of each
/// decider and mode of `plan`. Prints one line each and checks the update path's promises: the
/// newer fact comes first at least as often as with decay alone, no retired memory is ever
/// returned, and no user sees another's memories.
pub async fn run_update_paths<M: Retire>(
    label: &str,
    memory: &M,
    n_users: usize,
    turns: usize,
    plan: Plan,
) -> Vec<UpdateReport> {
    let (memories, questions) = hard_dataset::build(n_users, turns);
    for chunk in memories.chunks(100) {
        memory.save(chunk.to_vec()).await.expect("save");
    }
    let mut out = Vec::new();
    for &mode in plan.modes {
        if plan.oracle {
            let llm = Consolidator::new(oracle(&questions))
                .options(ConsolidateOptions::default().min_similarity(0.3));
            let r = measure_update_path(memory, &llm, n_users, &questions, mode).await;
            eprintln!("{}", r.line(label, "llm(oracle) cand>=0.3", mode));
            // Else the checks below would hold of a memory that never retires anything.
            assert!(r.stale_retired > 0, "{label}: the oracle retired no outdated fact");
            out.push(r);
        }
        for &threshold in plan.rules {
            let rule = Consolidator::new(RuleDecider::default().min_similarity(threshold))
                .options(ConsolidateOptions::default().min_similarity(threshold));
            let r = measure_update_path(memory, &rule, n_users, &questions, mode).await;
            eprintln!("{}", r.line(label, &format!("rule>={threshold}"), mode));
            out.push(r);
        }
    }
    assert!(!out.is_empty(), "{label}: the plan measures nothing");
    for r in &out {
        assert_eq!(r.retired_returned, 0, "{label}: retrieval returned a retired memory");
        assert_eq!(r.updated.cross_user(), 0, "{label}: cross-user hit after consolidation");
        assert!(
            r.updated.newer_first >= r.decay.newer_first,
            "{label}: update path put the newer fact first {} times, decay alone {}",
            r.updated.newer_first,
            r.decay.newer_first
        );
    }
    out
}
