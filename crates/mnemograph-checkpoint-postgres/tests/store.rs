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
use mnemograph_checkpoint_postgres::{Error, PostgresStore, VectorStorage};
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

#[tokio::test]
async fn store_conformance_search_refreshes_what_it_returns() {
    let Some((db, store)) = fresh_store("st_searchttl_conf").await else { return };
    // TTLs are whole minutes: each item is put with one, then left `AGED` on the server's clock.
    let ttl = Duration::from_secs(60);
    suite::search_refreshes_what_it_returns(&store, ttl, async |namespace: &[String], key: &str| {
        expire_in(&store, &namespace.join("."), key, suite::AGED.as_secs_f64()).await;
    })
    .await;
    drop_database(&db).await;
}

fn index() -> IndexConfig {
    IndexConfig::new(HashingEmbeddings::new(64)).fields(["text"])
}

/// A store with [`index`] on a fresh database of its own, sharing the saver's pool.
async fn fresh_indexed(label: &str) -> Option<(String, PostgresStore)> {
    let (db, saver) = fresh_database(label).await?;
    let store = PostgresStore::builder().index(index()).from_pool(saver.pool().clone()).await.expect("open");
    Some((db, store))
}

#[tokio::test]
async fn store_conformance_semantic_ranking() {
    let Some((db, store)) = fresh_indexed("st_semantic").await else { return };
    suite::semantic_ranking(&store).await;
    drop_database(&db).await;
}

#[tokio::test]
async fn store_conformance_replacing_re_embeds() {
    let Some((db, store)) = fresh_indexed("st_reembed").await else { return };
    suite::replacing_re_embeds(&store).await;
    drop_database(&db).await;
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

/// Whether the server offers pgvector, which decides the vector table's mode.
async fn pgvector_available(store: &PostgresStore) -> bool {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')")
        .fetch_one(store.pool())
        .await
        .unwrap()
}

/// The `(key, field_name)` of every vector row, in order.
async fn vector_rows(store: &PostgresStore) -> Vec<(String, String)> {
    sqlx::query_as("SELECT key, field_name FROM store_vectors ORDER BY key, field_name")
        .fetch_all(store.pool())
        .await
        .unwrap()
}

/// A ranked search over more items than one statement reads vectors for, with and without a
/// filter, ranks exactly as the in-memory store does: every kept item is scored, none twice.
#[tokio::test]
async fn ranking_over_many_items_agrees_with_the_in_memory_store() {
    let Some((db, store)) = fresh_indexed("st_many").await else { return };
    let memory = InMemoryStore::with_index(index());
    let ns = namespace(["many"]);
    let words = ["tea", "coffee", "rain", "train", "garden", "river", "lamp", "violin", "kite"];
    for i in 0..1500usize {
        let text = format!("{} {} {}", words[i % 9], words[i / 9 % 9], words[i / 81 % 9]);
        let doc = json!({"text": text, "group": i % 7});
        let key = format!("k{i:04}");
        store.put(&ns, &key, doc.clone(), None).await.unwrap();
        memory.put(&ns, &key, doc, None).await.unwrap();
    }
    for filter in [None, Some(json!({"group": 3})), Some(json!({"group": {"$ne": 3}}))] {
        let mut q = SearchQuery::new().query("rain over the garden river").limit(1500);
        if let Some(f) = &filter {
            q = q.filter(f.clone());
        }
        let ranked = |hits: Vec<SearchItem>| -> Vec<(String, i64)> {
            let scored = hits.iter().map(|h| h.score.expect("every item is scored")).collect::<Vec<_>>();
            assert!(scored.windows(2).all(|w| w[0] >= w[1]), "best first");
            hits.into_iter().map(|h| (h.item.key, (h.score.unwrap() * 1e6).round() as i64)).collect()
        };
        let mut ours = ranked(store.search(&ns, q.clone()).await.unwrap());
        let mut reference = ranked(memory.search(&ns, q).await.unwrap());
        assert!(ours.len() > 200, "{filter:?}: {}", ours.len());
        // Equal scores may come in either order: compare as sets of (key, score).
        ours.sort();
        reference.sort();
        assert_eq!(ours, reference, "{filter:?}");
    }
    drop_database(&db).await;
}

/// Filters, limit and offset apply to a ranked search as the in-memory store applies them, and
/// expired items are not ranked.
#[tokio::test]
async fn filtered_ranked_pages_agree_with_the_in_memory_store() {
    let Some((db, store)) = fresh_indexed("st_rankpage").await else { return };
    let memory = InMemoryStore::with_index(index());
    let ns = namespace(["page"]);
    let texts = [
        "drinks green tea every afternoon",
        "green tea with jasmine",
        "black tea and milk",
        "rides a red bike to work",
        "plays the cello on sundays",
        "tea ceremony in kyoto",
        "coffee before tea",
        "iced tea in summer",
    ];
    for (i, text) in texts.iter().enumerate() {
        let doc = json!({"text": text, "mine": i % 2 == 0});
        store.put(&ns, &format!("t{i}"), doc.clone(), None).await.unwrap();
        memory.put(&ns, &format!("t{i}"), doc, None).await.unwrap();
    }
    let keys = |hits: Vec<SearchItem>| hits.into_iter().map(|h| h.item.key).collect::<Vec<_>>();
    for (filter, offset, limit) in [(None, 0, 3), (None, 2, 3), (Some(json!({"mine": true})), 1, 2)] {
        let mut q = SearchQuery::new().query("green tea").offset(offset).limit(limit);
        if let Some(f) = &filter {
            q = q.filter(f.clone());
        }
        let ours = keys(store.search(&ns, q.clone()).await.unwrap());
        assert_eq!(ours, keys(memory.search(&ns, q).await.unwrap()), "{filter:?} {offset} {limit}");
        assert_eq!(ours.len(), limit);
    }
    // An expired item is not ranked, however well it would score.
    let best = keys(store.search(&ns, SearchQuery::new().query("green tea").limit(1)).await.unwrap());
    expire_in(&store, "page", &best[0], -1.0).await;
    let after = keys(store.search(&ns, SearchQuery::new().query("green tea").limit(10)).await.unwrap());
    assert!(!after.contains(&best[0]) && after.len() == texts.len() - 1, "{after:?}");
    drop_database(&db).await;
}

/// An item's vectors are those of its latest value, one per present field: replacing re-embeds,
/// a missing field has none (and an item without any ranks after scored ones), deleting removes
/// them, and the table's mode is the one the server allows.
#[tokio::test]
async fn vectors_follow_their_item() {
    let Some((db, saver)) = fresh_database("st_vectors").await else { return };
    // Several stores opening a fresh database at once: one creates the table.
    let two = IndexConfig::new(HashingEmbeddings::new(64)).fields(["text", "extra.note"]);
    let opens: Vec<_> = (0..3)
        .map(|_| tokio::spawn(PostgresStore::builder().index(two.clone()).from_pool(saver.pool().clone())))
        .collect();
    let mut stores = Vec::new();
    for opened in opens {
        stores.push(opened.await.unwrap().unwrap());
    }
    let store = stores.pop().unwrap();
    let expected =
        if pgvector_available(&store).await { VectorStorage::Pgvector } else { VectorStorage::RealArray };
    assert_eq!(store.vector_storage(), Some(expected));
    let column: String = sqlx::query_scalar(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute \
         WHERE attrelid = 'store_vectors'::regclass AND attname = 'embedding'",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(column, if expected == VectorStorage::Pgvector { "vector(64)" } else { "real[]" });
    let ns = namespace(["vec"]);
    store
        .put(&ns, "both", json!({"text": "green tea", "extra": {"note": "violin lessons"}}), None)
        .await
        .unwrap();
    store.put(&ns, "text", json!({"text": "a red bike"}), None).await.unwrap();
    store.put(&ns, "none", json!({"other": "green tea"}), None).await.unwrap();
    let row = |k: &str, f: &str| (k.to_owned(), f.to_owned());
    assert_eq!(
        vector_rows(&store).await,
        [row("both", "extra.note"), row("both", "text"), row("text", "text")]
    );
    // The best field scores the item; an item without vectors comes last, unscored.
    let hits = store.search(&ns, SearchQuery::new().query("violin lessons")).await.unwrap();
    let ranked: Vec<(&str, bool)> = hits.iter().map(|h| (h.item.key.as_str(), h.score.is_some())).collect();
    assert_eq!(ranked, [("both", true), ("text", true), ("none", false)]);
    assert!(hits[0].score.unwrap() > 0.99, "{:?}", hits[0].score);
    // Replacing drops the vector of a field the new value lacks.
    store.put(&ns, "both", json!({"text": "black coffee"}), None).await.unwrap();
    assert_eq!(vector_rows(&store).await, [row("both", "text"), row("text", "text")]);
    let hits = store.search(&ns, SearchQuery::new().query("violin lessons")).await.unwrap();
    assert!(hits.iter().all(|h| h.score.unwrap_or(0.0) < 0.5), "the old note is gone");
    // Deleting, and a sweep of an expired item, remove the vectors.
    store.delete(&ns, "both").await.unwrap();
    assert_eq!(vector_rows(&store).await, [row("text", "text")]);
    store.put(&ns, "brief", json!({"text": "soon gone"}), Some(Duration::from_secs(60))).await.unwrap();
    expire_in(&store, "vec", "brief", -1.0).await;
    assert_eq!(store.sweep_expired().await.unwrap(), 1);
    assert_eq!(vector_rows(&store).await, [row("text", "text")]);
    // A store without an index on the same database drops an item's vectors when it replaces
    // the item, so none outlive what they embed.
    let plain = PostgresStore::builder().from_pool(store.pool().clone()).await.unwrap();
    assert_eq!(plain.vector_storage(), Some(expected));
    plain.put(&ns, "text", json!({"text": "a blue bike"}), None).await.unwrap();
    assert!(vector_rows(&store).await.is_empty());
    drop_database(&db).await;
}

/// A pgvector table of another dimension than the index's model is refused at opening.
#[tokio::test]
async fn a_vector_table_of_another_dimension_is_refused() {
    let Some((db, store)) = fresh_indexed("st_dims").await else { return };
    if store.vector_storage() != Some(VectorStorage::Pgvector) {
        // A `real[]` column fixes no dimension: vectors of another length score nothing.
        let other = PostgresStore::builder()
            .index(IndexConfig::new(HashingEmbeddings::new(32)).fields(["text"]))
            .from_pool(store.pool().clone())
            .await
            .unwrap();
        let ns = namespace(["dims"]);
        store.put(&ns, "old", json!({"text": "green tea"}), None).await.unwrap();
        other.put(&ns, "new", json!({"text": "green tea"}), None).await.unwrap();
        let hits = other.search(&ns, SearchQuery::new().query("green tea")).await.unwrap();
        let scored: Vec<(&str, bool)> =
            hits.iter().map(|h| (h.item.key.as_str(), h.score.is_some())).collect();
        assert_eq!(scored, [("new", true), ("old", false)]);
        drop_database(&db).await;
        return;
    }
    let err = PostgresStore::builder()
        .index(IndexConfig::new(HashingEmbeddings::new(32)).fields(["text"]))
        .from_pool(store.pool().clone())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::VectorDims { column: 64, index: 32 }), "{err:?}");
    let versions: Vec<i32> = sqlx::query_scalar("SELECT v FROM vector_migrations ORDER BY v")
        .fetch_all(store.pool())
        .await
        .unwrap();
    assert_eq!(versions, [0, 1, 2], "LangGraph's vector migrations, recorded as Python records them");
    drop_database(&db).await;
}

/// A search refreshes the expiry of the items it returns, and only those, as Python's does; a
/// store that does not refresh on read leaves them.
#[tokio::test]
async fn searches_refresh_the_items_they_return() {
    let Some((db, store)) = fresh_indexed("st_searchttl").await else { return };
    let ns = namespace(["sttl"]);
    let minute = Duration::from_secs(60);
    store.put(&ns, "tea", json!({"text": "green tea", "kind": "drink"}), Some(minute)).await.unwrap();
    store.put(&ns, "bike", json!({"text": "a red bike", "kind": "thing"}), Some(minute)).await.unwrap();
    store.put(&ns, "cello", json!({"text": "plays the cello", "kind": "thing"}), Some(minute)).await.unwrap();
    store.put(&ns, "forever", json!({"text": "green tea forever", "kind": "drink"}), None).await.unwrap();
    let reset = || async {
        for key in ["tea", "bike", "cello"] {
            expire_in(&store, "sttl", key, 5.0).await;
        }
    };
    let refreshed = || async {
        let mut keys = Vec::new();
        for key in ["tea", "bike", "cello"] {
            if seconds_left(&store, "sttl", key).await > 30.0 {
                keys.push(key);
            }
        }
        keys
    };
    // Filtered, paged in the process.
    reset().await;
    store.search(&ns, SearchQuery::new().filter(json!({"kind": "thing"})).limit(1)).await.unwrap();
    assert_eq!(refreshed().await, ["cello"], "only the returned item");
    // Paged in SQL.
    reset().await;
    store.search(&ns, SearchQuery::new().offset(1).limit(2)).await.unwrap();
    assert_eq!(refreshed().await, ["bike", "cello"], "newest first: forever | cello, bike | tea");
    // Ranked.
    reset().await;
    let hits = store.search(&ns, SearchQuery::new().query("green tea").limit(2)).await.unwrap();
    assert_eq!(hits.iter().map(|h| h.item.key.as_str()).collect::<Vec<_>>(), ["tea", "forever"]);
    assert_eq!(refreshed().await, ["tea"]);
    assert!(store.get(&ns, "forever").await.unwrap().is_some());
    let forever: Option<f64> =
        sqlx::query_scalar("SELECT EXTRACT(EPOCH FROM expires_at)::float8 FROM store WHERE key = 'forever'")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(forever, None, "an item without a TTL gets none");
    // Without refresh on read, a search writes nothing.
    let fixed = PostgresStore::builder()
        .index(index())
        .ttl(TtlConfig::new(None).refresh_on_read(false))
        .from_pool(store.pool().clone())
        .await
        .unwrap();
    reset().await;
    assert_eq!(fixed.search(&ns, SearchQuery::new().limit(10)).await.unwrap().len(), 4);
    assert!(refreshed().await.is_empty());
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
