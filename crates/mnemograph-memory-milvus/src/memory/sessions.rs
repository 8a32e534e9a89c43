//! [`Sessions`] for [`MilvusMemory`]: the user's live rows, read in pages and tallied per session.

use mnemograph_memory::backend::tally_sessions;
use mnemograph_memory::{SessionInfo, Sessions};

use super::{user_filter, MilvusMemory, QUERY_PAGE};
use crate::error::Result;
use crate::schema::fields;

impl Sessions for MilvusMemory {
    async fn sessions(&self, user_id: &str) -> mnemograph_memory::Result<Vec<SessionInfo>> {
        Ok(self.live_sessions(user_id).await?)
    }
}

impl MilvusMemory {
    /// The sessions of `user_id` with a live memory, read in pages.
    async fn live_sessions(&self, user_id: &str) -> Result<Vec<SessionInfo>> {
        let mut rows: Vec<(String, String, i64)> = Vec::new();
        loop {
            let filter = self.live(user_filter(user_id)?)?;
            let output = [fields::SESSION_ID, fields::TURN_ROLE, fields::CREATED_AT];
            let res = self.query(filter, output, Some((rows.len(), QUERY_PAGE))).await?;
            let before = rows.len();
            for row in res.results().rows()? {
                rows.push((
                    row.get_str(fields::SESSION_ID)?.to_owned(),
                    row.get_str(fields::TURN_ROLE)?.to_owned(),
                    row.get_i64(fields::CREATED_AT)?,
                ));
            }
            if rows.len() - before < QUERY_PAGE {
                break;
            }
        }
        Ok(tally_sessions(rows.iter().map(|(s, r, at)| (s.as_str(), r.as_str(), *at))))
    }
}
