//! `get`, `put` and `delete` of [`MilvusStore`], and the TTL refresh of reads.

use std::time::{Duration, SystemTime};

use milvus::v2::prelude::*;
use mnemograph_checkpoint::store::{texts_to_embed, validate_put, DynEmbeddings, Item, StoreError};
use serde_json::{json, Value};

use super::codec::{
    self, duration_millis, encode_namespace, fields, item_id, row_id, to_item, ALL_FIELDS, ITEM_FIELDS,
};
use super::expr::{item_rows, Expr};
use super::{backend, MilvusStore};
use mnemograph_memory::Error as MemoryError;

use crate::error::Result;

/// What a put learns about the rows already stored under its key.
struct Previous {
    /// `created_at` of the live item, if there is one.
    created_at: Option<i64>,
    /// How many rows (parts) the key has, live or expired.
    parts: usize,
}

impl MilvusStore {
    /// A query (no limit: every matching row) returning `output`.
    pub(super) async fn query(&self, filter: String, output: &[&str]) -> Result<QueryResponse> {
        let req = QueryRequest::builder()
            .collection_name(&self.config.collection)
            .filter(filter)
            .output_fields(output.iter().copied())
            .consistency_level(self.consistency());
        Ok(self.client.query(req.build()?).await?)
    }

    pub(super) async fn get_item(&self, namespace: &[String], key: &str) -> Result<Option<Item>, StoreError> {
        let now = codec::millis(SystemTime::now());
        let id = row_id(&item_id(&encode_namespace(namespace), key), 0);
        // The id holds only `[A-Za-z0-9-~./#]`: nothing to escape.
        let filter = Expr::live(now).and(format!(r#"{} == "{id}""#, fields::ID)).render();
        let output = [&ITEM_FIELDS[..], &[fields::TTL_MS]].concat();
        let res = self.query(filter, &output).await.map_err(backend)?;
        let Some(row) = res.results().rows().map_err(backend)?.next() else { return Ok(None) };
        let item = to_item(&row).map_err(backend)?;
        let ttl_ms = row.get_i64(fields::TTL_MS).map_err(backend)?;
        if self.config.ttl.refresh_on_read && ttl_ms > 0 {
            let updated = row.get_i64(fields::UPDATED_AT).map_err(backend)?;
            self.refresh(namespace, key, updated, now.saturating_add(ttl_ms)).await.map_err(backend)?;
        }
        Ok(Some(item))
    }

    /// Pushes the expiry of an item's rows to `expires_at`, rewriting them as they are.
    ///
    /// Only rows still at the version the read saw (`updated_at`) are rewritten, so a put that
    /// landed since is not overwritten; the remaining window is between this query and the upsert.
    async fn refresh(&self, namespace: &[String], key: &str, updated_at: i64, expires_at: i64) -> Result<()> {
        let filter = format!(
            "{} and {} == {updated_at}",
            item_rows(&encode_namespace(namespace), key),
            fields::UPDATED_AT
        );
        let res = self.query(filter, &ALL_FIELDS).await?;
        let mut rows = Vec::new();
        for row in res.results().rows()? {
            let mut row = row.to_entity_row()?;
            row.insert(fields::EXPIRES_AT.to_owned(), expires_at.into());
            rows.push(Value::Object(row));
        }
        self.upsert(rows).await
    }

    async fn upsert(&self, rows: Vec<Value>) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let insert = InsertRequest::builder().collection_name(&self.config.collection).rows(rows).build()?;
        self.client.upsert(UpsertRequest::builder().insert(insert).build()?).await?;
        Ok(())
    }

    async fn previous(&self, encoded_namespace: &str, key: &str, now: i64) -> Result<Previous> {
        let output = [fields::PART, fields::CREATED_AT, fields::EXPIRES_AT];
        let res = self.query(item_rows(encoded_namespace, key), &output).await?;
        let mut prev = Previous { created_at: None, parts: 0 };
        for row in res.results().rows()? {
            let part = usize::try_from(row.get_i64(fields::PART)?).unwrap_or(0);
            prev.parts = prev.parts.max(part + 1);
            if part == 0 && row.get_i64(fields::EXPIRES_AT)? > now {
                prev.created_at = Some(row.get_i64(fields::CREATED_AT)?);
            }
        }
        Ok(prev)
    }

    /// One vector per configured field present in `value` (none without an index).
    async fn embed(&self, value: &Value) -> Result<Vec<Vec<f32>>, StoreError> {
        let Some(index) = &self.index else { return Ok(Vec::new()) };
        let texts = texts_to_embed(&index.fields, value);
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let vectors =
            DynEmbeddings::embed_documents(&*index.embed, &texts).await.map_err(StoreError::Embedding)?;
        let expected = self.dims();
        if vectors.len() != texts.len() {
            let detail = format!("the model returned {} vectors for {} texts", vectors.len(), texts.len());
            return Err(StoreError::Embedding(Box::new(MemoryError::Response { detail })));
        }
        if let Some(v) = vectors.iter().find(|v| v.len() != expected) {
            return Err(StoreError::Embedding(Box::new(MemoryError::Dimensions {
                expected,
                actual: v.len(),
            })));
        }
        Ok(vectors)
    }

    pub(super) async fn put_item(
        &self,
        namespace: &[String],
        key: &str,
        value: Value,
        ttl: Option<Duration>,
    ) -> Result<(), StoreError> {
        validate_put(namespace, &value)?;
        let ns = encode_namespace(namespace);
        if ns.len() > self.config.namespace_max_bytes as usize {
            return Err(StoreError::InvalidNamespace {
                namespace: namespace.to_vec(),
                reason: "namespace is longer than the collection's namespace_max_bytes (encoded)",
            });
        }
        if key.len() > self.config.key_max_bytes as usize {
            return Err(backend(MemoryError::InvalidInput {
                what: "key",
                reason: "longer than key_max_bytes",
            }));
        }
        // Embed before any request: the model may be slow or fail, and then nothing is written.
        let vectors = self.embed(&value).await?;
        let now = self.clock.tick();
        let prev = self.previous(&ns, key, now).await.map_err(backend)?;
        let ttl_ms = ttl.or(self.config.ttl.default_ttl).map(duration_millis);
        let item = item_id(&ns, key);
        let row = |part: usize, vector: Option<&Vec<f32>>| {
            let embedding = vector.cloned().unwrap_or_else(|| placeholder(self.dims()));
            json!({
                fields::ID: row_id(&item, part),
                fields::PART: part,
                fields::NAMESPACE: ns,
                fields::KEY: key,
                fields::VALUE: value,
                fields::CREATED_AT: prev.created_at.unwrap_or(now),
                fields::UPDATED_AT: now,
                fields::EXPIRES_AT: ttl_ms.map_or(i64::MAX, |t| now.saturating_add(t)),
                fields::TTL_MS: ttl_ms.unwrap_or(0),
                fields::HAS_VECTOR: vector.is_some(),
                fields::EMBEDDING: embedding,
            })
        };
        let rows: Vec<Value> = if vectors.is_empty() {
            vec![row(0, None)]
        } else {
            vectors.iter().enumerate().map(|(part, v)| row(part, Some(v))).collect()
        };
        let parts = rows.len();
        self.upsert(rows).await.map_err(backend)?;
        if prev.parts > parts {
            // The previous value embedded more fields: drop its extra rows.
            let filter = format!("{} and {} >= {parts}", item_rows(&ns, key), fields::PART);
            self.delete_where(filter).await.map_err(backend)?;
        }
        self.maybe_sweep().await.map_err(backend)
    }

    pub(super) async fn delete_item(&self, namespace: &[String], key: &str) -> Result<(), StoreError> {
        self.delete_where(item_rows(&encode_namespace(namespace), key)).await.map_err(backend)
    }

    async fn delete_where(&self, filter: String) -> Result<()> {
        let req = DeleteRequest::builder().collection_name(&self.config.collection).filter(filter).build()?;
        self.client.delete(req).await?;
        Ok(())
    }
}

/// A unit vector for rows without an embedding: never searched (`has_vector` is false), but
/// Milvus needs a value, and a zero vector has no cosine.
fn placeholder(dims: usize) -> Vec<f32> {
    let mut v = vec![0.0; dims];
    if let Some(first) = v.first_mut() {
        *first = 1.0;
    }
    v
}
