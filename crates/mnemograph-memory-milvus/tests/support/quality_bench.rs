//! The bilingual memory-quality benchmark ([`super::bilingual_quality`]): for each embedder,
//! write path and search mode, on a given memory, recall@3, top-1, how often a stale fact beats
//! its newer version, cross-user hits, and what the write path retired.
//!
//! The write paths are the main command's (examples/memory-agent): every exchange saved on the
//! hot path in time order, a statement through a [`Consolidator`] (`save_turn`) and a question
//! saved only; the plain path saves everything and retires nothing. The figures are printed as
//! Markdown table rows (run with `--nocapture`); docs/benchmarks/memory-quality.md holds them.

use std::collections::HashSet;
use std::sync::Arc;

use futures_util::{stream, StreamExt};
use mnemograph_checkpoint::messages::Message;
use mnemograph_checkpoint::store::{cosine_similarity, DynEmbeddings};
use mnemograph_memory::{
    ConsolidateOptions, Consolidator, EmbeddedMemory, LlmDecider, Memory, MemoryHit, RerankConfig, Retire,
    RetrieveQuery, RuleDecider, SearchMode, SessionScope, SupersedeDecider,
};

use super::bilingual_quality::{self as data, Dataset, Question, NOW, SESSION_AGES, TODAY};

/// How many memories a question retrieves (the main command's `top_k`, the "3" of recall@3).
pub const TOP_K: usize = 3;
/// Users written (or asked) at once: their histories are independent. On Milvus Lite this keeps
/// the single-threaded server busy; in process it changes nothing.
const CONCURRENCY: usize = 4;

/// An embedder being compared, and the similarity from which its rule decider retires an older
/// statement.
#[derive(Clone)]
pub struct Embedder {
    /// Short name for reports.
    pub name: &'static str,
    /// The model (share a remembering one, see `super::memo`, across tests).
    pub model: Arc<dyn DynEmbeddings>,
    /// The `RuleDecider` threshold its rule write path uses.
    pub rule: f64,
}

impl Embedder {
    /// `model` as `name`, its rule at `rule`.
    pub fn new(name: &'static str, model: Arc<dyn DynEmbeddings>, rule: f64) -> Self {
        Self { name, model, rule }
    }
}

/// How memories are written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WritePath {
    /// Everything saved, nothing retired.
    Plain,
    /// The main command's offline update path: a statement retires the older memories at least
    /// this similar (`RuleDecider`). Candidates are searched from the same similarity, or from
    /// `ConsolidateOptions`' default 0.5 when that is lower (the main command's options).
    Rule(f64),
    /// An LLM decider whose model answers from the ground truth (it retires exactly the outdated
    /// version of a changed fact, when that is among the candidates), with candidates from this
    /// similarity: the ceiling of a real model's judgement.
    Oracle(f64),
}

impl WritePath {
    /// Short label for reports.
    pub fn label(self) -> String {
        match self {
            WritePath::Plain => "plain".to_owned(),
            WritePath::Rule(t) => format!("rule >= {t}"),
            WritePath::Oracle(c) => format!("oracle, candidates >= {c}"),
        }
    }
}

/// A retrieval configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Vector search only, relevance order.
    Dense,
    /// Dense + BM25 fused by RRF, relevance order.
    Hybrid,
    /// Hybrid, then time decay and importance: the crate's and the main command's default.
    Default,
}

impl Mode {
    /// Every mode, in report order.
    pub const ALL: [Mode; 3] = [Mode::Dense, Mode::Hybrid, Mode::Default];

    /// Short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Dense => "dense",
            Mode::Hybrid => "hybrid",
            Mode::Default => "hybrid+decay+importance",
        }
    }

    fn shape(self, q: RetrieveQuery) -> RetrieveQuery {
        match self {
            Mode::Dense => q.mode(SearchMode::Dense).rerank(false),
            Mode::Hybrid => q.mode(SearchMode::Hybrid).rerank(false),
            Mode::Default => {
                q.mode(SearchMode::Hybrid).rerank(true).min_importance(data::MIN_RECALL_IMPORTANCE)
            }
        }
    }
}

/// The main command's query for `q`: the question enriched with today's conversation so far (the
/// greeting), the top 3, every session but today's, ages from [`NOW`].
pub fn query(q: &Question, mode: Mode) -> RetrieveQuery {
    let base = RetrieveQuery::new(&q.user, &q.text)
        .recent(q.recent.clone())
        .top_k(TOP_K)
        .session(SessionScope::Exclude(TODAY.to_owned()))
        .now(NOW);
    mode.shape(base)
}

/// Hits out of a number of questions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Questions answered.
    pub hits: usize,
    /// Questions asked.
    pub total: usize,
}

impl Tally {
    fn add(&mut self, hit: bool) {
        self.total += 1;
        self.hits += usize::from(hit);
    }
    /// The rate.
    pub fn rate(self) -> f64 {
        self.hits as f64 / self.total.max(1) as f64
    }
}

/// What one retrieval mode scored.
#[derive(Debug, Clone, Copy, Default)]
pub struct Scores {
    /// The answering memory among the top 3.
    pub recall: Tally,
    /// The answering memory first.
    pub top1: Tally,
    /// Recall@3 of questions asked in their fact's language about facts that never changed.
    pub same_language: Tally,
    /// Recall@3 of questions asked in the other language than their fact.
    pub cross_lingual: Tally,
    /// Recall@3 of questions about changed facts.
    pub changed: Tally,
    /// Changed facts whose outdated version is in the top 3 above the newer one, or without it.
    pub stale_beats_new: usize,
    /// Returned memories of another user (must be 0).
    pub cross_user: usize,
    /// Returned retired memories (must be 0).
    pub retired_returned: usize,
}

/// Asks every question of `data` in `mode`.
pub async fn measure<M: Memory>(memory: &M, data: &Dataset, mode: Mode) -> Scores {
    let answers: Vec<(&Question, Vec<MemoryHit>)> = stream::iter(&data.questions)
        .map(|q| async move { (q, memory.retrieve(query(q, mode)).await.expect("retrieve")) })
        .buffered(CONCURRENCY)
        .collect()
        .await;
    let mut s = Scores::default();
    for (q, hits) in answers {
        s.cross_user += hits.iter().filter(|h| h.record.user_id != q.user).count();
        s.retired_returned += hits.iter().filter(|h| h.record.is_retired()).count();
        let at =
            |text: &str| hits.iter().position(|h| h.record.user_id == q.user && h.record.content == text);
        let found = at(&q.expected);
        if found.is_none() {
            show("miss", mode, q, &hits);
        }
        s.recall.add(found.is_some());
        s.top1.add(found == Some(0));
        if let Some(stale) = &q.stale {
            s.changed.add(found.is_some());
            let old = at(stale);
            let beaten = matches!((old, found), (Some(o), n) if n.is_none_or(|n| o < n));
            if beaten {
                show("stale", mode, q, &hits);
            }
            s.stale_beats_new += usize::from(beaten);
        } else if q.cross_lingual() {
            s.cross_lingual.add(found.is_some());
        } else {
            s.same_language.add(found.is_some());
        }
        if q.changed() && q.cross_lingual() {
            s.cross_lingual.add(found.is_some());
        }
    }
    s
}

/// With `QUALITY_MISSES` set, prints a question whose answer was missed or beaten by its
/// outdated version (`what`), with the memories it got.
fn show(what: &str, mode: Mode, q: &Question, hits: &[MemoryHit]) {
    if std::env::var_os("QUALITY_MISSES").is_none() {
        return;
    }
    let top: Vec<String> = hits.iter().map(|h| format!("{:.3} {:?}", h.score, h.record.content)).collect();
    eprintln!("{what} ({}) {:?} [{}]: wanted {:?}, got {top:#?}", mode.label(), q.text, q.user, q.expected);
}

/// What a write path retired.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retired {
    /// Outdated versions of changed facts (what an update path is for).
    pub stale: usize,
    /// Facts a question needs (each costs an answer).
    pub needed: usize,
    /// Anything else (small talk, decoys' facts).
    pub other: usize,
}

impl Retired {
    /// All retired memories.
    pub fn total(self) -> usize {
        self.stale + self.needed + self.other
    }
}

/// Counts what is retired in `memory`, by kind.
pub async fn retired<M: Memory>(memory: &M, data: &Dataset) -> Retired {
    let needed: HashSet<(&str, &str)> =
        data.questions.iter().map(|q| (q.user.as_str(), q.expected.as_str())).collect();
    let stale: HashSet<(&str, &str)> =
        data.questions.iter().filter_map(|q| Some((q.user.as_str(), q.stale.as_deref()?))).collect();
    let mut r = Retired::default();
    for user in data.all_users() {
        for s in 0..SESSION_AGES.len() {
            let records = memory.session_records(user, &data::session_id(s)).await.expect("session records");
            for rec in records.iter().filter(|r| r.is_retired()) {
                let key = (user.as_str(), rec.content.as_str());
                if stale.contains(&key) {
                    r.stale += 1;
                } else if needed.contains(&key) {
                    r.needed += 1;
                } else {
                    r.other += 1;
                }
            }
        }
    }
    r
}

/// Writes `data` into the empty `memory` along `path`.
pub async fn write<M: Retire>(memory: &M, data: &Dataset, path: WritePath) {
    match path {
        WritePath::Plain => {
            let all: Vec<_> = data.exchanges.iter().map(data::Exchange::memory).collect();
            for chunk in all.chunks(100) {
                memory.save(chunk.to_vec()).await.expect("save");
            }
        }
        WritePath::Rule(t) => {
            let options = ConsolidateOptions::default();
            let options = options.min_similarity(t.min(options.min_similarity));
            let rule = Consolidator::new(RuleDecider::default().min_similarity(t)).options(options);
            hot_path(memory, data, &rule).await;
        }
        WritePath::Oracle(c) => {
            let oracle =
                Consolidator::new(oracle(data)).options(ConsolidateOptions::default().min_similarity(c));
            hot_path(memory, data, &oracle).await;
        }
    }
}

/// The main command's `save_memory`, exchange by exchange in time order: statements through the
/// consolidator, questions saved only.
pub async fn hot_path<M: Retire, D: SupersedeDecider>(memory: &M, data: &Dataset, c: &Consolidator<D>) {
    stream::iter(data.all_users())
        .for_each_concurrent(CONCURRENCY, |user| async move {
            for e in data.exchanges_of(user) {
                if e.statement() {
                    c.save_turn(memory, e.memory()).await.expect("save and consolidate");
                } else {
                    memory.save_turn(e.memory()).await.expect("save");
                }
            }
        })
        .await;
}

/// An LLM decider whose "model" answers from the ground truth: it names a candidate exactly when
/// the new memory is the newer version of a changed fact and the candidate its outdated version.
/// It goes through the real prompt and parser.
pub fn oracle(data: &Dataset) -> LlmDecider<impl mnemograph_checkpoint::messages::ChatCall> {
    // The user lines, as they appear (JSON-quoted) in the prompt; none needs escaping.
    let said = |c: &str| c.trim_start_matches("User: ").split('\n').next().unwrap_or_default().to_owned();
    let pairs: Arc<Vec<(String, String)>> = Arc::new(
        data.questions.iter().filter_map(|q| Some((said(&q.expected), said(q.stale.as_deref()?)))).collect(),
    );
    LlmDecider::new(mnemograph_checkpoint::messages::chat_fn(move |messages: Vec<Message>| {
        let pairs = Arc::clone(&pairs);
        async move {
            let prompt = messages.last().map(Message::text).unwrap_or_default();
            let (new, older) = prompt.split_once("\n\nOlder memories:\n").unwrap_or((&prompt, ""));
            let mut picks = Vec::new();
            for (_, stale) in pairs.iter().filter(|(fresh, _)| new.contains(&format!("User: {fresh}\\n"))) {
                for (i, line) in older.lines().enumerate() {
                    if line.contains(&format!("User: {stale}\\n")) {
                        picks.push(format!(r#"{{"candidate": {}, "reason": "oracle"}}"#, i + 1));
                    }
                }
            }
            Ok(Message::ai(format!(r#"{{"superseded": [{}]}}"#, picks.join(", "))))
        }
    }))
}

/// One configuration's figures.
#[derive(Debug, Clone)]
pub struct Row {
    /// `embedded` or `milvus`.
    pub store: &'static str,
    /// The embedder's name.
    pub embedder: &'static str,
    /// Which history was stored and how questions were asked ([`Dataset::variant`]).
    pub variant: &'static str,
    /// How memories were written.
    pub path: WritePath,
    /// How they were searched.
    pub mode: Mode,
    /// What was retired while writing.
    pub retired: Retired,
    /// The figures.
    pub scores: Scores,
    /// Questions about changed facts.
    pub changed: usize,
}

impl Row {
    /// The header of [`Row::line`]'s table.
    pub const HEADER: &'static str = "| store | embedder | history, query | write path | mode | recall@3 | \
        same-language | cross-lingual | changed facts | top-1 | stale beats new | cross-user hits | retired \
        (stale / needed / other) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|";

    /// One Markdown table row.
    pub fn line(&self) -> String {
        let s = &self.scores;
        let r = &self.retired;
        format!(
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {}/{} | {} | {} ({} / {} / {}) |",
            self.store,
            self.embedder,
            self.variant,
            self.path.label(),
            self.mode.label(),
            s.recall.rate(),
            s.same_language.rate(),
            s.cross_lingual.rate(),
            s.changed.rate(),
            s.top1.rate(),
            s.stale_beats_new,
            self.changed,
            s.cross_user,
            r.total(),
            r.stale,
            r.needed,
            r.other,
        )
    }
}

/// Writes `data` into the empty `memory` along `path` and measures `modes`, printing a row each.
pub async fn run<M: Retire>(
    store: &'static str,
    embedder: &Embedder,
    memory: &M,
    data: &Dataset,
    path: WritePath,
    modes: &[Mode],
) -> Vec<Row> {
    write(memory, data, path).await;
    let retired = retired(memory, data).await;
    let mut rows = Vec::new();
    for &mode in modes {
        let scores = measure(memory, data, mode).await;
        let changed = data.changed();
        let row = Row {
            store,
            embedder: embedder.name,
            variant: data.variant,
            path,
            mode,
            retired,
            scores,
            changed,
        };
        eprintln!("{}", row.line());
        rows.push(row);
    }
    rows
}

/// The write paths of the full matrix for `embedder`: plain, its rule, and the oracle with the
/// default candidates (from similarity 0.5, as the main command with an LLM) and with the 5 most
/// similar memories however dissimilar.
pub fn paths(embedder: &Embedder) -> [WritePath; 4] {
    [WritePath::Plain, WritePath::Rule(embedder.rule), WritePath::Oracle(0.5), WritePath::Oracle(0.0)]
}

/// Every write path and mode for `embedder` in process, each path on a fresh memory.
pub async fn in_process(embedder: &Embedder, data: &Dataset) -> Vec<Row> {
    let mut rows = Vec::new();
    for path in paths(embedder) {
        let memory = EmbeddedMemory::from_arc(Arc::clone(&embedder.model));
        rows.extend(run("embedded", embedder, &memory, data, path, &Mode::ALL).await);
    }
    rows
}

/// What limits recall: the history without question exchanges and the questions without the
/// greeting before them, each variant with the plain path, the embedder's rule and the oracle
/// (default candidates), in the default mode, in process.
pub async fn variants(embedder: &Embedder, data: &Dataset) -> Vec<Row> {
    let mut rows = Vec::new();
    let bare = data.bare_questions();
    for variant in [bare.clone(), data.statements_only(), bare.statements_only()] {
        for path in [WritePath::Plain, WritePath::Rule(embedder.rule), WritePath::Oracle(0.5)] {
            let memory = EmbeddedMemory::from_arc(Arc::clone(&embedder.model));
            rows.extend(run("embedded", embedder, &memory, &variant, path, &[Mode::Default]).await);
        }
    }
    rows
}

/// The rule write path at each threshold, in process, measured in the default mode: which
/// threshold retires the outdated facts and no needed one.
pub async fn sweep(embedder: &Embedder, data: &Dataset, thresholds: &[f64]) -> Vec<Row> {
    let mut rows = Vec::new();
    for &t in thresholds {
        let memory = EmbeddedMemory::from_arc(Arc::clone(&embedder.model));
        rows.extend(run("embedded", embedder, &memory, data, WritePath::Rule(t), &[Mode::Default]).await);
    }
    rows
}

/// The thresholds of the newer-first step that [`newer_first_sweep`] measures, labelled for the
/// store column; `None` turns the step off.
pub const NEWER_FIRST_SWEEP: [(&str, Option<f64>); 7] = [
    ("embedded, newer-first off", None),
    ("embedded, newer-first >= 0.05", Some(0.05)),
    ("embedded, newer-first >= 0.1", Some(0.1)),
    ("embedded, newer-first >= 0.15", Some(0.15)),
    ("embedded, newer-first >= 0.2", Some(0.2)),
    ("embedded, newer-first >= 0.3", Some(0.3)),
    ("embedded, newer-first >= 0.4", Some(0.4)),
];

/// Writes `data` once along `path` and asks every question as the main command does (the default
/// mode) with each of [`NEWER_FIRST_SWEEP`]'s thresholds, printing a row each.
pub async fn newer_first_sweep(embedder: &Embedder, data: &Dataset, path: WritePath) -> Vec<Row> {
    let memory = EmbeddedMemory::from_arc(Arc::clone(&embedder.model));
    write(&memory, data, path).await;
    let retired = retired(&memory, data).await;
    let mut rows = Vec::new();
    for (store, threshold) in NEWER_FIRST_SWEEP {
        let view = memory.clone().rerank(RerankConfig::default().newer_first(threshold));
        let scores = measure(&view, data, Mode::Default).await;
        let (embedder, variant, changed) = (embedder.name, data.variant, data.changed());
        let row = Row { store, embedder, variant, path, mode: Mode::Default, retired, scores, changed };
        eprintln!("{}", row.line());
        rows.push(row);
    }
    rows
}

/// Cosine similarities that bound the rule's threshold.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    /// What was compared: whole stored exchanges (what the consolidator compares) or the user's
    /// words alone.
    pub compared: &'static str,
    /// Each changed fact: its outdated and its newer memory (the rule must reach these).
    pub changes: Vec<f64>,
    /// Of those, the changes said in the other language.
    pub switched: Vec<f64>,
    /// Each needed fact (the current version of a fact): its highest similarity to a later
    /// statement of the same user (the rule must stay above these, or it retires the fact).
    pub hazards: Vec<f64>,
}

impl Calibration {
    /// One report line.
    pub fn line(&self, name: &str) -> String {
        let q = |v: &[f64], p: f64| -> f64 {
            let mut v = v.to_vec();
            v.sort_by(f64::total_cmp);
            v.get(((v.len().max(1) - 1) as f64 * p).round() as usize).copied().unwrap_or(f64::NAN)
        };
        format!(
            "{name}, {}: outdated vs newer version (n={}) min {:.3} p10 {:.3} median {:.3} max {:.3}; \
             changed language (n={}) min {:.3} median {:.3}; needed fact vs a later statement of the user \
             (n={}) max {:.3} p99 {:.3} p90 {:.3} median {:.3}",
            self.compared,
            self.changes.len(),
            q(&self.changes, 0.0),
            q(&self.changes, 0.1),
            q(&self.changes, 0.5),
            q(&self.changes, 1.0),
            self.switched.len(),
            q(&self.switched, 0.0),
            q(&self.switched, 0.5),
            self.hazards.len(),
            q(&self.hazards, 1.0),
            q(&self.hazards, 0.99),
            q(&self.hazards, 0.9),
            q(&self.hazards, 0.5),
        )
    }
}

/// The similarities of [`Calibration`] under `embedder`, computed directly from its vectors: of
/// the stored exchanges (`whole`) or of the user's words alone.
pub async fn calibrate(embedder: &Embedder, data: &Dataset, whole: bool) -> Calibration {
    let text = |e: &data::Exchange| if whole { e.content() } else { e.said.clone() };
    let texts: Vec<String> = data.exchanges.iter().map(text).collect();
    let vectors = embedder.model.embed_documents(&texts).await.expect("embed");
    let index = |user: &str, c: &str| {
        data.exchanges.iter().position(|e| e.user == user && e.content() == c).expect("a stored exchange")
    };
    let compared = if whole { "whole exchanges" } else { "the user's words only" };
    let mut cal = Calibration { compared, ..Calibration::default() };
    for q in &data.questions {
        let new = index(&q.user, &q.expected);
        if let Some(stale) = &q.stale {
            let sim = cosine_similarity(&vectors[index(&q.user, stale)], &vectors[new]);
            cal.changes.push(sim);
            if q.change_switched_language {
                cal.switched.push(sim);
            }
        }
        let fact = &data.exchanges[new];
        let hazard = data
            .exchanges
            .iter()
            .enumerate()
            .filter(|(_, e)| e.user == q.user && e.statement() && e.at > fact.at)
            .map(|(i, _)| cosine_similarity(&vectors[i], &vectors[new]))
            .fold(f64::NEG_INFINITY, f64::max);
        if hazard.is_finite() {
            cal.hazards.push(hazard);
        }
    }
    cal
}

/// For the users with a decoy: how many of their questions, asked under the decoy's id, return
/// the decoy's statement of the same kind of fact in the top 3. High means a leak across users
/// would show up as cross-user hits: the decoys are real lures.
pub async fn decoy_lure<M: Memory>(memory: &M, data: &Dataset) -> Tally {
    let mut t = Tally::default();
    for q in data.questions.iter().filter(|q| q.decoy.is_some()) {
        let (twin, theirs) = q.decoy.as_ref().expect("filtered");
        let as_twin = Question { user: twin.clone(), ..q.clone() };
        let hits = memory.retrieve(query(&as_twin, Mode::Default)).await.expect("retrieve");
        t.add(hits.iter().any(|h| &h.record.content == theirs));
    }
    t
}

/// Checks the measured properties that must hold in every configuration: no memory of another
/// user and no retired memory is ever returned.
pub fn assert_isolated_and_live(rows: &[Row]) {
    assert!(!rows.is_empty(), "nothing was measured");
    for r in rows {
        assert_eq!(r.scores.cross_user, 0, "cross-user hits: {}", r.line());
        assert_eq!(r.scores.retired_returned, 0, "retired memories returned: {}", r.line());
        assert_eq!(r.scores.recall.total, r.scores.top1.total, "{}", r.line());
    }
}

/// The oracle retires outdated facts only (else the ground truth or the harness is wrong), and
/// finds some (else the check above would hold of a memory that never retires).
pub fn assert_oracle_exact(rows: &[Row]) {
    let oracle: Vec<&Row> = rows.iter().filter(|r| matches!(r.path, WritePath::Oracle(_))).collect();
    assert!(!oracle.is_empty(), "no oracle row");
    for r in oracle {
        assert_eq!(
            (r.retired.needed, r.retired.other),
            (0, 0),
            "oracle retired more than stale facts: {}",
            r.line()
        );
    }
    let best = rows.iter().filter(|r| r.path == WritePath::Oracle(0.0)).map(|r| r.retired.stale).max();
    assert!(best.unwrap_or(0) > 0, "the oracle retired no outdated fact");
}
