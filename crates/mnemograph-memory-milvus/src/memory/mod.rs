//! [`MilvusMemory`]: the [`Memory`](mnemograph_memory::Memory) API over a Milvus collection whose fields are
//! listed in [`fields`](crate::fields).

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use milvus::v2::prelude::*;
use mnemograph_checkpoint::store::{DynEmbeddings, Embeddings};

use mnemograph_memory::backend::{validate_id, UserLocks};
use mnemograph_memory::{
    Error as MemoryError, MemoryRecord, NewerFirst, RetrieveQuery, SessionScope, SharedMemory, SUPERSEDED_BY,
};

use crate::collection::{self, Collection};
use crate::error::Result;
use crate::filter::Filter;
use crate::schema::{fields, HybridFusion, Metric, MilvusConfig};

mod api;
mod retire;
mod sessions;
mod version;

/// Scalar fields returned with every hit (`id` comes back as the primary key).
const OUTPUT: [&str; 7] = [
    fields::USER_ID,
    fields::SESSION_ID,
    fields::TURN_ROLE,
    fields::CONTENT,
    fields::CREATED_AT,
    fields::IMPORTANCE,
    fields::METADATA,
];

/// Milvus caps `offset + limit` of a query at 16384, so session listings page below it.
pub(crate) const QUERY_PAGE: usize = 4096;

/// Conversational memory in Milvus: one row per exchange, hybrid (dense + BM25) retrieval fused
/// with weighted RRF in the client or by Milvus in one request ([`HybridFusion`]), then time decay
/// and importance.
///
/// Every search, query and delete carries a `user_id == "…"` filter built by [`Filter`], so a user
/// id can never widen a request to other users. Works against Milvus Lite 3.2 and Milvus 2.5+/3.x;
/// it avoids the calls Milvus Lite lacks (filter templates, get/delete by ids, index waits).
#[derive(Clone)]
pub struct MilvusMemory {
    /// The SDK client; clones share one gRPC channel.
    client: ClientV2,
    config: MilvusConfig,
    embed: Arc<dyn DynEmbeddings>,
    /// Serializes retire/restore/delete per user among this value's clones (see [`Retire`](mnemograph_memory::Retire)).
    locks: UserLocks,
    /// The server's `GetVersion` answer, asked once and shared by clones: retirement checks it.
    server_version: Arc<OnceLock<String>>,
    /// The `analyzer_params` of the collection's `content`, as the server describes them.
    analyzer: Option<serde_json::Value>,
    /// Whether the collection has the `retired` field; without it (a collection created before
    /// the field existed) retirement lives in `metadata` alone.
    retired_field: bool,
    /// Set once the server answers `HybridSearch` with `Unimplemented`, shared by clones: from
    /// then on the lists are fused here without asking again.
    hybrid_refused: Arc<AtomicBool>,
    /// Moves newer restatements up, with the vectors this process stored or embedded again;
    /// shared by clones.
    pub(crate) newer_first: NewerFirst,
}

impl fmt::Debug for MilvusMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MilvusMemory")
            .field("config", &self.config)
            .field("dims", &DynEmbeddings::dims(&*self.embed))
            .field("analyzer", &self.analyzer)
            .field("retired_field", &self.retired_field)
            .finish_non_exhaustive()
    }
}

/// A Milvus memory as the run-time choice of backend.
impl From<MilvusMemory> for SharedMemory {
    fn from(memory: MilvusMemory) -> Self {
        Self::new(memory)
    }
}

impl MilvusMemory {
    /// Connects, and creates and loads the collection when it does not exist.
    ///
    /// # Errors
    /// [`Error::Milvus`](crate::Error::Milvus) when the server is unreachable or refuses the schema.
    pub async fn connect(config: MilvusConfig, embed: impl Embeddings) -> Result<Self> {
        Self::connect_arc(config, Arc::new(embed)).await
    }

    /// [`connect`](Self::connect) with a shared embedding model.
    ///
    /// # Errors
    /// As [`connect`](Self::connect).
    pub async fn connect_arc(config: MilvusConfig, embed: Arc<dyn DynEmbeddings>) -> Result<Self> {
        let client = collection::connect(&config.url, config.token.as_deref()).await?;
        let mut memory = Self {
            client,
            config,
            newer_first: NewerFirst::new(Arc::clone(&embed)),
            embed,
            locks: UserLocks::default(),
            server_version: Arc::default(),
            analyzer: None,
            retired_field: false,
            hybrid_refused: Arc::default(),
        };
        memory.ensure_collection().await?;
        let layout = memory.layout().await?;
        memory.analyzer = layout.analyzer;
        memory.retired_field = layout.retired_field;
        Ok(memory)
    }

    /// The configuration.
    pub fn config(&self) -> &MilvusConfig {
        &self.config
    }

    /// The `analyzer_params` of the collection's `content` field (the analyzer BM25 uses), as
    /// the server described them at connection: what [`Analyzer::Auto`](crate::Analyzer::Auto)
    /// chose, or what an existing collection was created with. `None` when BM25 is off or the
    /// server does not report them.
    pub fn analyzer(&self) -> Option<&serde_json::Value> {
        self.analyzer.as_ref()
    }

    /// Whether the collection has the [`fields::RETIRED`] flag, as described by the server at
    /// connection.
    ///
    /// True for every collection this version creates: retirement then sets the flag along with
    /// the `superseded_by` marks in `metadata`, and the default scope filters on
    /// `retired == false`. False for a collection created before the flag existed: it keeps
    /// working unchanged, retirement writes the marks alone and the default scope filters on
    /// `not exists metadata["superseded_by"]`, which Milvus Lite evaluates by reading every
    /// row's JSON, far slower as the collection grows (see docs/benchmarks/milvus.md). Such a
    /// collection is not migrated: Milvus Lite 3.2 has no `AddCollectionField`, and copying the
    /// rows into a new collection is the way to give it the flag.
    pub fn retired_field(&self) -> bool {
        self.retired_field
    }

    /// The fusion retrievals use: the configured [`MilvusConfig::fusion`], or
    /// [`HybridFusion::Client`] once the server has answered `HybridSearch` with `Unimplemented`.
    pub fn fusion(&self) -> HybridFusion {
        if self.hybrid_refused.load(Ordering::Relaxed) {
            HybridFusion::Client
        } else {
            self.config.fusion
        }
    }

    /// Remembers that the server has no `HybridSearch`.
    pub(crate) fn refuse_hybrid(&self) {
        self.hybrid_refused.store(true, Ordering::Relaxed);
    }

    /// The SDK client, for operations this type does not wrap.
    pub fn client(&self) -> &ClientV2 {
        &self.client
    }

    /// The per-user locks of this value and its clones.
    pub(crate) fn locks(&self) -> &UserLocks {
        &self.locks
    }

    /// The server's version string (`v2.6.4`, `milvus_lite-3.2.2`), asked once per value and
    /// its clones.
    ///
    /// # Errors
    /// [`Error::Milvus`](crate::Error::Milvus).
    pub async fn server_version(&self) -> Result<String> {
        if let Some(v) = self.server_version.get() {
            return Ok(v.clone());
        }
        let answer = self.client.server_version(GetServerVersionRequest::builder().build()?).await?;
        // Two first calls may both ask; they get the same answer, so whichever is kept is right.
        Ok(self.server_version.get_or_init(|| answer.version().to_owned()).clone())
    }

    async fn ensure_collection(&self) -> Result<()> {
        if !self.collection().exists().await? {
            let candidates = if self.config.bm25 {
                self.config.analyzer.candidates()
            } else {
                vec![serde_json::Value::Null]
            };
            first_accepted(&candidates, |analyzer| self.create_collection(analyzer)).await?;
        }
        self.collection().load().await
    }

    /// Creates the collection with `analyzer` on `content`.
    async fn create_collection(&self, analyzer: &serde_json::Value) -> Result<()> {
        let mut req = CreateCollectionRequest::builder()
            .collection_name(&self.config.collection)
            .schema(self.config.schema(DynEmbeddings::dims(&*self.embed), analyzer))
            // Indexes given at creation: `create_index` waits through `AllocTimestamp`,
            // which Milvus Lite does not implement.
            .index_params(self.config.index_params());
        if self.config.partition_key {
            req = req.num_partitions(self.config.num_partitions);
        }
        self.collection().create(req.build()?).await
    }

    /// What the collection's description says about its `content` analyzer and the `retired`
    /// flag.
    async fn layout(&self) -> Result<Layout> {
        let req = DescribeCollectionRequest::builder().collection_name(&self.config.collection).build()?;
        let described = self.client.describe_collection(req).await?;
        let schema = described.description().get_schema();
        let field = |name: &str| schema.get_fields().iter().find(|f| f.get_name() == name);
        // A `retired` field of another type is not this crate's flag: leave it alone.
        let retired_field = field(fields::RETIRED).is_some_and(|f| f.get_data_type() == DataType::Bool);
        let analyzer = match field(fields::CONTENT) {
            Some(content) if content.is_analyzer_enabled() => {
                Some(content.get_analyzer_params()?).filter(|p| !p.is_null())
            }
            _ => None,
        };
        Ok(Layout { analyzer, retired_field })
    }

    /// Drops the collection and everything in it.
    ///
    /// # Errors
    /// [`Error::Milvus`](crate::Error::Milvus).
    pub async fn drop_collection(&self) -> Result<()> {
        self.collection().drop().await
    }

    /// The memory's collection.
    fn collection(&self) -> Collection<'_> {
        Collection { client: &self.client, name: &self.config.collection }
    }

    /// Seals the rows written so far into indexed segments.
    ///
    /// Not needed for correctness (strong reads see unflushed rows) and not for the hot path, but
    /// call it after a bulk import: Milvus Lite searches unflushed rows by brute force, far slower
    /// than the indexed segments a flush builds. Real Milvus seals segments on its own.
    ///
    /// # Errors
    /// [`Error::Milvus`](crate::Error::Milvus).
    pub async fn flush(&self) -> Result<()> {
        self.collection().flush().await
    }

    /// How many memories `user_id` has.
    ///
    /// # Errors
    /// An invalid id; [`Error::Milvus`](crate::Error::Milvus).
    pub async fn count(&self, user_id: &str) -> Result<u64> {
        let res = self.query(user_filter(user_id)?, ["count(*)"], None).await?;
        let row = res
            .results()
            .rows()?
            .next()
            .ok_or_else(|| MemoryError::Response { detail: "empty count".into() })?;
        Ok(row.get_i64("count(*)")?.max(0) as u64)
    }

    pub(crate) async fn query<const N: usize>(
        &self,
        filter: Filter,
        output: [&str; N],
        page: Option<(usize, usize)>,
    ) -> Result<QueryResponse> {
        let mut req = QueryRequest::builder()
            .collection_name(&self.config.collection)
            .filter(filter.to_expr())
            .output_fields(output)
            .consistency_level(self.config.consistency.to_milvus());
        if let Some((offset, limit)) = page {
            req = req.offset(offset as i64).limit(limit as i64);
        }
        Ok(self.client.query(req.build()?).await?)
    }

    fn scope_filter(&self, query: &RetrieveQuery) -> Result<Filter> {
        let mut f = user_filter(&query.user_id)?;
        f = match &query.session {
            SessionScope::All => f,
            SessionScope::Only(s) => f.eq_str(fields::SESSION_ID, s)?,
            SessionScope::Exclude(s) => f.ne_str(fields::SESSION_ID, s)?,
        };
        if let Some(since) = query.since {
            f = f.gte_i64(fields::CREATED_AT, since);
        }
        if let Some(until) = query.until {
            f = f.lte_i64(fields::CREATED_AT, until);
        }
        if let Some(min) = query.min_importance {
            f = f.gte_f32(fields::IMPORTANCE, min);
        }
        if !query.include_retired {
            // Server-side, so retired rows take no candidate slots.
            f = self.live(f)?;
        }
        Ok(f)
    }

    /// `f` narrowed to memories that are not retired: on the flag when the collection has it,
    /// else on the `superseded_by` mark.
    pub(crate) fn live(&self, f: Filter) -> Result<Filter> {
        Ok(if self.retired_field {
            f.eq_bool(fields::RETIRED, false)
        } else {
            f.lacks_json_key(fields::METADATA, SUPERSEDED_BY)?
        })
    }

    /// The records of a search response with their relevance in `[0, 1]`, or with `raw` the
    /// server's scores as they are (BM25's are unbounded; fusion only compares them).
    fn scored_rows(&self, response: &SearchResponse, raw: bool) -> Result<Vec<(MemoryRecord, f64)>> {
        let mut out = Vec::new();
        for result in response.results() {
            let scores = result.get_scores();
            for (i, row) in result.rows()?.enumerate() {
                let score = scores.get(i).copied().unwrap_or(0.0);
                let score = if raw { f64::from(score) } else { self.relevance(score) };
                out.push((to_record(&row)?, score));
            }
        }
        Ok(out)
    }

    fn relevance(&self, score: f32) -> f64 {
        let s = f64::from(score);
        match self.config.metric {
            Metric::L2 => 1.0 / (1.0 + s.max(0.0)),
            Metric::Cosine | Metric::Ip => s.clamp(0.0, 1.0),
        }
    }

    fn check_dims(&self, v: &[f32]) -> Result<()> {
        let expected = DynEmbeddings::dims(&*self.embed);
        if v.len() == expected {
            Ok(())
        } else {
            Err(MemoryError::Dimensions { expected, actual: v.len() }.into())
        }
    }
}

/// The parts of a collection's description a memory adapts to.
struct Layout {
    /// The `analyzer_params` of `content`; `None` without BM25.
    analyzer: Option<serde_json::Value>,
    /// Whether the BOOL [`fields::RETIRED`] exists.
    retired_field: bool,
}

/// Runs `create` with each of `candidates` in turn until one succeeds: a server that rejects
/// an analyzer (an unknown tokenizer, jieba missing) gets the next one. The last error when none
/// is accepted.
async fn first_accepted<'a, E, Fut>(
    candidates: &'a [serde_json::Value],
    mut create: impl FnMut(&'a serde_json::Value) -> Fut,
) -> std::result::Result<(), E>
where
    Fut: Future<Output = std::result::Result<(), E>>,
{
    let mut last = None;
    for candidate in candidates {
        match create(candidate).await {
            Ok(()) => return Ok(()),
            Err(e) => last = Some(e),
        }
    }
    last.map_or(Ok(()), Err)
}

/// `user_id == "<escaped>"`: the clause every request starts from.
pub(crate) fn user_filter(user_id: &str) -> Result<Filter> {
    validate_id("user_id", user_id)?;
    Ok(Filter::new().eq_str(fields::USER_ID, user_id)?)
}

fn to_record(row: &ResultRow<'_>) -> Result<MemoryRecord> {
    Ok(MemoryRecord {
        id: row.get_i64(fields::ID)?,
        user_id: row.get_str(fields::USER_ID)?.to_owned(),
        session_id: row.get_str(fields::SESSION_ID)?.to_owned(),
        role: row.get_str(fields::TURN_ROLE)?.to_owned(),
        content: row.get_str(fields::CONTENT)?.to_owned(),
        created_at: row.get_i64(fields::CREATED_AT)?,
        importance: row.get_f32(fields::IMPORTANCE)?,
        metadata: row.get_json(fields::METADATA)?.as_object().cloned().unwrap_or_default(),
    })
}

/// Cuts `s` to at most `max` bytes at a character boundary.
fn truncate_bytes(s: &mut String, max: usize) -> bool {
    if s.len() <= max {
        return false;
    }
    let cut = (0..=max).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
    s.truncate(cut);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_respects_char_boundaries() {
        let mut s = "ab中文".to_owned(); // 2 + 3 + 3 bytes
        assert!(truncate_bytes(&mut s, 4));
        assert_eq!(s, "ab");
        let mut t = "short".to_owned();
        assert!(!truncate_bytes(&mut t, 5));
    }

    #[tokio::test]
    async fn auto_analyzer_falls_back_when_the_server_rejects_chinese() {
        use crate::Analyzer;
        let candidates = Analyzer::Auto.candidates();
        let mut tried = Vec::new();
        // A server without jieba: it refuses that tokenizer and takes the standard one.
        let chosen = std::sync::Mutex::new(None);
        let created = first_accepted(&candidates, |params| {
            tried.push(params["tokenizer"].clone());
            let ok = params["tokenizer"] != "jieba";
            if ok {
                *chosen.lock().unwrap() = Some(params.clone());
            }
            async move {
                if ok {
                    Ok(())
                } else {
                    Err("unknown tokenizer")
                }
            }
        })
        .await;
        assert_eq!(created, Ok(()));
        assert_eq!(tried, ["jieba", "standard"]);
        assert_eq!(chosen.into_inner().unwrap(), Analyzer::Standard.params());
        // A server that takes jieba keeps it; one that refuses everything reports its last refusal.
        let mut first = None;
        let created: std::result::Result<(), &str> = first_accepted(&candidates, |p| {
            first.get_or_insert_with(|| p.clone());
            async { Ok(()) }
        })
        .await;
        assert_eq!((created, first), (Ok(()), Analyzer::Chinese.params()));
        let refused = first_accepted(&candidates, |p| async move { Err(p["tokenizer"].clone()) }).await;
        assert_eq!(refused, Err(serde_json::json!("standard")));
        // A chosen analyzer is tried alone.
        assert_eq!(Analyzer::Standard.candidates(), [Analyzer::Standard.params().unwrap()]);
        assert_eq!("Auto".parse::<Analyzer>(), Ok(Analyzer::Auto));
        assert!("jieba".parse::<Analyzer>().is_err());
    }

    #[test]
    fn user_filter_escapes_and_validates() {
        assert_eq!(user_filter(r#"a"b"#).unwrap().to_expr(), r#"user_id == "a\"b""#);
        assert!(user_filter("").is_err());
        assert!(user_filter("a\nb").is_err());
    }
}
