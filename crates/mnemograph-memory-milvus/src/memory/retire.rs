//! [`Retire`] for [`MilvusMemory`]: a partial upsert of the `metadata` field, and of the `retired`
//! flag where the collection has it.

use milvus::v2::prelude::*;
use serde_json::{json, Map, Value};

use mnemograph_memory::backend::{is_retired, mark, unmark};
use mnemograph_memory::{Retire, Retirement};

use super::version::{self, Support};
use super::{user_filter, MilvusMemory};
use crate::error::Result;
use crate::schema::fields;

/// Ids per read-modify-write round: well below Milvus's 16384 query window.
const BATCH: usize = 1000;

impl MilvusMemory {
    /// Reads the metadata of the user's memories among `ids`, lets `change` edit each, and writes
    /// back the changed ones with a partial upsert (Milvus 2.6.2+, Milvus Lite 3.x), which keeps
    /// the id, the vectors and every other field; the [`fields::RETIRED`] flag, when the
    /// collection has it, is written in the same upsert to agree with the marks. The read is scoped by the escaped user filter, so
    /// another user's id is never read, let alone written.
    ///
    /// The whole read-modify-write holds the user's lock (see [`Retire`] for what that does and
    /// does not cover), and the read is strongly consistent whatever the configured level, so it
    /// sees the upsert of the call that held the lock before.
    ///
    /// # Errors
    /// [`Error::Unsupported`](crate::Error::Unsupported) before anything is written when the
    /// server is older than 2.6.2, or when a server of unknown version refuses the partial upsert
    /// as an old one does; [`Error::Milvus`](crate::Error::Milvus) otherwise.
    async fn update_marks(
        &self,
        user_id: &str,
        ids: &[i64],
        mut change: impl FnMut(i64, &mut Map<String, Value>) -> bool,
    ) -> Result<Vec<i64>> {
        let filter = user_filter(user_id)?;
        let mut done = Vec::new();
        if ids.is_empty() {
            return Ok(done);
        }
        let server = self.server_version().await?;
        let support = version::support(&server);
        if support == Support::No {
            return Err(version::unsupported(&server));
        }
        let _user = self.locks().lock(user_id).await;
        for chunk in ids.chunks(BATCH) {
            let query = QueryRequest::builder()
                .collection_name(&self.config().collection)
                .filter(filter.clone().in_i64(fields::ID, chunk).to_expr())
                .output_fields([fields::ID, fields::USER_ID, fields::METADATA])
                // Strong whatever the configured level: a bounded read could miss the marks the
                // previous holder of the lock just wrote, and overwrite them.
                .consistency_level(ConsistencyLevel::Strong)
                .build()?;
            let res = self.client().query(query).await?;
            let mut rows = Vec::new();
            for row in res.results().rows()? {
                let id = row.get_i64(fields::ID)?;
                let mut metadata = row.get_json(fields::METADATA)?.as_object().cloned().unwrap_or_default();
                if change(id, &mut metadata) {
                    // The flag follows the marks in the same row write, so the two never disagree.
                    let retired = is_retired(&metadata);
                    // `user_id` is sent although unchanged: it is the partition key, which routes
                    // the upsert to the row's partition.
                    let mut row = json!({
                        fields::ID: id,
                        fields::USER_ID: user_id,
                        fields::METADATA: Value::Object(metadata),
                    });
                    if self.retired_field() {
                        row[fields::RETIRED] = retired.into();
                    }
                    rows.push(row);
                    done.push(id);
                }
            }
            if rows.is_empty() {
                continue;
            }
            let insert =
                InsertRequest::builder().collection_name(&self.config().collection).rows(rows).build()?;
            let req = UpsertRequest::builder().insert(insert).partial_update(true).build()?;
            match self.client().upsert(req).await {
                Ok(_) => {}
                // Only a server whose version string could not be read gets this far without
                // support; its refusal then means "too old", and it wrote nothing.
                Err(e) if support == Support::Unknown => return Err(version::map_refusal(e, &server)),
                Err(e) => return Err(e.into()),
            }
        }
        // Rows come back in the server's order; report them in the caller's, as the embedded
        // memory does.
        done.sort_by_key(|id| ids.iter().position(|x| x == id));
        Ok(done)
    }
}

impl Retire for MilvusMemory {
    async fn retire(&self, user_id: &str, retirements: &[Retirement]) -> mnemograph_memory::Result<Vec<i64>> {
        let ids: Vec<i64> = retirements.iter().map(|r| r.id).collect();
        let retired = self.update_marks(user_id, &ids, |id, m| {
            // First retirement of an id wins, as in the embedded memory.
            retirements.iter().find(|r| r.id == id).is_some_and(|r| mark(m, r))
        });
        Ok(retired.await?)
    }

    async fn restore(&self, user_id: &str, ids: &[i64]) -> mnemograph_memory::Result<Vec<i64>> {
        Ok(self.update_marks(user_id, ids, |_, m| unmark(m)).await?)
    }
}
