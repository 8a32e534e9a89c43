//! The update path for superseded facts (consolidation) on both memories: the embedded one always,
//! Milvus when `MILVUS_URL` is set (each test in its own collection; skipped with a printed reason
//! otherwise, failed under CI).

mod support;

use mnemograph_core::store::HashingEmbeddings;
use mnemograph_memory::EmbeddedMemory;
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
