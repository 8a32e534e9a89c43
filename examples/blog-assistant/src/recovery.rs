//! Recovery before each round: the two stores are brought back into agreement, both ways.
//!
//! **Cold start**: a thread whose checkpoint is gone (its 7-day TTL ran out, Redis was flushed
//! or restarted) is rebuilt from the MySQL archive before the next answer.
//!
//! **An unarchived round**: a round whose checkpoint reached Redis but whose archive
//! transaction did not commit (the process died in between, say) is archived from the
//! checkpoint, which carries it ([`ArchivingSaver::archive_latest_round`]), before the next
//! round adds its own rows after it.
//!
//! Lossy on purpose: only the last [`RECOVERY_LIMIT`] human/AI messages come back, as plain
//! messages. Tool calls and results are not in the archive, and a ToolMessage without the AI
//! call it answers would make the conversation invalid anyway.

use mnemograph_agent::{AgentState, AgentStateUpdate, MODEL_NODE};
use mnemograph_core::messages::Message;
use mnemograph_core::{CompiledGraph, RunConfig};

use crate::archive::Role;
use crate::archiving_saver::ArchivingSaver;
use crate::error::Result;

/// How many archived messages a rebuilt thread starts with.
pub const RECOVERY_LIMIT: u32 = 20;

/// What [`ensure_checkpoint`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// The thread has a checkpoint; nothing was done.
    Present,
    /// No checkpoint and nothing archived: a new conversation.
    Fresh,
    /// No checkpoint: rebuilt from this many archived messages.
    Rebuilt(usize),
}

/// Makes sure `config`'s thread has a checkpoint, rebuilding it from the archive when it has
/// none, and that the archive holds the round of the checkpoint it has
/// ([`ArchivingSaver::archive_latest_round`]: a round started on top of a round the archive
/// lacks would be archived before it, so a MySQL failure there stops the round). `saver` is
/// `agent`'s checkpointer.
///
/// The messages are written with `update_state` as if the model node had produced them: the
/// conversation ends with an AI answer, so the agent's routing after `model` sends it to the
/// end and the rebuilt checkpoint has no pending task; the next input starts a normal run.
///
/// # Errors
/// A Redis (checkpointer) or MySQL failure.
pub async fn ensure_checkpoint(
    agent: &CompiledGraph<AgentState>,
    saver: &ArchivingSaver,
    config: &RunConfig,
    user_id: &str,
    session_id: &str,
) -> Result<Recovery> {
    let snapshot = agent.get_state(config).await?;
    if snapshot.config.is_some() {
        saver.archive_latest_round(config.thread_id.as_deref().unwrap_or_default()).await?;
        return Ok(Recovery::Present);
    }
    let history = saver.archive().recent(user_id, session_id, RECOVERY_LIMIT).await?;
    if history.is_empty() {
        return Ok(Recovery::Fresh);
    }
    let seed: Vec<Message> = history
        .into_iter()
        .map(|m| match m.role {
            Role::Human => Message::human(m.content),
            Role::Ai => Message::ai(m.content),
        })
        .collect();
    let count = seed.len();
    agent.update_state(config, AgentStateUpdate::messages(seed), Some(MODEL_NODE)).await?;
    tracing::info!(user_id, session_id, messages = count, "cold start: thread rebuilt from the archive");
    Ok(Recovery::Rebuilt(count))
}
