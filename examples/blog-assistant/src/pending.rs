//! A round between its last node and its commit: what the archive will get, held in memory
//! until the checkpointer stores the round ([`ArchivingSaver`](crate::archiving_saver)).
//!
//! The agent names its conversation in the run's `configurable` ([`CONVERSATION_KEY`]). While
//! the round runs, [`LogToolCalls`](crate::tool_log::LogToolCalls) notes each tool call here;
//! [`StageRound`], the agent's last node, reads the question, answer and citations from the
//! final state and stages them with those calls. A round without an answer fails there, so it
//! is stored nowhere. Entries are keyed by thread: one round at a time runs on a thread (the
//! service's [`locks`](crate::locks), the API server's one run per thread). A staged round is
//! taken only by the commit of the step that staged it, so a round cut off between staging and
//! its commit is never archived by another commit on the thread (a cold-start rebuild's, say);
//! the next round on the thread discards it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use mnemograph_agent::{AgentState, Hook, HookResult, Middleware};
use mnemograph_core::{RunConfig, Runtime};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::corpus::Citation;
use crate::error::Error;
use crate::round::RoundLog;
use crate::tool_audit::ToolInvocation;

/// The `configurable` key naming a run's conversation: `{"user_id": ..., "session_id": ...}`.
pub const CONVERSATION_KEY: &str = "blog_conversation";

/// Whose conversation a round belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conversation {
    /// The user.
    pub user_id: String,
    /// The session.
    pub session_id: String,
}

impl Conversation {
    /// `config` naming this conversation.
    pub fn configure(&self, config: RunConfig) -> RunConfig {
        config
            .configurable(CONVERSATION_KEY, json!({ "user_id": self.user_id, "session_id": self.session_id }))
    }

    /// The conversation a run's `configurable` names, if it names one.
    pub fn of(configurable: &serde_json::Map<String, Value>) -> Option<Self> {
        let named = configurable.get(CONVERSATION_KEY)?;
        let field = |k: &str| named.get(k).and_then(Value::as_str).map(str::to_owned);
        Some(Self { user_id: field("user_id")?, session_id: field("session_id")? })
    }
}

/// A completed round waiting for its commit (and, once committed, the record its snapshot
/// checkpoint carries: see [`archiving_saver`](crate::archiving_saver)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StagedRound {
    /// Whose it is.
    pub conversation: Conversation,
    /// The checkpoint thread.
    pub thread_id: String,
    /// The question.
    pub question: String,
    /// The answer.
    pub answer: String,
    /// The answer's sources.
    pub citations: Vec<Citation>,
    /// The round's tool calls, in the order they ended.
    pub tools: Vec<ToolInvocation>,
}

/// The tool calls and the staged round of each busy thread.
#[derive(Debug, Default)]
pub struct PendingRounds {
    /// Per thread: tool calls of the running round, and the round once staged.
    threads: Mutex<HashMap<String, Pending>>,
}

/// See [`PendingRounds`].
#[derive(Debug, Default)]
struct Pending {
    /// Tool calls so far.
    tools: Vec<ToolInvocation>,
    /// The round and the step that staged it, once its last node ran.
    staged: Option<(i64, StagedRound)>,
}

impl PendingRounds {
    /// Notes a finished tool call of the round running on `thread_id`.
    pub fn note_tool(&self, thread_id: &str, call: ToolInvocation) {
        self.lock().entry(thread_id.to_owned()).or_default().tools.push(call);
    }

    /// Stages `thread_id`'s round at `step`, taking the tool calls noted for it.
    fn stage(&self, thread_id: &str, step: i64, make: impl FnOnce(Vec<ToolInvocation>) -> StagedRound) {
        let mut threads = self.lock();
        let pending = threads.entry(thread_id.to_owned()).or_default();
        let tools = std::mem::take(&mut pending.tools);
        pending.staged = Some((step, make(tools)));
    }

    /// Takes `thread_id`'s round if it was staged at `step` (the step of the checkpoint being
    /// committed).
    pub fn take_staged(&self, thread_id: &str, step: i64) -> Option<StagedRound> {
        let mut threads = self.lock();
        if threads.get(thread_id)?.staged.as_ref().is_none_or(|(at, _)| *at != step) {
            return None;
        }
        threads.remove(thread_id).and_then(|p| p.staged).map(|(_, round)| round)
    }

    /// Forgets what `thread_id`'s rounds left (a round starts, or one ended).
    pub fn discard(&self, thread_id: &str) {
        self.lock().remove(thread_id);
    }

    /// How many threads have something pending.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Pending>> {
        self.threads.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The agent's first and last nodes around the archive: `before_agent` forgets what an earlier
/// round on the thread left, `after_agent` stages the round for the commit. A run that names
/// no conversation (the agent on its own, without the service) is not archived.
#[derive(Debug, Clone)]
pub struct StageRound {
    /// Where rounds wait.
    pending: Arc<PendingRounds>,
}

impl StageRound {
    /// Staging into `pending`.
    pub fn new(pending: Arc<PendingRounds>) -> Self {
        Self { pending }
    }
}

impl Middleware for StageRound {
    fn name(&self) -> &str {
        "stage_round"
    }

    fn hooks(&self) -> &'static [Hook] {
        &[Hook::BeforeAgent, Hook::AfterAgent]
    }

    async fn before_agent(&self, _state: &AgentState, runtime: &Runtime) -> HookResult {
        if let Some(thread_id) = runtime.thread_id() {
            self.pending.discard(thread_id);
        }
        Ok(None)
    }

    async fn after_agent(&self, state: &AgentState, runtime: &Runtime) -> HookResult {
        let (Some(thread_id), Some(conversation)) =
            (runtime.thread_id(), Conversation::of(runtime.configurable()))
        else {
            return Ok(None);
        };
        let Some((question, log)) = RoundLog::of_messages(&state.messages) else {
            return Err(Error::NoAnswer.into());
        };
        // Failing here fails the run: nothing is committed to Redis, nothing archived.
        let answer = log.answer().ok_or(Error::NoAnswer)?.to_owned();
        let citations = log.citations();
        self.pending.stage(thread_id, runtime.step(), |tools| StagedRound {
            conversation,
            thread_id: thread_id.to_owned(),
            question,
            answer,
            citations,
            tools,
        });
        Ok(None)
    }
}
