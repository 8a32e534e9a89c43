//! The memory suite on `EmbeddedMemory` over mnemograph-checkpoint-sqlite's `SqliteStore`: the
//! embedded memory kept in a file, as the main command keeps it, behaves as the in-process one,
//! and what one process saved another finds.

mod support;

use std::path::PathBuf;

use mnemograph_checkpoint::store::{HashingEmbeddings, IndexConfig};
use mnemograph_checkpoint_sqlite::SqliteStore;
use mnemograph_memory::{now_secs, EmbeddedMemory, Memory, NewMemory, Retire, Retirement, RetrieveQuery};
use support::{consolidate_suite, memory_suite, DIMS};

fn fresh_path(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embedded-sqlite");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}-{}.sqlite", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

async fn open(path: &std::path::Path) -> EmbeddedMemory<SqliteStore> {
    let embed = std::sync::Arc::new(HashingEmbeddings::new(DIMS));
    let index = IndexConfig::from_arc(embed.clone()).fields(["content"]);
    let store = SqliteStore::builder().index(index).connect(path.to_str().unwrap()).await.unwrap();
    EmbeddedMemory::with_store(store).embeddings(embed)
}

async fn memory(name: &str) -> EmbeddedMemory<SqliteStore> {
    open(&fresh_path(name)).await
}

#[tokio::test]
async fn sqlite_isolation_with_adversarial_ids() {
    memory_suite::isolation_with_adversarial_ids(&memory("isolation").await).await;
}

#[tokio::test]
async fn sqlite_invalid_ids_are_refused() {
    memory_suite::invalid_ids_are_refused(&memory("invalid").await).await;
}

#[tokio::test]
async fn sqlite_chinese_round_trip() {
    memory_suite::chinese_round_trip(&memory("chinese").await).await;
}

#[tokio::test]
async fn sqlite_decay_and_importance_order() {
    memory_suite::decay_and_importance_order(&memory("decay").await).await;
}

#[tokio::test]
async fn sqlite_min_importance_filters_candidates() {
    memory_suite::min_importance_filters_candidates(&memory("importance").await).await;
}

#[tokio::test]
async fn sqlite_recent_context_helps_but_the_question_decides() {
    memory_suite::recent_context_helps_but_the_question_decides(&memory("context").await).await;
}

#[tokio::test]
async fn sqlite_time_window_and_session_scope() {
    memory_suite::time_window_and_session_scope(&memory("window").await).await;
}

#[tokio::test]
async fn sqlite_compaction_summarizes_old_exchanges() {
    memory_suite::compaction_summarizes_old_exchanges(&memory("compaction").await).await;
}

#[tokio::test]
async fn sqlite_newer_restatement_ranks_above_the_older() {
    let on = memory("newer").await.rerank(memory_suite::newer_first_on());
    memory_suite::newer_restatement_ranks_above_the_older(&on).await;
}

#[tokio::test]
async fn sqlite_hot_path_retires_the_superseded_fact() {
    consolidate_suite::hot_path_retires_the_superseded_fact(&memory("hot-path").await).await;
}

#[tokio::test]
async fn sqlite_retirement_is_auditable_and_restorable() {
    consolidate_suite::retirement_is_auditable_and_restorable(&memory("restorable").await).await;
}

#[tokio::test]
async fn sqlite_compaction_retires_what_summaries_supersede() {
    consolidate_suite::compaction_retires_what_summaries_supersede(&memory("compaction-retires").await).await;
}

/// What one process saved, retired and restored, the next one (here: a new store on the same
/// file) finds as it was left.
#[tokio::test]
async fn memories_and_retirements_outlive_the_process() {
    let path = fresh_path("outlive");
    let first = open(&path).await;
    let ids = first
        .save(vec![
            NewMemory::turn("ada", "monday", "My ticket number is WX-48213.", "Noted."),
            NewMemory::turn("ada", "monday", "I live in Beijing.", "Noted."),
        ])
        .await
        .unwrap();
    first.retire("ada", &[Retirement::new(ids[1], ids[0], now_secs(), "test")]).await.unwrap();
    drop(first);

    let second = open(&path).await;
    let hits = second.retrieve(RetrieveQuery::new("ada", "what was my ticket number?")).await.unwrap();
    assert!(hits[0].record.content.contains("WX-48213"), "{hits:#?}");
    assert!(hits.iter().all(|h| h.record.id != ids[1]), "the retired memory stays retired: {hits:#?}");
    let records = second.session_records("ada", "monday").await.unwrap();
    assert_eq!(records.iter().map(|r| r.id).collect::<Vec<_>>(), ids, "both kept, in write order");
    assert_eq!(second.restore("ada", &[ids[1]]).await.unwrap(), [ids[1]]);
    drop(second);
    let third = open(&path).await;
    let all = third.retrieve(RetrieveQuery::new("ada", "where do I live?")).await.unwrap();
    assert!(all.iter().any(|h| h.record.id == ids[1]), "restored for good: {all:#?}");
}
