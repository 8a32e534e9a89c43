//! [`Server`]: registers compiled graphs on one saver and one store, and serves them.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use mnemograph_core::checkpoint::{Checkpointer, DynCheckpointer};
use mnemograph_core::store::{DynStore, InMemoryStore, Store, TtlConfig};
use mnemograph_core::{CompiledGraph, State};
use tokio::net::TcpListener;

use crate::app::App;
use crate::assistant::AssistantRecord;
use crate::auth::{Auth, Authenticator};
use crate::backend::{Backend, InProcess, Setup};
use crate::error::{Result, ServerError};
use crate::events::EVENT_RETENTION;
use crate::guard::{Authority, Hosts, Policy};
use crate::hooks::{NoHooks, RunHooks};
use crate::limits::Limits;
use crate::registered::RegisteredGraph;
use crate::retention::Retention;
use crate::schemas::GraphSchemas;
use crate::served::{Served, ServedGraph};
use crate::webhook::Webhooks;

/// Builds a served graph once the saver and the store are known.
type Bind = Box<dyn FnOnce(&Arc<dyn DynCheckpointer>, &Arc<dyn DynStore>) -> Arc<dyn ServedGraph> + Send>;

/// A LangGraph API server over compiled graphs.
///
/// Every graph runs on the server's saver (threads live there) and store (what nodes reach
/// through their runtime is what `/store` serves), and gets a system assistant whose id is
/// derived from the graph's id exactly as LangGraph's server derives it, so clients may name a
/// graph by either. Thread and run records are kept in the process; checkpoints are in the saver.
pub struct Server {
    saver: Arc<dyn DynCheckpointer>,
    store: Arc<dyn DynStore>,
    event_retention: Duration,
    retention: Retention,
    /// Whether `store` is the server's own in-memory store, which `store_ttl` configures.
    own_store: bool,
    store_ttl: Option<TtlConfig>,
    graphs: Vec<(String, Bind)>,
    /// The JSON Schemas given for graphs, by graph id.
    schemas: Vec<(String, GraphSchemas)>,
    guard: Policy,
    limits: Limits,
    auth: Authenticator,
    /// Whether the server may serve a non-loopback address without authentication.
    unauthenticated: bool,
    webhooks: Webhooks,
    /// How often the cron scheduler looks for due crons.
    cron_poll: Duration,
    /// Where the records live and who runs the runs.
    backend: Box<dyn Backend>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let graphs: Vec<&str> = self.graphs.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("Server").field("graphs", &graphs).finish_non_exhaustive()
    }
}

impl Server {
    /// A server whose threads are checkpointed in `saver`, with an in-memory store.
    pub fn new(saver: impl Checkpointer) -> Self {
        Self::with_shared_saver(Arc::new(saver))
    }

    /// A server on a saver shared with other code.
    pub fn with_shared_saver(saver: Arc<dyn DynCheckpointer>) -> Self {
        Self {
            saver,
            store: Arc::new(InMemoryStore::new()),
            event_retention: EVENT_RETENTION,
            retention: Retention::default(),
            own_store: true,
            store_ttl: None,
            graphs: Vec::new(),
            schemas: Vec::new(),
            guard: Policy::default(),
            limits: Limits::default(),
            auth: None,
            unauthenticated: false,
            webhooks: Webhooks::default(),
            cron_poll: crate::cron::CRON_POLL_INTERVAL,
            backend: Box::new(InProcess),
        }
    }

    /// Uses `store` for `/store` and for the graphs' nodes (an in-memory store by default).
    #[must_use]
    pub fn with_store(self, store: impl Store) -> Self {
        self.with_shared_store(Arc::new(store))
    }

    /// Uses a store shared with other code.
    #[must_use]
    pub fn with_shared_store(mut self, store: Arc<dyn DynStore>) -> Self {
        self.store = store;
        self.own_store = false;
        self
    }

    /// Keeps a finished run's events readable for `retention` (a minute by default): long enough
    /// for a client to join the stream of a run that just ended or to reconnect with
    /// `Last-Event-ID`, short enough that memory does not grow with every run ever made. The
    /// run's record and the thread's state stay.
    #[must_use]
    pub fn with_event_retention(mut self, retention: Duration) -> Self {
        self.event_retention = retention;
        self
    }

    /// Answers requests addressed to `hosts` as well as to the loopback names (`localhost` and
    /// the names under it, `127.0.0.1`, `[::1]`, at any port), which are always answered.
    /// A host listed without a port is answered at any port, one listed with a port
    /// (`agents.example.com:8443`) only at that port. A request addressed to any other host is
    /// refused with 421 Misdirected Request: a page that re-points its own domain at this
    /// machine (DNS rebinding) reaches the server under its own name, and is refused.
    #[must_use]
    pub fn allowed_hosts<I: IntoIterator<Item = H>, H: AsRef<str>>(mut self, hosts: I) -> Self {
        let listed: Vec<Authority> = hosts.into_iter().map(|h| Authority::parse(h.as_ref())).collect();
        self.guard.hosts = match self.guard.hosts {
            Hosts::Any => Hosts::Any,
            Hosts::Listed(mut old) => {
                old.extend(listed);
                Hosts::Listed(old)
            }
            Hosts::Loopback => Hosts::Listed(listed),
        };
        self
    }

    /// Answers requests addressed to any host, for a server behind a proxy that checks `Host`
    /// itself.
    #[must_use]
    pub fn allow_any_host(mut self) -> Self {
        self.guard.hosts = Hosts::Any;
        self
    }

    /// Lets pages of `origins` (exactly as browsers send them, `https://app.example.com` or
    /// `http://localhost:3000`) call the API from a browser: preflight requests from them are
    /// answered, and the responses to them carry `Access-Control-Allow-Origin`. Pages of other
    /// origins may not call it (CORS is off until origins are listed), and their requests that
    /// would change something are refused with 403. Behind a proxy that rewrites `Host`, list the
    /// server's own public origin here for its pages in browsers that do not send
    /// `Sec-Fetch-Site`.
    #[must_use]
    pub fn cors_origins<I: IntoIterator<Item = O>, O: Into<String>>(mut self, origins: I) -> Self {
        self.guard.cors_origins.extend(origins.into_iter().map(Into::into));
        self
    }

    /// Authenticates every request but `/ok` and `/info` with `auth`, and lets each caller see
    /// and change only what `auth` grants it (by default, what it created): see [`crate::auth`].
    #[must_use]
    pub fn with_auth(mut self, auth: impl Auth) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Lets [`Server::serve`] listen on an address other than loopback without authentication,
    /// for a server behind a proxy that authenticates, or on a private network whose every host
    /// may see and change every thread. Without this, such a server refuses to start.
    #[must_use]
    pub fn allow_unauthenticated(mut self) -> Self {
        self.unauthenticated = true;
        self
    }

    /// Posts a run's final record to the `webhook` its request names when the run ends, for the
    /// targets `policy` allows (see the crate's documentation on webhooks). Without this, a run
    /// naming a webhook is refused with 422: the server sends nothing to an address the deployer
    /// did not choose.
    ///
    /// # Errors
    /// [`ServerError::Misconfigured`] when a rule of `policy` is not a host or an absolute
    /// `http(s)` URL, its timeout or attempts are zero, or the HTTP client cannot be built.
    #[cfg(feature = "webhooks")]
    #[cfg_attr(docsrs, doc(cfg(feature = "webhooks")))]
    pub fn with_webhooks(mut self, policy: crate::WebhookPolicy) -> Result<Self> {
        self.webhooks = Webhooks::new(policy)?;
        Ok(self)
    }

    /// Caps what one request may ask of the server ([`Limits::default`] otherwise).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Keeps a finished run's record (with the request that made it) for `retention`, an hour by
    /// default ([`RUN_RETENTION`](crate::RUN_RETENTION)). After it the run is gone: reading,
    /// joining or streaming it answers 404 as for a run that never existed, and it leaves its
    /// thread's run list; the thread and its state stay. Its events go with it when this is
    /// shorter than the event retention. Memory is freed by the sweeper
    /// ([`Server::with_sweep_interval`]); reads see the run gone at once. With a cluster, the
    /// sweepers of its processes delete such runs from its database every sweep interval.
    #[must_use]
    pub fn with_run_retention(mut self, retention: Duration) -> Self {
        self.retention.runs = retention;
        self
    }

    /// Lets a run keep `bytes` of droppable events for clients that join its stream late or
    /// reconnect with `Last-Event-ID`, 1 MiB by default
    /// ([`EVENT_LOG_BYTES`](crate::EVENT_LOG_BYTES)).
    ///
    /// Clients streaming a run as it happens, and keeping up with it, get every event, whatever
    /// this says. A client that falls more than a few hundred events behind continues from the
    /// kept events, and so may miss the droppable events dropped meanwhile (`messages-tuple`
    /// chunks among them; a `messages/partial` it misses is made up by the next, which carries
    /// the whole message). A client that
    /// joins late or reconnects with `Last-Event-ID` gets the kept events with a greater id, in
    /// order, then the live ones; ids are a run's event sequence numbers, so they only increase
    /// even where events were not kept. Kept are:
    /// - the `metadata` event, every `messages/metadata`, and any `error`;
    /// - of each message, only its latest `messages/partial` or `messages/complete`, which
    ///   carries the whole message so far: a reconnecting client gets every message whole,
    ///   as far as the run has produced it, without the partials before;
    /// - the newest `values`;
    /// - the other events (`updates`, earlier `values`, `messages` tuples, `custom`, `tasks`,
    ///   `checkpoints`, `debug`) while all kept events weigh at most `bytes` (JSON text); past
    ///   it, the oldest of these go first.
    #[must_use]
    pub fn with_event_log_bytes(mut self, bytes: usize) -> Self {
        self.retention.event_log_bytes = bytes;
        self
    }

    /// Deletes the threads not updated for `ttl`, with their runs and checkpoints: LangGraph's
    /// `checkpointer.ttl` in `langgraph.json` with `"strategy": "delete"` and `default_ttl`
    /// (there in minutes). Off by default, as in LangGraph: threads stay until deleted.
    ///
    /// A thread is updated when it is created, when its metadata is patched, and when a run on
    /// it ends. A thread with a run in progress or waiting is never deleted. Expired threads are
    /// deleted by the sweeper, every sweep interval ([`Server::with_sweep_interval`], LangGraph's
    /// `sweep_interval_minutes`). With a cluster, the sweepers of its processes delete such
    /// threads from its database, and their checkpoints from the saver.
    #[must_use]
    pub fn with_thread_ttl(mut self, ttl: Duration) -> Self {
        self.retention.thread_ttl = Some(ttl);
        self
    }

    /// Expires store items as LangGraph's `store.ttl` in `langgraph.json` says: `default_ttl` is
    /// the TTL of a `/store/items` put that gives none (a put's own `ttl` wins), and
    /// `refresh_on_read` whether reads push expiry out again. Off by default: items stay.
    ///
    /// On the server's own in-memory store (no [`Server::with_store`]), the store itself is built
    /// with `config`, so the graphs' nodes' puts get the default TTL too, and the sweeper frees
    /// expired items every sweep interval. A store given with [`Server::with_store`] keeps its
    /// own expiry settings for everything but `/store` puts' default TTL.
    #[must_use]
    pub fn with_store_ttl(mut self, config: TtlConfig) -> Self {
        self.retention.store_ttl = config.default_ttl;
        self.store_ttl = Some(config);
        self
    }

    /// Sweeps every `interval` (a minute by default, [`SWEEP_INTERVAL`](crate::SWEEP_INTERVAL)):
    /// frees the runs, run events, threads and store items that outlived their retention or TTL.
    /// Reads see expired runs and run events gone at once; the interval bounds how long their
    /// memory stays, and how late an expired thread is deleted.
    #[must_use]
    pub fn with_sweep_interval(mut self, interval: Duration) -> Self {
        self.retention.sweep_interval = interval;
        self
    }

    /// Looks for due crons every `interval`: five seconds by default
    /// ([`CRON_POLL_INTERVAL`](crate::CRON_POLL_INTERVAL)), as LangGraph's
    /// `CRON_SCHEDULER_SLEEP_TIME`. A tick's run is made up to this late. A shorter interval suits
    /// schedules with seconds (a sixth field) and tests; each look is one query of the crons that
    /// are due, so a cluster's database is asked once per interval per process.
    #[must_use]
    pub fn with_cron_poll_interval(mut self, interval: Duration) -> Self {
        self.cron_poll = interval;
        self
    }

    /// Keeps the records and runs the runs in `backend` instead of in this process, such as a
    /// cluster of processes serving the same threads (`mnemograph_server_cluster::Cluster`):
    /// thread and run records in its database, runs through its queue to whichever process has
    /// room, a run's events reaching the client from any process. A backend that names a saver
    /// replaces the one given to [`Server::new`].
    ///
    /// Every process of a cluster must serve the same graphs on the same saver, and on a store
    /// they share (the default in-memory store is each process's own). The backend's workers
    /// start with [`Server::router`] or [`Server::serve`], inside the Tokio runtime.
    #[must_use]
    pub fn with_backend(mut self, backend: impl Backend) -> Self {
        if let Some(saver) = backend.saver() {
            self.saver = saver;
        }
        self.backend = Box::new(backend);
        self
    }

    /// Serves `graph` as `graph_id`, on the server's saver and store.
    ///
    /// # Errors
    /// [`ServerError::Conflict`] when `graph_id` is already taken.
    pub fn graph<S: State, C: Send + Sync + 'static>(
        self,
        graph_id: impl Into<String>,
        graph: CompiledGraph<S, C>,
    ) -> Result<Self> {
        self.graph_with_hooks(graph_id, graph, NoHooks)
    }

    /// Serves `graph` as `graph_id`, calling `hooks` around each of its runs.
    ///
    /// # Errors
    /// [`ServerError::Conflict`] when `graph_id` is already taken.
    pub fn graph_with_hooks<S: State, C: Send + Sync + 'static>(
        mut self,
        graph_id: impl Into<String>,
        graph: CompiledGraph<S, C>,
        hooks: impl RunHooks<S, C>,
    ) -> Result<Self> {
        let graph_id = graph_id.into();
        if self.graphs.iter().any(|(id, _)| *id == graph_id) {
            return Err(ServerError::Conflict(format!("a graph is already served as `{graph_id}`")));
        }
        let bind: Bind = Box::new(move |saver, store| {
            let graph = graph.with_shared_checkpointer(saver.clone()).with_shared_store(store.clone());
            Arc::new(Served { graph: Arc::new(graph), hooks: Arc::new(hooks) })
        });
        self.graphs.push((graph_id, bind));
        Ok(self)
    }

    /// Serves `schemas` as the JSON Schemas of the graph served as `graph_id` and of its
    /// subgraphs (`/assistants/{id}/schemas`, `/assistants/{id}/subgraphs`), in place of its
    /// state's field names.
    ///
    /// # Errors
    /// [`ServerError::NotFound`] when no graph is served as `graph_id` (yet).
    pub fn with_schemas(mut self, graph_id: &str, schemas: GraphSchemas) -> Result<Self> {
        if !self.graphs.iter().any(|(id, _)| id == graph_id) {
            return Err(ServerError::NotFound(format!("no graph is served as `{graph_id}`")));
        }
        self.schemas.retain(|(id, _)| id != graph_id);
        self.schemas.push((graph_id.to_owned(), schemas));
        Ok(self)
    }

    /// The API as an axum [`Router`], to mount or to serve with your own listener.
    ///
    /// This also starts the sweeper ([`Server::with_sweep_interval`]), the cron scheduler
    /// ([`Server::with_cron_poll_interval`]) and, with a cluster, the process's workers, so it
    /// must be called inside a Tokio runtime; outside one, the process only answers requests.
    ///
    /// Unlike [`Server::serve`], it does not know the address it will be served on: a router
    /// without [`Server::with_auth`] served beyond loopback lets anyone who reaches it read and
    /// change every thread.
    pub fn router(mut self) -> Router {
        let own_store = match self.store_ttl {
            Some(ttl) if self.own_store => {
                let store = InMemoryStore::new().ttl(ttl);
                self.store = Arc::new(store.clone());
                Some(store)
            }
            _ => None,
        };
        let graphs: Vec<RegisteredGraph> = self
            .graphs
            .into_iter()
            .map(|(id, bind)| {
                let schemas = self.schemas.iter().find(|(of, _)| *of == id).map(|(_, s)| s.clone());
                RegisteredGraph::new(id, bind(&self.saver, &self.store), schemas)
            })
            .collect();
        let system: Vec<AssistantRecord> =
            graphs.iter().map(|g| AssistantRecord::system(&g.graph_id)).collect();
        let keepers = self.backend.keepers(Setup {
            saver: self.saver.clone(),
            retention: self.retention,
            event_retention: self.event_retention,
            webhooks: self.webhooks.clone(),
            system,
        });
        let mut app = App::new(graphs, keepers.assistants, self.saver, self.store, keepers.records)
            .with_retention(self.retention);
        app.crons = keepers.crons;
        app.limits = self.limits;
        app.webhooks = self.webhooks;
        app.streams = crate::streams::Streams::new(self.limits.max_streams_per_user);
        let (guard, max_body) = (self.guard, self.limits.max_body_bytes);
        let app = Arc::new(app);
        if tokio::runtime::Handle::try_current().is_ok() {
            crate::sweeper::start(Arc::downgrade(&app), self.retention.sweep_interval, own_store);
            crate::cron::scheduler::start(Arc::downgrade(&app), self.auth.clone(), self.cron_poll);
            if let Some(start) = keepers.start {
                start(app.clone());
            }
        } else {
            tracing::error!(
                "Server::router was called outside a Tokio runtime: expired runs, threads and store items \
                 are not swept, crons do not fire, and no cluster runs are run in this process"
            );
        }
        crate::guard::apply(crate::routes::router(app, self.auth), guard, max_body)
    }

    /// Serves the API on `listener` until the process ends.
    ///
    /// # Errors
    /// [`ServerError::Misconfigured`] when `listener` is on an address other than loopback and
    /// the server has no [`Server::with_auth`] nor [`Server::allow_unauthenticated`]: anyone who
    /// reaches it would read and change every thread. [`ServerError::Io`] when the listener
    /// fails.
    pub async fn serve(self, listener: TcpListener) -> Result<()> {
        let address = listener.local_addr().map_err(ServerError::Io)?;
        if self.auth.is_none() && !self.unauthenticated && !address.ip().is_loopback() {
            return Err(ServerError::Misconfigured(format!(
                "refusing to serve {address} without authentication: anyone who reaches it could read and \
                 change every thread. Give the server an Auth (Server::with_auth), listen on loopback, or \
                 say Server::allow_unauthenticated() if a proxy in front authenticates"
            )));
        }
        axum::serve(listener, self.router()).await.map_err(ServerError::Io)
    }
}
