//! One file, two stores: LangGraph's Python `SqliteStore` (`tests/python/store_interop.py`) and
//! [`SqliteStore`] each read the items, vectors and expiry the other wrote.
//!
//! Needs `LANGGRAPH_PYTHON` (see `python_interop.rs`); without it each test prints `SKIPPED` and
//! passes, unless `CI` is set: then it fails. Python's own vector search needs the sqlite-vec
//! extension, which the peer's `sqlite3` cannot load, so vectors cross as bytes: Python writes
//! them for our search, and checks ours against `sqlite_vec.serialize_float32`.

mod support;

use std::path::Path;
use std::time::Duration;

use mnemograph_checkpoint::store::{namespace, Embeddings, IndexConfig, SearchQuery, Store};
use mnemograph_checkpoint::BoxError;
use mnemograph_checkpoint_sqlite::SqliteStore;
use serde_json::{json, Value};
use support::{fresh_path, python_peer, run_python};

fn py(python: &str, path: &Path, command: &str) -> Value {
    run_python(python, "store_interop.py", path, &[command])
}

/// The model both sides embed with: how often each of the letters a..h occurs.
struct LetterCounts;

impl Embeddings for LetterCounts {
    async fn embed_documents(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, BoxError> {
        Ok(texts.iter().map(|t| letters(t)).collect())
    }
    fn dims(&self) -> usize {
        8
    }
}

fn letters(text: &str) -> Vec<f32> {
    let lower = text.to_lowercase();
    ('a'..='h').map(|c| lower.matches(c).count() as f32).collect()
}

async fn indexed(path: &Path) -> SqliteStore {
    SqliteStore::builder()
        .index(IndexConfig::new(LetterCounts).fields(["text"]))
        .connect(path.to_str().unwrap())
        .await
        .expect("open")
}

#[tokio::test]
async fn rust_reads_items_and_vectors_python_wrote() {
    let Some(python) = python_peer() else { return };
    let path = fresh_path("store-from-python");
    drop(indexed(&path).await);
    py(&python, &path, "put");
    let store = indexed(&path).await;

    let pet = store.get(&namespace(["users", "u2"]), "pet").await.unwrap().expect("Python's item");
    assert_eq!(
        pet.value,
        json!({"text": "a cat named Miso", "kind": "fact", "nested": {"x": [1, 2]}, "名字": "米索"})
    );
    let prefs = namespace(["users", "u1", "prefs"]);
    let mut kinds: Vec<String> = store
        .search(&namespace(["users"]), SearchQuery::new().filter(json!({"kind": "pref"})))
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.item.key)
        .collect();
    kinds.sort();
    assert_eq!(kinds, ["coffee", "soon", "tea"], "Python's TTL of an hour has not run out");
    // Python's vectors rank our query: the scores are the cosines of the shared model.
    let hits = store.search(&prefs, SearchQuery::new().query("coffee beans")).await.unwrap();
    assert_eq!(hits[0].key, "coffee");
    assert!((hits[0].score.unwrap() - 0.9).abs() < 1e-6, "{:?}", hits[0].score);
    let hits = store.search(&prefs, SearchQuery::new().query("green tea").limit(1)).await.unwrap();
    assert_eq!((hits[0].key.as_str(), hits[0].score.map(|s| (s * 1e6).round())), ("tea", Some(1e6)));
    assert_eq!(store.count(&namespace(["users"])).await.unwrap(), 4);
}

#[tokio::test]
async fn python_reads_items_rust_wrote() {
    let Some(python) = python_peer() else { return };
    let path = fresh_path("store-from-rust");
    let store = SqliteStore::connect(path.to_str().unwrap()).await.unwrap();
    let guide = json!({"lang": "rust", "title": "Ünïcode 指南", "n": 1.5, "tags": ["a", "b"]});
    store.put(&namespace(["docs", "rust"]), "guide", guide.clone(), None).await.unwrap();
    store.put(&namespace(["docs", "py"]), "intro", json!({"lang": "python"}), None).await.unwrap();
    store
        .put(&namespace(["docs", "rust"]), "notes", json!({"lang": "rust"}), Some(Duration::from_secs(3600)))
        .await
        .unwrap();
    drop(store);

    let read = py(&python, &path, "read");
    assert_eq!(read["value"], guide);
    assert_eq!(read["filtered"], json!(["guide", "notes"]), "Python's json_extract filter reads our values");
    assert_eq!(read["namespaces"], json!([["docs", "py"], ["docs", "rust"]]));
    assert_eq!(read["newest_first"], json!(["notes", "guide"]));
    assert!(read["created_at"].as_str().is_some_and(|t| t.starts_with("20")), "{read}");
}

#[tokio::test]
async fn rust_vectors_are_the_bytes_sqlite_vec_writes() {
    let Some(python) = python_peer() else { return };
    let path = fresh_path("store-vectors");
    let store = indexed(&path).await;
    let ns = namespace(["kb"]);
    for (key, text) in [("a", "abc def"), ("b", "héllo wörld"), ("c", "gggh")] {
        store.put(&ns, key, json!({"text": text}), None).await.unwrap();
    }
    store.put(&ns, "a", json!({"text": "replaced: cafe bagged"}), None).await.unwrap();
    drop(store);
    assert_eq!(py(&python, &path, "vectors"), json!({"total": 3, "same": 3}));
}
