//! One database, two stores: LangGraph's Python `PostgresStore` (`tests/python/store_peer.py`)
//! and [`PostgresStore`] each set up, read and expire what the other wrote. Each test runs in a
//! database of its own.
//!
//! Needs `LANGGRAPH_PYTHON` and the server of `DATABASE_URL`; without them each test prints
//! `SKIPPED` and passes, unless `CI` is set: then it fails.

mod support;

use std::time::Duration;

use mnemograph_checkpoint::store::{
    namespace, HashingEmbeddings, IndexConfig, ListNamespaces, SearchQuery, Store,
};
use mnemograph_checkpoint_postgres::{PostgresStore, VectorStorage};
use serde_json::{json, Value};
use support::{drop_database, fresh_database, python_peer, python_script, url_for};

/// The labels and key with metacharacters that `store_peer.py` shares.
fn odd_namespace() -> Vec<String> {
    namespace(["odd%_\\", "it's"])
}
const ODD_KEY: &str = "k'; DROP TABLE store; --";

async fn seconds_left(store: &PostgresStore, prefix: &str, key: &str) -> f64 {
    sqlx::query_scalar(
        "SELECT EXTRACT(EPOCH FROM expires_at - now())::float8 FROM store WHERE prefix = $1 AND key = $2",
    )
    .bind(prefix)
    .bind(key)
    .fetch_one(store.pool())
    .await
    .unwrap()
}

async fn migrations(store: &PostgresStore) -> Vec<i32> {
    sqlx::query_scalar("SELECT v FROM store_migrations ORDER BY v").fetch_all(store.pool()).await.unwrap()
}

#[tokio::test]
async fn rust_reads_items_python_wrote() {
    let test = "rust_reads_items_python_wrote";
    if python_peer(test).is_none() {
        return;
    }
    let Some((db, saver)) = fresh_database("st_from_py").await else { return };
    // Python creates and migrates the table; opening it here finds the schema current.
    python_script(test, "store_peer.py", &db, &["put"]).unwrap();
    let store = PostgresStore::builder().from_pool(saver.pool().clone()).await.unwrap();
    assert_eq!(migrations(&store).await, [0, 1, 2, 3]);

    let pet = store.get(&namespace(["users", "u2"]), "pet").await.unwrap().expect("Python's item");
    assert_eq!(
        pet.value,
        json!({"text": "a cat named Miso", "kind": "fact", "nested": {"x": [1, 2]}, "名字": "米索"})
    );
    assert_eq!(pet.created_at, pet.updated_at);
    let mut prefs: Vec<String> = store
        .search(&namespace(["users"]), SearchQuery::new().filter(json!({"kind": "pref"})))
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.item.key)
        .collect();
    prefs.sort();
    assert_eq!(prefs, ["coffee", "soon", "tea"], "Python's TTL of an hour has not run out");
    let newest: Vec<String> = store
        .search(&namespace(["users", "u1", "prefs"]), SearchQuery::new())
        .await
        .unwrap()
        .into_iter()
        .map(|h| h.item.key)
        .collect();
    assert_eq!(newest, ["soon", "tea", "coffee"]);
    // Python's 60 ms item has run out: invisible to every read, then swept.
    let gone = namespace(["users", "gone"]);
    assert!(store.get(&gone, "flash").await.unwrap().is_none());
    assert_eq!(store.count(&gone).await.unwrap(), 0);
    let namespaces = store.list_namespaces(ListNamespaces::new()).await.unwrap();
    assert!(!namespaces.contains(&gone), "{namespaces:?}");
    assert!(namespaces.contains(&odd_namespace()), "{namespaces:?}");
    assert_eq!(store.count(&namespace(["users"])).await.unwrap(), 4);
    assert_eq!(store.sweep_expired().await.unwrap(), 1);
    // Python's `ttl=60` is 60 in `ttl_minutes`; a read here refreshes by it.
    let soon = namespace(["users", "u1", "prefs"]);
    sqlx::query("UPDATE store SET expires_at = now() + interval '5 seconds' WHERE key = 'soon'")
        .execute(store.pool())
        .await
        .unwrap();
    assert!(store.get(&soon, "soon").await.unwrap().is_some());
    let left = seconds_left(&store, "users.u1.prefs", "soon").await;
    assert!((3590.0..=3600.0).contains(&left), "{left}");
    let odd = store.get(&odd_namespace(), ODD_KEY).await.unwrap().expect("the odd item");
    assert_eq!(odd.value, json!({"odd": true}));
    assert_eq!(store.search(&namespace(["odd%_\\"]), SearchQuery::new()).await.unwrap().len(), 1);
    saver.pool().close().await;
    drop_database(&db).await;
}

#[tokio::test]
async fn python_reads_items_rust_wrote() {
    let test = "python_reads_items_rust_wrote";
    if python_peer(test).is_none() {
        return;
    }
    let Some((db, saver)) = fresh_database("st_from_rust").await else { return };
    // Rust creates and migrates the table; Python's `setup` then finds nothing to do.
    let store = PostgresStore::builder().from_pool(saver.pool().clone()).await.unwrap();
    let guide = json!({"lang": "rust", "title": "Ünïcode 指南", "n": 1.5, "tags": ["a", "b"]});
    store.put(&namespace(["docs", "rust"]), "guide", guide.clone(), None).await.unwrap();
    store.put(&namespace(["docs", "py"]), "intro", json!({"lang": "python"}), None).await.unwrap();
    store
        .put(&namespace(["docs", "rust"]), "notes", json!({"lang": "rust"}), Some(Duration::from_secs(3600)))
        .await
        .unwrap();
    store
        .put(&namespace(["docs", "old"]), "expired", json!({"lang": "rust"}), Some(Duration::from_millis(1)))
        .await
        .unwrap();
    store.put(&odd_namespace(), ODD_KEY, json!({"odd": "from rust"}), None).await.unwrap();
    // Python's refresh starts from the server's clock: make the hour visibly shorter first.
    sqlx::query("UPDATE store SET expires_at = now() + interval '5 seconds' WHERE key = 'notes'")
        .execute(store.pool())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;

    let read: Value = python_script(test, "store_peer.py", &db, &["read"]).unwrap();
    assert_eq!(read["value"], guide);
    assert_eq!(read["same_stamps"], json!(true), "{read}");
    assert!(read["created_at"].as_str().is_some_and(|t| t.starts_with("20")), "{read}");
    assert_eq!(read["filtered"], json!(["guide", "notes"]), "Python's JSONB filter reads our values");
    assert_eq!(read["namespaces"], json!([["docs", "py"], ["docs", "rust"], ["odd%_\\", "it's"]]));
    assert_eq!(read["newest_first"], json!(["notes", "guide"]));
    assert_eq!(read["odd"], json!({"odd": "from rust"}));
    assert_eq!(read["notes"], json!({"lang": "rust"}));
    assert_eq!(read["notes_ttl_minutes"], json!(60));
    let left = read["notes_seconds_left"].as_f64().unwrap();
    assert!((3590.0..=3600.0).contains(&left), "Python refreshed our item by its hour: {left}");
    assert_eq!(read["expired_visible"], json!(false));
    assert_eq!(read["swept"], json!(1), "Python's sweep deletes the item that ran out here");
    assert_eq!(read["migrations"], json!([0, 1, 2, 3]));
    // And the items read back here as they were, the swept one gone.
    assert_eq!(store.count(&namespace(["docs"])).await.unwrap(), 3);
    let again = PostgresStore::connect(&url_for(&db)).await.unwrap();
    assert_eq!(again.get(&namespace(["docs", "rust"]), "guide").await.unwrap().unwrap().value, guide);
    again.pool().close().await;
    saver.pool().close().await;
    drop_database(&db).await;
}

/// Python's store reads the items of an indexed store here, and deleting one there deletes its
/// vectors (the table's foreign key). With pgvector, Python's `setup` with an index finds our
/// vector table its own; without, it fails for want of the extension, rather than taking the
/// `real[]` table for one.
#[tokio::test]
async fn python_reads_items_of_an_indexed_store() {
    let test = "python_reads_items_of_an_indexed_store";
    if python_peer(test).is_none() {
        return;
    }
    let Some((db, saver)) = fresh_database("st_vec_py").await else { return };
    let index = IndexConfig::new(HashingEmbeddings::new(64)).fields(["text"]);
    let store = PostgresStore::builder().index(index).from_pool(saver.pool().clone()).await.unwrap();
    let ns = namespace(["vec"]);
    store.put(&ns, "kept", json!({"text": "green tea"}), None).await.unwrap();
    store.put(&ns, "gone", json!({"text": "a red bike"}), None).await.unwrap();

    let read: Value = python_script(test, "store_peer.py", &db, &["vectors"]).unwrap();
    assert_eq!(read["kept"], json!({"text": "green tea"}));
    let keys: Vec<String> =
        sqlx::query_scalar("SELECT key FROM store_vectors").fetch_all(store.pool()).await.unwrap();
    assert_eq!(keys, ["kept"], "Python's delete took the item's vectors with it");
    let error = read["index_setup_error"].as_str();
    match store.vector_storage() {
        Some(VectorStorage::Pgvector) => assert_eq!(error, None, "{read}"),
        _ => assert!(error.is_some_and(|e| e.contains("vector")), "{read}"),
    }
    let hits = store.search(&ns, SearchQuery::new().query("green tea")).await.unwrap();
    assert_eq!(hits.len(), 1);
    assert!(hits[0].score.is_some_and(|s| s > 0.99));
    saver.pool().close().await;
    drop_database(&db).await;
}
