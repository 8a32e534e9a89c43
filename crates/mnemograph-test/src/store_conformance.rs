//! The store conformance suite: the LangGraph `BaseStore` behaviours every
//! [`Store`] backend shares (the in-memory, Milvus and SQLite
//! stores run it). Each function takes an empty store and is one test; the functions use
//! separate namespaces, so several may also share one store.

use std::time::Duration;

use mnemograph_core::store::{namespace, ListNamespaces, SearchQuery, Store, StoreError};
use serde_json::json;

/// How long [`search_refreshes_what_it_returns`] gives its items to live before the search: long
/// enough that the margins on either side of each expiry (a quarter of it) hold on a loaded
/// machine.
pub const AGED: Duration = Duration::from_secs(3);

fn ns(labels: &[&str]) -> Vec<String> {
    namespace(labels.iter().copied())
}

/// put → get → replace (created_at kept) → delete → get none; deleting twice is fine.
pub async fn crud<S: Store>(s: &S) {
    let n = ns(&["conf", "crud"]);
    assert!(s.get(&n, "k").await.unwrap().is_none());
    s.put(&n, "k", json!({"a": 1}), None).await.unwrap();
    let first = s.get(&n, "k").await.unwrap().expect("stored");
    assert_eq!((first.key.as_str(), &first.namespace, &first.value), ("k", &n, &json!({"a": 1})));
    s.put(&n, "k", json!({"a": 2}), None).await.unwrap();
    let second = s.get(&n, "k").await.unwrap().unwrap();
    assert_eq!(second.value, json!({"a": 2}));
    assert_eq!(second.created_at, first.created_at);
    s.delete(&n, "k").await.unwrap();
    s.delete(&n, "k").await.unwrap();
    assert!(s.get(&n, "k").await.unwrap().is_none());
}

/// LangGraph's namespace rules and object-only values are enforced on put.
pub async fn validation<S: Store>(s: &S) {
    for bad in [&[][..], &[""], &["a.b"], &["langgraph", "x"]] {
        let err = s.put(&ns(bad), "k", json!({}), None).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidNamespace { .. }), "{bad:?}");
    }
    let err = s.put(&ns(&["ok"]), "k", json!("text"), None).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidValue { .. }));
}

/// Prefix scoping, every filter operator, paging.
pub async fn search_filters<S: Store>(s: &S) {
    for i in 0..5 {
        s.put(&ns(&["conf", "search", "a"]), &format!("k{i}"), json!({"n": i, "even": i % 2 == 0}), None)
            .await
            .unwrap();
    }
    s.put(&ns(&["conf", "searchx"]), "other", json!({"n": 2}), None).await.unwrap();
    let keys = |q: SearchQuery| async move {
        let mut k: Vec<String> =
            s.search(&ns(&["conf", "search"]), q).await.unwrap().into_iter().map(|h| h.item.key).collect();
        k.sort();
        k
    };
    let f = |v| SearchQuery::new().filter(v);
    assert_eq!(keys(SearchQuery::new()).await.len(), 5, "prefix matches whole labels only");
    assert_eq!(keys(f(json!({"n": 2}))).await, ["k2"]);
    assert_eq!(keys(f(json!({"n": {"$eq": 2}}))).await, ["k2"]);
    assert_eq!(keys(f(json!({"n": {"$ne": 2}}))).await.len(), 4);
    assert_eq!(keys(f(json!({"n": {"$gt": 3}}))).await, ["k4"]);
    assert_eq!(keys(f(json!({"n": {"$gte": 3}}))).await, ["k3", "k4"]);
    assert_eq!(keys(f(json!({"n": {"$lt": 1}}))).await, ["k0"]);
    assert_eq!(keys(f(json!({"n": {"$lte": 1}, "even": true}))).await, ["k0"]);
    assert_eq!(keys(SearchQuery::new().limit(2)).await.len(), 2);
    assert_eq!(keys(SearchQuery::new().offset(4)).await.len(), 1);
    let err = s.search(&[], f(json!({"n": {"$regex": "x"}}))).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidFilter { .. }));
}

/// Semantic ranking (for stores configured with an index over `text`).
pub async fn semantic_ranking<S: Store>(s: &S) {
    let n = ns(&["conf", "sem"]);
    s.put(&n, "tea", json!({"text": "drinks green tea every afternoon"}), None).await.unwrap();
    s.put(&n, "bike", json!({"text": "rides a red bike to work"}), None).await.unwrap();
    let hits = s.search(&n, SearchQuery::new().query("what tea do they drink")).await.unwrap();
    assert_eq!(hits[0].key, "tea");
    assert!(hits[0].score.is_some());
}

/// list_namespaces: prefix, suffix, wildcard, depth, paging.
pub async fn list_namespaces<S: Store>(s: &S) {
    for n in [&["ln", "u1", "mem"][..], &["ln", "u2", "mem"], &["ln", "u2", "prefs"], &["zz"]] {
        s.put(&ns(n), "k", json!({}), None).await.unwrap();
    }
    let list = |o: ListNamespaces| async move { s.list_namespaces(o).await.unwrap() };
    assert_eq!(list(ListNamespaces::new().prefix(["ln"])).await.len(), 3);
    assert_eq!(list(ListNamespaces::new().prefix(["ln"]).suffix(["mem"])).await.len(), 2);
    assert_eq!(list(ListNamespaces::new().prefix(["ln", "*", "prefs"])).await, [ns(&["ln", "u2", "prefs"])]);
    assert_eq!(
        list(ListNamespaces::new().prefix(["ln"]).max_depth(2)).await,
        [ns(&["ln", "u1"]), ns(&["ln", "u2"])]
    );
    assert_eq!(
        list(ListNamespaces::new().prefix(["ln"]).limit(1).offset(2)).await,
        [ns(&["ln", "u2", "prefs"])]
    );
}

/// A search without a query lists the newest write first, a replaced item counting as new, and
/// `count` agrees with what a search sees.
pub async fn newest_write_first<S: Store>(s: &S) {
    let n = ns(&["conf", "order"]);
    for key in ["a", "b", "c"] {
        s.put(&n, key, json!({"key": key}), None).await.unwrap();
    }
    s.put(&n, "a", json!({"key": "a", "again": true}), None).await.unwrap();
    let keys: Vec<String> =
        s.search(&n, SearchQuery::new()).await.unwrap().into_iter().map(|h| h.item.key).collect();
    assert_eq!(keys, ["a", "c", "b"]);
    assert_eq!(s.count(&n).await.unwrap(), 3);
    s.delete(&n, "c").await.unwrap();
    assert_eq!(s.count(&n).await.unwrap(), 2);
}

/// Replacing an indexed item re-embeds it: a search ranks it by its new text, never its old one.
/// For stores configured with an index over `text`.
pub async fn replacing_re_embeds<S: Store>(s: &S) {
    let n = ns(&["conf", "reembed"]);
    s.put(&n, "x", json!({"text": "drinks green tea every afternoon"}), None).await.unwrap();
    s.put(&n, "y", json!({"text": "rides a red bike to work"}), None).await.unwrap();
    s.put(&n, "x", json!({"text": "plays the cello on sundays"}), None).await.unwrap();
    let hits = s.search(&n, SearchQuery::new().query("what tea do they drink")).await.unwrap();
    assert_eq!(hits.len(), 2, "one hit per item, however many vectors it had");
    let cello =
        s.search(&n, SearchQuery::new().query("which instrument, the cello?").limit(1)).await.unwrap();
    assert_eq!(cello[0].key, "x");
}

/// A search pushes the expiry of the items it returns out by their TTL again, and only theirs,
/// as LangGraph's `search(..., refresh_ttl=None)` does under `refresh_on_read` (the default). For
/// stores that expire items and refresh on read.
///
/// Three items are put with `ttl`; `age(namespace, key)` then leaves each [`AGED`] to live (a
/// store put with `ttl` = [`AGED`] passes a closure that does nothing; one that counts TTLs in
/// whole minutes moves the expiry in its storage). Half-way there, a search returns two of them;
/// past the old expiry, only those two are alive. `count` does the looking, since it refreshes
/// nothing.
pub async fn search_refreshes_what_it_returns<S: Store>(
    s: &S,
    ttl: Duration,
    age: impl AsyncFn(&[String], &str),
) {
    let prefix = ns(&["conf", "refresh"]);
    let under = |label: &str| ns(&["conf", "refresh", label]);
    for (label, kind) in [("a", "kept"), ("b", "other"), ("c", "kept")] {
        s.put(&under(label), "k", json!({"kind": kind}), Some(ttl)).await.unwrap();
        age(&under(label), "k").await;
    }
    tokio::time::sleep(AGED / 2).await;
    let hits = s.search(&prefix, SearchQuery::new().filter(json!({"kind": "kept"}))).await.unwrap();
    let mut found: Vec<&[String]> = hits.iter().map(|h| h.item.namespace.as_slice()).collect();
    found.sort();
    assert_eq!(found, [under("a"), under("c")]);
    tokio::time::sleep(AGED * 3 / 4).await;
    let alive = [
        s.count(&under("a")).await.unwrap(),
        s.count(&under("b")).await.unwrap(),
        s.count(&under("c")).await.unwrap(),
    ];
    assert_eq!(alive, [1, 0, 1], "the returned items live on; the other ran out");
}
