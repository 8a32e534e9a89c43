//! Collections as this crate created them before the `retired` flag: the memory must open them
//! as they are and keep leaving retired memories out.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use milvus::v2::prelude::*;
use mnemograph_checkpoint::store::HashingEmbeddings;
use mnemograph_memory_milvus::{fields, Consistency, MilvusConfig, MilvusMemory};

use super::DIMS;

/// The memory collection's schema before the flag: every field of today's but `retired`, with
/// BM25 on `content` through the standard analyzer (any server has it).
fn schema(dims: usize) -> CollectionSchema {
    let varchar =
        |name: &str, max: u32| FieldSchema::new().name(name).data_type(DataType::VarChar).max_length(max);
    CollectionSchema::new()
        .add_field(
            FieldSchema::new().name(fields::ID).data_type(DataType::Int64).primary_key(true).auto_id(true),
        )
        .add_field(
            FieldSchema::new()
                .name(fields::EMBEDDING)
                .data_type(DataType::FloatVector)
                .dimension(dims as u32),
        )
        .add_field(varchar(fields::USER_ID, 256).partition_key(true))
        .add_field(varchar(fields::SESSION_ID, 256))
        .add_field(varchar(fields::TURN_ROLE, 64))
        .add_field(
            varchar(fields::CONTENT, 16_384)
                .enable_analyzer(true)
                .analyzer_params(serde_json::json!({"tokenizer": "standard", "filter": ["lowercase"]})),
        )
        .add_field(FieldSchema::new().name(fields::CREATED_AT).data_type(DataType::Int64))
        .add_field(FieldSchema::new().name(fields::IMPORTANCE).data_type(DataType::Float))
        .add_field(FieldSchema::new().name(fields::METADATA).data_type(DataType::Json))
        .add_field(FieldSchema::new().name(fields::SPARSE).data_type(DataType::SparseFloatVector))
        .add_function(
            Function::new()
                .name("content_bm25")
                .function_type(FunctionType::Bm25)
                .input_fields([fields::CONTENT])
                .output_fields([fields::SPARSE]),
        )
}

/// Creates `collection` with the schema before the flag on the server at `url`, and returns a
/// client for writing rows the way the crate wrote them then.
pub async fn create(url: &str, collection: &str) -> ClientV2 {
    let client = ClientV2::new(&ConnectConfig::new().uri(url.to_owned())).await.expect("connect");
    let hnsw =
        HashMap::from([("M".to_owned(), "16".to_owned()), ("efConstruction".to_owned(), "200".to_owned())]);
    let indexes = vec![
        IndexParam::new()
            .field_name(fields::EMBEDDING)
            .index_type(IndexType::Hnsw)
            .metric_type(MetricType::Cosine)
            .extra_params(hnsw),
        IndexParam::new()
            .field_name(fields::SPARSE)
            .index_type(IndexType::SparseInvertedIndex)
            .metric_type(MetricType::Bm25),
    ];
    let req = CreateCollectionRequest::builder()
        .collection_name(collection)
        .schema(schema(DIMS))
        .index_params(indexes)
        .num_partitions(16)
        .build()
        .unwrap();
    client.create_collection(req).await.expect("create the collection as it was");
    client
}

/// One row as the crate inserted it before the flag.
pub fn row(
    user: &str,
    session: &str,
    content: &str,
    vector: Vec<f32>,
    metadata: serde_json::Value,
) -> serde_json::Value {
    let mut row = serde_json::json!({
        fields::USER_ID: user,
        fields::SESSION_ID: session,
        fields::TURN_ROLE: "exchange",
        fields::CONTENT: content,
        fields::CREATED_AT: mnemograph_memory::now_secs(),
        fields::IMPORTANCE: 0.5,
    });
    row[fields::EMBEDDING] = vector.into();
    row[fields::METADATA] = metadata;
    row
}

/// Inserts `rows` into `collection`; returns their ids.
pub async fn insert(client: &ClientV2, collection: &str, rows: Vec<serde_json::Value>) -> Vec<i64> {
    let req = InsertRequest::builder().collection_name(collection).rows(rows).build().unwrap();
    match client.insert(req).await.expect("insert").ids() {
        Ids::Int64(ids) => ids.clone(),
        other => panic!("non-integer ids {other:?}"),
    }
}

/// The field names of `collection`, as the server describes them.
pub async fn field_names(client: &ClientV2, collection: &str) -> Vec<String> {
    let req = DescribeCollectionRequest::builder().collection_name(collection).build().unwrap();
    let described = client.describe_collection(req).await.unwrap();
    described.description().get_schema().get_fields().iter().map(|f| f.get_name().to_owned()).collect()
}

/// Runs `body` with a client on a fresh collection created as before the flag (so `prepare` can
/// write rows the old way) and then a memory opened on it, and drops the collection afterwards,
/// even when the body panics. Skips or fails without a server as [`super::connect`] does.
pub async fn with_legacy_milvus<P, PFut, F, Fut>(test: &str, prepare: P, body: F)
where
    P: FnOnce(ClientV2, String) -> PFut,
    PFut: Future<Output = ()>,
    F: FnOnce(MilvusMemory) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(url) = super::server_url(test) else { return };
    let collection = format!("t_legacy_{test}_{:016x}", rand::random::<u64>());
    let client = create(&url, &collection).await;
    let outcome = AssertUnwindSafe(async {
        prepare(client.clone(), collection.clone()).await;
        let config =
            MilvusConfig::new(url.clone()).collection(collection.clone()).consistency(Consistency::Strong);
        let memory = MilvusMemory::connect(config, HashingEmbeddings::new(DIMS))
            .await
            .expect("open the old collection");
        body(memory).await;
    })
    .catch_unwind()
    .await;
    let drop = DropCollectionRequest::builder().collection_name(&collection).build().unwrap();
    client.drop_collection(drop).await.expect("drop the test collection");
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
