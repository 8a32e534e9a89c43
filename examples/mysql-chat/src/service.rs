//! [`ChatService`]: one chat round = lock the conversation, migrate it if it is legacy-only, run
//! the agent graph on `thread_id = conv_{conversation_id}` (trimming its history to the token
//! budget), append the round to the legacy tables, prune the thread's older checkpoints, unlock.

use std::str::FromStr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mnemograph_agent::{
    create_agent, AgentBuilder, AgentState, AgentStateUpdate, TrimmingMiddleware, MODEL_NODE,
};
use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlConnectOptions, MySqlPoolOptions};
use mnemograph_core::checkpoint::{CheckpointConfig, Checkpointer};
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::prelude::*;
use mnemograph_models::{SharedChatModel, SharedTool};
use serde::{Deserialize, Serialize};
use sqlx::{MySqlPool, Row as _};
use tokio::sync::mpsc;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::legacy::{self, Conversation};
use crate::lock::{ConversationLock, ConversationQueues};
use crate::migrate::{self, ThreadStatus};

/// The system prompt, sent before the conversation on every model call and never stored.
pub const SYSTEM_PROMPT: &str = "You are a helpful assistant. Answer in the language of the user.";
/// The longest message accepted, in characters.
pub const MAX_MESSAGE_CHARS: usize = 32_000;
/// The longest conversation id accepted: `conv_` plus the id must fit a `GET_LOCK` name (64).
pub const MAX_CONVERSATION_ID_CHARS: usize = 59;

/// The agent the service runs: `create_agent` with the model, no tools, [`SYSTEM_PROMPT`], and
/// mnemograph-agent's [`TrimmingMiddleware`] keeping the checkpointed conversation within
/// `context_tokens`. Its graph is `START → trimming.before_model → model → END`.
///
/// The trimming node replaces the stored history with the turns that fit
/// (`RemoveMessage(REMOVE_ALL_MESSAGES)` and the kept messages), so the thread's latest
/// checkpoint stays bounded however long the conversation; the legacy `messages` table keeps
/// every message.
pub fn chat_agent(model: SharedChatModel, context_tokens: usize) -> AgentBuilder {
    create_agent(model, Vec::<SharedTool>::new())
        .system_prompt(SYSTEM_PROMPT)
        .middleware(TrimmingMiddleware::new(context_tokens))
}

/// The body of `POST /api/chat` and `POST /api/chat/stream`.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct ChatInput {
    /// The conversation; a new one (a UUID) is started when absent.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// The user's message.
    pub message: String,
}

impl ChatInput {
    /// A message for `conversation_id`.
    pub fn new(conversation_id: Option<String>, message: impl Into<String>) -> Self {
        Self { conversation_id, message: message.into() }
    }
}

/// The outcome of one round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Round {
    /// The conversation.
    pub conversation_id: String,
    /// Its thread, `conv_{conversation_id}`.
    pub thread_id: String,
    /// The model's answer.
    pub answer: String,
    /// Whether this round migrated the conversation's legacy history into the checkpoint.
    pub migrated: bool,
}

/// What a streamed round sends, in order: tokens, then `Done` or `Failed`.
#[derive(Debug)]
#[non_exhaustive]
pub enum RoundEvent {
    /// A piece of the answer.
    Token(String),
    /// The round finished and is saved (checkpoint and legacy tables).
    Done(Round),
    /// The round failed.
    Failed(Error),
}

/// A conversation for display: the legacy rows, and whether it has a checkpointed thread yet.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ConversationView {
    /// The conversation and its messages.
    #[serde(flatten)]
    pub conversation: Conversation,
    /// Its thread id.
    pub thread_id: String,
    /// Whether the thread has a checkpoint (false for a legacy conversation not yet migrated).
    pub checkpointed: bool,
}

/// What a conversation's thread occupies in the checkpoint tables: rows and bytes (checkpoint
/// documents with their metadata, blob and write values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ThreadFootprint {
    /// `checkpoints` rows.
    pub checkpoints: u64,
    /// `checkpoint_blobs` rows.
    pub blobs: u64,
    /// `checkpoint_writes` rows.
    pub writes: u64,
    /// Bytes of all three tables' documents and values.
    pub bytes: u64,
    /// Bytes of the `messages` blob of the latest checkpoint: the conversation the next round
    /// starts from.
    pub latest_messages_bytes: u64,
}

/// The chat service. Cloning is cheap: clones share everything.
#[derive(Clone)]
pub struct ChatService {
    /// Shared by clones and by the tasks running rounds.
    inner: Arc<Inner>,
}

/// What every round uses.
struct Inner {
    /// The agent, checkpointed in MySQL.
    graph: CompiledGraph<AgentState>,
    /// The checkpointer (also the graph's), for reads outside a run.
    saver: MySqlCheckpointer,
    /// The checkpointer's pool, also used for the legacy tables.
    pool: MySqlPool,
    /// A separate pool for conversation locks, so waiting rounds cannot starve working ones.
    locks: MySqlPool,
    /// Rounds waiting for a conversation that already has one in flight wait here, without a
    /// connection, so one conversation holds at most one lock connection.
    queues: ConversationQueues,
    /// How long a round waits for its conversation's lock.
    lock_wait: Duration,
    /// Checkpoints kept per thread after each round.
    keep_checkpoints: usize,
}

impl std::fmt::Debug for ChatService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatService")
            .field("saver", &self.inner.saver)
            .field("lock_wait", &self.inner.lock_wait)
            .field("keep_checkpoints", &self.inner.keep_checkpoints)
            .finish_non_exhaustive()
    }
}

impl ChatService {
    /// Connects to `config.mysql_url`, creates or upgrades the checkpoint tables
    /// ([`MySqlCheckpointer::setup`]) and the legacy tables, and builds the agent on `model`.
    ///
    /// # Errors
    /// Connection, setup and graph compilation failures.
    pub async fn connect(config: &Config, model: SharedChatModel) -> Result<Self> {
        let saver = MySqlCheckpointer::connect(&config.mysql_url).await?;
        saver.setup().await?;
        legacy::setup(saver.pool()).await?;
        let locks = MySqlPoolOptions::new()
            .max_connections(config.lock_connections)
            .acquire_timeout(config.lock_wait)
            .connect_with(MySqlConnectOptions::from_str(&config.mysql_url)?)
            .await?;
        Self::new(saver, locks, model, config)
    }

    /// A service over an existing saver (whose tables are set up) and lock pool, with the lock
    /// wait, token budget and checkpoints kept of `config` (its URL and address are not used).
    ///
    /// # Errors
    /// [`Error::Graph`] if the agent does not compile.
    pub fn new(
        saver: MySqlCheckpointer,
        locks: MySqlPool,
        model: SharedChatModel,
        config: &Config,
    ) -> Result<Self> {
        let graph = chat_agent(model, config.context_tokens).compile_with(saver.clone())?;
        let pool = saver.pool().clone();
        Ok(Self {
            inner: Arc::new(Inner {
                graph,
                saver,
                pool,
                locks,
                queues: ConversationQueues::default(),
                lock_wait: config.lock_wait,
                keep_checkpoints: config.keep_checkpoints.max(1),
            }),
        })
    }

    /// The compiled agent graph.
    pub fn graph(&self) -> &CompiledGraph<AgentState> {
        &self.inner.graph
    }

    /// The checkpointer.
    pub fn saver(&self) -> &MySqlCheckpointer {
        &self.inner.saver
    }

    /// Runs one round and returns the answer once it is saved.
    ///
    /// The round runs in its own task: if the caller goes away (an HTTP client disconnecting),
    /// it still finishes, so the checkpoint and the legacy tables never disagree about it.
    ///
    /// # Errors
    /// Invalid input, [`Error::Busy`], and model, graph or database failures.
    pub async fn chat(&self, input: ChatInput) -> Result<Round> {
        let (conversation_id, message) = validate(input)?;
        let inner = Arc::clone(&self.inner);
        tokio::spawn(async move { inner.round(conversation_id, message, None).await }).await.map_err(|e| {
            tracing::error!(error = %e, "chat round task failed");
            Error::RoundAborted
        })?
    }

    /// Starts a round whose answer is streamed: the receiver gets [`RoundEvent::Token`]s, then
    /// one [`RoundEvent::Done`] after the round is saved, or one [`RoundEvent::Failed`].
    ///
    /// Dropping the receiver does not stop the round (see [`chat`](Self::chat)).
    ///
    /// # Errors
    /// Invalid input; later failures arrive as [`RoundEvent::Failed`].
    pub fn chat_stream(&self, input: ChatInput) -> Result<mpsc::UnboundedReceiver<RoundEvent>> {
        let (conversation_id, message) = validate(input)?;
        let inner = Arc::clone(&self.inner);
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let last = match inner.round(conversation_id, message, Some(&tx)).await {
                Ok(round) => RoundEvent::Done(round),
                Err(e) => {
                    tracing::error!(error = %e.chain(), "streamed round failed");
                    RoundEvent::Failed(e)
                }
            };
            // Nobody listening any more is fine: the round is saved either way.
            let _ = tx.send(last);
        });
        Ok(rx)
    }

    /// A conversation for display.
    ///
    /// # Errors
    /// [`Error::NotFound`] for an unknown id; database failures.
    pub async fn conversation(&self, conversation_id: &str) -> Result<ConversationView> {
        validate_conversation_id(conversation_id)?;
        let not_found = || Error::NotFound { conversation_id: conversation_id.to_owned() };
        let conversation =
            legacy::conversation(&self.inner.pool, conversation_id).await?.ok_or_else(not_found)?;
        let thread_id = crate::thread_id(conversation_id);
        let checkpointed =
            self.inner.saver.get_tuple(&CheckpointConfig::thread(thread_id.as_str())).await?.is_some();
        Ok(ConversationView { conversation, thread_id, checkpointed })
    }

    /// What the conversation's thread occupies in the checkpoint tables now.
    ///
    /// # Errors
    /// Invalid id; database failures.
    pub async fn footprint(&self, conversation_id: &str) -> Result<ThreadFootprint> {
        validate_conversation_id(conversation_id)?;
        let thread_id = crate::thread_id(conversation_id);
        let row = sqlx::query(FOOTPRINT)
            .bind(&thread_id)
            .bind(&thread_id)
            .bind(&thread_id)
            .bind(&thread_id)
            .bind(&thread_id)
            .bind(&thread_id)
            .bind(&thread_id)
            .fetch_one(&self.inner.pool)
            .await?;
        let number =
            |name: &str| -> Result<u64> { Ok(u64::try_from(row.try_get::<i64, _>(name)?).unwrap_or(0)) };
        let (checkpoint_bytes, blob_bytes, write_bytes) =
            (number("checkpoint_bytes")?, number("blob_bytes")?, number("write_bytes")?);
        Ok(ThreadFootprint {
            checkpoints: number("checkpoints")?,
            blobs: number("blobs")?,
            writes: number("writes")?,
            bytes: checkpoint_bytes + blob_bytes + write_bytes,
            latest_messages_bytes: number("latest_messages_bytes")?,
        })
    }
}

/// Rows and bytes of one thread (bound seven times), each sum as a signed integer.
const FOOTPRINT: &str = "SELECT
    (SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?) AS checkpoints,
    (SELECT CAST(COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) AS SIGNED)
        FROM checkpoints WHERE thread_id = ?) AS checkpoint_bytes,
    (SELECT COUNT(*) FROM checkpoint_blobs WHERE thread_id = ?) AS blobs,
    (SELECT CAST(COALESCE(SUM(LENGTH(`blob`)), 0) AS SIGNED)
        FROM checkpoint_blobs WHERE thread_id = ?) AS blob_bytes,
    (SELECT COUNT(*) FROM checkpoint_writes WHERE thread_id = ?) AS writes,
    (SELECT CAST(COALESCE(SUM(LENGTH(`blob`)), 0) AS SIGNED)
        FROM checkpoint_writes WHERE thread_id = ?) AS write_bytes,
    CAST(COALESCE((SELECT LENGTH(b.`blob`) FROM checkpoint_blobs b
        JOIN (SELECT thread_id, checkpoint_ns,
                JSON_UNQUOTE(JSON_EXTRACT(checkpoint, '$.channel_versions.messages')) AS version
              FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''
              ORDER BY checkpoint_id DESC LIMIT 1) c
          ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns
         AND b.channel = 'messages' AND b.version = c.version), 0) AS SIGNED) AS latest_messages_bytes";

impl Inner {
    /// One round, holding the conversation's lock from before the migration check until the
    /// round is saved and pruned: rounds of one conversation run one after another, in every
    /// process. Within this process they first queue without a connection, so only the round
    /// at the head of a conversation's queue waits in `GET_LOCK`.
    async fn round(
        &self,
        conversation_id: String,
        message: String,
        tokens: Option<&mpsc::UnboundedSender<RoundEvent>>,
    ) -> Result<Round> {
        let started = Instant::now();
        // Held until the round is over (dropped last), so the next round of this conversation in
        // this process only then asks for a lock connection.
        let _turn = self.queues.wait(&conversation_id, self.lock_wait).await?;
        let remaining = self.lock_wait.saturating_sub(started.elapsed());
        let lock = ConversationLock::acquire(&self.locks, &conversation_id, remaining).await?;
        let outcome = self.round_locked(&lock, &message, tokens).await;
        // Released after a failure too; if releasing fails, the guard closes its connection,
        // which frees the lock just the same.
        if let Err(e) = lock.release().await {
            tracing::warn!(conversation_id, error = %e.chain(), "could not release the conversation lock");
        }
        outcome
    }

    async fn round_locked(
        &self,
        lock: &ConversationLock,
        message: &str,
        tokens: Option<&mpsc::UnboundedSender<RoundEvent>>,
    ) -> Result<Round> {
        let conversation_id = lock.conversation_id();
        let status = migrate::ensure_thread(lock, &self.graph, &self.saver, &self.pool).await?;
        let thread_id = crate::thread_id(conversation_id);
        // The id also lands in each checkpoint's metadata, where SQL can filter on it.
        let config = RunConfig::thread(thread_id.as_str()).metadata("conversation_id", conversation_id);
        let input = AgentStateUpdate::from(Message::human(message));
        let state = match tokens {
            None => self.graph.invoke(input, &config).await?.into_state(),
            Some(tx) => self.stream_round(input, &config, tx).await?,
        };
        let answer = state
            .messages
            .last()
            .filter(|m| m.kind() == MessageType::Ai)
            .map(Message::text)
            .ok_or(Error::NoAnswer)?;
        legacy::append_round(&self.pool, conversation_id, message, &answer).await?;
        // Under the lock no other round writes to the thread. The round is saved already, so a
        // failed prune only leaves more rows until the next round's prune removes them.
        if let Err(e) = self.saver.prune(&thread_id, self.keep_checkpoints).await {
            tracing::warn!(conversation_id, error = %e, "could not prune the thread's older checkpoints");
        }
        let migrated = matches!(status, ThreadStatus::Migrated { .. });
        Ok(Round { conversation_id: conversation_id.to_owned(), thread_id, answer, migrated })
    }

    /// Runs the graph streaming the model's tokens to `tx`; returns the final state.
    async fn stream_round(
        &self,
        input: AgentStateUpdate,
        config: &RunConfig,
        tx: &mpsc::UnboundedSender<RoundEvent>,
    ) -> Result<AgentState> {
        let mut events =
            self.graph.stream(Input::Update(input), config).modes([StreamMode::Messages, StreamMode::Values]);
        let mut last = None;
        while let Some(event) = events.next().await {
            match event? {
                StreamEvent::Messages { chunk, metadata } if &*metadata.node == MODEL_NODE => {
                    let text = chunk.text();
                    if !text.is_empty() {
                        // A closed channel means the client left; the round goes on regardless.
                        let _ = tx.send(RoundEvent::Token(text));
                    }
                }
                StreamEvent::Values(state) => last = Some(state),
                _ => {}
            }
        }
        last.ok_or(Error::NoAnswer)
    }
}

/// Checks a request and picks the conversation id (a new UUID when none was given).
fn validate(input: ChatInput) -> Result<(String, String)> {
    let chars = input.message.chars().count();
    if input.message.trim().is_empty() {
        return Err(Error::EmptyMessage);
    }
    if chars > MAX_MESSAGE_CHARS {
        return Err(Error::MessageTooLong { chars, max: MAX_MESSAGE_CHARS });
    }
    let id = input.conversation_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    validate_conversation_id(&id)?;
    Ok((id, input.message))
}

/// Conversation ids are ASCII letters, digits, `-` and `_` (UUIDs in practice), at most
/// [`MAX_CONVERSATION_ID_CHARS`] long: they become lock names and thread ids verbatim.
fn validate_conversation_id(id: &str) -> Result<()> {
    let invalid = |reason| Err(Error::InvalidConversationId { id: id.to_owned(), reason });
    if id.is_empty() {
        return invalid("it is empty");
    }
    if id.len() > MAX_CONVERSATION_ID_CHARS {
        return invalid("it is longer than 59 characters");
    }
    if !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return invalid("only ASCII letters, digits, '-' and '_' are allowed");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_validated() {
        let ok = validate(ChatInput::new(Some("0aec2add-0d09-4777-9c71-7a1f695294b5".into()), "hi")).unwrap();
        assert_eq!(ok.0, "0aec2add-0d09-4777-9c71-7a1f695294b5");
        let fresh = validate(ChatInput::new(None, "hi")).unwrap();
        assert_eq!(fresh.0.len(), 36, "a new UUID");
        assert!(matches!(validate(ChatInput::new(None, " \n")), Err(Error::EmptyMessage)));
        let long = "x".repeat(MAX_MESSAGE_CHARS + 1);
        assert!(matches!(validate(ChatInput::new(None, long)), Err(Error::MessageTooLong { .. })));
        for bad in ["", "a'b", "x".repeat(60).as_str(), "对话"] {
            let err = validate(ChatInput::new(Some(bad.to_owned()), "hi")).unwrap_err();
            assert!(matches!(err, Error::InvalidConversationId { .. }), "{bad:?}");
        }
    }

    #[test]
    fn the_agent_graph_is_start_trimming_model_end() {
        use mnemograph_models::ChatModelExt;
        let graph = chat_agent(crate::OfflineModel.shared(), 1000).compile().unwrap();
        assert_eq!(graph.node_names().collect::<Vec<_>>(), [START, MODEL_NODE, "trimming.before_model"]);
    }
}
