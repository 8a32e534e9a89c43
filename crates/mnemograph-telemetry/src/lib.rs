//! One call sends mnemograph's `tracing` spans to OpenTelemetry.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // Log lines at `warn` (or `RUST_LOG`) on stderr; with OTEL_EXPORTER_OTLP_ENDPOINT set, spans
//! // and metrics go over OTLP as well.
//! let telemetry = mnemograph_telemetry::Telemetry::builder()
//!     .service_name("memory-agent")
//!     .service_version(env!("CARGO_PKG_VERSION"))
//!     .default_filter("warn")
//!     .build()?
//!     .install()?;
//! tracing::info!("running");
//! // ... run graphs ...
//! telemetry.shutdown()?; // or let it drop: either way the last spans are exported
//! # Ok(()) }
//! ```
//!
//! [`Telemetry::install`] sets the global subscriber to:
//!
//! - log lines on standard error (or standard output, [`LogWriter`]), filtered by `RUST_LOG`,
//!   or by the program's default when it is unset;
//! - when an OTLP endpoint is configured, a `tracing-opentelemetry` layer exporting spans
//!   ([`EXPORT_FILTER_VAR`] or [`TelemetryBuilder::export_filter`] picks them, `info` by
//!   default), and a layer deriving metrics from the spans it measures (below), exported on the
//!   same endpoint. With no endpoint, neither layer exists and nothing of OpenTelemetry runs.
//!
//! The endpoint and transport come from the builder ([`TelemetryBuilder::endpoint`],
//! [`TelemetryBuilder::protocol`]) or from the standard variables:
//!
//! | variable | meaning |
//! | --- | --- |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | base URL for both signals (`http://127.0.0.1:4317`) |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `..._METRICS_ENDPOINT` | one signal's full URL |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL` (and `..._TRACES_`/`..._METRICS_` forms) | `grpc` (default) or `http/protobuf` |
//! | `OTEL_EXPORTER_OTLP_HEADERS` | `key=value,...` sent with every export |
//! | `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` | the resource, over the program's name |
//! | `OTEL_TRACES_EXPORTER=none`, `OTEL_METRICS_EXPORTER=none`, `OTEL_SDK_DISABLED=true` | turn a signal, or both, off |
//! | `OTEL_METRIC_EXPORT_INTERVAL` | milliseconds between metric exports (60000) |
//!
//! The metrics, each a histogram, recorded when a span closes:
//!
//! | metric | span | attributes |
//! | --- | --- | --- |
//! | [`GRAPH_RUN_DURATION`] (s) | `graph.run` | `outcome` |
//! | [`GRAPH_NODE_DURATION`] (s) | `graph.node` | `node`, `outcome` |
//! | [`GEN_AI_OPERATION_DURATION`] (s) | `chat` | `gen_ai.operation.name`, `gen_ai.system`, `gen_ai.request.model`, `gen_ai.response.model`, `error.type` |
//! | [`GEN_AI_TOKEN_USAGE`] (`{token}`) | `chat` | the same without `error.type`, plus `gen_ai.token.type` (`input`/`output`) |
//! | [`CHECKPOINT_DURATION`] (s) | `checkpoint.*` | `operation` (the name after the dot), `db.system`, `outcome`, `error.type` |
//! | [`MEMORY_DURATION`] (s) | `memory.*` | `operation`, `outcome`, `error.type` |
//!
//! Features: `grpc` (tonic) and `http` (reqwest's blocking client), both on by default; both
//! speak plaintext. The gRPC exporter runs on the program's Tokio runtime: install from inside
//! it, and let the guard drop on a multi-thread runtime.
//!
//! This crate depends on no other mnemograph crate: it only consumes `tracing` spans, by name.

mod builder;
mod config;
mod error;
mod export;
mod guard;
mod metrics;

pub use builder::{init, LogWriter, Telemetry, TelemetryBuilder, EXPORT_FILTER_VAR};
pub use config::{Protocol, Target};
pub use error::{Error, Result};
pub use guard::TelemetryGuard;
pub use metrics::{
    CHECKPOINT_DURATION, GEN_AI_OPERATION_DURATION, GEN_AI_TOKEN_USAGE, GRAPH_NODE_DURATION,
    GRAPH_RUN_DURATION, MEMORY_DURATION,
};
