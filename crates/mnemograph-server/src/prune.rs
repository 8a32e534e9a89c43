//! `POST /threads/prune`: deleting threads by id (`strategy = "delete"`), or keeping each
//! thread and its latest state while its older checkpoints go (`"keep_latest"`), as LangGraph's
//! server prunes them.

use mnemograph_core::checkpoint::{CheckpointError, PruneStrategy};
use serde::Deserialize;
use uuid::Uuid;

use crate::app::App;
use crate::auth::Grant;
use crate::error::{Result, ServerError};

/// The body of `POST /threads/prune`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Prune {
    /// The threads to prune.
    pub(crate) thread_ids: Option<Vec<String>>,
    /// `delete` (the default) or `keep_latest`.
    pub(crate) strategy: Option<String>,
}

impl Prune {
    /// The threads and the strategy; unprocessable (422) for a missing list, an id that is not a
    /// UUID or an unknown strategy, with LangGraph's messages.
    pub(crate) fn read(self) -> Result<(Vec<String>, PruneStrategy)> {
        let ids =
            self.thread_ids.ok_or_else(|| ServerError::Unprocessable("`thread_ids` is required".into()))?;
        for id in &ids {
            Uuid::parse_str(id)
                .map_err(|_| ServerError::Unprocessable("Invalid thread ID: must be a UUID".into()))?;
        }
        let strategy = match self.strategy.as_deref().unwrap_or("delete") {
            "delete" => PruneStrategy::Delete,
            "keep_latest" => PruneStrategy::KeepLatest,
            other => {
                return Err(ServerError::Unprocessable(format!(
                    "Invalid strategy: {other}. Expected 'delete' or 'keep_latest'."
                )))
            }
        };
        Ok((ids, strategy))
    }
}

/// Prunes the threads `ids` by `strategy`; how many were pruned.
///
/// A caller whose grant narrows what it sees prunes only when it reaches every thread named:
/// otherwise nothing is touched and the answer is not found (404), for a thread it may not see
/// as for one that does not exist, as LangGraph answers. A caller that sees everything has the
/// threads that do not exist skipped. `keep_latest` keeps each thread, its record and its
/// latest checkpoint of every namespace and removes the older ones; a saver that cannot prune
/// makes it unprocessable (422), as LangGraph's in-memory server answers it.
pub(crate) async fn prune(
    app: &App,
    ids: &[String],
    strategy: PruneStrategy,
    grant: &Grant,
) -> Result<usize> {
    let mut found = Vec::with_capacity(ids.len());
    for id in ids {
        match app.thread(id, grant).await {
            Ok(_) if !found.contains(id) => found.push(id.clone()),
            Ok(_) => {}
            Err(ServerError::NotFound(_)) if grant.filter().is_empty() => {}
            Err(ServerError::NotFound(_)) => {
                return Err(ServerError::NotFound("At least one thread not found or not authorized".into()))
            }
            Err(e) => return Err(e),
        }
    }
    match strategy {
        PruneStrategy::KeepLatest => {
            if found.is_empty() {
                return Ok(0);
            }
            match app.saver.prune(&found, PruneStrategy::KeepLatest).await {
                Ok(()) => Ok(found.len()),
                Err(CheckpointError::Unsupported { .. }) => Err(ServerError::Unprocessable(
                    "keep_latest strategy is not supported by this server's checkpointer".into(),
                )),
                Err(e) => Err(mnemograph_core::Error::from(e).into()),
            }
        }
        PruneStrategy::Delete => {
            let mut pruned = 0;
            for id in &found {
                match app.delete_thread(id, grant).await {
                    Ok(()) => pruned += 1,
                    // Deleted meanwhile.
                    Err(ServerError::NotFound(_)) => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(pruned)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(body: serde_json::Value) -> Result<(Vec<String>, PruneStrategy)> {
        serde_json::from_value::<Prune>(body).unwrap().read()
    }

    #[test]
    fn prune_reads_langgraphs_strategies() {
        let id = Uuid::now_v7().to_string();
        assert_eq!(read(json!({"thread_ids": [id]})).unwrap().1, PruneStrategy::Delete);
        assert_eq!(
            read(json!({"thread_ids": [], "strategy": "keep_latest"})).unwrap().1,
            PruneStrategy::KeepLatest
        );
        assert!(matches!(
            read(json!({"thread_ids": [], "strategy": "all"})),
            Err(ServerError::Unprocessable(_))
        ));
        assert!(matches!(read(json!({"thread_ids": ["x"]})), Err(ServerError::Unprocessable(_))));
        assert!(matches!(read(json!({})), Err(ServerError::Unprocessable(_))));
    }
}
