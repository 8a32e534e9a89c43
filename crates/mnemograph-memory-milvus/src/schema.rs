//! [`MilvusConfig`] and the memory collection's schema.

use std::collections::HashMap;

use milvus::v2::prelude::*;
use serde_json::json;

use mnemograph_memory::RerankConfig;

/// Field names of the memory collection (one row per memory, plus `sparse` for BM25).
pub mod fields {
    /// INT64 primary key, assigned by Milvus.
    pub const ID: &str = "id";
    /// FLOAT_VECTOR, dimension of the embedder.
    pub const EMBEDDING: &str = "embedding";
    /// SPARSE_FLOAT_VECTOR computed by Milvus's BM25 function from `content`.
    pub const SPARSE: &str = "sparse";
    /// VARCHAR owner (the partition key by default).
    pub const USER_ID: &str = "user_id";
    /// VARCHAR conversation.
    pub const SESSION_ID: &str = "session_id";
    /// VARCHAR `exchange`, `summary`, ...
    pub const TURN_ROLE: &str = "turn_role";
    /// VARCHAR text, analyzed for BM25.
    pub const CONTENT: &str = "content";
    /// INT64 seconds since the epoch.
    pub const CREATED_AT: &str = "created_at";
    /// FLOAT in `[0, 1]`.
    pub const IMPORTANCE: &str = "importance";
    /// JSON object.
    pub const METADATA: &str = "metadata";
    /// BOOL, default false: whether the memory is retired (superseded), mirroring the
    /// `superseded_by` mark in `metadata`. The default scope filters on it, since a scalar
    /// clause costs the server far less than a JSON one. Collections created before the field
    /// existed lack it; [`MilvusMemory::retired_field`](crate::MilvusMemory::retired_field) says
    /// which kind a memory opened.
    pub const RETIRED: &str = "retired";
}

/// Vector similarity metric of the `embedding` index.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Metric {
    /// Cosine similarity (the default; right for normalised sentence embeddings).
    #[default]
    Cosine,
    /// Inner product.
    Ip,
    /// Euclidean distance (relevance is taken as `1 / (1 + distance)`).
    L2,
}

/// Read consistency of searches and queries (Milvus's levels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Consistency {
    /// Reads see every write acknowledged before them: use when a caller reads its own writes.
    Strong,
    /// Reads see this client's own writes.
    Session,
    /// Reads may lag writes by a bounded time (Milvus's default).
    #[default]
    Bounded,
    /// No guarantee.
    Eventually,
}

impl Consistency {
    pub(crate) fn to_milvus(self) -> ConsistencyLevel {
        match self {
            Self::Strong => ConsistencyLevel::Strong,
            Self::Session => ConsistencyLevel::Session,
            Self::Bounded => ConsistencyLevel::Bounded,
            Self::Eventually => ConsistencyLevel::Eventually,
        }
    }
}

/// Analyzer of `content`, which turns text into the terms Milvus's BM25 function counts.
///
/// Chinese has no spaces: the standard analyzer takes the Chinese between two punctuation marks
/// as one term, so a question matches a Chinese memory only when it repeats a whole clause of
/// it. Jieba segments the words. It parses as `auto`, `chinese` or `standard`:
///
/// ```
/// use mnemograph_memory_milvus::Analyzer;
/// assert_eq!("chinese".parse::<Analyzer>(), Ok(Analyzer::Chinese));
/// assert_eq!(Analyzer::Auto.params(), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub enum Analyzer {
    /// [`Chinese`](Self::Chinese) when the server accepts it at creation, else
    /// [`Standard`](Self::Standard) (servers before Milvus 2.5, or a Milvus Lite without jieba).
    #[default]
    Auto,
    /// Jieba word segmentation, lower-cased: `{"tokenizer": "jieba", "filter": ["lowercase"]}`.
    /// Latin words stay words, so mixed Chinese and English text is served by it too.
    Chinese,
    /// Word boundaries, lower-cased: `{"tokenizer": "standard", "filter": ["lowercase"]}`.
    Standard,
    /// These `analyzer_params` as they are.
    Custom(serde_json::Value),
}

impl Analyzer {
    /// The `analyzer_params` of this choice; `None` for [`Auto`](Self::Auto), which tries
    /// several.
    pub fn params(&self) -> Option<serde_json::Value> {
        match self {
            Self::Auto => None,
            Self::Chinese => Some(json!({"tokenizer": "jieba", "filter": ["lowercase"]})),
            Self::Standard => Some(json!({"tokenizer": "standard", "filter": ["lowercase"]})),
            Self::Custom(params) => Some(params.clone()),
        }
    }

    /// The `analyzer_params` to try at collection creation, in order.
    pub(crate) fn candidates(&self) -> Vec<serde_json::Value> {
        match self.params() {
            Some(params) => vec![params],
            None => [Self::Chinese, Self::Standard].iter().filter_map(Self::params).collect(),
        }
    }
}

impl From<serde_json::Value> for Analyzer {
    fn from(params: serde_json::Value) -> Self {
        Self::Custom(params)
    }
}

impl std::str::FromStr for Analyzer {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Self::Auto),
            "chinese" => Ok(Self::Chinese),
            "standard" => Ok(Self::Standard),
            other => Err(format!("unknown analyzer {other:?}: expected auto, chinese or standard")),
        }
    }
}

/// How [`MilvusMemory`](crate::MilvusMemory) fuses the result lists of one retrieval: the
/// question's dense hits, the enriched query's dense hits (when the query has recent messages)
/// and the BM25 hits (hybrid mode).
///
/// The server rankers make a retrieval one `HybridSearch` request; [`Client`](Self::Client) sends
/// one search per list, concurrently, and fuses them with [`RerankConfig::fuse_query`] (weighted
/// RRF, the formula every mnemograph memory uses). Milvus's RRF ranker has no per-list weights,
/// and its weighted ranker weighs normalised scores rather than ranks, so neither is the client's
/// formula, and both rank worse on the bilingual quality benchmark (docs/benchmarks/milvus.md): the
/// client fusion is the default, a server ranker the choice of a caller who puts one round trip
/// before ranking. A server without `HybridSearch` (Milvus before 2.4) answers a server fusion
/// with `Unimplemented`; the memory then fuses in the client from that retrieval on.
///
/// ```
/// use mnemograph_memory_milvus::{HybridFusion, MilvusConfig};
/// let c = MilvusConfig::new("http://127.0.0.1:19530").fusion(HybridFusion::ServerRrf);
/// assert!(c.fusion.on_server());
/// assert_eq!(MilvusConfig::new("http://127.0.0.1:19530").fusion, HybridFusion::Client);
/// assert_eq!("weighted".parse::<HybridFusion>(), Ok(HybridFusion::ServerWeighted));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HybridFusion {
    /// One search per list, fused here by weighted RRF.
    #[default]
    Client,
    /// One `HybridSearch` with Milvus's weighted ranker over normalised scores (`norm_score`):
    /// the question's list at 1, the enriched query's at
    /// [`RerankConfig::context_weight`], the keyword list at [`RerankConfig::keyword_weight`].
    ServerWeighted,
    /// One `HybridSearch` with Milvus's RRF ranker at [`RerankConfig::rrf_k`]; every list
    /// counts the same.
    ServerRrf,
}

impl HybridFusion {
    /// Whether the server fuses (one request per retrieval).
    pub fn on_server(self) -> bool {
        self != Self::Client
    }
}

impl std::str::FromStr for HybridFusion {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "weighted" | "server-weighted" => Ok(Self::ServerWeighted),
            "rrf" | "server-rrf" => Ok(Self::ServerRrf),
            "client" => Ok(Self::Client),
            other => Err(format!("unknown fusion {other:?}: expected weighted, rrf or client")),
        }
    }
}

/// Where and how [`MilvusMemory`](crate::MilvusMemory) stores memories.
///
/// ```
/// use mnemograph_memory_milvus::{Consistency, MilvusConfig};
/// let c = MilvusConfig::new("http://127.0.0.1:19530").collection("agent_history").consistency(Consistency::Strong);
/// assert_eq!(c.hnsw_m, 16);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct MilvusConfig {
    /// gRPC endpoint, e.g. `http://127.0.0.1:19530`.
    pub url: String,
    /// `user:password` or an API key; `None` for an open server such as Milvus Lite.
    pub token: Option<String>,
    /// Collection name (default `agent_history`).
    pub collection: String,
    /// Metric of the HNSW index (default cosine).
    pub metric: Metric,
    /// HNSW `M` (default 16).
    pub hnsw_m: u32,
    /// HNSW `efConstruction` (default 200).
    pub ef_construction: u32,
    /// HNSW `ef` at search time (default 64).
    pub ef_search: u32,
    /// Make `user_id` the partition key, so a user's search touches one partition (default true).
    /// Searches filter on `user_id` either way.
    pub partition_key: bool,
    /// Partitions of the partition key (default 16).
    pub num_partitions: i64,
    /// Add the BM25 function and sparse field for hybrid search (default true).
    pub bm25: bool,
    /// Analyzer of `content` for BM25 at collection creation (default [`Analyzer::Auto`]). An
    /// existing collection keeps the one it was created with; see
    /// [`MilvusMemory::analyzer`](crate::MilvusMemory::analyzer).
    pub analyzer: Analyzer,
    /// Byte limit of `user_id` and `session_id` (default 256).
    pub id_max_bytes: u32,
    /// Byte limit of `content` (default 16384); longer content is truncated at a character
    /// boundary and marked `"truncated": true` in metadata rather than failing the write.
    pub content_max_bytes: u32,
    /// Read consistency (default bounded; tests use strong).
    pub consistency: Consistency,
    /// How hits are reranked.
    pub rerank: RerankConfig,
    /// How the lists of a retrieval are fused (default [`HybridFusion::Client`]).
    pub fusion: HybridFusion,
}

crate::collection::target_setters!(MilvusConfig);

impl MilvusConfig {
    /// The defaults above, for the server at `url`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            token: None,
            collection: "agent_history".to_owned(),
            metric: Metric::Cosine,
            hnsw_m: 16,
            ef_construction: 200,
            ef_search: 64,
            partition_key: true,
            num_partitions: 16,
            bm25: true,
            analyzer: Analyzer::Auto,
            id_max_bytes: 256,
            content_max_bytes: 16_384,
            consistency: Consistency::Bounded,
            rerank: RerankConfig::default(),
            fusion: HybridFusion::default(),
        }
    }
    /// Sets the metric.
    #[must_use]
    pub fn metric(mut self, metric: Metric) -> Self {
        self.metric = metric;
        self
    }
    /// Sets the reranking.
    #[must_use]
    pub fn rerank(mut self, rerank: RerankConfig) -> Self {
        self.rerank = rerank;
        self
    }
    /// Sets how the lists of a retrieval are fused.
    #[must_use]
    pub fn fusion(mut self, fusion: HybridFusion) -> Self {
        self.fusion = fusion;
        self
    }
    /// Turns the partition key on or off.
    #[must_use]
    pub fn partition_key(mut self, on: bool) -> Self {
        self.partition_key = on;
        self
    }
    /// Turns BM25 (and so hybrid search) on or off.
    #[must_use]
    pub fn bm25(mut self, on: bool) -> Self {
        self.bm25 = on;
        self
    }
    /// Sets the analyzer of `content`: an [`Analyzer`], or `analyzer_params` as JSON.
    #[must_use]
    pub fn analyzer(mut self, analyzer: impl Into<Analyzer>) -> Self {
        self.analyzer = analyzer.into();
        self
    }

    pub(crate) fn milvus_metric(&self) -> MetricType {
        match self.metric {
            Metric::Cosine => MetricType::Cosine,
            Metric::Ip => MetricType::Ip,
            Metric::L2 => MetricType::L2,
        }
    }

    /// The memory collection's schema for `dims`-long embeddings, with `analyzer`
    /// (`analyzer_params`) on `content` when BM25 is on.
    pub(crate) fn schema(&self, dims: usize, analyzer: &serde_json::Value) -> CollectionSchema {
        let varchar =
            |name: &str, max: u32| FieldSchema::new().name(name).data_type(DataType::VarChar).max_length(max);
        let mut content = varchar(fields::CONTENT, self.content_max_bytes);
        if self.bm25 {
            content = content.enable_analyzer(true).analyzer_params(analyzer.clone());
        }
        let mut schema = CollectionSchema::new()
            .add_field(
                FieldSchema::new()
                    .name(fields::ID)
                    .data_type(DataType::Int64)
                    .primary_key(true)
                    .auto_id(true),
            )
            .add_field(
                FieldSchema::new()
                    .name(fields::EMBEDDING)
                    .data_type(DataType::FloatVector)
                    .dimension(dims as u32),
            )
            .add_field(varchar(fields::USER_ID, self.id_max_bytes).partition_key(self.partition_key))
            .add_field(varchar(fields::SESSION_ID, self.id_max_bytes))
            .add_field(varchar(fields::TURN_ROLE, 64))
            .add_field(content)
            .add_field(FieldSchema::new().name(fields::CREATED_AT).data_type(DataType::Int64))
            .add_field(FieldSchema::new().name(fields::IMPORTANCE).data_type(DataType::Float))
            .add_field(FieldSchema::new().name(fields::METADATA).data_type(DataType::Json))
            // A default, so that a writer that does not know the field (an older version of this
            // crate during a rolling upgrade) still inserts live memories.
            .add_field(
                FieldSchema::new()
                    .name(fields::RETIRED)
                    .data_type(DataType::Bool)
                    .default_value(DefaultValue::Bool(false)),
            );
        if self.bm25 {
            schema = schema
                .add_field(FieldSchema::new().name(fields::SPARSE).data_type(DataType::SparseFloatVector))
                .add_function(
                    Function::new()
                        .name("content_bm25")
                        .function_type(FunctionType::Bm25)
                        .input_fields([fields::CONTENT])
                        .output_fields([fields::SPARSE]),
                );
        }
        schema
    }

    /// HNSW on `embedding`, BM25 on `sparse`, and a TRIE index on `user_id` (every search filters
    /// on the user, and a TRIE index makes that string match fast).
    pub(crate) fn index_params(&self) -> Vec<IndexParam> {
        let hnsw = HashMap::from([
            ("M".to_owned(), self.hnsw_m.to_string()),
            ("efConstruction".to_owned(), self.ef_construction.to_string()),
        ]);
        let mut params = vec![
            IndexParam::new()
                .field_name(fields::EMBEDDING)
                .index_type(IndexType::Hnsw)
                .metric_type(self.milvus_metric())
                .extra_params(hnsw),
            IndexParam::new().field_name(fields::USER_ID).index_type(IndexType::Trie),
        ];
        if self.bm25 {
            params.push(
                IndexParam::new()
                    .field_name(fields::SPARSE)
                    .index_type(IndexType::SparseInvertedIndex)
                    .metric_type(MetricType::Bm25)
                    .extra_params(HashMap::from([
                        ("bm25_k1".to_owned(), "1.2".to_owned()),
                        ("bm25_b".to_owned(), "0.75".to_owned()),
                    ])),
            );
        }
        params
    }
}
