//! [`Retire`] for [`EmbeddedMemory`]: rewrite the item with its marks.

use mnemograph_checkpoint::store::Store;
use serde_json::{Map, Value};

use super::{mark, unmark, Retire, Retirement};
use crate::embedded::{EmbeddedMemory, RETIRED};
use crate::error::Result;
use crate::record::validate_id;

impl<S: Store> EmbeddedMemory<S> {
    /// Applies `change` to the metadata of memory `id` of `user_id`; stores the item again when it
    /// reports a change. The caller holds the user's lock, so no other retire, restore or delete
    /// of this value (or its clones) runs between the read and the write. The top-level [`RETIRED`] flag mirrors the marks because the store's
    /// filter has `$ne` but no "key absent" operator: `{"retired": {"$ne": true}}` also matches
    /// memories written before retirement existed.
    async fn update_marks(
        &self,
        user_id: &str,
        id: i64,
        change: impl FnOnce(&mut Map<String, Value>) -> bool,
    ) -> Result<bool> {
        let ns = self.namespace(user_id);
        let key = id.to_string();
        let Some(item) = self.store().get(&ns, &key).await? else { return Ok(false) };
        let mut value = item.value;
        // The namespace is per user already; the field check is the second line, as in retrieval.
        if value.get("user_id").and_then(Value::as_str) != Some(user_id) {
            return Ok(false);
        }
        let Some(obj) = value.as_object_mut() else { return Ok(false) };
        let mut metadata = obj.get("metadata").and_then(Value::as_object).cloned().unwrap_or_default();
        if !change(&mut metadata) {
            return Ok(false);
        }
        obj.insert(RETIRED.into(), super::is_retired(&metadata).into());
        obj.insert("metadata".into(), Value::Object(metadata));
        // `put` re-embeds the content: the in-memory store keeps no vector to reuse. Retirements
        // are rare next to writes, so the cost is acceptable here.
        self.store().put(&ns, &key, value, None).await?;
        Ok(true)
    }
}

impl<S: Store> Retire for EmbeddedMemory<S> {
    async fn retire(&self, user_id: &str, retirements: &[Retirement]) -> Result<Vec<i64>> {
        validate_id("user_id", user_id)?;
        let _user = self.locks().lock(user_id).await;
        let mut done = Vec::new();
        for r in retirements {
            if self.update_marks(user_id, r.id, |m| mark(m, r)).await? {
                done.push(r.id);
            }
        }
        Ok(done)
    }

    async fn restore(&self, user_id: &str, ids: &[i64]) -> Result<Vec<i64>> {
        validate_id("user_id", user_id)?;
        let _user = self.locks().lock(user_id).await;
        let mut done = Vec::new();
        for &id in ids {
            if self.update_marks(user_id, id, unmark).await? {
                done.push(id);
            }
        }
        Ok(done)
    }
}
