//! An OTLP receiver for tests (feature `otlp`): a real gRPC or HTTP endpoint on loopback, built
//! from OpenTelemetry's official protobuf definitions, that keeps what an exporter sends; and
//! [`Spans`], the exported spans with the lookups a test of a span tree needs.
//!
//! ```no_run
//! # async fn run() {
//! use mnemograph_test::otlp::{Receiver, Spans};
//!
//! let receiver = Receiver::grpc().await;
//! // ... point an exporter (or a program's OTEL_EXPORTER_OTLP_ENDPOINT) at receiver.endpoint(),
//! // run, and shut the exporter down so the last spans are flushed ...
//! let spans = Spans::from_requests(&receiver.received.traces());
//! for run in spans.named("graph.run") {
//!     assert!(run.parent_span_id.is_empty());
//!     assert!(spans.children_named(run, "graph.node").count() > 0);
//! }
//! # }
//! ```

mod receiver;
mod spans;

pub use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
pub use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
pub use opentelemetry_proto::tonic::trace::v1::Span;
pub use receiver::{Received, Receiver};
pub use spans::{attributes, Spans};
