//! [`PostgresStore`] against the store conformance suite, and what only a database-backed store
//! can get wrong: reopening, expiry on the server's clock, corrupt rows, several stores at once,
//! hostile labels. Each test runs in a database of its own.

mod support;

use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint::store::{
    namespace, HashingEmbeddings, InMemoryStore, IndexConfig, SearchItem, SearchQuery, Store, StoreError,
    TtlConfig,
};
use mnemograph_checkpoint_postgres::{Error, PostgresStore};
use mnemograph_test::store_conformance as suite;
use serde_json::{json, Value};
use support::{drop_database, fresh_database, fresh_store};

/// The crate's error behind a store error.
fn ours(err: &StoreError) -> &Error {
    let StoreError::Backend(source) = err else { panic!("not a backend error: {err:?}") };
    source.downcast_ref::<Error>().expect("the crate's error")
}

#[tokio::test]
async fn store_conformance_crud() {
    let Some((db, store)) = fresh_store("st_crud").await else { return };
    suite::crud(&store).await;
    drop_database(&db).await;
}

#[tokio::test]
async fn store_conformance_validation() {
    let Some((db, store)) = fresh_store("st_validation").await else { return };
    suite::validation(&store).await;
    drop_database(&db).await;
}

#[tokio::test]
async fn store_conformance_search_filters() {
    let Some((db, store)) = fresh_store("st_filters").await else { return };
    suite::search_filters(&store).await;
    drop_database(&db).await;
}

#[tokio::test]
async fn store_conformance_list_namespaces() {
    let Some((db, store)) = fresh_store("st_namespaces").await else { return };
    suite::list_namespaces(&store).await;
    drop_database(&db).await;
}

#[tokio::test]
async fn store_conformance_newest_write_first() {
    let Some((db, store)) = fresh_store("st_order").await else { return };
    suite::newest_write_first(&store).await;
    drop_database(&db).await;
}

/// The suite's semantic parts (`semantic_ranking`, `replacing_re_embeds`) need vectors, which
/// PostgreSQL keeps in pgvector columns: asking for an index is refused, naming what is missing,
/// before any connection is made.
#[tokio::test]
async fn an_index_is_refused_naming_pgvector() {
    let index = IndexConfig::new(HashingEmbeddings::new(64)).fields(["text"]);
    let err =
        PostgresStore::builder().index(index).connect("postgres://nowhere.invalid/db").await.unwrap_err();
    assert!(matches!(err, Error::NoVectorSupport), "{err:?}");
    assert!(err.to_string().contains("pgvector"), "{err}");
}

#[tokio::test]
async fn store_conformance_through_dyn_store() {
    let Some((db, store)) = fresh_store("st_dyn").await else { return };
    // Named by path, not imported: its methods would make every `store.put(..)` ambiguous.
    let s: Arc<dyn mnemograph_checkpoint::store::DynStore> = Arc::new(store);
    suite::crud(&s).await;
    suite::search_filters(&s).await;
    drop_database(&db).await;
}

#[tokio::test]
async fn items_survive_reopening_the_database() {
    let Some((db, store)) = fresh_store("st_reopen").await else { return };
    let ns = namespace(["memories", "u1"]);
    store.put(&ns, "tea", json!({"text": "drinks green tea every afternoon"}), None).await.unwrap();
    let before = store.get(&ns, "tea").await.unwrap().unwrap();
    store.pool().close().await;
    let again = PostgresStore::connect(&support::url_for(&db)).await.unwrap();
    assert_eq!(again.get(&ns, "tea").await.unwrap(), Some(before));
    assert_eq!(again.count(&namespace(["memories"])).await.unwrap(), 1);
    again.pool().close().await;
    drop_database(&db).await;
}

/// The documents and filters on which the Postgres store must agree with the in-memory one, the
/// reference of the filter semantics.
fn tricky() -> (Vec<(&'static str, Value)>, Vec<Value>) {
    let docs = vec![
        ("int", json!({"n": 3, "s": "x", "b": true, "nested": {"k": "v"}})),
        ("float", json!({"n": 3.0, "s": "X", "b": false})),
        ("neg", json!({"n": -1, "s": "x.y", "nested": {"k": "w"}})),
        ("none", json!({"n": null, "s": "ünï", "list": [1, 2]})),
        ("missing", json!({"s": "x"})),
        ("text", json!({"n": "10", "s": "10"})),
    ];
    let filters = vec![
        json!({"n": 3}),
        json!({"n": {"$gt": 0}}),
        json!({"n": {"$gt": 2}}),
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

fn sorted_keys(hits: Vec<SearchItem>) -> Vec<String> {
    let mut keys: Vec<String> = hits.into_iter().map(|h| h.item.key).collect();
    keys.sort();
    keys
}

#[tokio::test]
async fn filters_agree_with_the_in_memory_store() {
    let Some((db, store)) = fresh_store("st_agree").await else { return };
    let memory = InMemoryStore::new();
    let ns = namespace(["agree"]);
    let (docs, filters) = tricky();
    for (key, doc) in docs {
        store.put(&ns, key, doc.clone(), None).await.unwrap();
        memory.put(&ns, key, doc, None).await.unwrap();
    }
    for filter in filters {
        let q = SearchQuery::new().filter(filter.clone()).limit(100);
        let pg = sorted_keys(store.search(&ns, q.clone()).await.unwrap());
        let reference = sorted_keys(memory.search(&ns, q).await.unwrap());
        assert_eq!(pg, reference, "{filter}");
    }
    drop_database(&db).await;
}

/// Moves an item's expiry to `seconds` from now on the server's clock, as time passing would.
async fn expire_in(store: &PostgresStore, prefix: &str, key: &str, seconds: f64) {
    sqlx::query(
        "UPDATE store SET expires_at = now() + make_interval(secs => $3) WHERE prefix = $1 AND key = $2",
    )
    .bind(prefix)
    .bind(key)
    .bind(seconds)
    .execute(store.pool())
    .await
    .unwrap();
}

/// Seconds from now to an item's expiry.
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

#[tokio::test]
async fn expired_items_are_invisible_and_reads_refresh_them() {
    let Some((db, saver)) = fresh_database("st_ttl").await else { return };
    let store =
        PostgresStore::builder().ttl(TtlConfig::new(None)).from_pool(saver.pool().clone()).await.unwrap();
    let ns = namespace(["ttl"]);
    let minute = Duration::from_secs(60);
    store.put(&ns, "kept", json!({"v": 1}), None).await.unwrap();
    store.put(&ns, "read", json!({"v": 2}), Some(minute)).await.unwrap();
    store.put(&ns, "unread", json!({"v": 3}), Some(minute)).await.unwrap();
    // A write expires exactly its TTL later.
    let left = seconds_left(&store, "ttl", "read").await;
    assert!((55.0..=60.0).contains(&left), "{left}");
    // Both are a second from running out; a read of `read` pushes it a minute out again.
    expire_in(&store, "ttl", "read", 1.0).await;
    expire_in(&store, "ttl", "unread", 1.0).await;
    assert!(store.get(&ns, "read").await.unwrap().is_some());
    let left = seconds_left(&store, "ttl", "read").await;
    assert!((55.0..=60.0).contains(&left), "refreshed to a minute: {left}");
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert!(store.get(&ns, "unread").await.unwrap().is_none());
    let keys: Vec<String> =
        store.search(&ns, SearchQuery::new()).await.unwrap().into_iter().map(|h| h.item.key).collect();
    assert_eq!(keys, ["read", "kept"]);
    let filtered = store.search(&ns, SearchQuery::new().filter(json!({"v": 3}))).await.unwrap();
    assert!(filtered.is_empty(), "a filtered search hides it too");
    assert_eq!(store.count(&ns).await.unwrap(), 2);
    assert_eq!(store.sweep_expired().await.unwrap(), 1, "only `unread` had run out");
    // A store that does not refresh on read leaves the expiry where it is, and lets it run out.
    let fixed = PostgresStore::builder()
        .ttl(TtlConfig::new(None).refresh_on_read(false))
        .from_pool(store.pool().clone())
        .await
        .unwrap();
    expire_in(&store, "ttl", "read", 0.5).await;
    assert!(fixed.get(&ns, "read").await.unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(fixed.get(&ns, "read").await.unwrap().is_none());
    assert!(fixed.list_namespaces(Default::default()).await.unwrap().contains(&ns), "`kept` lives on");
    expire_in(&store, "ttl", "kept", -1.0).await;
    assert!(fixed.list_namespaces(Default::default()).await.unwrap().is_empty(), "nothing live is left");
    drop_database(&db).await;
}

#[tokio::test]
async fn ttl_is_stored_as_langgraph_stores_it() {
    let Some((db, saver)) = fresh_database("st_ttlcols").await else { return };
    let default = Duration::from_secs(90);
    let store = PostgresStore::builder()
        .ttl(TtlConfig::new(Some(default)))
        .from_pool(saver.pool().clone())
        .await
        .unwrap();
    let ns = namespace(["cols"]);
    store.put(&ns, "default", json!({}), None).await.unwrap();
    store.put(&ns, "hour", json!({}), Some(Duration::from_secs(3600))).await.unwrap();
    let rows: Vec<(String, Option<i32>, Option<f64>)> = sqlx::query_as(
        "SELECT key, ttl_minutes, EXTRACT(EPOCH FROM expires_at - updated_at)::float8 FROM store ORDER BY key",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    assert_eq!(
        rows,
        [("default".to_owned(), Some(2), Some(90.0)), ("hour".to_owned(), Some(60), Some(3600.0))],
        "whole minutes, rounded up; the expiry exact"
    );
    drop_database(&db).await;
}

#[tokio::test]
async fn replacing_keeps_created_at_unless_the_item_had_expired() {
    let Some((db, store)) = fresh_store("st_created").await else { return };
    let ns = namespace(["created"]);
    store.put(&ns, "k", json!({"v": 1}), Some(Duration::from_secs(600))).await.unwrap();
    let first = store.get(&ns, "k").await.unwrap().unwrap();
    assert_eq!(first.created_at, first.updated_at);
    store.put(&ns, "k", json!({"v": 2}), Some(Duration::from_secs(600))).await.unwrap();
    let second = store.get(&ns, "k").await.unwrap().unwrap();
    assert_eq!(second.created_at, first.created_at);
    assert!(second.updated_at > first.updated_at);
    expire_in(&store, "created", "k", -1.0).await;
    store.put(&ns, "k", json!({"v": 3}), None).await.unwrap();
    let third = store.get(&ns, "k").await.unwrap().unwrap();
    assert!(third.created_at > second.updated_at, "an expired item is written anew");
    drop_database(&db).await;
}

#[tokio::test]
async fn a_corrupt_row_is_named_and_the_others_still_read() {
    let Some((db, store)) = fresh_store("st_corrupt").await else { return };
    let ns = namespace(["c"]);
    store.put(&ns, "good", json!({"ok": true}), None).await.unwrap();
    sqlx::query("INSERT INTO store (prefix, key, value) VALUES ('c', 'list', '[1, 2]'::jsonb)")
        .execute(store.pool())
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO store (prefix, key, value, created_at) VALUES ('c', 'undated', '{}'::jsonb, NULL)",
    )
    .execute(store.pool())
    .await
    .unwrap();
    for (key, reason) in [("list", "not a JSON object"), ("undated", "created_at is NULL")] {
        let err = store.get(&ns, key).await.unwrap_err();
        let found = ours(&err);
        assert!(
            matches!(found, Error::CorruptItem { key: k, reason: r, .. } if k == key && r.contains(reason)),
            "{found}"
        );
    }
    assert!(matches!(
        ours(&store.search(&ns, SearchQuery::new()).await.unwrap_err()),
        Error::CorruptItem { .. }
    ));
    assert_eq!(store.get(&ns, "good").await.unwrap().unwrap().value, json!({"ok": true}));
    // A put replaces a corrupt row cleanly.
    store.put(&ns, "list", json!({"fixed": 1}), None).await.unwrap();
    assert_eq!(store.get(&ns, "list").await.unwrap().unwrap().value, json!({"fixed": 1}));
    drop_database(&db).await;
}

#[tokio::test]
async fn two_stores_on_one_database_write_at_once() {
    let Some((db, a)) = fresh_store("st_shared").await else { return };
    let b = PostgresStore::connect(&support::url_for(&db)).await.unwrap();
    let ns = namespace(["shared"]);
    let mut tasks = Vec::new();
    for i in 0..40 {
        let (store, ns) = (if i % 2 == 0 { a.clone() } else { b.clone() }, ns.clone());
        // Every key twice, from both stores: the upserts of one key race each other.
        tasks.push(tokio::spawn(async move {
            store.put(&ns, &format!("k{}", i / 2), json!({"i": i}), None).await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(a.count(&ns).await.unwrap(), 20);
    assert_eq!(b.search(&ns, SearchQuery::new().limit(100)).await.unwrap().len(), 20);
    b.pool().close().await;
    drop_database(&db).await;
}

#[tokio::test]
async fn bad_input_and_hostile_labels_are_handled_exactly() {
    let Some((db, store)) = fresh_store("st_bad").await else { return };
    let ns = namespace(["bad"]);
    store.put(&ns, "k", json!({"v": 1}), None).await.unwrap();
    assert!(matches!(store.put(&ns, "k", json!([1]), None).await, Err(StoreError::InvalidValue { .. })));
    let err = store.search(&ns, SearchQuery::new().filter(json!({"v": {"$regex": "."}}))).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidFilter { .. }), "{err:?}");
    // Labels and keys with LIKE, regex and SQL metacharacters are stored and scoped exactly.
    let odd = namespace(["a%b_c\\", "it's \"x\""]);
    store.put(&odd, "k'; DROP TABLE store; --", json!({"v": 2}), None).await.unwrap();
    assert_eq!(store.search(&namespace(["a%b_c\\"]), SearchQuery::new()).await.unwrap().len(), 1);
    assert_eq!(store.count(&namespace(["a%b_c\\"])).await.unwrap(), 1);
    for near in [&["aXbYc\\"][..], &["a%b_c"], &["a%b_c\\\\"], &["a%"]] {
        assert!(
            store.search(&namespace(near.iter().copied()), SearchQuery::new()).await.unwrap().is_empty(),
            "{near:?}"
        );
    }
    let got = store.get(&odd, "k'; DROP TABLE store; --").await.unwrap().unwrap();
    assert_eq!(got.namespace, odd);
    assert!(store.list_namespaces(Default::default()).await.unwrap().contains(&odd));
    // U+0000, which PostgreSQL cannot hold: refused on write, absent on read.
    let err = store.put(&ns, "nul\0key", json!({}), None).await.unwrap_err();
    assert!(matches!(ours(&err), Error::NulInItem { .. }), "{err:?}");
    let err = store.put(&ns, "k", json!({"deep": ["x\u{0}y"]}), None).await.unwrap_err();
    assert!(matches!(ours(&err), Error::NulInItem { .. }), "{err:?}");
    assert!(store.get(&ns, "nul\0key").await.unwrap().is_none());
    store.delete(&ns, "nul\0key").await.unwrap();
    assert_eq!(store.get(&ns, "k").await.unwrap().unwrap().value, json!({"v": 1}), "nothing changed");
    drop_database(&db).await;
}

#[tokio::test]
async fn opening_migrates_once_and_refuses_a_newer_schema() {
    let Some((db, saver)) = fresh_database("st_schema").await else { return };
    // Several stores opening a fresh database at once: one migrates, the others wait for it.
    let opens: Vec<_> =
        (0..4).map(|_| tokio::spawn(PostgresStore::builder().from_pool(saver.pool().clone()))).collect();
    for opened in opens {
        opened.await.unwrap().unwrap();
    }
    // The checkpointer's `setup` shares the lock, and its future is spawnable too.
    tokio::spawn({
        let saver = saver.clone();
        async move { saver.setup().await }
    })
    .await
    .unwrap()
    .unwrap();
    let versions: Vec<i32> = sqlx::query_scalar("SELECT v FROM store_migrations ORDER BY v")
        .fetch_all(saver.pool())
        .await
        .unwrap();
    assert_eq!(versions, [0, 1, 2, 3]);
    sqlx::query("INSERT INTO store_migrations (v) VALUES (4)").execute(saver.pool()).await.unwrap();
    sqlx::query("DROP INDEX idx_store_expires_at").execute(saver.pool()).await.unwrap();
    sqlx::query("DELETE FROM store_migrations WHERE v = 3").execute(saver.pool()).await.unwrap();
    let err = PostgresStore::builder().from_pool(saver.pool().clone()).await.unwrap_err();
    assert!(matches!(err, Error::StoreSchemaTooNew { found: 4, known: 3 }), "{err:?}");
    drop_database(&db).await;
}
