//! The crate's one error type.

use crate::Protocol;

/// What can go wrong while configuring, installing or shutting down the telemetry.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An OTLP endpoint is not an `http://` or `https://` URL with a host.
    #[error("invalid OTLP endpoint {endpoint:?} (from {from}): {reason}")]
    InvalidEndpoint {
        /// The value as given.
        endpoint: String,
        /// Where it came from: an environment variable's name, or `the builder`.
        from: &'static str,
        /// Why it is refused.
        reason: String,
    },
    /// A protocol value other than `grpc` or `http/protobuf`.
    #[error("unknown OTLP protocol {value:?} (from {from}); expected `grpc` or `http/protobuf`")]
    UnknownProtocol {
        /// The value as given.
        value: String,
        /// The environment variable it came from.
        from: &'static str,
    },
    /// The protocol asked for is not compiled in.
    #[error(
        "OTLP protocol `{protocol}` is not compiled in: enable mnemograph-telemetry's `{feature}` feature"
    )]
    ProtocolNotEnabled {
        /// The protocol asked for.
        protocol: Protocol,
        /// The cargo feature that brings it.
        feature: &'static str,
    },
    /// A filter (`RUST_LOG`, `MNEMOGRAPH_OTEL_FILTER` or the builder's default) does not parse.
    #[error("invalid tracing filter {directives:?} (from {from}): {source}")]
    InvalidFilter {
        /// The directives as given.
        directives: String,
        /// Where they came from.
        from: &'static str,
        /// The parser's complaint.
        #[source]
        source: tracing_subscriber::filter::ParseError,
    },
    /// The gRPC exporter runs on the caller's Tokio runtime, and there is none.
    #[error("the OTLP gRPC exporter needs a Tokio runtime: install the telemetry from inside one")]
    NoTokioRuntime,
    /// The OTLP exporter for a signal could not be built.
    #[error("building the OTLP {signal} exporter failed: {source}")]
    Exporter {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// The exporter's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A global `tracing` subscriber (or `log` logger) is already installed.
    #[error("a global tracing subscriber is already installed: {0}")]
    AlreadyInstalled(#[source] tracing_subscriber::util::TryInitError),
    /// Flushing or shutting down a provider failed; what it held may be lost.
    #[error("shutting down the {signal} provider failed: {source}")]
    Shutdown {
        /// `traces` or `metrics`.
        signal: &'static str,
        /// The SDK's error.
        #[source]
        source: opentelemetry_sdk::error::OTelSdkError,
    },
}

/// The crate's `Result`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
