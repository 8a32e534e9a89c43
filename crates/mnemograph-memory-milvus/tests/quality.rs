//! The bilingual memory-quality benchmark (tests/support/bilingual_quality.rs, run by
//! tests/support/quality_bench.rs): recall@3, top-1, stale-beats-new and cross-user hits for
//! each embedder, search mode and write path, in process, in a SQLite file and on Milvus
//! (`MILVUS_URL`). The
//! figures are printed with `--nocapture`; docs/benchmarks/memory-quality.md has them.
//!
//! Checked: no configuration ever returns another user's memory or a retired one; and the main
//! command's defaults (its embedder, its rule threshold, hybrid + decay + importance, top 3, the
//! enriched query) reach recall@3 >= 0.95 with no stale fact beating its newer version.
//!
//! The models (mnemograph-memory's `local-embeddings`) come from `USE_MODEL_DIR` (`bash scripts/models.sh
//! use-multilingual`) and `MINILM_DIR` (`bash scripts/milvus-lite.sh minilm`); a test whose model
//! or server is not set prints why it skips and passes, except under CI (`CI` set), where it fails.

mod support;

use std::sync::Arc;

use mnemograph_checkpoint::store::{DynEmbeddings, HashingEmbeddings, IndexConfig};
use mnemograph_checkpoint_sqlite::SqliteStore;
use mnemograph_memory::{EmbeddedMemory, RerankConfig};
use mnemograph_memory_milvus::{HybridFusion, MilvusMemory};
use support::bilingual_quality::{self as data, Dataset};
use support::quality_bench::{self as bench, Embedder, Mode, Row, WritePath};

/// Asking users of the benchmark.
const USERS: usize = 40;
/// Asking users of the Milvus runs in CI: every Milvus Lite search is a round trip to a
/// single-threaded server.
const MILVUS_USERS: usize = 12;
/// The targets of the main command's defaults.
const RECALL_TARGET: f64 = 0.95;
/// The rule thresholds the sweep measures.
const SWEEP: [f64; 13] = [0.5, 0.55, 0.6, 0.625, 0.65, 0.675, 0.7, 0.725, 0.75, 0.8, 0.85, 0.9, 0.95];
/// The name of the main command's default embedder in the reports.
const MAIN_EMBEDDER: &str = "multilingual USE v3";
/// The word-hashing embedder's rule threshold: the lowest of the sweep that retires no needed fact
/// (docs/benchmarks/memory-quality.md has the sweep).
const HASHING_RULE: f64 = 0.7;

/// The main command's rule threshold with its default embedder, read from its source so that
/// this test measures whatever the default is (`EmbedderChoice::default()` is the multilingual
/// encoder, whose `rule_similarity` is examples/memory-agent/src/embedder.rs
/// `MULTILINGUAL_RULE_SIMILARITY`).
fn main_rule_similarity() -> f64 {
    main_constant(EMBEDDER_SOURCE, "MULTILINGUAL_RULE_SIMILARITY")
}

/// How the main command reranks with its default embedder: the library's defaults and its
/// newer-first threshold (`MULTILINGUAL_NEWER_FIRST`, read from its source).
fn main_rerank() -> RerankConfig {
    RerankConfig::default().newer_first(Some(main_constant(EMBEDDER_SOURCE, "MULTILINGUAL_NEWER_FIRST")))
}

/// The memory-agent sources whose constants the benchmark mirrors (mnemograph-memory-milvus cannot depend on
/// the example, so the values are read from the text and compared).
const EMBEDDER_SOURCE: &str = include_str!("../../../examples/memory-agent/src/embedder.rs");
const IMPORTANCE_SOURCE: &str = include_str!("../../../examples/memory-agent/src/importance.rs");

/// The value of `pub const {name}: f32|f64 = …;` in `source`.
fn main_constant(source: &str, name: &str) -> f64 {
    let line = source
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("pub const {name}:")))
        .unwrap_or_else(|| panic!("memory-agent defines `pub const {name}`"));
    let value = line.split('=').nth(1).unwrap_or_default().trim().trim_end_matches(';');
    value.parse().unwrap_or_else(|e| panic!("{name} `{value}`: {e}"))
}

#[test]
fn dataset_mirrors_the_main_commands_importance() {
    for (name, mirrored) in [
        ("STATEMENT_IMPORTANCE", data::STATEMENT_IMPORTANCE),
        ("QUESTION_IMPORTANCE", data::QUESTION_IMPORTANCE),
        ("MIN_RECALL_IMPORTANCE", data::MIN_RECALL_IMPORTANCE),
    ] {
        assert_eq!(main_constant(IMPORTANCE_SOURCE, name) as f32, mirrored, "{name}");
    }
}

fn hashing() -> Embedder {
    // The main command's dimension.
    Embedder::new("word hashing (384)", Arc::new(HashingEmbeddings::new(384)), HASHING_RULE)
}

/// Every embedder whose model is available, the main command's default first: the matrix of the
/// full runs. An embedder is one line here.
fn embedders(test: &str) -> Vec<Embedder> {
    let models = [models::multilingual(test), models::minilm(test)];
    models.into_iter().flatten().chain([hashing()]).collect()
}

/// The offline models: each loaded once per test binary, every vector remembered per text
/// (`support::memo`), since every configuration embeds the same texts again.
mod models {
    use std::sync::{Arc, OnceLock};

    use mnemograph_checkpoint::store::DynEmbeddings;
    use mnemograph_memory::{MiniLmEmbeddings, MultilingualUseEmbeddings};

    use super::support::memo::Memoized;
    use super::{skip, Embedder};

    /// The multilingual Universal Sentence Encoder's rule threshold: the lowest of the sweep of
    /// `multilingual_quality_is_isolated_in_every_configuration` that retires no needed fact
    /// (docs/benchmarks/memory-quality.md).
    pub(crate) const MULTILINGUAL_RULE: f64 = 0.7;
    /// all-MiniLM-L6-v2's rule threshold, chosen the same way.
    pub(crate) const MINILM_RULE: f64 = 0.95;

    type Shared = OnceLock<Option<Arc<dyn DynEmbeddings>>>;

    fn shared(
        cell: &'static Shared,
        var: &str,
        load: fn(String) -> Arc<dyn DynEmbeddings>,
    ) -> Option<Arc<dyn DynEmbeddings>> {
        cell.get_or_init(|| std::env::var(var).ok().map(load)).clone()
    }

    /// The main command's default embedder: Universal Sentence Encoder multilingual v3.
    pub(crate) fn multilingual(test: &str) -> Option<Embedder> {
        static MODEL: Shared = OnceLock::new();
        let model = shared(&MODEL, "USE_MODEL_DIR", |dir| {
            Arc::new(Memoized::new(MultilingualUseEmbeddings::load(dir).expect("load the multilingual USE")))
        });
        if model.is_none() {
            skip(test, "USE_MODEL_DIR is not set (bash scripts/models.sh use-multilingual)");
        }
        Some(Embedder::new(super::MAIN_EMBEDDER, model?, MULTILINGUAL_RULE))
    }

    /// all-MiniLM-L6-v2 (English only).
    pub(crate) fn minilm(test: &str) -> Option<Embedder> {
        static MODEL: Shared = OnceLock::new();
        let model = shared(&MODEL, "MINILM_DIR", |dir| {
            Arc::new(Memoized::new(MiniLmEmbeddings::load(dir).expect("load all-MiniLM-L6-v2")))
        });
        if model.is_none() {
            skip(test, "MINILM_DIR is not set (bash scripts/milvus-lite.sh minilm)");
        }
        Some(Embedder::new("all-MiniLM-L6-v2", model?, MINILM_RULE))
    }
}

/// A missing model: fails under CI, else says why the test is skipped.
fn skip(test: &str, why: &str) {
    assert!(std::env::var_os("CI").is_none(), "{test}: {why} under CI");
    eprintln!("SKIPPED: {test}: {why}");
}

/// The main command's figures meet the targets: recall@3 at least [`RECALL_TARGET`], no outdated
/// fact above (or instead of) its newer version, no memory of another user.
fn assert_targets(row: &Row) {
    let s = &row.scores;
    let mut missed = Vec::new();
    if s.recall.rate() < RECALL_TARGET {
        missed.push(format!("recall@3 {:.3} < {RECALL_TARGET}", s.recall.rate()));
    }
    if s.stale_beats_new > 0 {
        missed.push(format!("{} outdated facts beat their newer version", s.stale_beats_new));
    }
    if s.cross_user > 0 {
        missed.push(format!("{} cross-user hits", s.cross_user));
    }
    if s.retired_returned > 0 {
        missed.push(format!("{} retired memories returned", s.retired_returned));
    }
    if row.retired.needed > 0 {
        missed.push(format!("{} facts still needed were retired", row.retired.needed));
    }
    assert!(missed.is_empty(), "targets missed: {}\n{}\n{}", missed.join("; "), Row::HEADER, row.line());
}

/// Writes `data` into the empty `memory` as the main command does with its defaults (the rule at
/// `RULE_SIMILARITY` on the hot path) and asks every question as it does (hybrid + decay +
/// importance, top 3, enriched query, today's session excluded; `memory` reranks as
/// [`main_rerank`] says).
async fn main_command<M: mnemograph_memory::Retire>(
    store: &'static str,
    embedder: &Embedder,
    memory: &M,
    data: &Dataset,
) -> Row {
    let main =
        Embedder { name: embedder.name, model: Arc::clone(&embedder.model), rule: main_rule_similarity() };
    eprintln!("{store}: main command defaults, {}: {}", main.name, data.describe());
    let path = WritePath::Rule(main.rule);
    let mut rows = bench::run(store, &main, memory, data, path, &[Mode::Default]).await;
    rows.pop().expect("one mode measured")
}

/// The full matrix in process for `embedder`, its rule sweep and the similarities that bound the
/// rule, all printed; every row isolated and free of retired memories, the oracle exact, and the
/// decoys real lures (a leak would show).
async fn matrix(embedder: &Embedder, data: &Dataset) -> Vec<Row> {
    let started = std::time::Instant::now();
    let lap = |what: &str| eprintln!("{}: {what} after {:.1?}", embedder.name, started.elapsed());
    eprintln!("{}: {}", embedder.name, data.describe());
    for whole in [true, false] {
        eprintln!("{}", bench::calibrate(embedder, data, whole).await.line(embedder.name));
    }
    lap("calibration");
    eprintln!("{}", Row::HEADER);
    let mut rows = bench::in_process(embedder, data).await;
    lap("matrix");
    rows.extend(bench::variants(embedder, data).await);
    lap("variants");
    // The variant that recalls most, swept too for the main command's embedder only (CI time).
    let best = data.bare_questions().statements_only();
    let swept = if embedder.name == MAIN_EMBEDDER { vec![data, &best] } else { vec![data] };
    for variant in swept {
        eprintln!("{}: rule sweep, {}, hybrid+decay+importance", embedder.name, variant.variant);
        rows.extend(bench::sweep(embedder, variant, &SWEEP).await);
    }
    lap("sweeps");
    eprintln!("{}: newer-first sweep, {}, hybrid+decay+importance", embedder.name, data.variant);
    rows.extend(bench::newer_first_sweep(embedder, data, WritePath::Rule(embedder.rule)).await);
    lap("newer-first sweep");
    bench::assert_isolated_and_live(&rows);
    bench::assert_oracle_exact(&rows);
    lap("checks");
    let memory = EmbeddedMemory::from_arc(Arc::clone(&embedder.model));
    bench::write(&memory, data, WritePath::Plain).await;
    let lure = bench::decoy_lure(&memory, data).await;
    lap("lure");
    eprintln!("{}: decoy facts found when asked as the decoy: {}/{}", embedder.name, lure.hits, lure.total);
    assert!(
        lure.rate() >= 0.5,
        "{}: the decoys are no lure ({lure:?}); a leak could go unseen",
        embedder.name
    );
    rows
}

#[tokio::test]
async fn hashing_bilingual_quality_is_isolated_in_every_configuration() {
    matrix(&hashing(), &data::build(USERS)).await;
}

#[test]
fn dataset_is_what_the_benchmark_says() {
    let data = data::build(USERS);
    let q = &data.questions;
    assert_eq!(q.len(), USERS * 6);
    assert_eq!(data.changed(), 60);
    let cross = q.iter().filter(|q| q.cross_lingual()).count();
    let zh = q.iter().filter(|q| q.fact_lang == data::Lang::Zh).count();
    assert!((40..=60).contains(&cross), "{cross} cross-lingual questions");
    assert!((100..=140).contains(&zh), "{zh} questions about Chinese facts");
    for user in &data.users {
        let langs: std::collections::HashSet<_> =
            q.iter().filter(|q| &q.user == user).map(|q| q.fact_lang).collect();
        assert_eq!(langs.len(), 2, "{user} mixes both languages");
    }
    for q in q {
        assert!(data::is_question(&q.text), "asked as a question: {}", q.text);
        for c in std::iter::once(&q.expected).chain(&q.stale) {
            let e = data.exchanges_of(&q.user).find(|e| &e.content() == c).expect("the fact is stored");
            assert!(e.statement(), "the main command consolidates facts: {}", e.said);
        }
        if let Some(stale) = &q.stale {
            let at = |c: &str| data.exchanges_of(&q.user).find(|e| e.content() == c).unwrap().at;
            assert!(at(stale) < at(&q.expected), "the outdated version is older");
        }
    }
    // Every stored exchange is unique per user, so a content identifies a memory.
    for user in data.all_users() {
        let contents: Vec<String> = data.exchanges_of(user).map(data::Exchange::content).collect();
        let facts: Vec<&String> = q
            .iter()
            .filter(|q| &q.user == user)
            .flat_map(|q| std::iter::once(&q.expected).chain(&q.stale))
            .collect();
        for f in facts {
            assert_eq!(contents.iter().filter(|c| *c == f).count(), 1, "{user}: {f}");
        }
    }
    assert_eq!(data.decoys.len(), USERS / 4);
    assert!(data.decoys.iter().all(|d| data.users.iter().any(|u| d.starts_with(u.as_str()))));
}

#[tokio::test]
async fn multilingual_quality_is_isolated_in_every_configuration() {
    let Some(embedder) = models::multilingual("multilingual_quality") else { return };
    matrix(&embedder, &data::build(USERS)).await;
}

#[tokio::test]
async fn minilm_quality_is_isolated_in_every_configuration() {
    let Some(embedder) = models::minilm("minilm_quality") else { return };
    matrix(&embedder, &data::build(USERS)).await;
}

/// The targets with the main command's defaults, in process: its embedder (the multilingual USE)
/// and rule threshold, its retrieval (newer restatements first included).
#[tokio::test]
async fn main_command_defaults_meet_bilingual_targets() {
    let Some(embedder) = models::multilingual("main_command_defaults") else { return };
    let memory = EmbeddedMemory::from_arc(Arc::clone(&embedder.model)).rerank(main_rerank());
    let row = main_command("embedded", &embedder, &memory, &data::build(USERS)).await;
    assert_targets(&row);
}

/// The main command's memory kept in a SQLite file (its default without `--ephemeral`) answers
/// exactly as the in-process one: the same figures on the whole bilingual set, row for row.
#[tokio::test]
async fn sqlite_main_command_defaults_match_in_process() {
    let Some(embedder) = models::multilingual("sqlite_main_command_defaults") else { return };
    let data = data::build(USERS);
    let memory = EmbeddedMemory::from_arc(Arc::clone(&embedder.model)).rerank(main_rerank());
    let in_process = main_command("embedded", &embedder, &memory, &data).await;
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("quality-{}.sqlite", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    let index = IndexConfig::from_arc(Arc::clone(&embedder.model)).fields(["content"]);
    let store = SqliteStore::builder().index(index).connect(path.to_str().unwrap()).await.unwrap();
    let on_file =
        EmbeddedMemory::with_store(store).embeddings(Arc::clone(&embedder.model)).rerank(main_rerank());
    let file_row = main_command("embedded", &embedder, &on_file, &data).await;
    assert_eq!(file_row.line(), in_process.line(), "\n{}", Row::HEADER);
    assert_targets(&file_row);
}

/// The same on Milvus (the first [`MILVUS_USERS`] users, to keep CI short).
#[tokio::test]
async fn milvus_main_command_defaults_meet_bilingual_targets() {
    let test = "milvus_main_command_defaults";
    let Some(embedder) = models::multilingual(test) else { return };
    let model: Arc<dyn DynEmbeddings> = Arc::clone(&embedder.model);
    support::with_milvus_using(
        test,
        |c| c.rerank(main_rerank()),
        model,
        |m| async move {
            let row = main_command("milvus", &embedder, &m, &data::build(MILVUS_USERS)).await;
            assert_targets(&row);
        },
    )
    .await;
}

/// Isolation on Milvus with the word-hashing embedder (no model needed): every mode, plain and
/// rule write paths, the first [`MILVUS_USERS`] users.
#[tokio::test]
async fn milvus_hashing_quality_is_isolated() {
    let test = "milvus_hashing_quality";
    let embedder = hashing();
    let data = data::build(MILVUS_USERS);
    for path in [WritePath::Plain, WritePath::Rule(embedder.rule)] {
        let model: Arc<dyn DynEmbeddings> = Arc::clone(&embedder.model);
        let (embedder, data) = (&embedder, &data);
        support::with_milvus_using(
            test,
            |c| c,
            model,
            |m| async move {
                let rows = bench::run("milvus", embedder, &m, data, path, &Mode::ALL).await;
                bench::assert_isolated_and_live(&rows);
            },
        )
        .await;
    }
}

/// The whole matrix on Milvus: every available embedder, write path and mode, 40 users. Minutes
/// of Milvus Lite round trips, so run by hand for docs/benchmarks/memory-quality.md (`--ignored`).
#[tokio::test]
#[ignore = "minutes on Milvus Lite; run with --ignored for docs/benchmarks.md"]
async fn milvus_quality_full_matrix_is_isolated() {
    let test = "milvus_quality_full_matrix";
    let data = data::build(USERS);
    eprintln!("milvus: {}", data.describe());
    eprintln!("{}", Row::HEADER);
    for embedder in embedders(test) {
        let rows = std::sync::Mutex::new(Vec::new());
        for path in bench::paths(&embedder) {
            let model: Arc<dyn DynEmbeddings> = Arc::clone(&embedder.model);
            let (embedder, data, rows) = (&embedder, &data, &rows);
            support::with_milvus_using(
                test,
                |c| c,
                model,
                |m| async move {
                    let measured = bench::run("milvus", embedder, &m, data, path, &Mode::ALL).await;
                    rows.lock().unwrap().extend(measured);
                },
            )
            .await;
        }
        let rows = rows.into_inner().unwrap();
        if rows.is_empty() {
            return; // no server: skipped (with_milvus_using said why)
        }
        bench::assert_isolated_and_live(&rows);
        bench::assert_oracle_exact(&rows);
    }
}

/// Every fusion of a retrieval's lists on the same memories in Milvus: the main command's write
/// path (its rule threshold) for each available embedder, 40 users, then every mode asked once per
/// fusion, printed for docs/benchmarks/milvus.md (the store column names the fusion). Minutes of
/// Milvus Lite round trips, so run by hand (`--ignored`).
#[tokio::test]
#[ignore = "minutes on Milvus Lite; run with --ignored for docs/benchmarks.md"]
async fn milvus_fusions_compared() {
    let test = "milvus_fusions_compared";
    let data = data::build(USERS);
    let rerank = RerankConfig::default();
    let fusions: Vec<(&'static str, HybridFusion, RerankConfig)> = [
        ("milvus, client weighted RRF", HybridFusion::Client, rerank),
        ("milvus, server weighted", HybridFusion::ServerWeighted, rerank),
        ("milvus, server weighted, keywords 0.1", HybridFusion::ServerWeighted, rerank.keyword_weight(0.1)),
        ("milvus, server weighted, keywords 0.05", HybridFusion::ServerWeighted, rerank.keyword_weight(0.05)),
        ("milvus, server RRF k=2", HybridFusion::ServerRrf, rerank),
        ("milvus, server RRF k=60", HybridFusion::ServerRrf, rerank.rrf_k(60)),
    ]
    .into_iter()
    // `QUALITY_FUSIONS=keywords` measures only the fusions whose label contains it.
    .filter(|f| std::env::var("QUALITY_FUSIONS").map_or(true, |only| f.0.contains(&only)))
    .collect();
    eprintln!("milvus: {}", data.describe());
    eprintln!("{}", Row::HEADER);
    for embedder in embedders(test) {
        let rule = if embedder.name == MAIN_EMBEDDER { main_rule_similarity() } else { embedder.rule };
        let model: Arc<dyn DynEmbeddings> = Arc::clone(&embedder.model);
        let (embedder, data, fusions) = (&embedder, &data, &fusions);
        support::with_milvus_using(
            test,
            |c| c,
            model,
            |m| async move {
                let path = bench::WritePath::Rule(rule);
                bench::write(&m, data, path).await;
                let retired = bench::retired(&m, data).await;
                let mut rows = Vec::new();
                for &(store, fusion, rerank) in fusions {
                    let config = m.config().clone().fusion(fusion).rerank(rerank);
                    let view = MilvusMemory::connect_arc(config, Arc::clone(&embedder.model))
                        .await
                        .expect("connect to the written collection");
                    for mode in Mode::ALL {
                        let scores = bench::measure(&view, data, mode).await;
                        let changed = data.changed();
                        let (embedder, variant) = (embedder.name, data.variant);
                        let row = Row { store, embedder, variant, path, mode, retired, scores, changed };
                        eprintln!("{}", row.line());
                        rows.push(row);
                    }
                    assert_eq!(view.fusion(), fusion, "{store}: the server fused every retrieval");
                }
                bench::assert_isolated_and_live(&rows);
            },
        )
        .await;
    }
}

/// The newer-first step on another set, the hard planted-fact set (English, 3 users × 25 turns,
/// tests/support/hard_dataset.rs), for each offline model: off and at the main command's threshold
/// and one above, every reranking mode printed for docs/benchmarks/memory-quality.md. Checked where
/// the step must hold on any set: it puts the newer of two contradicting facts first at least as
/// often as without it, keeps every exact-identifier fact the question names, and stays within the
/// user.
#[tokio::test]
async fn newer_first_on_the_hard_set() {
    use support::hard_dataset::Category;
    use support::hard_recall::{self, Mode as HardMode};
    let test = "newer_first_hard_set";
    let models = [models::multilingual(test), models::minilm(test)];
    for embedder in models.into_iter().flatten() {
        let mut reports = Vec::new();
        for threshold in [None, Some(main_rerank().newer_first.expect("on")), Some(0.3)] {
            let memory = EmbeddedMemory::from_arc(Arc::clone(&embedder.model))
                .rerank(RerankConfig::default().newer_first(threshold));
            let label = format!("{}, newer-first {threshold:?}", embedder.name);
            let all = hard_recall::run_all(&label, &memory, 3, 25).await;
            hard_recall::assert_isolated(&label, &all);
            reports.push((label, hard_recall::get(&all, HardMode::HybridDecay).clone()));
        }
        let (_, off) = &reports[0];
        for (label, on) in &reports[1..] {
            assert!(
                on.newer_first >= off.newer_first,
                "{label}: {} newer first, off {}",
                on.newer_first,
                off.newer_first
            );
            let ids = |r: &hard_recall::HardReport| r.category(Category::ExactIdentifier).hits;
            assert!(ids(on) >= ids(off), "{label}: {} identifier facts recalled, off {}", ids(on), ids(off));
        }
    }
}
