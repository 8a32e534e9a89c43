//! `MilvusStore` against a live Milvus (`MILVUS_URL`, e.g. from `scripts/milvus-lite.sh`): the
//! shared store conformance suite, differential checks against mnemograph-core's `InMemoryStore`,
//! adversarial namespaces, TTL, and a graph node writing through `Runtime::store`. Each test uses
//! its own collection and drops it. Without a server the tests print why they skip and pass,
//! except under CI (`CI` set), where they fail.

mod support;

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use milvus::v2::prelude::{ConsistencyLevel, QueryRequest};
use mnemograph_checkpoint::store::{
    namespace, HashingEmbeddings, InMemoryStore, IndexConfig, ListNamespaces, SearchItem, SearchQuery, Store,
    StoreError, TtlConfig,
};
use mnemograph_core::prelude::*;
use mnemograph_memory_milvus::{MilvusStore, MilvusStoreConfig};
use mnemograph_test::store_conformance as store_suite;
use serde_json::{json, Value};
use support::DIMS;

/// The server URL, or `None` (printing why) when it is not configured or not reachable.
fn server(test: &str) -> Option<String> {
    let ci = std::env::var_os("CI").is_some();
    let Ok(url) = std::env::var("MILVUS_URL") else {
        assert!(!ci, "{test}: MILVUS_URL is not set but CI is; scripts/test.sh should start Milvus Lite");
        println!("SKIPPED: {test} (MILVUS_URL is not set; start one with scripts/milvus-lite.sh)");
        return None;
    };
    let host_port = url.split("://").last().unwrap_or(&url).trim_end_matches('/').to_owned();
    let reachable = std::net::ToSocketAddrs::to_socket_addrs(&host_port).is_ok_and(|mut addrs| {
        addrs.any(|a| std::net::TcpStream::connect_timeout(&a, Duration::from_secs(2)).is_ok())
    });
    if !reachable {
        assert!(!ci, "{test}: cannot reach Milvus at {url}");
        println!("SKIPPED: {test} (cannot reach Milvus at {url})");
        return None;
    }
    Some(url)
}

fn index(fields: &[&str]) -> IndexConfig {
    IndexConfig::new(HashingEmbeddings::new(DIMS)).fields(fields.iter().copied())
}

/// Runs `body` on a store over a fresh collection, then drops the collection even if `body`
/// panicked (the panic is resumed afterwards).
async fn with_store<F, Fut>(
    test: &str,
    index: Option<IndexConfig>,
    config: impl FnOnce(MilvusStoreConfig) -> MilvusStoreConfig,
    body: F,
) where
    F: FnOnce(MilvusStore) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(url) = server(test) else { return };
    let collection = format!("t_store_{test}_{:016x}", rand::random::<u64>());
    let cfg = config(MilvusStoreConfig::new(url).collection(collection));
    // The server answers, so from here on a failure is the code's, not the setup's.
    let store = MilvusStore::connect(cfg, index).await.expect("connect and create the collection");
    let outcome = AssertUnwindSafe(body(store.clone())).catch_unwind().await;
    store.drop_collection().await.expect("drop the test collection");
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

fn same(c: MilvusStoreConfig) -> MilvusStoreConfig {
    c
}

fn ns(labels: &[&str]) -> Vec<String> {
    namespace(labels.iter().copied())
}

fn keys(hits: &[SearchItem]) -> Vec<String> {
    hits.iter().map(|h| h.key.clone()).collect()
}

/// Rows Milvus holds for `filter`, counted by the server.
async fn count_rows(store: &MilvusStore, filter: &str) -> i64 {
    let req = QueryRequest::builder()
        .collection_name(&store.config().collection)
        .filter(filter)
        .output_fields(["count(*)"])
        .consistency_level(ConsistencyLevel::Strong)
        .build()
        .unwrap();
    let res = store.client().query(req).await.unwrap();
    let row = res.results().rows().unwrap().next().expect("a count row");
    row.get_i64("count(*)").unwrap()
}

#[tokio::test]
async fn store_milvus_conformance_crud() {
    with_store("crud", None, same, |s| async move { store_suite::crud(&s).await }).await;
}

#[tokio::test]
async fn store_milvus_conformance_validation() {
    with_store("validation", None, same, |s| async move { store_suite::validation(&s).await }).await;
}

#[tokio::test]
async fn store_milvus_conformance_search_filters() {
    with_store("filters", None, same, |s| async move { store_suite::search_filters(&s).await }).await;
}

#[tokio::test]
async fn store_milvus_conformance_semantic_ranking() {
    with_store("semantic", Some(index(&["text"])), same, |s| async move {
        store_suite::semantic_ranking(&s).await;
    })
    .await;
}

#[tokio::test]
async fn store_milvus_conformance_list_namespaces() {
    with_store("list_ns", None, same, |s| async move { store_suite::list_namespaces(&s).await }).await;
}

#[tokio::test]
async fn store_milvus_conformance_newest_write_first() {
    with_store("order", None, same, |s| async move { store_suite::newest_write_first(&s).await }).await;
}

#[tokio::test]
async fn store_milvus_conformance_replacing_re_embeds() {
    with_store("reembed", Some(index(&["text"])), same, |s| async move {
        store_suite::replacing_re_embeds(&s).await;
    })
    .await;
}

#[tokio::test]
async fn store_milvus_conformance_through_dyn_store() {
    with_store("dyn", Some(index(&["text"])), same, |s| async move {
        // Named by path, not imported: its methods would make every `s.put(..)` ambiguous.
        let dynamic: Arc<dyn mnemograph_checkpoint::store::DynStore> = Arc::new(s);
        store_suite::crud(&dynamic).await;
        store_suite::search_filters(&dynamic).await;
        store_suite::semantic_ranking(&dynamic).await;
    })
    .await;
}

/// Labels that break naive quoting (`"`, `\`), `like` patterns (`%`, `_`), or an encoding that is
/// not injective (`~7E`), plus non-ASCII and control characters.
const ADVERSARIAL: [&str; 16] = [
    "a\"b",
    "x\" or namespace != \"",
    "back\\slash",
    "tail\\",
    "100%",
    "%",
    "a_c",
    "abc",
    "a%c",
    "_",
    "用户",
    "🦀",
    "line\nbreak",
    "~7E",
    "~",
    "*",
];

#[tokio::test]
async fn store_milvus_adversarial_labels_do_not_leak() {
    with_store("adversarial", None, same, |s| async move {
        for (i, label) in ADVERSARIAL.iter().enumerate() {
            s.put(&ns(&["adv", label]), "k", json!({"i": i}), None).await.unwrap();
            s.put(&ns(&["adv", label, "deep"]), "k", json!({"i": i, "deep": true}), None).await.unwrap();
        }
        for (i, label) in ADVERSARIAL.iter().enumerate() {
            let item = s.get(&ns(&["adv", label]), "k").await.unwrap().expect("stored");
            assert_eq!((item.namespace, item.value), (ns(&["adv", label]), json!({"i": i})));
            // A prefix matches its own namespace and the one below it, nothing else.
            let hits = s.search(&ns(&["adv", label]), SearchQuery::new()).await.unwrap();
            let mut found: Vec<Vec<String>> = hits.iter().map(|h| h.namespace.clone()).collect();
            found.sort();
            assert_eq!(found, [ns(&["adv", label]), ns(&["adv", label, "deep"])], "{label:?}");
            assert!(hits.iter().all(|h| h.value["i"] == json!(i)), "{label:?}");
        }
        let mut expected: Vec<Vec<String>> = ADVERSARIAL.iter().map(|l| ns(&["adv", l])).collect();
        expected.sort();
        let listed = s.list_namespaces(ListNamespaces::new().prefix(["adv"]).max_depth(2)).await.unwrap();
        assert_eq!(listed, expected);
        let deep = s.list_namespaces(ListNamespaces::new().suffix(["deep"])).await.unwrap();
        assert_eq!(deep.len(), ADVERSARIAL.len());
        // Deleting one namespace's item leaves every other one alone.
        s.delete(&ns(&["adv", "a_c"]), "k").await.unwrap();
        assert!(s.get(&ns(&["adv", "a_c"]), "k").await.unwrap().is_none());
        assert!(s.get(&ns(&["adv", "abc"]), "k").await.unwrap().is_some());
        assert_eq!(s.search(&ns(&["adv"]), SearchQuery::new().limit(100)).await.unwrap().len(), 31);
        // A label that is a prefix of another label's text does not match it.
        assert!(s.search(&ns(&["ad"]), SearchQuery::new()).await.unwrap().is_empty());
    })
    .await;
}

/// Documents whose fields trip the usual JSON-filter differences: `1` vs `true` vs `1.0` vs
/// `"1"`, missing fields, nested objects, and a literal dotted key.
fn tricky_documents() -> Vec<(&'static str, Value)> {
    vec![
        ("int", json!({"n": 1, "s": "apple", "m": {"lang": "zh", "n": 2}})),
        ("bool", json!({"n": true, "s": "banana", "m": {"lang": "en"}})),
        ("float", json!({"n": 1.0, "s": "cherry"})),
        ("string", json!({"n": "1", "s": "Apple"})),
        ("big", json!({"n": 7.5, "s": "date", "m": "not an object"})),
        ("neg", json!({"n": -3, "m": {"lang": "zh", "n": 5}})),
        ("dotted", json!({"a.b": 1, "a": {"b": 2}})),
        ("nested", json!({"a": {"b": 1}})),
        ("null", json!({"n": null, "s": null})),
        ("empty", json!({})),
    ]
}

fn tricky_filters() -> Vec<Value> {
    vec![
        json!({"n": 1}),
        json!({"n": true}),
        json!({"n": "1"}),
        json!({"n": {"$eq": 1.0}}),
        json!({"n": {"$ne": 1}}),
        json!({"n": {"$gt": 0}}),
        json!({"n": {"$gte": -3, "$lt": 1}}),
        json!({"n": {"$lte": 7.5}}),
        json!({"s": {"$gt": "b"}}),
        json!({"s": {"$lt": "apple"}}),
        json!({"s": {"$ne": "apple"}}),
        json!({"m": {"lang": "zh"}}),
        json!({"m": {"n": {"$gte": 3}}}),
        json!({"m.lang": "zh"}),
        json!({"a.b": 1}),
        json!({"a.b": 2}),
        json!({"a": {"b": 1}}),
        json!({"n": null}),
        json!({"missing": {"$ne": 0}}),
        json!({"n": 1, "s": "apple"}),
    ]
}

#[tokio::test]
async fn store_milvus_filters_agree_with_in_memory_store() {
    with_store("filters_diff", None, same, |s| async move {
        let reference = InMemoryStore::new();
        let n = ns(&["diff"]);
        for (key, doc) in tricky_documents() {
            s.put(&n, key, doc.clone(), None).await.unwrap();
            reference.put(&n, key, doc, None).await.unwrap();
        }
        for filter in tricky_filters() {
            let q = SearchQuery::new().filter(filter.clone()).limit(50);
            let got = keys(&s.search(&n, q.clone()).await.unwrap());
            let want = keys(&reference.search(&n, q).await.unwrap());
            // Ordered comparison: both stores list newest update first.
            assert_eq!(got, want, "filter {filter}");
        }
        // Paging cuts the same ordered list.
        let page = |st: SearchQuery| st.filter(json!({"n": {"$ne": "x"}})).offset(2).limit(3);
        assert_eq!(
            keys(&s.search(&n, page(SearchQuery::new())).await.unwrap()),
            keys(&reference.search(&n, page(SearchQuery::new())).await.unwrap())
        );
    })
    .await;
}

#[tokio::test]
async fn store_milvus_semantic_search_agrees_with_in_memory_store() {
    let fields = ["title", "body"];
    with_store("semantic_diff", Some(index(&fields)), same, |s| async move {
        let reference = InMemoryStore::with_index(index(&fields));
        let n = ns(&["sem", "u1"]);
        let docs = [
            ("tea", json!({"title": "green tea", "body": "drinks it every afternoon", "kind": "habit"})),
            ("bike", json!({"title": "commute", "body": "rides a red bike to work", "kind": "habit"})),
            ("cat", json!({"title": "pet cat named Miso", "kind": "fact"})),
            ("coffee", json!({"body": "prefers dark roast coffee over tea", "kind": "preference"})),
            ("none", json!({"kind": "fact", "other": "no embedded field at all"})),
            ("none2", json!({"kind": "habit"})),
        ];
        for (key, doc) in &docs {
            s.put(&n, key, doc.clone(), None).await.unwrap();
            reference.put(&n, key, doc.clone(), None).await.unwrap();
        }
        s.put(&ns(&["sem", "u2"]), "tea", json!({"title": "green tea"}), None).await.unwrap();
        for (query, filter) in [
            ("what tea do they drink", json!({})),
            ("red bike", json!({"kind": "habit"})),
            ("a cat", json!({"kind": {"$ne": "habit"}})),
        ] {
            let q = SearchQuery::new().query(query).filter(filter.clone()).limit(10);
            let got = s.search(&n, q.clone()).await.unwrap();
            let want = reference.search(&n, q).await.unwrap();
            assert_eq!(got.len(), want.len(), "{query}");
            // Scored items first, best first; ties may order differently, so compare as sets. Milvus
            // computes cosine in f32, InMemoryStore in f64.
            let scored = |hits: &[SearchItem]| {
                let mut v: Vec<(String, f64)> =
                    hits.iter().filter_map(|h| h.score.map(|sc| (h.key.clone(), sc))).collect();
                v.sort_by(|a, b| a.0.cmp(&b.0));
                v
            };
            let (g, w) = (scored(&got), scored(&want));
            assert_eq!(
                g.iter().map(|x| &x.0).collect::<Vec<_>>(),
                w.iter().map(|x| &x.0).collect::<Vec<_>>()
            );
            for ((key, a), (_, b)) in g.iter().zip(&w) {
                assert!((a - b).abs() < 1e-3, "{query}: {key} scored {a} here, {b} in memory");
            }
            let scores: Vec<f64> = got.iter().map_while(|h| h.score).collect();
            assert!(scores.windows(2).all(|w| w[0] >= w[1] - 1e-6), "{query}: {scores:?}");
            // Unscored items (no embedded field) come last, newest first.
            let tail = |hits: &[SearchItem]| -> Vec<String> {
                hits.iter().filter(|h| h.score.is_none()).map(|h| h.key.clone()).collect()
            };
            assert_eq!(tail(&got), tail(&want), "{query}");
            assert!(got.iter().skip_while(|h| h.score.is_some()).all(|h| h.score.is_none()));
        }
        let top = s.search(&n, SearchQuery::new().query("green tea").limit(1)).await.unwrap();
        assert_eq!(top[0].key, "tea");
        // The second field's vector counts: "dark roast coffee" is only in `body`.
        let top = s.search(&n, SearchQuery::new().query("dark roast coffee").limit(1)).await.unwrap();
        assert_eq!(top[0].key, "coffee");
        // Offset pages through the same ranking.
        let all = keys(&s.search(&n, SearchQuery::new().query("tea").limit(6)).await.unwrap());
        let paged = keys(&s.search(&n, SearchQuery::new().query("tea").offset(2).limit(2)).await.unwrap());
        assert_eq!(paged, all[2..4]);
    })
    .await;
}

#[tokio::test]
async fn store_milvus_newest_first_paging_over_many_items() {
    with_store("paging", None, same, |s| async move {
        let n = ns(&["paging", "u1"]);
        let started = std::time::Instant::now();
        for i in 0..120 {
            s.put(&n, &format!("k{i:03}"), json!({"i": i, "odd": i % 2 == 1}), None).await.unwrap();
        }
        let per_put = started.elapsed() / 120;
        // Rewriting an early key makes it the newest.
        s.put(&n, "k005", json!({"i": 5, "odd": true, "edited": true}), None).await.unwrap();
        let mut expected: Vec<String> =
            (0..120).rev().filter(|i| *i != 5).map(|i| format!("k{i:03}")).collect();
        expected.insert(0, "k005".to_owned());
        let started = std::time::Instant::now();
        let mut paged = Vec::new();
        for page in 0..5 {
            let q = SearchQuery::new().offset(page * 25).limit(25);
            paged.extend(keys(&s.search(&ns(&["paging"]), q).await.unwrap()));
        }
        let per_search = started.elapsed() / 5;
        assert_eq!(paged, expected, "pages cut one newest-first order");
        let odd =
            keys(&s.search(&n, SearchQuery::new().filter(json!({"odd": true})).limit(3)).await.unwrap());
        assert_eq!(odd, ["k005", "k119", "k117"]);
        println!("milvus store over 120 items: put {per_put:?}/item, 25-item page {per_search:?}");
    })
    .await;
}

#[tokio::test]
async fn store_milvus_replacing_an_item_drops_stale_vectors() {
    with_store("replace_parts", Some(index(&["title", "body"])), same, |s| async move {
        let n = ns(&["replace"]);
        s.put(&n, "k", json!({"title": "sailing boats", "body": "quantum physics lectures"}), None)
            .await
            .unwrap();
        assert_eq!(count_rows(&s, r#"key == "k""#).await, 2, "one row per embedded field");
        let first = s.get(&n, "k").await.unwrap().unwrap();
        s.put(&n, "k", json!({"title": "sailing boats"}), None).await.unwrap();
        assert_eq!(count_rows(&s, r#"key == "k""#).await, 1, "the body's row is gone");
        let hit = s.search(&n, SearchQuery::new().query("quantum physics lectures")).await.unwrap();
        assert_eq!(hit.len(), 1);
        assert_eq!(hit[0].value, json!({"title": "sailing boats"}), "no stale document");
        assert!(hit[0].score.unwrap() < 0.5, "scored by the title only: {:?}", hit[0].score);
        let second = s.get(&n, "k").await.unwrap().unwrap();
        assert_eq!(second.created_at, first.created_at);
        assert!(second.updated_at > first.updated_at);
        s.delete(&n, "k").await.unwrap();
        assert_eq!(count_rows(&s, r#"key == "k""#).await, 0);
    })
    .await;
}

#[tokio::test]
async fn store_milvus_oversized_keys_and_namespaces_are_refused() {
    let small = |c: MilvusStoreConfig| {
        let mut c = c;
        c.namespace_max_bytes = 64;
        c.key_max_bytes = 16;
        c
    };
    with_store("limits", None, small, |s| async move {
        let err = s.put(&ns(&["k"]), &"x".repeat(17), json!({}), None).await.unwrap_err();
        assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
        // 22 Chinese characters encode to 22 * 9 = 198 bytes.
        let err = s.put(&ns(&[&"中".repeat(22)]), "k", json!({}), None).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidNamespace { .. }), "{err:?}");
        s.put(&ns(&["k"]), &"x".repeat(16), json!({"ok": true}), None).await.unwrap();
        assert!(s.get(&ns(&["k"]), &"x".repeat(16)).await.unwrap().is_some());
    })
    .await;
}

#[tokio::test]
async fn store_milvus_ttl_expires_and_reads_refresh() {
    let ttl = Duration::from_secs(3);
    let policy = move |c: MilvusStoreConfig| c.ttl(TtlConfig::new(Some(ttl)));
    with_store("ttl", None, policy, |refreshing| async move {
        // A second handle on the same collection whose reads do not refresh.
        let plain_cfg = refreshing.config().clone().ttl(TtlConfig::new(Some(ttl)).refresh_on_read(false));
        let plain = MilvusStore::connect(plain_cfg, None).await.unwrap();
        let n = ns(&["ttl"]);
        refreshing.put(&n, "refreshed", json!({"v": 1}), None).await.unwrap();
        plain.put(&n, "plain", json!({"v": 2}), None).await.unwrap();
        refreshing.put(&n, "forever", json!({"v": 3}), Some(Duration::from_secs(3600))).await.unwrap();
        tokio::time::sleep(Duration::from_secs(2)).await;
        // At 2 s both are alive; this read pushes "refreshed" to ~5 s.
        assert!(refreshing.get(&n, "refreshed").await.unwrap().is_some());
        assert!(plain.get(&n, "plain").await.unwrap().is_some());
        tokio::time::sleep(Duration::from_secs(2)).await;
        // At 4 s "plain" has expired for every read, "refreshed" has not.
        assert!(plain.get(&n, "plain").await.unwrap().is_none());
        assert!(refreshing.get(&n, "plain").await.unwrap().is_none());
        let live = keys(&refreshing.search(&n, SearchQuery::new()).await.unwrap());
        assert_eq!(live, ["forever", "refreshed"]);
        assert_eq!(plain.sweep_expired().await.unwrap(), 1);
        assert_eq!(count_rows(&plain, r#"key == "plain""#).await, 0, "the sweep deleted the row");
        // A put over an expired item starts a new life: a new created_at.
        refreshing.put(&n, "gone", json!({}), Some(Duration::ZERO)).await.unwrap();
        assert!(refreshing.get(&n, "gone").await.unwrap().is_none());
        assert!(refreshing
            .list_namespaces(ListNamespaces::new().prefix(["nothing"]))
            .await
            .unwrap()
            .is_empty());
    })
    .await;
}

#[derive(State, Clone, Default, Debug)]
struct Notes {
    user: String,
    saved: String,
}

/// A node that remembers a fact about the user through the graph's store.
async fn remember(s: Notes, rt: Runtime) -> std::result::Result<NotesUpdate, StoreError> {
    let store = rt.store().ok_or_else(|| StoreError::Backend("compiled without a store".into()))?;
    let ns = vec!["memories".to_owned(), s.user.clone()];
    let doc = json!({"text": "likes green tea", "by": rt.node()});
    Store::put(store, &ns, "drink", doc, None).await?;
    let back = Store::get(store, &ns, "drink").await?.map(|i| i.value["text"].clone());
    Ok(NotesUpdate::saved(back.and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()))
}

#[tokio::test]
async fn store_milvus_graph_node_writes_through_runtime_store() {
    with_store("graph", Some(index(&["text"])), same, |s| async move {
        let graph = StateGraph::<Notes>::new()
            .add_node("remember", remember)
            .add_edge(START, "remember")
            .compile()
            .unwrap()
            .with_store(s.clone());
        let out = graph.invoke(NotesUpdate::user("u-42"), &RunConfig::new()).await.unwrap();
        assert_eq!(out.saved, "likes green tea");
        // The item is in Milvus: a new connection to the collection sees it.
        let other = MilvusStore::connect(s.config().clone(), Some(index(&["text"]))).await.unwrap();
        let item = other.get(&ns(&["memories", "u-42"]), "drink").await.unwrap().expect("in Milvus");
        assert_eq!(item.value, json!({"text": "likes green tea", "by": "remember"}));
        assert_eq!(count_rows(&s, r#"namespace == "memories.u-42""#).await, 1);
        let hits = other.search(&ns(&["memories"]), SearchQuery::new().query("green tea")).await.unwrap();
        assert_eq!(keys(&hits), ["drink"]);
    })
    .await;
}
