//! A tool-calling agent's run reaches a real OTLP/gRPC receiver (the official protobuf
//! services on loopback) as one trace rooted at `graph.run`, with the GenAI attributes and the
//! metrics derived from the spans. Alone in its binary: it installs the global subscriber, and
//! `tracing` caches each call site's interest process-wide.

mod support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_arrives_over_grpc_as_one_trace_with_its_metrics() {
    support::run_agent_and_check_export(mnemograph_telemetry::Protocol::Grpc).await;
}
