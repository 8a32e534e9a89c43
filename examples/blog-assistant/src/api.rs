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
//! A thread names its conversation in its metadata, `{"user_id": ..., "session_id": ...}`, set
//! when the client creates it.

use std::sync::Arc;

use mnemograph_agent::AgentState;
use mnemograph_core::{BoxError, BoxFuture, CompiledGraph, Durability, RunConfig};
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

/// The conversation a run belongs to, from its thread's metadata.
fn conversation(run: &RunContext) -> std::result::Result<(String, String), BoxError> {
    let field = |name: &str| run.metadata.get(name).and_then(Value::as_str).map(str::to_owned);
    match (field("user_id"), field("session_id")) {
        (Some(user), Some(session)) if !user.is_empty() && !session.is_empty() => Ok((user, session)),
        _ => Err("the thread's metadata needs a non-empty `user_id` and `session_id`".into()),
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
/// Redis saver, with [`ArchiveHooks`] on the MySQL archive.
///
/// # Errors
/// An unreachable Redis or MySQL, or a model client that cannot be built.
pub async fn server(config: &Config) -> Result<Server> {
    let corpus = Arc::new(Corpus::builtin()?);
    let saver = snapshot::connect_saver(config).await?;
    let archive = Archive::connect(&config.mysql_url).await?;
    let agent = agent::build(model::build(&config.model)?, &corpus, config.context_tokens, saver.clone())?;
    Ok(Server::new(saver).graph_with_hooks(GRAPH_ID, agent, ArchiveHooks::new(archive))?)
}
