//! The update path for superseded facts (consolidation) on both memories: the embedded one always,
//! Milvus when `MILVUS_URL` is set (each test in its own collection; skipped with a printed reason
//! otherwise, failed under CI), on a new collection and on one created before the `retired` flag.

mod support;

use mnemograph_checkpoint::store::HashingEmbeddings;
use mnemograph_memory::EmbeddedMemory;
use support::legacy::with_legacy_milvus;
use support::{consolidate_suite as suite, with_milvus, DIMS};

fn embedded() -> EmbeddedMemory {
    EmbeddedMemory::new(HashingEmbeddings::new(DIMS))
}

/// One `#[tokio::test]` per behaviour and backend.
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod embedded_memory {
            use super::*;
            $(#[tokio::test]
            async fn $name() {
                suite::$name(&embedded()).await;
            })*
        }
        mod milvus_memory {
            use super::*;
            $(#[tokio::test]
            async fn $name() {
                with_milvus(stringify!($name), |c| c, |m| async move { suite::$name(&m).await }).await;
            })*
        }
        // A collection created before the `retired` flag: the same behaviour on the marks alone.
        mod milvus_memory_without_the_flag {
            use super::*;
            $(#[tokio::test]
            async fn $name() {
                let no_rows = |_, _| async {};
                with_legacy_milvus(stringify!($name), no_rows, |m| async move {
                    assert!(!m.retired_field());
                    suite::$name(&m).await
                })
                .await;
            })*
        }
    };
}

both!(
    hot_path_retires_the_superseded_fact,
    retirement_is_auditable_and_restorable,
    consolidation_never_touches_another_user,
    llm_decider_retires_what_the_model_names,
    bad_model_output_is_a_typed_error_and_retires_nothing,
    consolidate_session_is_idempotent,
    compaction_retires_what_summaries_supersede,
);
