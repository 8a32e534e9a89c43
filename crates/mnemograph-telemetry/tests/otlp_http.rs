//! The same run as `otlp.rs` over OTLP/HTTP with protobuf bodies, to a receiver decoding them
//! with the official message types. Alone in its binary for the same reason.

mod support;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_arrives_over_http_protobuf_as_one_trace_with_its_metrics() {
    support::run_agent_and_check_export(mnemograph_telemetry::Protocol::HttpProtobuf).await;
}
