//! Serves mnemograph graphs over the LangGraph server's HTTP API, so the official SDK clients
//! (`langgraph-sdk` for Python, `@langchain/langgraph-sdk` for JavaScript) and the chat UIs built
//! on them talk to graphs written in Rust unchanged.
//!
//! ```no_run
//! use mnemograph_core::prelude::*;
//! use mnemograph_server::Server;
//!
//! #[derive(State, Clone, Default, Debug)]
//! struct Chat {
//!     #[reducer(append)]
//!     log: Vec<String>,
//! }
//!
//! async fn hello(_: Chat) -> Result<ChatUpdate> {
//!     Ok(ChatUpdate::log(vec!["hello".to_owned()]))
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let graph = StateGraph::<Chat>::new().add_node("hello", hello).add_edge(START, "hello").compile()?;
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:2024").await?;
//! Server::new(InMemoryCheckpointer::new()).graph("chat", graph)?.serve(listener).await?;
//! # Ok(()) }
//! ```
//!
//! A client then runs it as it runs a Python graph:
//!
//! ```python
//! from langgraph_sdk import get_sync_client
//! client = get_sync_client(url="http://127.0.0.1:2024")
//! thread = client.threads.create()
//! for part in client.runs.stream(thread["thread_id"], "chat", input={"log": []}, stream_mode="updates"):
//!     print(part.event, part.data)
//! ```
//!
//! # What is served
//! - **Assistants**: a graph with a configuration of its own, versioned as LangGraph versions
//!   it: create (with `if_exists`), get, update (each a new version, made the latest), delete,
//!   search (metadata, graph, name; `sort_by`, `sort_order`, `select`), count, versions, and
//!   setting an older version latest; schemas and graph drawing. Each graph gets a system
//!   assistant whose id is derived from the graph id as LangGraph derives it. A run on an
//!   assistant runs its graph with the assistant's `config` and `context` under the run's.
//! - **Threads**: create (with `if_exists`), get, patch metadata, search, count, delete, copy,
//!   prune (`delete`, or `keep_latest`: the thread and its latest checkpoint stay, the older
//!   checkpoints go, on a saver that prunes); state (latest or at a checkpoint), state update
//!   (`as_node`, forking from a `checkpoint_id`), history. A thread's stream
//!   (`threads.join_stream`) carries the events of its runs one after another, each run's end
//!   as `metadata {"status": "run_done"}`, and its state updates; `stream_modes` picks
//!   `run_modes`, `lifecycle` or `state_update`, and `Last-Event-ID` (`-` for all) resumes it
//!   across runs.
//! - **Runs**: background create, `stream` (server-sent events, `metadata` first, every event
//!   with an id so `Last-Event-ID` resumes a join stream, and a `Location` naming that join
//!   stream for clients that reconnect on their own), `wait`, list, get, join, join stream,
//!   cancel (`interrupt` or `rollback`), cancel many (a thread's runs by id, or every run
//!   `pending`, `running` or both), delete; stateless runs under `/runs`, one at a time or in a
//!   batch, their thread kept or deleted after (`on_completion`). A run may wait `after_seconds`
//!   before it starts (pending, dated at its start, holding up no run queued after it), stop at
//!   breakpoints (`interrupt_before`, `interrupt_after`: node names or `"*"`) and checkpoint as
//!   `durability` (or `checkpoint_during`) says; `stream_subgraphs` is taken for graphs without
//!   subgraphs, whose stream it leaves as it is, and refused with 422 for one with subgraphs,
//!   whose own events the engine does not stream; `stream_resumable` is taken, every run's events
//!   being kept for reconnecting clients anyway. Stream modes
//!   `values`, `updates`, `messages`, `messages-tuple`, `custom`, `tasks`, `checkpoints` and
//!   `debug`; `events` (LangChain's callback events, which the engine does not produce) is
//!   refused with 422. Interrupts stop a run with the thread `interrupted`; `command.resume` (one value,
//!   or a map by interrupt id) continues it. `command.update` (an object of state fields, or
//!   `[field, value]` pairs) and `command.goto` (node names, or `{"node", "input"}` sends) run
//!   as LangGraph's `Command` input, with or without `resume`. A run that arrives on a busy thread is handled by
//!   its `multitask_strategy`: `reject` (409), `enqueue` (the default), `interrupt` or
//!   `rollback` (the runs in progress stop, and with `rollback` their checkpoints are deleted).
//! - **Crons**: runs made on a schedule, as LangGraph's server makes them: create (stateless, a
//!   new thread each tick, deleted after its run unless `on_run_completed` is `keep`; or on a
//!   thread), get, update, delete, search (`assistant_id`, `thread_id`, `enabled`, metadata;
//!   `sort_by`, `sort_order`, `select`) and count. A cron carries the run request (`input`,
//!   `config`, `context`, `metadata`, `webhook`, `multitask_strategy`, stream modes), a standard
//!   cron `schedule` read as LangGraph's `croniter` reads it (five fields, or six with seconds
//!   last), in UTC or its IANA `timezone`, an `end_time`, and `enabled`. The scheduler
//!   ([`Server::with_cron_poll_interval`]) makes each tick's run as the cron's maker, through the
//!   same path as a client's run request. In a cluster each tick runs exactly once whichever
//!   processes are up; a tick missed while none was runs once, then the cron keeps its schedule
//!   from then on, as in LangGraph. Deleting a thread or an assistant deletes its crons.
//! - **Store**: put (with a TTL in minutes), get, delete, search (filter, query, paging) and
//!   list namespaces, on the store the graphs' nodes reach through their runtime
//!   ([`Server::with_store`]; in memory by default).
//! - **Retention**, so that memory does not grow with every run ever made: a finished run's
//!   record stays an hour ([`Server::with_run_retention`]) and its events a minute
//!   ([`Server::with_event_retention`]); while a run goes on, what it keeps for late readers holds
//!   each streamed message once, at its latest, and other events up to a byte limit
//!   ([`Server::with_event_log_bytes`]). As `langgraph.json`'s `checkpointer.ttl` and
//!   `store.ttl` configure LangGraph's server, [`Server::with_thread_ttl`] deletes idle threads
//!   (off by default) and [`Server::with_store_ttl`] expires store items.
//! - **Errors** as the API shapes them: a status and `{"detail": "..."}`; a run's failure is
//!   an `error` event `{"error", "message"}`, and `wait` answers `{"__error__": {...}}`.
//!
//! # Safe to expose
//! Every request passes a guard before a route sees it, so that a browser on the same machine
//! cannot be turned against the server and no single request can make it work without bound:
//! - **Host**: only requests addressed to the loopback names (`localhost` and the names under it,
//!   `127.0.0.1`, `[::1]`, any port) are answered, and those of [`Server::allowed_hosts`]; any
//!   other `Host` (or HTTP/2 authority), or none, is refused with 421, which stops a page that
//!   re-points its own domain at this machine (DNS rebinding). [`Server::allow_any_host`] turns
//!   the check off for a server behind a proxy that checks `Host`.
//! - **Browser pages of other origins** may call the API only when listed in
//!   [`Server::cors_origins`]: their CORS preflights are answered, their responses carry
//!   `Access-Control-Allow-Origin`. CORS is off otherwise. A request that may change something
//!   and names a foreign `Origin` is refused with 403, even one a browser sends without asking
//!   (an empty `POST`).
//! - **Bodies** must be JSON (`Content-Type: application/json`, any parameters) on `POST`,
//!   `PUT`, `PATCH` and `DELETE` unless empty, else 415: a page's "simple" `text/plain` or form
//!   post cannot start a run. A body above [`Limits::max_body_bytes`] (10 MiB) is refused with
//!   413.
//! - **[`Limits`]** ([`Server::with_limits`]) cap a list's `limit` (1000; above it, or not a
//!   non-negative integer, 422), a run's `config.recursion_limit` (1000; 422) and the runs
//!   waiting on one thread (100; the next is refused with 429 and nothing is queued).
//!
//! Every refusal has the status above and a `{"detail": "..."}` body.
//!
//! **Who sees what** is the [`auth`] module's: with [`Server::with_auth`] every request is
//! authenticated (401 otherwise) and each caller reaches only what its grant admits, by default
//! what it created; what it may not see answers 404 as what does not exist. The caller reaches
//! the graph's nodes as LangGraph's `langgraph_auth_user`. Without authentication, every client
//! that reaches the server may read and change everything, so [`Server::serve`] refuses to listen
//! beyond loopback unless told [`Server::allow_unauthenticated`].
//!
//! **Webhooks** (feature `webhooks`): a run created with `webhook` gets its final record — the
//! run's fields, its timings, the thread's `values` and any `error`, as LangGraph's server sends
//! them — POSTed there when it ends, in the background, with a timeout per attempt and retries
//! with backoff after connection failures and 5xx answers. Only the targets the deployer allows
//! with `Server::with_webhooks` are sent to: by default, and for any other target, a run naming
//! a webhook is refused with 422. In a cluster, the process that ends a run sends its record.
//!
//! An application's own work around runs — rebuilding a thread from an archive before it
//! runs, archiving a finished round — goes in [`RunHooks`] ([`Server::graph_with_hooks`]).
//!
//! Thread and run records live in the server process; checkpoints live in the saver. A
//! [`Backend`] given to [`Server::with_backend`] keeps them elsewhere: the
//! `mnemograph-server-cluster` crate's `Cluster` puts the records and a durable run queue in
//! MySQL/MariaDB and run events in Redis, so that several processes serve the same threads: any
//! process answers any request, whichever has room runs a run under a lease, and a run whose
//! process died is taken over and resumed from its last checkpoint. That crate also holds the
//! queue alone, and workers that run queued runs from code.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod app;
mod assistant;
mod assistant_change;
mod assistant_search;
pub mod auth;
mod backend;
mod cancel_many;
mod cluster_access;
mod cron;
mod cron_visibility;
mod error;
mod event_log;
mod events;
mod exec;
mod filter;
mod guard;
mod handle;
mod hooks;
mod keeper;
mod limits;
mod page;
mod prune;
mod records;
mod registered;
mod request;
mod retention;
mod routes;
mod run;
mod run_options;
mod run_under_assistant;
mod schemas;
mod served;
mod server;
mod sse;
mod store_quota;
mod streams;
mod sweeper;
mod thread_stream;
mod thread_table;
mod thread_updates;
mod webhook;

pub use backend::Backend;
pub use cron::CRON_POLL_INTERVAL;
pub use error::{Result, ServerError};
pub use events::EVENT_RETENTION;
pub use hooks::{NoHooks, RunContext, RunEnd, RunHooks};
pub use limits::Limits;
pub use retention::{EVENT_LOG_BYTES, RUN_RETENTION, SWEEP_INTERVAL};
pub use schemas::GraphSchemas;
pub use server::Server;
#[cfg(feature = "webhooks")]
#[cfg_attr(docsrs, doc(cfg(feature = "webhooks")))]
pub use webhook::WebhookPolicy;

/// Internals for `mnemograph-server-cluster`, which builds on them; no stability promise.
#[doc(hidden)]
pub mod __cluster {
    pub use crate::app::App;
    pub use crate::assistant::{assistant_id, AssistantRecord};
    pub use crate::assistant_change::AssistantChange;
    pub use crate::assistant_search::{AssistantSearch, SortBy, VersionSearch};
    pub use crate::backend::{Keepers, Setup};
    pub use crate::cluster_access::{identity_from_json, run_context, GrantRules, QueueLimit};
    pub use crate::error::{
        assistant_exists, assistant_not_found, cron_not_found, run_in_progress, run_not_found, thread_busy,
        thread_exists, thread_not_found, version_not_found,
    };
    pub use crate::events::ApiModes;
    pub use crate::handle::{RunRef, RunView};
    pub use crate::keeper::{AssistantKeeper, CronKeeper, CronsOf, NewRun, RecordKeeper};
    pub use crate::records::{
        new_thread_id, now, stamp_after, stamp_before, RunRecord, ThreadRecord, ThreadSearch,
    };
    pub use crate::request::{Multitask, RunCreate};
    pub use crate::retention::Retention;
    pub use crate::run::{Plan, Stop};
    pub use crate::run_options::RunOptions;
    pub use crate::served::{RunInput, Served, ServedGraph};
    pub use crate::sse::{Frame, Frames};
    pub use crate::thread_updates::{ThreadUpdate, ThreadUpdates};
    pub use crate::webhook::{webhook_of, FinalRecord, Webhooks};
    // Named in the signatures of the items above.
    pub use crate::events::Emitted;
    pub use crate::registered::RegisteredGraph;
    pub use crate::served::{GotoInput, ResumeInput};

    /// Running a claimed run and recording its end.
    pub mod exec {
        pub use crate::exec::{checkpointed, fail, run, run_end, settle, Outcome, Settled};
    }

    /// Cron records, searches and the scheduler's claim on a due tick.
    pub mod cron {
        pub use crate::cron::scheduler::take_due;
        pub use crate::cron::{stamp, utc_now, CronChange, CronRecord, CronSearch, CronSort};
    }

    /// The semantics every keeper keeps, run against the cluster's keepers as against the
    /// process's own.
    pub mod conformance {
        pub use crate::keeper::conformance::assistant_keeper_semantics;
        pub use crate::keeper::cron_conformance::{cron_keeper_semantics, every_second};
    }
}
