//! Shared by the integration tests: the live-Milvus harness, the planted-fact dataset, and the
//! behaviour suites every [`Memory`] (and every mnemograph-core `Store`) must pass.

#![allow(dead_code, unreachable_pub)]

#[path = "../../../mnemograph-memory/tests/support/bilingual.rs"]
pub mod bilingual;
pub mod bilingual_corpus;
pub mod bilingual_quality;
pub mod consolidate_suite;
pub mod dataset;
pub mod grpc_proxy;
pub mod hard_dataset;
pub mod hard_recall;
pub mod hard_supersede;
pub mod legacy;
pub mod memo;
pub mod memory_suite;
pub mod quality_bench;
pub mod race_suite;
pub mod scripted;

use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use mnemograph_checkpoint::store::{Embeddings, HashingEmbeddings};
use mnemograph_memory_milvus::{Consistency, MilvusConfig, MilvusMemory};

/// Dimension of the test embedder: large enough that bag-of-words collisions are rare.
pub const DIMS: usize = 256;

/// The live server, or `None` (printing why) when `MILVUS_URL` is unset or unreachable.
///
/// Under CI (`CI` set) a missing server fails the test instead: CI starts one, so its absence is a
/// broken setup, not a reason to pass.
pub async fn connect(test: &str, config: impl FnOnce(MilvusConfig) -> MilvusConfig) -> Option<MilvusMemory> {
    connect_with(test, config, HashingEmbeddings::new(DIMS)).await
}

/// [`connect`] with the embedder `embed` instead of the hashing one.
pub async fn connect_with(
    test: &str,
    config: impl FnOnce(MilvusConfig) -> MilvusConfig,
    embed: impl Embeddings,
) -> Option<MilvusMemory> {
    let url = server_url(test)?;
    // One collection per test run: tests run in parallel and must not see each other's rows.
    let collection = format!("t_{test}_{:016x}", rand::random::<u64>());
    let cfg = config(MilvusConfig::new(url.clone()).collection(collection).consistency(Consistency::Strong));
    // The server answers, so from here on every failure is the code's, not the setup's.
    Some(MilvusMemory::connect(cfg, embed).await.expect("connect and create the collection"))
}

/// `MILVUS_URL` when a server answers there, or `None` (printing why); under CI a missing server
/// fails the test instead.
pub fn server_url(test: &str) -> Option<String> {
    let ci = std::env::var_os("CI").is_some();
    let Ok(url) = std::env::var("MILVUS_URL") else {
        assert!(!ci, "{test}: MILVUS_URL is not set but CI is; scripts/test.sh should start Milvus Lite");
        eprintln!("skipping {test}: MILVUS_URL is not set (start one with scripts/milvus-lite.sh)");
        return None;
    };
    if !reachable(&url) {
        assert!(!ci, "{test}: cannot reach Milvus at {url}");
        eprintln!("skipping {test}: cannot reach Milvus at {url}");
        return None;
    }
    Some(url)
}

/// Whether something accepts TCP connections at the URL's host and port.
fn reachable(url: &str) -> bool {
    use std::net::ToSocketAddrs;
    let host_port = url.split("://").last().unwrap_or(url).trim_end_matches('/');
    let Ok(mut addrs) = host_port.to_socket_addrs() else { return false };
    addrs.any(|a| std::net::TcpStream::connect_timeout(&a, std::time::Duration::from_secs(2)).is_ok())
}

/// Runs `body` against a fresh collection and drops the collection afterwards, even when the body
/// panics (then the panic is resumed).
pub async fn with_milvus<F, Fut>(test: &str, config: impl FnOnce(MilvusConfig) -> MilvusConfig, body: F)
where
    F: FnOnce(MilvusMemory) -> Fut,
    Fut: Future<Output = ()>,
{
    with_milvus_using(test, config, HashingEmbeddings::new(DIMS), body).await;
}

/// [`with_milvus`] with the embedder `embed` instead of the hashing one.
pub async fn with_milvus_using<F, Fut>(
    test: &str,
    config: impl FnOnce(MilvusConfig) -> MilvusConfig,
    embed: impl Embeddings,
    body: F,
) where
    F: FnOnce(MilvusMemory) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(memory) = connect_with(test, config, embed).await else { return };
    let outcome = AssertUnwindSafe(body(memory.clone())).catch_unwind().await;
    memory.drop_collection().await.expect("drop the test collection");
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// [`with_milvus`] for a body with a result: `None` when the test skips.
pub async fn with_milvus_returning<T, F, Fut>(
    test: &str,
    config: impl FnOnce(MilvusConfig) -> MilvusConfig,
    body: F,
) -> Option<T>
where
    F: FnOnce(MilvusMemory) -> Fut,
    Fut: Future<Output = T>,
{
    let memory = connect(test, config).await?;
    let outcome = AssertUnwindSafe(body(memory.clone())).catch_unwind().await;
    memory.drop_collection().await.expect("drop the test collection");
    Some(outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
}
