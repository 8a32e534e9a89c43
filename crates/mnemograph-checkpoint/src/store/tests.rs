use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{
    cosine_similarity, namespace, validate_namespace, DynEmbeddings, Embeddings, HashingEmbeddings,
    InMemoryStore, IndexConfig, ListNamespaces, SearchItem, SearchQuery, Store, StoreError, TtlConfig,
};

fn ns(labels: &[&str]) -> Vec<String> {
    namespace(labels.iter().copied())
}

#[test]
fn namespace_rules_match_langgraph() {
    assert!(validate_namespace(&ns(&["a", "b"])).is_ok());
    for bad in [vec![], vec![""], vec!["a", ""], vec!["a.b"], vec!["a\0"], vec!["langgraph", "x"]] {
        let err = validate_namespace(&ns(&bad)).unwrap_err();
        assert!(matches!(err, StoreError::InvalidNamespace { .. }), "{bad:?}");
    }
    // Only the root is reserved.
    assert!(validate_namespace(&ns(&["x", "langgraph"])).is_ok());
}

#[tokio::test]
async fn put_get_replace_delete() {
    let s = InMemoryStore::new();
    let n = ns(&["users", "u1"]);
    assert!(s.get(&n, "k").await.unwrap().is_none());
    s.put(&n, "k", json!({"v": 1}), None).await.unwrap();
    let first = s.get(&n, "k").await.unwrap().unwrap();
    assert_eq!(first.value, json!({"v": 1}));
    assert_eq!((first.namespace.as_slice(), first.key.as_str()), (n.as_slice(), "k"));
    s.put(&n, "k", json!({"v": 2}), None).await.unwrap();
    let second = s.get(&n, "k").await.unwrap().unwrap();
    assert_eq!(second.value, json!({"v": 2}));
    assert_eq!(second.created_at, first.created_at, "a replace keeps created_at");
    assert!(second.updated_at >= first.updated_at);
    s.delete(&n, "k").await.unwrap();
    assert!(s.get(&n, "k").await.unwrap().is_none());
    s.delete(&n, "k").await.unwrap();
}

#[tokio::test]
async fn put_rejects_bad_namespaces_and_non_objects() {
    let s = InMemoryStore::new();
    let err = s.put(&ns(&["langgraph"]), "k", json!({}), None).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidNamespace { .. }));
    let err = s.put(&ns(&["a"]), "k", json!([1]), None).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidValue { kind: "array" }));
}

#[tokio::test]
async fn search_by_prefix_filter_and_paging() {
    let s = InMemoryStore::new();
    for (i, user) in ["u1", "u1", "u2"].iter().enumerate() {
        s.put(&ns(&["docs", user]), &format!("k{i}"), json!({"i": i, "tag": "t", "nested": {"x": i}}), None)
            .await
            .unwrap();
    }
    s.put(&ns(&["other"]), "z", json!({"i": 9}), None).await.unwrap();
    let all = s.search(&ns(&["docs"]), SearchQuery::new()).await.unwrap();
    assert_eq!(all.iter().map(|h| h.key.as_str()).collect::<Vec<_>>(), ["k2", "k1", "k0"], "newest first");
    assert!(all.iter().all(|h| h.score.is_none()));
    assert_eq!(s.search(&[], SearchQuery::new()).await.unwrap().len(), 4);
    assert_eq!(s.search(&ns(&["docs", "u1"]), SearchQuery::new()).await.unwrap().len(), 2);
    // A prefix must match whole labels.
    assert!(s.search(&ns(&["doc"]), SearchQuery::new()).await.unwrap().is_empty());

    let f = |v| SearchQuery::new().filter(v);
    let keys = |hits: Vec<SearchItem>| hits.into_iter().map(|h| h.item.key).collect::<Vec<_>>();
    assert_eq!(keys(s.search(&[], f(json!({"i": 1}))).await.unwrap()), ["k1"]);
    assert_eq!(keys(s.search(&[], f(json!({"i": 1.0}))).await.unwrap()), ["k1"], "1 == 1.0");
    assert_eq!(keys(s.search(&[], f(json!({"i": {"$gte": 1, "$lt": 9}}))).await.unwrap()), ["k2", "k1"]);
    assert_eq!(keys(s.search(&[], f(json!({"i": {"$gt": 1}}))).await.unwrap()), ["z", "k2"]);
    assert_eq!(keys(s.search(&[], f(json!({"i": {"$lte": 0}}))).await.unwrap()), ["k0"]);
    assert_eq!(keys(s.search(&[], f(json!({"tag": {"$ne": "t"}}))).await.unwrap()), ["z"], "$ne: missing");
    assert_eq!(keys(s.search(&[], f(json!({"tag": {"$eq": "t"}, "i": 2}))).await.unwrap()), ["k2"]);
    assert_eq!(keys(s.search(&[], f(json!({"nested": {"x": 0}}))).await.unwrap()), ["k0"]);
    assert_eq!(keys(s.search(&[], f(json!({"nested.x": 2}))).await.unwrap()), ["k2"]);
    assert_eq!(keys(s.search(&[], f(json!({"tag": {"$gt": 5}}))).await.unwrap()), Vec::<String>::new());
    let err = s.search(&[], f(json!({"i": {"$in": [1]}}))).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidFilter { .. }));

    let page = s.search(&ns(&["docs"]), SearchQuery::new().limit(2).offset(1)).await.unwrap();
    assert_eq!(keys(page), ["k1", "k0"]);
}

#[tokio::test]
async fn semantic_search_ranks_by_cosine() {
    let s = InMemoryStore::with_index(IndexConfig::new(HashingEmbeddings::new(512)).fields(["text"]));
    let n = ns(&["mem", "u1"]);
    s.put(&n, "coffee", json!({"text": "likes strong black coffee in the morning"}), None).await.unwrap();
    s.put(&n, "cat", json!({"text": "owns a grey cat called Miso"}), None).await.unwrap();
    s.put(&n, "chinese", json!({"text": "住在上海，喜欢喝茶"}), None).await.unwrap();
    s.put(&n, "plain", json!({"no_text": true}), None).await.unwrap();
    let hits = s.search(&n, SearchQuery::new().query("what coffee does he drink")).await.unwrap();
    assert_eq!(hits[0].key, "coffee");
    assert!(hits[0].score.unwrap() > hits[1].score.unwrap_or(0.0));
    assert_eq!(hits.last().unwrap().key, "plain", "items without vectors come last");
    assert!(hits.last().unwrap().score.is_none());
    let zh = s.search(&n, SearchQuery::new().query("喜欢喝什么茶").limit(1)).await.unwrap();
    assert_eq!(zh[0].key, "chinese");
}

#[tokio::test]
async fn list_namespaces_with_conditions_depth_and_paging() {
    let s = InMemoryStore::new();
    for n in [&["a", "b", "c"][..], &["a", "b", "d"], &["a", "x"], &["z", "b", "c"]] {
        s.put(&ns(n), "k", json!({}), None).await.unwrap();
    }
    let list = |o| {
        let s = s.clone();
        async move { s.list_namespaces(o).await.unwrap() }
    };
    assert_eq!(list(ListNamespaces::new()).await.len(), 4);
    assert_eq!(list(ListNamespaces::new().prefix(["a"])).await.len(), 3);
    assert_eq!(list(ListNamespaces::new().suffix(["c"])).await, [ns(&["a", "b", "c"]), ns(&["z", "b", "c"])]);
    assert_eq!(list(ListNamespaces::new().prefix(["*", "b"])).await.len(), 3);
    assert_eq!(
        list(ListNamespaces::new().max_depth(2)).await,
        [ns(&["a", "b"]), ns(&["a", "x"]), ns(&["z", "b"])]
    );
    assert_eq!(list(ListNamespaces::new().max_depth(1).limit(1).offset(1)).await, [ns(&["z"])]);
    assert!(list(ListNamespaces::new().prefix(["a", "b", "c", "d"])).await.is_empty());
}

#[tokio::test(start_paused = true)]
async fn ttl_expires_and_refreshes_on_read() {
    let s = InMemoryStore::new().ttl(TtlConfig::new(Some(Duration::from_secs(60))));
    let n = ns(&["t"]);
    s.put(&n, "default", json!({}), None).await.unwrap();
    s.put(&n, "short", json!({}), Some(Duration::from_secs(10))).await.unwrap();
    tokio::time::advance(Duration::from_secs(11)).await;
    assert!(s.get(&n, "short").await.unwrap().is_none());
    assert!(s.get(&n, "default").await.unwrap().is_some(), "read at 11 s refreshes to 71 s");
    tokio::time::advance(Duration::from_secs(55)).await;
    assert_eq!(
        s.search(&n, SearchQuery::new()).await.unwrap().len(),
        1,
        "a search at 66 s refreshes to 126 s"
    );
    tokio::time::advance(Duration::from_secs(59)).await;
    assert_eq!(s.count(&n).await.unwrap(), 1, "`count` refreshes nothing");
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(s.search(&n, SearchQuery::new()).await.unwrap().is_empty());
    assert!(s.list_namespaces(ListNamespaces::new()).await.unwrap().is_empty());
    assert_eq!(s.sweep_expired(), 2, "both items, swept once");
    assert_eq!(s.sweep_expired(), 0);

    let no_refresh = InMemoryStore::new().ttl(TtlConfig::new(None).refresh_on_read(false));
    no_refresh.put(&n, "k", json!({}), Some(Duration::from_secs(10))).await.unwrap();
    tokio::time::advance(Duration::from_secs(6)).await;
    assert!(no_refresh.get(&n, "k").await.unwrap().is_some());
    assert_eq!(no_refresh.search(&n, SearchQuery::new()).await.unwrap().len(), 1);
    tokio::time::advance(Duration::from_secs(6)).await;
    assert!(no_refresh.get(&n, "k").await.unwrap().is_none());
}

#[tokio::test]
async fn dyn_store_is_object_safe_and_a_store_again() {
    let s: Arc<dyn super::DynStore> = Arc::new(InMemoryStore::new());
    super::DynStore::put(&*s, &ns(&["a"]), "k", json!({"x": 1}), None).await.unwrap();
    async fn generic<S: Store>(s: &S) -> usize {
        s.search(&[], SearchQuery::new()).await.unwrap().len()
    }
    assert_eq!(generic(&s).await, 1);
    let e: Arc<dyn DynEmbeddings> = Arc::new(HashingEmbeddings::new(8));
    assert_eq!(Embeddings::embed_query(&e, "hi").await.unwrap().len(), 8);
}

#[test]
fn hashing_embeddings_are_deterministic_and_normalised() {
    let e = HashingEmbeddings::new(32);
    let (a, b) = (e.embed("Hello, World"), e.embed("hello world"));
    assert_eq!(a, b);
    assert!((a.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-5);
    assert!(e.embed("").iter().all(|&x| x == 0.0));
    assert_eq!(cosine_similarity(&a, &[0.0; 32]), 0.0);
}

/// Delegates to an in-memory store but keeps `Store::count`'s default, which pages through
/// searches.
struct Paging(InMemoryStore);

impl Store for Paging {
    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<super::Item>, StoreError> {
        self.0.get(namespace, key).await
    }
    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: serde_json::Value,
        ttl: Option<Duration>,
    ) -> Result<(), StoreError> {
        self.0.put(namespace, key, value, ttl).await
    }
    async fn delete(&self, namespace: &[String], key: &str) -> Result<(), StoreError> {
        self.0.delete(namespace, key).await
    }
    async fn search(&self, prefix: &[String], query: SearchQuery) -> Result<Vec<SearchItem>, StoreError> {
        self.0.search(prefix, query).await
    }
    async fn list_namespaces(&self, options: ListNamespaces) -> Result<Vec<Vec<String>>, StoreError> {
        self.0.list_namespaces(options).await
    }
}

#[tokio::test]
async fn count_counts_live_items_under_a_prefix_with_or_without_an_override() {
    let memory = InMemoryStore::new();
    for i in 0..1203 {
        memory.put(&ns(&["alice", "notes"]), &format!("k{i}"), json!({"i": i}), None).await.unwrap();
    }
    memory.put(&ns(&["alice", "todo"]), "k", json!({}), None).await.unwrap();
    memory.put(&ns(&["alicia"]), "k", json!({}), None).await.unwrap();
    memory.put(&ns(&["bob"]), "k", json!({}), None).await.unwrap();
    memory.put(&ns(&["alice", "gone"]), "k", json!({}), Some(Duration::from_millis(1))).await.unwrap();
    tokio::time::sleep(Duration::from_millis(5)).await;
    let paging = Paging(memory.clone());
    for (prefix, want) in
        [(ns(&["alice"]), 1204), (ns(&["alice", "notes"]), 1203), (ns(&["bob"]), 1), (vec![], 1206)]
    {
        assert_eq!(memory.count(&prefix).await.unwrap(), want, "{prefix:?}");
        assert_eq!(paging.count(&prefix).await.unwrap(), want, "default, {prefix:?}");
    }
}
