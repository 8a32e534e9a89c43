//! Concurrent retire, restore and delete of the same memories, on a multi-threaded runtime: the
//! embedded memory always, Milvus when `MILVUS_URL` is set (each test in its own collection;
//! skipped with a printed reason otherwise, failed under CI).

mod support;

use mnemograph_checkpoint::store::HashingEmbeddings;
use mnemograph_memory::EmbeddedMemory;
use support::{race_suite as suite, with_milvus, DIMS};

/// Memories raced per embedded test: the in-process race window is a few microseconds, so many
/// rounds make a lost update all but certain to show when the lock is missing.
const EMBEDDED_MEMORIES: usize = 300;
/// Memories raced per Milvus test: each call is a gRPC round trip, so every round races.
const MILVUS_MEMORIES: usize = 6;

/// One multi-threaded `#[tokio::test]` per behaviour and backend.
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod embedded_memory {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                suite::$name(&EmbeddedMemory::new(HashingEmbeddings::new(DIMS)), EMBEDDED_MEMORIES).await;
            })*
        }
        mod milvus_memory {
            use super::*;
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $name() {
                with_milvus(stringify!($name), |c| c, |m| async move {
                    suite::$name(&m, MILVUS_MEMORIES).await
                })
                .await;
            })*
        }
    };
}

both!(
    concurrent_retirements_keep_exactly_one_trail,
    a_restore_racing_retirements_ends_consistent,
    a_delete_racing_retirements_is_never_undone,
);
