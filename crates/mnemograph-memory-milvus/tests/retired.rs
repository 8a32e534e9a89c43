//! Retirement as the `retired` scalar field: a new collection carries the flag and the default
//! scope filters on it; a collection created before the flag keeps working on the JSON marks,
//! untouched. Needs `MILVUS_URL` (each test in its own collection; skipped with a printed reason
//! otherwise, failed under CI).

mod support;

use milvus::v2::prelude::*;
use mnemograph_checkpoint::store::{Embeddings, HashingEmbeddings};
use mnemograph_memory::{Memory, NewMemory, Retire, Retirement, RetrieveQuery, Sessions, SUPERSEDED_BY};
use mnemograph_memory_milvus::{fields, MilvusMemory};
use serde_json::json;
use support::legacy::{self, with_legacy_milvus};
use support::{with_milvus, DIMS};

/// The ids the default scope returns for `user` (top 10 of a dense retrieval, more than any user
/// here has), sorted.
async fn live(m: &MilvusMemory, user: &str) -> Vec<i64> {
    ids(m, user, false).await
}

/// The ids of `user`'s memories, retired ones included, sorted.
async fn all(m: &MilvusMemory, user: &str) -> Vec<i64> {
    ids(m, user, true).await
}

async fn ids(m: &MilvusMemory, user: &str, include_retired: bool) -> Vec<i64> {
    let query = RetrieveQuery::new(user, "locker code gym").top_k(10).include_retired(include_retired);
    let mut ids: Vec<i64> = m.retrieve(query).await.unwrap().into_iter().map(|h| h.record.id).collect();
    ids.sort_unstable();
    ids
}

/// The ids of `user`'s rows whose flag is set, read straight from the server.
async fn flagged(m: &MilvusMemory, user: &str) -> Vec<i64> {
    let req = QueryRequest::builder()
        .collection_name(&m.config().collection)
        .filter(format!(r#"user_id == "{user}" and retired == true"#))
        .output_fields([fields::ID])
        .consistency_level(ConsistencyLevel::Strong)
        .build()
        .unwrap();
    let res = m.client().query(req).await.unwrap();
    let mut ids: Vec<i64> = res.results().rows().unwrap().map(|r| r.get_i64(fields::ID).unwrap()).collect();
    ids.sort_unstable();
    ids
}

/// `content`'s vector from the tests' embedder, for rows written around the memory.
async fn vector(content: &str) -> Vec<f32> {
    HashingEmbeddings::new(DIMS).embed_documents(&[content.to_owned()]).await.unwrap().remove(0)
}

/// Writes `rows` straight to the memory's collection; returns their ids.
async fn insert(m: &MilvusMemory, rows: Vec<serde_json::Value>) -> Vec<i64> {
    legacy::insert(m.client(), &m.config().collection, rows).await
}

fn sorted(mut ids: Vec<i64>) -> Vec<i64> {
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn a_new_collection_keeps_retirement_in_the_flag_and_filters_on_it() {
    with_milvus(
        "retired_flag",
        |c| c,
        |m| async move {
            assert!(m.retired_field());
            let req =
                DescribeCollectionRequest::builder().collection_name(&m.config().collection).build().unwrap();
            let described = m.client().describe_collection(req).await.unwrap();
            let field = described
                .description()
                .get_schema()
                .get_fields()
                .iter()
                .find(|f| f.get_name() == fields::RETIRED)
                .cloned();
            let field = field.expect("a `retired` field");
            assert_eq!(field.get_data_type(), DataType::Bool);
            assert_eq!(field.get_default_value(), &Some(DefaultValue::Bool(false)));

            let kept = m
                .save_turn(NewMemory::turn("ann", "s1", "My locker code at the gym is 4471", "Noted."))
                .await
                .unwrap();
            let old = m
                .save_turn(NewMemory::turn("ann", "s1", "My locker code at the gym is 1234", "Noted."))
                .await
                .unwrap();
            let bobs = m
                .save_turn(NewMemory::turn("bob", "s1", "My locker code at the gym is 1234", "Noted."))
                .await
                .unwrap();
            assert_eq!(flagged(&m, "ann").await, [] as [i64; 0], "saved live");

            // Retiring sets the flag and writes the marks users read, in one row write.
            assert_eq!(m.retire("ann", &[Retirement::new(old, kept, 5, "changed")]).await.unwrap(), [old]);
            assert_eq!(flagged(&m, "ann").await, [old]);
            assert_eq!(live(&m, "ann").await, [kept]);
            let audit =
                m.retrieve(RetrieveQuery::new("ann", "locker code gym").include_retired(true)).await.unwrap();
            let record = &audit.iter().find(|h| h.record.id == old).expect("listed on request").record;
            assert_eq!(
                (record.superseded_by(), record.metadata["superseded_reason"].as_str()),
                (Some(kept), Some("changed"))
            );
            assert_eq!(m.sessions("ann").await.unwrap()[0].exchanges, 1, "sessions count live memories");
            // Another user's identical row is untouched.
            assert_eq!((flagged(&m, "bob").await, live(&m, "bob").await), (vec![], vec![bobs]));

            // Restoring clears both.
            assert_eq!(m.restore("ann", &[old]).await.unwrap(), [old]);
            assert_eq!(flagged(&m, "ann").await, [] as [i64; 0]);
            assert_eq!(live(&m, "ann").await, sorted(vec![kept, old]));
            assert!(!all(&m, "ann").await.is_empty());

            // The scope reads the flag: a flagged row without the mark is left out, which only the
            // server's filter can do (the client re-checks the marks alone). A row with the mark but
            // no flag is left out too, by that re-check. A row written without the field (by a writer
            // that does not know it) takes the default and is live.
            let (marked, set, unaware) = (
                "User: marked locker code gym\nAssistant: Noted.",
                "User: flagged locker code gym\nAssistant: Noted.",
                "User: unaware locker code gym\nAssistant: Noted.",
            );
            let mut rows = vec![
                legacy::row("cy", "s1", marked, vector(marked).await, json!({SUPERSEDED_BY: 1})),
                legacy::row("cy", "s1", set, vector(set).await, json!({})),
            ];
            rows[0][fields::RETIRED] = false.into();
            rows[1][fields::RETIRED] = true.into();
            let written = insert(&m, rows).await;
            let without =
                insert(&m, vec![legacy::row("cy", "s1", unaware, vector(unaware).await, json!({}))]).await;
            assert_eq!(live(&m, "cy").await, without);
            assert_eq!(flagged(&m, "cy").await, [written[1]]);

            // A memory saved with the marks (a copy of a retired one) is retired from the start.
            let copy = NewMemory::turn("dee", "s1", "My locker code at the gym is 9", "Noted.")
                .meta(SUPERSEDED_BY, kept);
            let copy = m.save(vec![copy]).await.unwrap();
            assert_eq!(flagged(&m, "dee").await, copy);
            assert_eq!(live(&m, "dee").await, [] as [i64; 0]);
        },
    )
    .await;
}

#[tokio::test]
async fn a_collection_created_before_the_flag_is_opened_as_it_is_and_still_leaves_retired_memories_out() {
    let ids = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let written = ids.clone();
    let prepare = |client: ClientV2, collection: String| async move {
        // Memories the previous version stored: one live, one it retired, another user's.
        let (fact, stale, other) = (
            "User: My locker code at the gym is 4471\nAssistant: Noted.",
            "User: My locker code at the gym is 1234\nAssistant: Noted.",
            "User: Bob's locker code at the gym is 1234\nAssistant: Noted.",
        );
        let rows = vec![
            legacy::row("ann", "s1", fact, vector(fact).await, json!({"type": "dialogue_turn"})),
            legacy::row("ann", "s1", stale, vector(stale).await, json!({"type": "dialogue_turn"})),
            legacy::row("bob", "s1", other, vector(other).await, json!({"type": "dialogue_turn"})),
        ];
        let ids = legacy::insert(&client, &collection, rows).await;
        let retire = json!({
            fields::ID: ids[1], fields::USER_ID: "ann",
            fields::METADATA: {"type": "dialogue_turn", SUPERSEDED_BY: ids[0], "superseded_at": 5, "superseded_reason": "old"},
        });
        let insert =
            InsertRequest::builder().collection_name(&collection).rows(vec![retire]).build().unwrap();
        client
            .upsert(UpsertRequest::builder().insert(insert).partial_update(true).build().unwrap())
            .await
            .unwrap();
        written.lock().unwrap().extend(ids);
    };
    with_legacy_milvus("before_flag", prepare, |m| async move {
        let [fact, stale, bobs] = ids.lock().unwrap()[..] else { panic!("three rows") };
        assert!(!m.retired_field());
        // Opened as it is: no field added, no row lost or changed.
        let names = legacy::field_names(m.client(), &m.config().collection).await;
        assert!(!names.iter().any(|n| n == fields::RETIRED), "{names:?}");
        assert_eq!((m.count("ann").await.unwrap(), m.count("bob").await.unwrap()), (2, 1));
        assert_eq!(live(&m, "ann").await, [fact]);
        assert_eq!(all(&m, "ann").await, sorted(vec![fact, stale]));
        let stale_record =
            m.session_records("ann", "s1").await.unwrap().into_iter().find(|r| r.id == stale).unwrap();
        assert_eq!(
            (stale_record.superseded_by(), stale_record.metadata["type"].as_str()),
            (Some(fact), Some("dialogue_turn"))
        );
        assert_eq!(live(&m, "bob").await, [bobs]);

        // Writing through the new version: saves, retires and restores on the marks alone.
        let new = m
            .save_turn(NewMemory::turn("ann", "s2", "My locker code at the gym is 8800", "Noted."))
            .await
            .unwrap();
        assert_eq!(m.retire("ann", &[Retirement::new(fact, new, 9, "changed")]).await.unwrap(), [fact]);
        assert_eq!(live(&m, "ann").await, [new]);
        let sessions = m.sessions("ann").await.unwrap();
        assert_eq!((sessions.len(), sessions[0].session_id.as_str()), (1, "s2"), "{sessions:?}");
        assert_eq!(m.restore("ann", &[stale]).await.unwrap(), [stale]);
        assert_eq!(live(&m, "ann").await, sorted(vec![stale, new]));
        assert_eq!(all(&m, "ann").await, sorted(vec![fact, stale, new]));
        let names_after = legacy::field_names(m.client(), &m.config().collection).await;
        assert_eq!(names, names_after, "the schema is never altered");
    })
    .await;
}
