//! Listing a user's sessions, so a background job can pick those to compact without knowing their
//! ids beforehand.

use std::collections::BTreeMap;
use std::future::Future;

use mnemograph_checkpoint::store::{SearchQuery, Store};
use serde_json::json;

use crate::embedded::{record, EmbeddedMemory, RETIRED};
use crate::error::Result;
use crate::memory::Memory;
use crate::record::{validate_id, ROLE_EXCHANGE, ROLE_SUMMARY};

/// One session of a user as long-term memory holds it: its live (not retired) memories only.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// The session.
    pub session_id: String,
    /// Live exchanges: what [`compact_session`](crate::compact_session) would summarize.
    pub exchanges: usize,
    /// Live summaries.
    pub summaries: usize,
    /// `created_at` of its oldest live memory (seconds since the epoch).
    pub first_at: i64,
    /// `created_at` of its newest live memory: how long ago the session was last active.
    pub last_at: i64,
}

/// Lists the sessions of a user. A separate trait rather than a [`Memory`] method, so existing
/// `Memory` implementations keep compiling; both backends implement it.
pub trait Sessions: Memory {
    /// The sessions of `user_id` that hold at least one live memory, ordered by session id.
    /// Retired memories are not counted, and a session whose memories are all retired is left
    /// out.
    ///
    /// # Errors
    /// An invalid user id; backend failures. On Milvus, as for
    /// [`session_records`](Memory::session_records), a user is read in pages whose offset Milvus
    /// caps at 16384 rows.
    fn sessions(&self, user_id: &str) -> impl Future<Output = Result<Vec<SessionInfo>>> + Send;
}

/// Tallies `(session, role, created_at)` rows of live memories into [`SessionInfo`]s, ordered by
/// session id: what [`Sessions::sessions`] returns, from whatever rows a backend reads.
pub fn tally_sessions<'a>(rows: impl IntoIterator<Item = (&'a str, &'a str, i64)>) -> Vec<SessionInfo> {
    let mut by_session: BTreeMap<&str, SessionInfo> = BTreeMap::new();
    for (session, role, at) in rows {
        let info = by_session.entry(session).or_insert_with(|| SessionInfo {
            session_id: session.to_owned(),
            exchanges: 0,
            summaries: 0,
            first_at: at,
            last_at: at,
        });
        info.exchanges += usize::from(role == ROLE_EXCHANGE);
        info.summaries += usize::from(role == ROLE_SUMMARY);
        info.first_at = info.first_at.min(at);
        info.last_at = info.last_at.max(at);
    }
    by_session.into_values().collect()
}

impl<S: Store> Sessions for EmbeddedMemory<S> {
    async fn sessions(&self, user_id: &str) -> Result<Vec<SessionInfo>> {
        validate_id("user_id", user_id)?;
        let filter = json!({"user_id": user_id, RETIRED: {"$ne": true}});
        let query = SearchQuery::new().filter(filter).limit(usize::MAX);
        let hits = self.store().search(&self.namespace(user_id), query).await?;
        let records: Vec<_> = hits.iter().filter_map(|h| record(&h.value)).collect();
        Ok(tally_sessions(records.iter().map(|r| (r.session_id.as_str(), r.role.as_str(), r.created_at))))
    }
}

#[cfg(test)]
mod tests {
    use mnemograph_checkpoint::store::HashingEmbeddings;

    use super::*;
    use crate::record::NewMemory;
    use crate::retire::{Retire, Retirement};

    #[tokio::test]
    async fn lists_live_memories_per_session_of_one_user() {
        let memory = EmbeddedMemory::new(HashingEmbeddings::new(64));
        let turn =
            |user: &str, session: &str, at: i64| NewMemory::turn(user, session, "q", "a").created_at(at);
        let ids = memory
            .save(vec![
                turn("ada", "monday", 100),
                turn("ada", "monday", 300),
                turn("ada", "friday", 500),
                NewMemory::new("ada", "friday", ROLE_SUMMARY, "s").created_at(400),
                turn("ada", "gone", 50),
                turn("bob", "monday", 200),
            ])
            .await
            .unwrap();
        memory.retire("ada", &[Retirement::new(ids[4], ids[2], 600, "test")]).await.unwrap();

        let sessions = memory.sessions("ada").await.unwrap();
        let info = |id: &str, exchanges, summaries, first_at, last_at| SessionInfo {
            session_id: id.to_owned(),
            exchanges,
            summaries,
            first_at,
            last_at,
        };
        // `gone` holds only a retired memory; bob's session is bob's.
        assert_eq!(sessions, [info("friday", 1, 1, 400, 500), info("monday", 2, 0, 100, 300)]);
        assert!(memory.sessions("nobody").await.unwrap().is_empty());
        assert!(memory.sessions("").await.is_err());
    }
}
