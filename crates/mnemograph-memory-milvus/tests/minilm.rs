//! all-MiniLM-L6-v2 (feature `local-embeddings`): the model's behaviour, and the planted-fact
//! recall with real semantic embeddings. Needs `MINILM_DIR` (from `scripts/milvus-lite.sh minilm`);
//! skips with a message when unset, fails under CI.

mod support;

use mnemograph_checkpoint::store::{cosine_similarity, Embeddings};
use mnemograph_memory::{EmbeddedMemory, Memory, MiniLmEmbeddings, SearchMode};
use mnemograph_memory_milvus::MilvusMemory;
use support::dataset;
use support::hard_recall;
use support::memo::Memoized;

use std::sync::OnceLock;

fn load(test: &str) -> Option<MiniLmEmbeddings> {
    let Ok(dir) = std::env::var("MINILM_DIR") else {
        assert!(std::env::var_os("CI").is_none(), "{test}: MINILM_DIR is not set under CI");
        eprintln!("skipping {test}: MINILM_DIR is not set (bash scripts/milvus-lite.sh minilm)");
        return None;
    };
    let started = std::time::Instant::now();
    let m = MiniLmEmbeddings::load(dir).expect("load all-MiniLM-L6-v2");
    println!("model loaded in {:?}", started.elapsed());
    Some(m)
}

/// The model for the retrieval tests: loaded once for the whole binary, and each text embedded
/// once across all tests (see [`Memoized`]).
fn model(test: &str) -> Option<Memoized<MiniLmEmbeddings>> {
    static SHARED: OnceLock<Option<Memoized<MiniLmEmbeddings>>> = OnceLock::new();
    let shared = SHARED.get_or_init(|| load(test).map(Memoized::new)).clone();
    if shared.is_none() {
        // The first caller said why; every test still says it is skipping.
        eprintln!("skipping {test}: MINILM_DIR is not set");
    }
    shared
}

#[tokio::test]
async fn minilm_embeddings_are_normalised_and_semantic() {
    // The model itself, not the remembered vectors.
    let Some(m) = load("minilm_embeddings") else { return };
    let texts: Vec<String> =
        ["A cat sits on the mat.", "A kitten is lying on a rug.", "Rust is a systems programming language."]
            .map(String::from)
            .to_vec();
    let started = std::time::Instant::now();
    let v = m.embed_documents(&texts).await.unwrap();
    println!("3 sentences embedded in {:?}", started.elapsed());
    assert_eq!(m.dims(), 384);
    for e in &v {
        assert_eq!(e.len(), 384);
        assert!((e.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
    }
    let (para, unrelated) = (cosine_similarity(&v[0], &v[1]), cosine_similarity(&v[0], &v[2]));
    println!("cos(paraphrase) {para:.4}, cos(unrelated) {unrelated:.4}");
    assert!(para > 0.5 && unrelated < 0.2, "{para} {unrelated}");
    // Padding must not change a sentence's vector: alone or in a batch of longer ones, the same.
    let alone = m.embed_query(&texts[0]).await.unwrap();
    assert!(alone.iter().zip(&v[0]).all(|(a, b)| (a - b).abs() < 1e-4));
}

async fn recall<M: Memory>(label: &str, m: &M) {
    let (memories, planted) = dataset::build(3, 4, 25);
    for chunk in memories.chunks(100) {
        m.save(chunk.to_vec()).await.unwrap();
    }
    let dense = dataset::recall_at_3(m, &planted, |q| q.mode(SearchMode::Dense).rerank(false)).await;
    let hybrid = dataset::recall_at_3(m, &planted, |q| q.mode(SearchMode::Hybrid).rerank(false)).await;
    let decay = dataset::recall_at_3(m, &planted, |q| q.mode(SearchMode::Hybrid)).await;
    println!(
        "{label} MiniLM recall@3 over {} questions: dense {:.3}, hybrid {:.3}, hybrid+decay {:.3}; cross-user {}",
        dense.total,
        dense.rate(),
        hybrid.rate(),
        decay.rate(),
        dense.cross_user + hybrid.cross_user + decay.cross_user
    );
    assert_eq!(dense.cross_user + hybrid.cross_user + decay.cross_user, 0);
    // docs/benchmarks/memory-quality.md reports every planted fact found (1.000) in all three modes
    // on both stores; one question of slack, see `SLACK`.
    assert_eq!(dense.total, 24);
    for (mode, r) in [("dense", dense), ("hybrid", hybrid), ("hybrid+decay", decay)] {
        assert!(r.hits + SLACK >= r.total, "{label} {mode}: MiniLM recall {r:?}, documented 24 of 24");
    }
}

/// Questions a recall figure may fall short of its documented level. The model and the data are
/// fixed and two runs print the same figures, but the vectors come from floating-point sums whose
/// order depends on the CPU's SIMD width, which can swap two near-tied memories at rank 3 on
/// another machine; one question covers that, and a real regression (a lost filter, broken
/// ranking or fusion) costs many more.
const SLACK: usize = 1;

/// Hits out of the hard set's 72 questions that docs/benchmarks/memory-quality.md reports for
/// MiniLM in process,
/// per mode (on Milvus the hybrid figure differs: the server ranks its BM25 list its own way).
const HARD_SET_EMBEDDED: [(hard_recall::Mode, usize); 4] = [
    (hard_recall::Mode::Dense, 63),
    (hard_recall::Mode::DenseDecay, 60),
    (hard_recall::Mode::Hybrid, 57),
    (hard_recall::Mode::HybridDecay, 52),
];
const HARD_SET_MILVUS: [(hard_recall::Mode, usize); 4] = [
    (hard_recall::Mode::Dense, 63),
    (hard_recall::Mode::DenseDecay, 60),
    (hard_recall::Mode::Hybrid, 60),
    (hard_recall::Mode::HybridDecay, 52),
];

#[tokio::test]
async fn minilm_recall_embedded() {
    let Some(m) = model("minilm_recall_embedded") else { return };
    recall("embedded", &EmbeddedMemory::new(m)).await;
}

/// Runs `body` on a Milvus memory with `model` on a fresh collection of `MILVUS_URL`, dropped
/// afterwards even when `body` panics (skips outside CI when no server is set).
async fn with_milvus<F, Fut>(test: &str, model: Memoized<MiniLmEmbeddings>, body: F)
where
    F: FnOnce(MilvusMemory) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    support::with_milvus_using(test, |c| c, model, body).await;
}

#[tokio::test]
async fn minilm_recall_milvus() {
    let Some(model) = model("minilm_recall_milvus") else { return };
    with_milvus("minilm_recall_milvus", model, |m| async move { recall("milvus", &m).await }).await;
}

/// The hard set with MiniLM. Checked: no cross-user hit in any mode; decay ranks the newer of two
/// contradicting facts first at least as often as plain hybrid; dense recalls at least as many
/// low-overlap facts as hybrid; hybrid recalls at least as many exact-identifier facts as dense;
/// and every mode recalls what docs/benchmarks/memory-quality.md reports for it (`documented`),
/// less [`SLACK`].
async fn hard_set<M: Memory>(label: &str, m: &M, documented: &[(hard_recall::Mode, usize)]) {
    let reports = hard_recall::run_all(label, m, 3, 25).await;
    hard_recall::assert_isolated(label, &reports);
    hard_recall::assert_decay_prefers_newer(label, &reports);
    hard_recall::assert_dense_bridges_paraphrases(label, &reports);
    hard_recall::assert_keywords_find_identifiers(label, &reports);
    for &(mode, hits) in documented {
        let r = hard_recall::get(&reports, mode).overall();
        assert_eq!(r.total, 72, "{label}: the hard set changed; measure it again and update the figures");
        assert!(
            r.hits + SLACK >= hits,
            "{label} {}: MiniLM recall {r:?}, documented {hits} of {}",
            mode.label(),
            r.total
        );
    }
}

#[tokio::test]
async fn minilm_hard_set_embedded_is_isolated_prefers_newer_facts_and_bridges_paraphrases() {
    let Some(m) = model("minilm_hard_set_embedded") else { return };
    hard_set("embedded/minilm", &EmbeddedMemory::new(m), &HARD_SET_EMBEDDED).await;
}

#[tokio::test]
async fn minilm_hard_set_milvus_is_isolated_prefers_newer_facts_and_bridges_paraphrases() {
    let Some(model) = model("minilm_hard_set_milvus") else { return };
    with_milvus("minilm_hard_set_milvus", model, |m| async move {
        hard_set("milvus/minilm", &m, &HARD_SET_MILVUS).await;
    })
    .await;
}

/// The update path on the hard set with MiniLM, in process: the newer fact first at least as often
/// as with decay alone, no retired memory returned (figures printed;
/// docs/benchmarks/memory-quality.md).
#[tokio::test]
async fn minilm_update_path_embedded_puts_newer_facts_first_and_never_returns_retired() {
    let Some(m) = model("minilm_update_path_embedded") else { return };
    let plan = support::hard_supersede::Plan::FULL;
    support::hard_supersede::run_update_paths("embedded/minilm", &EmbeddedMemory::new(m), 3, 25, plan).await;
}

/// The update path end to end on Milvus with real embeddings.
#[tokio::test]
async fn minilm_update_path_milvus_puts_newer_facts_first_and_never_returns_retired() {
    let Some(model) = model("minilm_update_path_milvus") else { return };
    // The oracle decider in the default retrieval: the figures of the other deciders and modes
    // are the in-process test's (the same on both memories), which take minutes on Milvus Lite.
    let plan = support::hard_supersede::Plan::one(true, &[]);
    with_milvus("minilm_update_path_milvus", model, |m| async move {
        support::hard_supersede::run_update_paths("milvus/minilm", &m, 3, 25, plan).await;
    })
    .await;
}

/// Hybrid fusion's settings compared on the hard set in process (MiniLM): plain RRF (k = 60,
/// equal weights), the defaults, and a keyword weight of 0; each one's figures are printed.
/// Checked: isolation everywhere; a keyword weight of 0 ranks exactly as dense search; and the
/// defaults recall at least as much as plain RRF, with and without decay, which is why they are
/// the defaults (docs/benchmarks/memory-quality.md has the full sweep).
#[tokio::test]
async fn minilm_fusion_defaults_beat_plain_rrf_and_zero_keyword_weight_is_dense() {
    use hard_recall::{HardReport, Mode};
    use mnemograph_memory::RerankConfig;
    let Some(m) = model("minilm_fusion_defaults") else { return };
    let m: std::sync::Arc<dyn mnemograph_checkpoint::store::DynEmbeddings> = std::sync::Arc::new(m);
    let run = |label: &'static str, rerank: RerankConfig| {
        let memory = EmbeddedMemory::from_arc(m.clone()).rerank(rerank);
        async move {
            let reports = hard_recall::run_all(label, &memory, 3, 25).await;
            hard_recall::assert_isolated(label, &reports);
            reports
        }
    };
    let overall = |reports: &[(Mode, HardReport)], mode| hard_recall::get(reports, mode).overall();
    let plain = run("embedded/minilm plain RRF", RerankConfig::default().rrf_k(60).keyword_weight(1.0)).await;
    let defaults = run("embedded/minilm default fusion", RerankConfig::default()).await;
    let zero = run("embedded/minilm keyword weight 0", RerankConfig::default().keyword_weight(0.0)).await;
    for mode in [Mode::Hybrid, Mode::HybridDecay] {
        let (d, p) = (overall(&defaults, mode), overall(&plain, mode));
        assert!(d.rate() >= p.rate(), "{mode:?}: defaults {d:?} below plain RRF {p:?}");
    }
    let (z, dense) = (overall(&zero, Mode::Hybrid), overall(&zero, Mode::Dense));
    assert_eq!(format!("{z:?}"), format!("{dense:?}"), "weight 0 must rank as dense search");
}
