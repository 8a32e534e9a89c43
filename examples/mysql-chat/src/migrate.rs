//! First-access migration of legacy conversations into checkpoints: a conversation that exists only
//! in the legacy `messages` table gets a thread whose first checkpoint holds its history, so the
//! model sees what was said before the service moved to checkpoints. New conversations start in the
//! checkpoint tables directly, and the legacy tables stay for display.

use mnemograph_agent::{AgentState, AgentStateUpdate, MODEL_NODE};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::{CheckpointConfig, Checkpointer};
use mnemograph_core::{CompiledGraph, RunConfig};
use sqlx::MySqlPool;

use crate::error::Result;
use crate::legacy;
use crate::lock::ConversationLock;

/// What [`ensure_thread`] found or did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThreadStatus {
    /// The thread already had a checkpoint.
    Existing,
    /// The legacy history was written as the thread's first checkpoint.
    Migrated {
        /// How many legacy messages it holds.
        messages: usize,
    },
    /// Neither a checkpoint nor legacy messages the model could be given: a new conversation.
    New,
}

/// Makes sure the conversation `lock` is for has a thread when it has history: migrates its
/// legacy messages with `update_state` when the thread has no checkpoint yet.
///
/// Idempotent: a thread that has a checkpoint is never migrated again. Safe under concurrent
/// first requests because the caller holds the conversation's lock, which is checked here at the
/// type level: the check for a checkpoint and the migration cannot interleave with another
/// round's, in this process or another, and a round that waited for the lock sees the checkpoint
/// the first one wrote.
///
/// The migrated history is written `as_node = "model"`, as if the model had produced the last
/// message, so the thread has nothing left to run (`next` is empty) and the next round starts
/// from a finished conversation. The checkpoint's metadata says `source = "update"`, `step = 0`.
///
/// Rows whose role has no chat message kind are left out (with a warning, see
/// [`legacy::to_chat_message`]); a conversation with only such rows is [`ThreadStatus::New`].
///
/// # Errors
/// Database and graph failures; nothing is written then.
pub async fn ensure_thread(
    lock: &ConversationLock,
    graph: &CompiledGraph<AgentState>,
    saver: &MySqlCheckpointer,
    pool: &MySqlPool,
) -> Result<ThreadStatus> {
    let conversation_id = lock.conversation_id();
    let thread_id = crate::thread_id(conversation_id);
    if saver.get_tuple(&CheckpointConfig::thread(thread_id.as_str())).await?.is_some() {
        return Ok(ThreadStatus::Existing);
    }
    let rows = legacy::messages(pool, conversation_id).await?;
    if rows.is_empty() {
        return Ok(ThreadStatus::New);
    }
    let history: Vec<_> = rows.iter().filter_map(legacy::to_chat_message).collect();
    if history.is_empty() {
        return Ok(ThreadStatus::New);
    }
    let count = history.len();
    graph
        .update_state(&RunConfig::thread(thread_id), AgentStateUpdate::messages(history), Some(MODEL_NODE))
        .await?;
    tracing::info!(conversation_id, messages = count, "migrated a legacy conversation into a checkpoint");
    Ok(ThreadStatus::Migrated { messages: count })
}
