//! The blog assistant served over LangGraph's HTTP API by mnemograph-server, with its graph
//! unchanged: the official SDK clients and chat UIs talk to it as to a Python deployment.
//!
//! What the application keeps is its own work, as [`ArchiveHooks`]: before a run, a thread whose
//! checkpoint is gone is rebuilt from the MySQL archive ([`recovery`](crate::recovery)) and the
//! round is set to commit once, at its end ([`snapshot`]); after a completed run, its question,
//! answer and citations are archived. What it stops writing is the rest of
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
use crate::config::Config;
use crate::corpus::Corpus;
use crate::error::Result;
use crate::recovery::{ensure_checkpoint, Recovery};
use crate::round::RoundLog;
use crate::{agent, model, snapshot};

/// The graph id the assistant is served as.
pub const GRAPH_ID: &str = "blog";

/// Cold-start recovery before a run, the archive after it.
#[derive(Debug, Clone)]
pub struct ArchiveHooks {
    archive: Archive,
}

impl ArchiveHooks {
    /// Hooks archiving into `archive`.
    pub fn new(archive: Archive) -> Self {
        Self { archive }
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
            let recovery = ensure_checkpoint(graph, &self.archive, &thread, &user_id, &session_id).await?;
            if let Recovery::Rebuilt(n) = recovery {
                tracing::info!(thread_id = %run.thread_id, messages = n, "thread rebuilt from the archive");
            }
            // A round commits once, when it completes: a cancelled round leaves the snapshot as
            // it was.
            *config = config.clone().durability(Durability::Exit);
            Ok(())
        })
    }

    fn after_run<'a>(
        &'a self,
        graph: &'a CompiledGraph<AgentState>,
        run: &'a RunContext,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if *end != RunEnd::Success {
                return;
            }
            let Ok((user_id, session_id)) = conversation(run) else { return };
            let state = match graph.get_state(&RunConfig::thread(run.thread_id.as_str())).await {
                Ok(s) => s,
                Err(e) => {
                    return tracing::warn!(thread_id = %run.thread_id, error = %e, "reading a finished round failed")
                }
            };
            let Some((question, log)) = RoundLog::of_messages(&state.values.messages) else { return };
            let Some(answer) = log.answer() else { return };
            if let Err(e) =
                self.archive.save_round(&user_id, &session_id, &question, answer, &log.citations()).await
            {
                tracing::warn!(thread_id = %run.thread_id, error = %e, "archiving a round failed");
            }
        })
    }
}

/// The assistant as a LangGraph API server: the agent as graph [`GRAPH_ID`] on the shallow
/// Redis saver, with [`ArchiveHooks`] on the MySQL archive, authenticating with the config's
/// bearer tokens when it has them.
///
/// # Errors
/// An unreachable Redis or MySQL, a model client that cannot be built, or a malformed token
/// table.
pub async fn server(config: &Config) -> Result<Server> {
    let corpus = Arc::new(Corpus::builtin()?);
    let saver = snapshot::connect_saver(config).await?;
    let archive = Archive::connect(&config.mysql_url).await?;
    let agent = agent::build(model::build(&config.model)?, &corpus, config.context_tokens, saver.clone())?;
    let server = Server::new(saver).graph_with_hooks(GRAPH_ID, agent, ArchiveHooks::new(archive))?;
    Ok(match &config.auth_tokens {
        Some(table) => server.with_auth(BearerTokens::parse(table)?),
        None => server,
    })
}
