//! The spans of memory operations: `memory.retrieve` and `memory.save`, at `info` (one of each per
//! agent turn), with the backend, the search mode, `top_k` and the number of hits. The user id is
//! recorded hashed (`user.hash`, FNV-1a), so traces can group a user's calls without holding
//! who the user is.

use std::future::Future;

use tracing::field::Empty;
use tracing::{Instrument, Span};

use crate::record::{MemoryHit, RetrieveQuery, SearchMode};

/// Runs a backend's save of `count` memories inside a `memory.save` span naming `backend`
/// (`embedded`, `milvus`).
pub async fn traced_save<T, E>(
    backend: &'static str,
    count: usize,
    save: impl Future<Output = Result<T, E>>,
) -> Result<T, E> {
    save.instrument(save_span(backend, count)).await
}

/// Runs a backend's search for `query` inside a `memory.retrieve` span naming `backend`, and
/// records the number of hits on it.
pub async fn traced_retrieve<F, E>(
    backend: &'static str,
    query: RetrieveQuery,
    search: impl FnOnce(RetrieveQuery) -> F,
) -> Result<Vec<MemoryHit>, E>
where
    F: Future<Output = Result<Vec<MemoryHit>, E>>,
{
    let span = retrieve_span(backend, &query);
    let hits = search(query).instrument(span.clone()).await?;
    span.record("memory.hits", hits.len());
    Ok(hits)
}

/// A `memory.retrieve` span for `query` on `backend`; the number of hits is filled in later.
fn retrieve_span(backend: &'static str, query: &RetrieveQuery) -> Span {
    let mode = match query.mode {
        SearchMode::Dense => "dense",
        SearchMode::Hybrid => "hybrid",
    };
    tracing::info_span!(
        "memory.retrieve",
        memory.backend = backend,
        memory.mode = mode,
        memory.top_k = query.top_k,
        memory.hits = Empty,
        user.hash = %user_hash(&query.user_id),
    )
}

/// A `memory.save` span for `count` memories on `backend`.
fn save_span(backend: &'static str, count: usize) -> Span {
    tracing::info_span!("memory.save", memory.backend = backend, memory.count = count)
}

/// 64-bit FNV-1a of the user id, in hex: stable across processes and versions, so the spans of
/// one user share it.
fn user_hash(user_id: &str) -> String {
    let hash = user_id
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_hash_is_fnv1a_and_hides_the_id() {
        // FNV-1a's published test vectors.
        assert_eq!(user_hash(""), "cbf29ce484222325");
        assert_eq!(user_hash("a"), "af63dc4c8601ec8c");
        assert_ne!(user_hash("ada"), user_hash("bob"));
    }
}
