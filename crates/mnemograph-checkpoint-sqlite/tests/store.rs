//! [`SqliteStore`] against the store conformance suite, and what only a file-backed store can get
//! wrong: reopening, expiry on the wall clock, corrupt rows, several connections at once.

mod support;

use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint::store::{
    namespace, HashingEmbeddings, InMemoryStore, IndexConfig, SearchQuery, Store, StoreError, TtlConfig,
};
use mnemograph_checkpoint_sqlite::{Error, SqliteStore};
use mnemograph_test::store_conformance as suite;
use serde_json::{json, Value};
use support::fresh_path;

fn index() -> IndexConfig {
    IndexConfig::new(HashingEmbeddings::new(64)).fields(["text"])
}

async fn plain(name: &str) -> SqliteStore {
    SqliteStore::connect(fresh_path(name).to_str().unwrap()).await.expect("open")
}

async fn indexed(name: &str) -> SqliteStore {
    SqliteStore::builder().index(index()).connect(fresh_path(name).to_str().unwrap()).await.expect("open")
}

#[tokio::test]
async fn store_conformance_crud() {
    suite::crud(&plain("crud").await).await;
}

#[tokio::test]
async fn store_conformance_validation() {
    suite::validation(&plain("validation").await).await;
}

#[tokio::test]
async fn store_conformance_search_filters() {
    suite::search_filters(&plain("filters").await).await;
}

#[tokio::test]
async fn store_conformance_semantic_ranking() {
    suite::semantic_ranking(&indexed("semantic").await).await;
}

#[tokio::test]
async fn store_conformance_list_namespaces() {
    suite::list_namespaces(&plain("namespaces").await).await;
}

#[tokio::test]
async fn store_conformance_newest_write_first() {
    suite::newest_write_first(&plain("order").await).await;
}

#[tokio::test]
async fn store_conformance_replacing_re_embeds() {
    suite::replacing_re_embeds(&indexed("reembed").await).await;
}

#[tokio::test]
async fn store_conformance_search_refreshes_what_it_returns() {
    // The TTL is stored to the microsecond: items put with `AGED` need no ageing.
    let store = plain("searchttl").await;
    suite::search_refreshes_what_it_returns(&store, suite::AGED, async |_: &[String], _: &str| {}).await;
}

#[tokio::test]
async fn store_conformance_through_dyn_store_in_memory_database() {
    let store = SqliteStore::builder().index(index()).connect(":memory:").await.unwrap();
    // Named by path, not imported: its methods would make every `store.put(..)` ambiguous.
    let s: Arc<dyn mnemograph_checkpoint::store::DynStore> = Arc::new(store);
    suite::crud(&s).await;
    suite::search_filters(&s).await;
    suite::semantic_ranking(&s).await;
}

#[tokio::test]
async fn items_and_vectors_survive_reopening_the_file() {
    let path = fresh_path("reopen");
    let open =
        || async { SqliteStore::builder().index(index()).connect(path.to_str().unwrap()).await.unwrap() };
    let ns = namespace(["memories", "u1"]);
    let store = open().await;
    store.put(&ns, "tea", json!({"text": "drinks green tea every afternoon"}), None).await.unwrap();
    store.put(&ns, "bike", json!({"text": "rides a red bike to work"}), None).await.unwrap();
    let before = store.get(&ns, "tea").await.unwrap().unwrap();
    drop(store);
    let store = open().await;
    assert_eq!(store.get(&ns, "tea").await.unwrap(), Some(before));
    let hits = store.search(&ns, SearchQuery::new().query("what tea do they drink")).await.unwrap();
    assert_eq!(hits[0].key, "tea");
    assert!(hits[0].score.is_some());
}

/// The documents and filters on which the SQLite store must agree with the in-memory one, the
/// reference of the filter semantics.
fn tricky() -> (Vec<(&'static str, Value)>, Vec<Value>) {
    let docs = vec![
        ("int", json!({"n": 3, "s": "x", "b": true, "nested": {"k": "v"}})),
        ("float", json!({"n": 3.0, "s": "X", "b": false})),
        ("neg", json!({"n": -1, "s": "x.y", "nested": {"k": "w"}})),
        ("none", json!({"n": null, "s": "ünï", "list": [1, 2]})),
        ("missing", json!({"s": "x"})),
    ];
    let filters = vec![
        json!({"n": 3}),
        json!({"n": {"$gt": 0}}),
        json!({"n": {"$lte": 3, "$gte": -1}}),
        json!({"n": {"$ne": 3}}),
        json!({"n": null}),
        json!({"s": "x"}),
        json!({"s": "ünï"}),
        json!({"b": true}),
        json!({"b": false}),
        json!({"nested.k": "v"}),
        json!({"nested": {"k": "w"}}),
        json!({"list": [1, 2]}),
        json!({"s": "x", "n": {"$gt": 1}}),
    ];
    (docs, filters)
}

#[tokio::test]
async fn filters_agree_with_the_in_memory_store() {
    let sqlite = plain("agree").await;
    let memory = InMemoryStore::new();
    let ns = namespace(["agree"]);
    let (docs, filters) = tricky();
    for (key, doc) in docs {
        sqlite.put(&ns, key, doc.clone(), None).await.unwrap();
        memory.put(&ns, key, doc, None).await.unwrap();
    }
    for filter in filters {
        let keys = |hits: Vec<mnemograph_checkpoint::store::SearchItem>| {
            let mut k: Vec<String> = hits.into_iter().map(|h| h.item.key).collect();
            k.sort();
            k
        };
        let q = SearchQuery::new().filter(filter.clone()).limit(100);
        let ours = keys(sqlite.search(&ns, q.clone()).await.unwrap());
        let reference = keys(memory.search(&ns, q).await.unwrap());
        assert_eq!(ours, reference, "{filter}");
    }
}

/// A ranked search over more items than one statement reads vectors for, with and without a
/// filter, ranks exactly as the in-memory store does: every kept item is scored, none twice.
#[tokio::test]
async fn ranking_over_many_items_agrees_with_the_in_memory_store() {
    let sqlite = indexed("many").await;
    let memory = InMemoryStore::with_index(index());
    let ns = namespace(["many"]);
    let words = ["tea", "coffee", "rain", "train", "garden", "river", "lamp", "violin", "kite"];
    for i in 0..1000usize {
        let text = format!("{} {} {}", words[i % 9], words[i / 9 % 9], words[i / 81 % 9]);
        let doc = json!({"text": text, "group": i % 7});
        let key = format!("k{i:04}");
        sqlite.put(&ns, &key, doc.clone(), None).await.unwrap();
        memory.put(&ns, &key, doc, None).await.unwrap();
    }
    for filter in [None, Some(json!({"group": 3})), Some(json!({"group": {"$ne": 3}}))] {
        let mut q = SearchQuery::new().query("rain over the garden river").limit(1000);
        if let Some(f) = &filter {
            q = q.filter(f.clone());
        }
        let ranked = |hits: Vec<mnemograph_checkpoint::store::SearchItem>| -> Vec<(String, i64)> {
            let scored = hits.iter().map(|h| h.score.expect("every item is scored")).collect::<Vec<_>>();
            assert!(scored.windows(2).all(|w| w[0] >= w[1]), "best first");
            hits.into_iter().map(|h| (h.item.key, (h.score.unwrap() * 1e6).round() as i64)).collect()
        };
        let mut ours = ranked(sqlite.search(&ns, q.clone()).await.unwrap());
        let mut reference = ranked(memory.search(&ns, q).await.unwrap());
        assert!(ours.len() > 100, "{filter:?}: {}", ours.len());
        // Equal scores may come in either order: compare as sets of (key, score).
        ours.sort();
        reference.sort();
        assert_eq!(ours, reference, "{filter:?}");
    }
}

#[tokio::test]
async fn expired_items_are_invisible_and_reads_refresh_them() {
    let path = fresh_path("ttl");
    // Generous margins: each refreshing read comes 500 ms after the last, 700 ms before expiry.
    let ttl = Duration::from_millis(1200);
    let store =
        SqliteStore::builder().ttl(TtlConfig::new(None)).connect(path.to_str().unwrap()).await.unwrap();
    let ns = namespace(["ttl"]);
    store.put(&ns, "kept", json!({"v": 1}), None).await.unwrap();
    store.put(&ns, "read", json!({"v": 2}), Some(ttl)).await.unwrap();
    store.put(&ns, "unread", json!({"v": 3}), Some(ttl)).await.unwrap();
    // Each read of `read` pushes its expiry out by its TTL again; `unread` runs out.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(store.get(&ns, "read").await.unwrap().is_some());
    }
    assert!(store.get(&ns, "unread").await.unwrap().is_none());
    let keys: Vec<String> =
        store.search(&ns, SearchQuery::new()).await.unwrap().into_iter().map(|h| h.item.key).collect();
    assert_eq!(keys, ["read", "kept"]);
    assert_eq!(store.count(&ns).await.unwrap(), 2);
    assert_eq!(store.sweep_expired().await.unwrap(), 1, "only `unread` had run out");
    // A store that does not refresh on read lets `read` run out too.
    let fixed = SqliteStore::builder()
        .ttl(TtlConfig::new(None).refresh_on_read(false))
        .connect(path.to_str().unwrap())
        .await
        .unwrap();
    tokio::time::sleep(ttl + Duration::from_millis(300)).await;
    assert!(fixed.get(&ns, "read").await.unwrap().is_none());
    assert!(fixed.list_namespaces(Default::default()).await.unwrap().contains(&ns), "`kept` lives on");
}

#[tokio::test]
async fn a_corrupt_row_is_named_and_the_others_still_read() {
    let store = plain("corrupt").await;
    let ns = namespace(["c"]);
    store.put(&ns, "good", json!({"ok": true}), None).await.unwrap();
    sqlx::query("INSERT INTO store (prefix, key, value) VALUES ('c', 'bad', 'not json at all')")
        .execute(store.pool())
        .await
        .unwrap();
    let err = store.get(&ns, "bad").await.unwrap_err();
    let StoreError::Backend(source) = &err else { panic!("{err:?}") };
    let ours = source.downcast_ref::<Error>().expect("the crate's error");
    assert!(matches!(ours, Error::CorruptItem { key, .. } if key == "bad"), "{ours}");
    assert_eq!(store.get(&ns, "good").await.unwrap().unwrap().value, json!({"ok": true}));
    // A put replaces the corrupt row cleanly.
    store.put(&ns, "bad", json!({"fixed": 1}), None).await.unwrap();
    assert_eq!(store.get(&ns, "bad").await.unwrap().unwrap().value, json!({"fixed": 1}));
}

#[tokio::test]
async fn two_stores_on_one_file_write_at_once() {
    let path = fresh_path("shared");
    let a = SqliteStore::connect(path.to_str().unwrap()).await.unwrap();
    let b = SqliteStore::connect(path.to_str().unwrap()).await.unwrap();
    let ns = namespace(["shared"]);
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (store, ns) = (if i % 2 == 0 { a.clone() } else { b.clone() }, ns.clone());
        tasks
            .push(tokio::spawn(async move { store.put(&ns, &format!("k{i}"), json!({"i": i}), None).await }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(a.count(&ns).await.unwrap(), 40);
    assert_eq!(b.search(&ns, SearchQuery::new().limit(100)).await.unwrap().len(), 40);
}

#[tokio::test]
async fn bad_input_is_refused_and_changes_nothing() {
    let store = plain("bad").await;
    let ns = namespace(["bad"]);
    store.put(&ns, "k", json!({"v": 1}), None).await.unwrap();
    assert!(matches!(store.put(&ns, "k", json!([1]), None).await, Err(StoreError::InvalidValue { .. })));
    let err = store.search(&ns, SearchQuery::new().filter(json!({"v": {"$regex": "."}}))).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidFilter { .. }), "{err:?}");
    // Labels and keys with GLOB, LIKE and SQL metacharacters are stored and scoped exactly.
    let odd = namespace(["a*b?[c]", "it's %_"]);
    store.put(&odd, "k'; DROP TABLE store; --", json!({"v": 2}), None).await.unwrap();
    assert_eq!(store.search(&namespace(["a*b?[c]"]), SearchQuery::new()).await.unwrap().len(), 1);
    assert!(store.search(&namespace(["aXb?[c]"]), SearchQuery::new()).await.unwrap().is_empty());
    assert!(store.search(&namespace(["a*b?[c"]), SearchQuery::new()).await.unwrap().is_empty());
    assert_eq!(store.get(&ns, "k").await.unwrap().unwrap().value, json!({"v": 1}));
}
