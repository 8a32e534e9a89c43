//! The blog assistant served over LangGraph's HTTP API by mnemograph-server, with its graph
//! unchanged: the official SDK clients and chat UIs talk to it as to a Python deployment.
//!
//! What the application keeps is its own work, as [`ArchiveHooks`]: before a run, a thread whose
//! checkpoint is gone is rebuilt from the MySQL archive ([`recovery`](crate::recovery)), and the
//! round is set to commit once, at its end ([`snapshot`]), and names its conversation, so that
//! this commit archives its question, answer, citations and tool calls too
//! ([`archiving_saver`](crate::archiving_saver)). A round the archive refuses is a failed run:
//! the client gets the error, and neither store keeps the round. What it stops writing is the rest of
//! [`routes`](crate::routes), [`sse`](crate::sse) and [`locks`](crate::locks): streaming, run
//! bookkeeping, one run at a time per thread, cancellation and reconnection are the server's.
//!
//! A conversation is its user's and a session of theirs. The user is the caller the server
//! authenticated (`AUTH_TOKENS`), never what a client writes: each user reaches only its own
//! threads, and its rounds are archived and rebuilt under its own name. A server without tokens
//! serves one user, [`LOCAL_USER`], on loopback only. The session is named in the thread's
//! metadata, `{"session_id": ...}`, when the client creates it.

use std::sync::Arc;

use mnemograph_agent::AgentState;
use mnemograph_core::{BoxError, BoxFuture, CompiledGraph, Durability, RunConfig};
use mnemograph_server::auth::BearerTokens;
use mnemograph_server::{RunContext, RunEnd, RunHooks, Server};
use serde_json::Value;

use crate::archive::Archive;
use crate::archiving_saver::ArchivingSaver;
use crate::config::Config;
use crate::corpus::Corpus;
use crate::error::Result;
use crate::pending::{Conversation, PendingRounds};
use crate::recovery::{ensure_checkpoint, Recovery};
use crate::{agent, model, snapshot};

/// The graph id the assistant is served as.
pub const GRAPH_ID: &str = "blog";

/// Cold-start recovery and the round's conversation before a run; after it, what the run left
/// pending is forgotten.
#[derive(Debug, Clone)]
pub struct ArchiveHooks {
    /// The agent's checkpointer, whose archive recovery reads.
    saver: ArchivingSaver,
    /// Where the agent stages rounds for the archiving commit.
    pending: Arc<PendingRounds>,
}

impl ArchiveHooks {
    /// Hooks rebuilding from the archive of `saver`, the checkpointer of an agent staging
    /// rounds in `pending`.
    pub fn new(saver: ArchivingSaver, pending: Arc<PendingRounds>) -> Self {
        Self { saver, pending }
    }
}

/// The user of every conversation on a server without authentication.
pub const LOCAL_USER: &str = "local";

/// The conversation a run belongs to: the caller's, in the session its thread's metadata names.
fn conversation(run: &RunContext) -> std::result::Result<(String, String), BoxError> {
    let user = run.identity.as_ref().map_or(LOCAL_USER, |u| u.identity.as_str()).to_owned();
    match run.metadata.get("session_id").and_then(Value::as_str) {
        Some(session) if !session.is_empty() => Ok((user, session.to_owned())),
        _ => Err("the thread's metadata needs a non-empty `session_id`".into()),
    }
}

impl RunHooks<AgentState> for ArchiveHooks {
    fn before_run<'a>(
        &'a self,
        graph: &'a CompiledGraph<AgentState>,
        run: &'a RunContext,
        config: &'a mut RunConfig,
    ) -> BoxFuture<'a, std::result::Result<(), BoxError>> {
        Box::pin(async move {
            let (user_id, session_id) = conversation(run)?;
            let thread = RunConfig::thread(run.thread_id.as_str());
            let recovery = ensure_checkpoint(graph, &self.saver, &thread, &user_id, &session_id).await?;
            if let Recovery::Rebuilt(n) = recovery {
                tracing::info!(thread_id = %run.thread_id, messages = n, "thread rebuilt from the archive");
            }
            // A round commits once, when it completes, into both stores: a cancelled or failed
            // round leaves both as they were.
            let conversation = Conversation { user_id, session_id };
            *config = conversation.configure(config.clone().durability(Durability::Exit));
            Ok(())
        })
    }

    fn after_run<'a>(
        &'a self,
        _graph: &'a CompiledGraph<AgentState>,
        run: &'a RunContext,
        _end: &'a RunEnd,
    ) -> BoxFuture<'a, ()> {
        // The run has ended: a round it staged and did not commit must not be archived later.
        self.pending.discard(&run.thread_id);
        Box::pin(async {})
    }
}

/// The assistant as a LangGraph API server: the agent as graph [`GRAPH_ID`] on the shallow
/// Redis saver archiving each round into MySQL, with [`ArchiveHooks`], authenticating with the config's
/// bearer tokens when it has them.
///
/// # Errors
/// An unreachable Redis or MySQL, a model client that cannot be built, or a malformed token
/// table.
pub async fn server(config: &Config) -> Result<Server> {
    let corpus = Arc::new(Corpus::builtin()?);
    let redis = snapshot::connect_saver(config).await?;
    let archive = Archive::connect(&config.mysql_url).await?;
    let pending = Arc::new(PendingRounds::default());
    let saver = ArchivingSaver::new(redis, archive, Arc::clone(&pending));
    let model = model::build(&config.model)?;
    let agent = agent::build(model, &corpus, config.context_tokens, &pending, saver.clone())?;
    let hooks = ArchiveHooks::new(saver.clone(), pending);
    let server = Server::new(saver).graph_with_hooks(GRAPH_ID, agent, hooks)?;
    Ok(match &config.auth_tokens {
        Some(table) => server.with_auth(BearerTokens::parse(table)?),
        None => server,
    })
}
