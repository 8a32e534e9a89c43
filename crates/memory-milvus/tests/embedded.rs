//! The memory suite and the store conformance suite, in process (no server needed).

mod support;

use std::sync::Arc;

use graph_core::store::{DynStore, HashingEmbeddings, InMemoryStore, IndexConfig};
use memory_milvus::{EmbeddedMemory, SearchMode};
use support::{dataset, memory_suite, store_suite, DIMS};

fn memory() -> EmbeddedMemory {
    EmbeddedMemory::new(HashingEmbeddings::new(DIMS))
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
        memory_milvus::Memory::save(&m, chunk.to_vec()).await.unwrap();
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
async fn store_conformance_through_dyn_store() {
    let s: Arc<dyn DynStore> = Arc::new(indexed_store());
    store_suite::crud(&s).await;
    store_suite::search_filters(&s).await;
    store_suite::semantic_ranking(&s).await;
}
