//! The memory suite and the store conformance suite, in process (no server needed).

mod support;

use std::sync::Arc;

use mnemograph_checkpoint::store::{DynStore, HashingEmbeddings, InMemoryStore, IndexConfig};
use mnemograph_memory::{EmbeddedMemory, Memory, MemoryHit, RetrieveQuery, SearchMode};
use mnemograph_test::store_conformance as store_suite;
use support::{dataset, memory_suite, DIMS};

fn memory() -> EmbeddedMemory {
    EmbeddedMemory::new(HashingEmbeddings::new(DIMS))
}

#[tokio::test]
async fn embedded_newer_restatement_ranks_above_the_older() {
    let on = memory().rerank(memory_suite::newer_first_on());
    memory_suite::newer_restatement_ranks_above_the_older(&on).await;
}

/// The order of [`memory_suite::newer_restatement_ranks_above_the_older`] comes from the step:
/// off (the default), or without the model (`with_store`), the older version outscores the newer.
#[tokio::test]
async fn without_newer_first_the_older_version_ranks_first() {
    let store = InMemoryStore::with_index(IndexConfig::new(HashingEmbeddings::new(DIMS)).fields(["content"]));
    let no_model = EmbeddedMemory::with_store(store).rerank(memory_suite::newer_first_on());
    for hits in [retrieve_moved(&memory()).await, retrieve_moved(&no_model).await] {
        assert_eq!(memory_suite::versions(&hits), ["old", "new"], "{hits:#?}");
    }
}

async fn retrieve_moved<S: mnemograph_checkpoint::store::Store>(m: &EmbeddedMemory<S>) -> Vec<MemoryHit> {
    m.save(memory_suite::moved_memories("mover")).await.unwrap();
    m.retrieve(RetrieveQuery::new("mover", "where do I live").now(dataset::NOW)).await.unwrap()
}

#[tokio::test]
async fn embedded_isolation_with_adversarial_ids() {
    memory_suite::isolation_with_adversarial_ids(&memory()).await;
}

#[tokio::test]
async fn embedded_invalid_ids_are_refused() {
    memory_suite::invalid_ids_are_refused(&memory()).await;
}

#[tokio::test]
async fn embedded_chinese_round_trip() {
    memory_suite::chinese_round_trip(&memory()).await;
}

#[tokio::test]
async fn embedded_decay_and_importance_order() {
    memory_suite::decay_and_importance_order(&memory()).await;
}

#[tokio::test]
async fn embedded_min_importance_filters_candidates() {
    memory_suite::min_importance_filters_candidates(&memory()).await;
}

#[tokio::test]
async fn embedded_recent_context_helps_but_the_question_decides() {
    memory_suite::recent_context_helps_but_the_question_decides(&memory()).await;
}

#[tokio::test]
async fn embedded_time_window_and_session_scope() {
    memory_suite::time_window_and_session_scope(&memory()).await;
}

#[tokio::test]
async fn embedded_compaction_summarizes_old_exchanges() {
    memory_suite::compaction_summarizes_old_exchanges(&memory()).await;
}

#[tokio::test]
async fn embedded_memory_over_a_dyn_store() {
    // The graph's runtime store (`Arc<dyn DynStore>`) can host the memory directly.
    let index = IndexConfig::new(HashingEmbeddings::new(DIMS)).fields(["content"]);
    let store: Arc<dyn DynStore> = Arc::new(InMemoryStore::with_index(index));
    memory_suite::chinese_round_trip(&EmbeddedMemory::with_store(store)).await;
}

#[tokio::test]
async fn embedded_hybrid_recall_on_planted_facts() {
    let m = memory();
    let (memories, planted) = dataset::build(3, 4, 25);
    for chunk in memories.chunks(100) {
        mnemograph_memory::Memory::save(&m, chunk.to_vec()).await.unwrap();
    }
    let dense = dataset::recall_at_3(&m, &planted, |q| q.mode(SearchMode::Dense).rerank(false)).await;
    let hybrid = dataset::recall_at_3(&m, &planted, |q| q.mode(SearchMode::Hybrid).rerank(false)).await;
    let decay = dataset::recall_at_3(&m, &planted, |q| q.mode(SearchMode::Hybrid)).await;
    println!(
        "embedded recall@3 over {} questions: dense {:.3}, hybrid {:.3}, hybrid+decay {:.3}",
        dense.total,
        dense.rate(),
        hybrid.rate(),
        decay.rate()
    );
    assert_eq!(dense.cross_user + hybrid.cross_user + decay.cross_user, 0);
    assert!(hybrid.rate() >= dense.rate(), "hybrid {hybrid:?} < dense {dense:?}");
    assert!(hybrid.rate() >= 0.75, "{hybrid:?}");
}

fn indexed_store() -> InMemoryStore {
    InMemoryStore::with_index(IndexConfig::new(HashingEmbeddings::new(DIMS)).fields(["text"]))
}

#[tokio::test]
async fn store_conformance_crud() {
    store_suite::crud(&InMemoryStore::new()).await;
}

#[tokio::test]
async fn store_conformance_validation() {
    store_suite::validation(&InMemoryStore::new()).await;
}

#[tokio::test]
async fn store_conformance_search_filters() {
    store_suite::search_filters(&InMemoryStore::new()).await;
}

#[tokio::test]
async fn store_conformance_semantic_ranking() {
    store_suite::semantic_ranking(&indexed_store()).await;
}

#[tokio::test]
async fn store_conformance_list_namespaces() {
    store_suite::list_namespaces(&InMemoryStore::new()).await;
}

#[tokio::test]
async fn store_conformance_newest_write_first() {
    store_suite::newest_write_first(&InMemoryStore::new()).await;
}

#[tokio::test]
async fn store_conformance_replacing_re_embeds() {
    store_suite::replacing_re_embeds(&indexed_store()).await;
}

#[tokio::test]
async fn store_conformance_through_dyn_store() {
    let s: Arc<dyn DynStore> = Arc::new(indexed_store());
    store_suite::crud(&s).await;
    store_suite::search_filters(&s).await;
    store_suite::semantic_ranking(&s).await;
}

/// Shared, distinct words of two texts (the terms BM25 can match between them).
fn shared_words(a: &str, b: &str) -> usize {
    let b = mnemograph_checkpoint::store::tokenize(b);
    let mut a = mnemograph_checkpoint::store::tokenize(a);
    a.sort();
    a.dedup();
    a.iter().filter(|w| b.contains(w)).count()
}

/// The hard set is hard in the intended ways, checked on the text itself (no model): every trap
/// shares more of its question's words than the fact does, so keyword search prefers the trap;
/// low-overlap facts share at most one word with their question; every superseded fact has an
/// older version saved at least a month earlier; every exact-identifier question names its fact's
/// identifier and no distractor's, that identifier is in no other memory of any user and has a word
/// no other memory of the user has, and the fact shares more of the question's words than either
/// distractor does (so keyword search prefers the fact), while the distractors differ from it in a
/// few words besides the identifier; questions come in equal numbers per user.
#[test]
fn hard_dataset_traps_outscore_facts_lexically_and_paraphrases_barely_overlap() {
    use support::hard_dataset::{build, Category};
    let (memories, questions) = build(3, 25);
    // The one memory of `user` containing `text`; markers must identify exactly one memory, so
    // that a recall hit can only be the planted fact.
    let find = |user: &str, text: &str| {
        let found: Vec<_> =
            memories.iter().filter(|m| m.user_id == user && m.content.contains(text)).collect();
        assert_eq!(found.len(), 1, "{text:?} must identify one memory of {user}");
        found[0]
    };
    let created = |user: &str, text: &str| find(user, text).created_at.expect("every memory has a time");
    for q in &questions {
        // Whole stored contents (question and answer lines): what BM25 actually indexes.
        let fact = find(&q.user, &q.marker).content.as_str();
        match q.category {
            Category::LexicalTrap => {
                let f = shared_words(&q.question, fact);
                for trap in &q.traps {
                    let t = shared_words(&q.question, &find(&q.user, trap).content);
                    assert!(t > f, "{:?}: trap {trap:?} shares {t} words, fact {f}", q.question);
                }
            }
            Category::LowOverlap => {
                let n = shared_words(&q.question, fact);
                assert!(n <= 1, "{:?} shares {n} words with {fact:?}", q.question);
            }
            Category::Superseded => {
                let stale = q.stale_marker.as_deref().expect("a superseded fact has an old version");
                let gap = created(&q.user, &q.marker) - created(&q.user, stale);
                assert!(gap >= 30 * 86_400, "{:?}: only {gap} s newer", q.question);
            }
            Category::ExactIdentifier => {
                let id = q.identifier.as_deref().expect("an identifier question has an identifier");
                assert!(q.question.contains(id), "{:?} must name {id:?}", q.question);
                assert!(fact.contains(id), "{fact:?} must contain {id:?}");
                let holders = memories.iter().filter(|m| m.content.contains(id)).count();
                assert_eq!(holders, 1, "{id:?} must be in one memory of all users");
                assert_eq!(q.traps.len(), 2, "{:?}: two distractors", q.question);
                assert_eq!(q.other_identifiers.len(), q.traps.len(), "{:?}", q.question);
                // A word of the identifier that no other memory of the user has: BM25 gives it the
                // highest IDF, and the question asks for it.
                let asked = mnemograph_checkpoint::store::tokenize(&q.question);
                let unique = mnemograph_checkpoint::store::tokenize(id).into_iter().filter(|w| {
                    asked.contains(w)
                        && memories.iter().filter(|m| m.user_id == q.user).all(|m| {
                            m.content == fact
                                || !mnemograph_checkpoint::store::tokenize(&m.content).contains(w)
                        })
                });
                assert!(unique.count() > 0, "{id:?} has no word only its fact holds");
                let f = shared_words(&q.question, fact);
                for (trap, other) in q.traps.iter().zip(&q.other_identifiers) {
                    assert!(!q.question.contains(other.as_str()), "{:?} names {other:?}", q.question);
                    let distractor = find(&q.user, trap).content.as_str();
                    assert!(distractor.contains(other.as_str()), "{distractor:?} must contain {other:?}");
                    assert!(!distractor.contains(id), "{distractor:?} must not contain {id:?}");
                    let t = shared_words(&q.question, distractor);
                    assert!(f > t, "{:?}: distractor {trap:?} shares {t} words, fact {f}", q.question);
                    // Semantically similar: the user said the same sentence but for the identifier
                    // and a few words (compared without the assistant's identical replies).
                    let common = shared_words(&q.marker, trap);
                    assert!(common >= 5, "{:?} and {trap:?} share only {common} words", q.marker);
                }
            }
        }
    }
    for c in Category::ALL {
        let per_user: Vec<usize> = support::hard_dataset::users(3)
            .iter()
            .map(|u| questions.iter().filter(|q| &q.user == u && q.category == c).count())
            .collect();
        assert!(per_user.iter().all(|&n| n == per_user[0] && n > 0), "{c:?}: {per_user:?}");
    }
}

/// The hard set with the hashing (bag-of-words) embedder, in process: no cross-user hit in any
/// mode, and decay puts the current version of a changed fact first at least as often as plain
/// hybrid does. No recall floor: the set is built to defeat bag-of-words matching, and it does
/// (see the printed figures).
#[tokio::test]
async fn embedded_hashing_hard_set_is_isolated_and_decay_prefers_newer_facts() {
    use support::hard_recall;
    let reports = hard_recall::run_all("embedded/hashing", &memory(), 3, 25).await;
    hard_recall::assert_isolated("embedded/hashing", &reports);
    hard_recall::assert_decay_prefers_newer("embedded/hashing", &reports);
}

/// The update path on the hard set (hashing embedder, in process): after consolidation the newer
/// of two contradicting facts comes first at least as often as with decay alone, and no retired
/// memory is returned (figures printed; docs/benchmarks/memory-quality.md).
#[tokio::test]
async fn embedded_hashing_update_path_puts_newer_facts_first_and_never_returns_retired() {
    let plan = support::hard_supersede::Plan::FULL;
    support::hard_supersede::run_update_paths("embedded/hashing", &memory(), 3, 25, plan).await;
}
