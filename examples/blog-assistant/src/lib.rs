//! The blog assistant service: SSE chat over a Redis checkpointer with a MySQL archive and
//! cold-start recovery. Needs Redis and MySQL/MariaDB; see the README.
//!
//! Two stores, two jobs:
//! - **Redis** holds the running snapshot of each conversation (thread `user_id:session_id`):
//!   its latest checkpoint only, written once per completed round ([`snapshot`]), trimmed before
//!   every model call and expiring 7 days after its last write;
//! - **MySQL** (`chat_messages`) keeps every completed round's question, answer and citations
//!   for good, with its tool calls in `tool_invocations`: it serves `GET /history` and rebuilds
//!   a thread whose checkpoint is gone.
//!
//! A completed round goes to both in one commit, or to neither ([`archiving_saver`]).
//!
//! Modules, one concept each: [`config`], [`corpus`] and [`tools`] (the blog and its two
//! tools), [`tool_output`] and [`tool_log`] (around each tool call), [`model`]
//! (OpenAI-compatible or offline), [`agent`] (the graph), [`snapshot`] (what Redis keeps),
//! [`archive`], [`tool_audit`] and [`archived_rounds`] (what MySQL keeps), [`pending`] and
//! [`archiving_saver`] (a round into both stores), [`recovery`] (the stores brought back into
//! agreement before a round), [`locks`] (one round per thread at a time), [`round`] and
//! [`sse`] (a round as events, stream safety), [`routes`], [`web`]. [`api`] serves the same
//! agent over LangGraph's HTTP API instead (`cargo run -p blog-assistant --bin
//! blog-langgraph-api`).

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod agent;
pub mod api;
pub mod archive;
pub mod archived_rounds;
pub mod archiving_saver;
pub mod config;
pub mod corpus;
mod error;
pub mod locks;
pub mod model;
pub mod pending;
pub mod recovery;
pub mod round;
pub mod routes;
pub mod snapshot;
pub mod sse;
pub mod tool_audit;
pub mod tool_log;
pub mod tool_output;
pub mod tools;
pub mod web;

use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use mnemograph_agent::AgentState;
use mnemograph_core::CompiledGraph;
use mnemograph_models::SharedChatModel;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use config::{Config, ModelChoice};
pub use error::{Error, Result};

use crate::archive::Archive;
use crate::archiving_saver::ArchivingSaver;
use crate::corpus::Corpus;
use crate::locks::ThreadLocks;
use crate::pending::PendingRounds;

/// The running service's shared parts; cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct App {
    /// What every handler shares.
    inner: Arc<Inner>,
}

/// See [`App`].
struct Inner {
    /// The agent, checkpointing to Redis.
    agent: CompiledGraph<AgentState>,
    /// The agent's checkpointer, archiving into MySQL.
    saver: ArchivingSaver,
    /// The blog.
    corpus: Arc<Corpus>,
    /// One round at a time per thread.
    locks: ThreadLocks,
    /// Rounds between their last node and their commit.
    pending: Arc<PendingRounds>,
    /// How many threads were rebuilt from the archive since start-up.
    rebuilds: AtomicU64,
}

impl fmt::Debug for App {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("App").field("agent", &self.inner.agent).finish_non_exhaustive()
    }
}

impl App {
    /// Connects to Redis and MySQL (creating the archive table), builds the model and the
    /// agent.
    ///
    /// # Errors
    /// An unreachable Redis or MySQL, a bad `MYSQL_URL`, or a model client that cannot be built.
    pub async fn connect(config: &Config) -> Result<Self> {
        Self::connect_with_model(config, model::build(&config.model)?).await
    }

    /// As [`connect`](Self::connect), answering with `model` instead of the configured one.
    ///
    /// # Errors
    /// An unreachable Redis or MySQL, or a bad `MYSQL_URL`.
    pub async fn connect_with_model(config: &Config, model: SharedChatModel) -> Result<Self> {
        let corpus = Arc::new(Corpus::builtin()?);
        let redis = snapshot::connect_saver(config).await?;
        let archive = Archive::connect(&config.mysql_url).await?;
        let pending = Arc::new(PendingRounds::default());
        let saver = ArchivingSaver::new(redis, archive, Arc::clone(&pending));
        let agent = agent::build(model, &corpus, config.context_tokens, &pending, saver.clone())?;
        let (locks, rebuilds) = (ThreadLocks::default(), AtomicU64::new(0));
        Ok(Self { inner: Arc::new(Inner { agent, saver, corpus, locks, pending, rebuilds }) })
    }

    /// The agent graph (its checkpointer is the Redis saver).
    pub fn agent(&self) -> &CompiledGraph<AgentState> {
        &self.inner.agent
    }

    /// The MySQL archive.
    pub fn archive(&self) -> &Archive {
        self.inner.saver.archive()
    }

    /// The agent's checkpointer: Redis, archiving each round into MySQL.
    pub fn saver(&self) -> &ArchivingSaver {
        &self.inner.saver
    }

    /// The blog.
    pub fn corpus(&self) -> &Corpus {
        &self.inner.corpus
    }

    /// The per-thread round locks.
    pub fn locks(&self) -> &ThreadLocks {
        &self.inner.locks
    }

    /// Rounds between their last node and their commit.
    pub fn pending(&self) -> &Arc<PendingRounds> {
        &self.inner.pending
    }

    /// How many threads were rebuilt from the archive since start-up.
    pub fn rebuilds(&self) -> u64 {
        self.inner.rebuilds.load(Ordering::Relaxed)
    }

    /// Counts one rebuild.
    pub(crate) fn note_rebuild(&self) {
        self.inner.rebuilds.fetch_add(1, Ordering::Relaxed);
    }

    /// The HTTP routes.
    pub fn router(&self) -> axum::Router {
        routes::router(self.clone())
    }
}

/// A service running in a background task (what the tests start).
#[derive(Debug)]
pub struct Server {
    /// Where it listens.
    addr: SocketAddr,
    /// The serving task; aborted on drop.
    task: JoinHandle<std::io::Result<()>>,
}

impl Server {
    /// Binds `bind` (port 0 picks a free port) and serves `app` in a background task.
    ///
    /// # Errors
    /// [`Error::Io`] when the address cannot be bound.
    pub async fn spawn(app: &App, bind: &str) -> Result<Self> {
        let listener = TcpListener::bind(bind).await?;
        let addr = listener.local_addr()?;
        let router = app.router();
        let task = tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(Self { addr, task })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://{addr}`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What both binaries do around their work: log lines at `info` (or `RUST_LOG`) on stdout, spans
/// and metrics over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, then `work`, whose error is
/// logged with its causes. The telemetry guard is held to the end: dropping it exports the last
/// spans.
pub async fn run_main(
    service: &'static str,
    work: impl std::future::Future<Output = Result<()>>,
) -> std::process::ExitCode {
    use mnemograph_telemetry::{LogWriter, Telemetry};
    let telemetry = Telemetry::builder()
        .service_name(service)
        .service_version(env!("CARGO_PKG_VERSION"))
        .default_filter("info")
        .log_writer(LogWriter::Stdout)
        .build()
        .and_then(Telemetry::install);
    let _telemetry = match telemetry {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match work.await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{}", e.chain());
            std::process::ExitCode::FAILURE
        }
    }
}

/// Runs the service until Ctrl-C: connects, binds `config.bind`, serves.
///
/// # Errors
/// As [`App::connect`], or when the address cannot be bound.
pub async fn serve(config: &Config) -> Result<()> {
    let app = App::connect(config).await?;
    let listener = TcpListener::bind(&config.bind).await?;
    tracing::info!(
        "blog assistant on http://{} (checkpoints: Redis, TTL {} days; archive: MySQL chat_messages)",
        listener.local_addr()?,
        config.checkpoint_ttl.as_secs() / 86_400
    );
    axum::serve(listener, app.router())
        .with_graceful_shutdown(async {
            // Without a signal handler (rare) the server simply runs until killed.
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        })
        .await?;
    Ok(())
}
