//! [`PostgresStore`] in pgvector's mode, on a PostgreSQL that offers the extension
//! (`PGVECTOR_URL`): the vector table is the one LangGraph's `PostgresStore.setup()` makes, and
//! Python's store and this one rank each other's items alike. Each test runs in a database of its
//! own on that server.

mod support;

use std::collections::BTreeMap;

use mnemograph_checkpoint::store::{
    namespace, HashingEmbeddings, InMemoryStore, IndexConfig, SearchItem, SearchQuery, Store,
};
use mnemograph_checkpoint_postgres::{PostgresStore, VectorStorage};
use mnemograph_test::store_conformance as suite;
use serde_json::{json, Value};
use support::{drop_database, fresh_database, on_pgvector, python_peer, python_script};

const DIMS: usize = 64;

fn index() -> IndexConfig {
    IndexConfig::new(HashingEmbeddings::new(DIMS)).fields(["text"])
}

/// A store with [`index`] on a fresh database of its own on the pgvector server, which must
/// have chosen pgvector's mode.
async fn fresh_indexed(test: &str, label: &str) -> Option<(String, PostgresStore)> {
    on_pgvector(test)?;
    let (db, saver) = fresh_database(label).await?;
    let store = PostgresStore::builder().index(index()).from_pool(saver.pool().clone()).await.expect("open");
    assert_eq!(store.vector_storage(), Some(VectorStorage::Pgvector), "the server offers pgvector");
    Some((db, store))
}

/// The vector table as a database holds it: its columns with their types, its indexes, and the
/// vector migrations recorded.
async fn vector_schema(store: &PostgresStore) -> Value {
    let columns: Vec<(String, String, bool)> = sqlx::query_as(
        "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_attribute a \
         WHERE a.attrelid = to_regclass('store_vectors') AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    let indexes: Vec<String> = sqlx::query_scalar(
        "SELECT indexdef FROM pg_indexes WHERE tablename = 'store_vectors' ORDER BY indexname",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    let migrations: Vec<i32> = sqlx::query_scalar("SELECT v FROM vector_migrations ORDER BY v")
        .fetch_all(store.pool())
        .await
        .unwrap();
    json!({"columns": columns, "indexes": indexes, "migrations": migrations})
}

#[tokio::test]
async fn store_conformance_semantic_ranking_on_pgvector() {
    let Some((db, store)) =
        fresh_indexed("store_conformance_semantic_ranking_on_pgvector", "pv_semantic").await
    else {
        return;
    };
    suite::semantic_ranking(&store).await;
    drop_database(&db).await;
}

#[tokio::test]
async fn store_conformance_replacing_re_embeds_on_pgvector() {
    let Some((db, store)) =
        fresh_indexed("store_conformance_replacing_re_embeds_on_pgvector", "pv_reembed").await
    else {
        return;
    };
    suite::replacing_re_embeds(&store).await;
    drop_database(&db).await;
}

/// Ranked searches, with and without a filter, over vectors kept in pgvector's column rank
/// exactly as the in-memory store ranks the same items.
#[tokio::test]
async fn ranking_on_pgvector_agrees_with_the_in_memory_store() {
    let Some((db, store)) =
        fresh_indexed("ranking_on_pgvector_agrees_with_the_in_memory_store", "pv_rank").await
    else {
        return;
    };
    let memory = InMemoryStore::with_index(index());
    let ns = namespace(["many"]);
    let words = ["tea", "coffee", "rain", "train", "garden", "river", "lamp", "violin", "kite"];
    for i in 0..400usize {
        let text = format!("{} {} {}", words[i % 9], words[i / 9 % 9], words[i / 81 % 9]);
        let doc = json!({"text": text, "group": i % 5});
        let key = format!("k{i:04}");
        store.put(&ns, &key, doc.clone(), None).await.unwrap();
        memory.put(&ns, &key, doc, None).await.unwrap();
    }
    for filter in [None, Some(json!({"group": 2}))] {
        let mut q = SearchQuery::new().query("rain over the garden river").limit(400);
        if let Some(f) = &filter {
            q = q.filter(f.clone());
        }
        let ranked = |hits: Vec<SearchItem>| -> Vec<(String, i64)> {
            hits.into_iter().map(|h| (h.item.key, (h.score.expect("scored") * 1e6).round() as i64)).collect()
        };
        let mut ours = ranked(store.search(&ns, q.clone()).await.unwrap());
        let mut reference = ranked(memory.search(&ns, q).await.unwrap());
        assert!(ours.len() >= 80, "{filter:?}: {}", ours.len());
        ours.sort();
        reference.sort();
        assert_eq!(ours, reference, "{filter:?}");
    }
    drop_database(&db).await;
}

/// The vector table, its index and its recorded migrations are those Python's `setup()` makes
/// on an empty database with an index of the same dimensions.
#[tokio::test]
async fn the_vector_table_is_the_one_python_sets_up() {
    let test = "the_vector_table_is_the_one_python_sets_up";
    if on_pgvector(test).is_none() || python_peer(test).is_none() {
        return;
    }
    let Some((ours_db, ours)) = fresh_indexed(test, "pv_schema_rs").await else { return };
    let Some((theirs_db, theirs_saver)) = fresh_database("pv_schema_py").await else { return };
    python_script(test, "store_peer.py", &theirs_db, &["setup_index", &DIMS.to_string()]).unwrap();
    let theirs = PostgresStore::builder().from_pool(theirs_saver.pool().clone()).await.unwrap();
    let expected = vector_schema(&theirs).await;
    assert!(expected["columns"].to_string().contains("vector(64)"), "{expected}");
    assert!(expected["indexes"].to_string().contains("hnsw"), "{expected}");
    assert_eq!(vector_schema(&ours).await, expected);
    drop_database(&ours_db).await;
    drop_database(&theirs_db).await;
}

/// Items written by either language are ranked by the other exactly as by the writer: Python's
/// `PostgresStore` (its index embedding from a table the test makes with the vectors this
/// store's embedder gives) ranks and scores the items this store wrote, and this store those
/// Python wrote, the same.
#[tokio::test]
async fn python_and_rust_rank_each_other_s_vectors_alike() {
    let test = "python_and_rust_rank_each_other_s_vectors_alike";
    if on_pgvector(test).is_none() || python_peer(test).is_none() {
        return;
    }
    let Some((db, store)) = fresh_indexed(test, "pv_cross").await else { return };
    let docs: BTreeMap<&str, &str> = [
        ("tea", "green tea in the morning"),
        ("coffee", "dark roast coffee beans"),
        ("bike", "a red bike by the river"),
        ("cat", "a cat named Miso sleeps in the garden"),
        ("rain", "rain over the garden"),
        ("violin", "violin lessons on Thursday"),
    ]
    .into();
    let queries = ["tea or coffee", "the garden in the rain", "music lessons"];
    let embed = HashingEmbeddings::new(DIMS);
    let vectors: BTreeMap<&str, Vec<f32>> =
        docs.values().copied().chain(queries).map(|text| (text, embed.embed(text))).collect();
    let table = std::env::temp_dir().join(format!("{db}.json"));
    let body = json!({"dims": DIMS, "vectors": vectors, "docs": docs, "queries": queries});
    std::fs::write(&table, body.to_string()).unwrap();

    let rs = namespace(["rs"]);
    for (key, text) in &docs {
        store.put(&rs, key, json!({"text": text}), None).await.unwrap();
    }
    let migrations_before = vector_schema(&store).await["migrations"].clone();
    let read = python_script(test, "store_peer.py", &db, &["rank", table.to_str().unwrap()]).unwrap();
    std::fs::remove_file(&table).ok();
    assert_eq!(read["vector_migrations"], migrations_before, "Python's setup found nothing to add");

    // Scores rounded to 1e-5: pgvector computes Python's in single precision. Items of equal
    // score may come in either order, so those are compared by key.
    let rounded = |hits: Vec<(String, f64)>| -> Vec<(i64, String)> {
        let mut hits: Vec<(i64, String)> =
            hits.into_iter().map(|(key, score)| (-(score * 1e5).round() as i64, key)).collect();
        assert!(hits.windows(2).all(|w| w[0].0 <= w[1].0), "best first: {hits:?}");
        hits.sort();
        hits
    };
    for ns in ["py", "rs"] {
        for query in queries {
            let python: Vec<(String, f64)> =
                serde_json::from_value(read["ranked"][ns][query].clone()).expect("[key, score] pairs");
            let ours: Vec<(String, f64)> = store
                .search(&namespace([ns]), SearchQuery::new().query(query).limit(20))
                .await
                .unwrap()
                .into_iter()
                .map(|hit| (hit.item.key, hit.score.expect("scored")))
                .collect();
            assert_eq!(ours.len(), docs.len(), "{ns} {query}");
            assert_eq!(rounded(ours), rounded(python), "{ns} {query}");
        }
    }
    drop_database(&db).await;
}
