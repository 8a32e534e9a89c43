//! The scenario both transports run: a tool-calling agent over a loopback OpenAI server, with
//! the telemetry exporting to an in-process OTLP receiver, then checks on what arrived.

#![allow(dead_code, unreachable_pub)]

pub mod openai;

use mnemograph_agent::{create_agent, MODEL_NODE, TOOLS_NODE};
use mnemograph_core::messages::Message;
use mnemograph_core::prelude::*;
use mnemograph_models::{tool_with_schema, OpenAiChatModel, OpenAiConfig, SharedTool};
use mnemograph_telemetry::{
    Protocol, Telemetry, GEN_AI_TOKEN_USAGE, GRAPH_NODE_DURATION, GRAPH_RUN_DURATION,
};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::metrics::v1::HistogramDataPoint;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::{json, Value};

use mnemograph_test::otlp::{attributes, Receiver, Spans};
use openai::{FakeOpenAi, ANSWER};

fn lookup() -> SharedTool {
    tool_with_schema("lookup", "Looks things up", json!({"type": "object"}), |args: Value| async move {
        Ok::<_, String>(format!("found {}", args["q"]))
    })
    .into()
}

/// Runs the agent with the telemetry exporting over `protocol`, shuts the telemetry down and
/// checks what the receiver got.
pub async fn run_agent_and_check_export(protocol: Protocol) {
    let receiver = match protocol {
        Protocol::Grpc => Receiver::grpc().await,
        Protocol::HttpProtobuf => Receiver::http().await,
    };
    let openai = FakeOpenAi::start().await;
    let telemetry = Telemetry::builder()
        .service_name("otlp-test")
        .service_version("9.9.9")
        .endpoint(receiver.endpoint())
        .protocol(protocol)
        .build()
        .unwrap();
    assert_eq!(telemetry.traces_target().map(|t| t.protocol), Some(protocol));
    let guard = telemetry.install().unwrap();
    assert!(guard.exports_traces() && guard.exports_metrics());

    let config = OpenAiConfig::new("test-model")
        .with_base_url(openai.base_url())
        .with_api_key("sk-test")
        .with_max_retries(0);
    let model = OpenAiChatModel::new(config).unwrap();
    let agent = create_agent(model, [lookup()]).compile_with(InMemoryCheckpointer::new()).unwrap();
    let out =
        agent.invoke(Message::human("what is otlp?").into(), &RunConfig::thread("t-otel")).await.unwrap();
    assert_eq!(out.messages.last().map(Message::text).as_deref(), Some(ANSWER), "{:#?}", out.messages);
    guard.shutdown().unwrap();

    check_traces(&receiver.received.traces());
    check_metrics(&receiver.received.metrics());
}

fn check_traces(requests: &[ExportTraceServiceRequest]) {
    let all = Spans::from_requests(requests);
    assert!(!all.all().is_empty(), "no spans arrived");
    for resource in all.resources() {
        assert_eq!(resource.get("service.name").map(String::as_str), Some("otlp-test"), "{resource:?}");
        assert_eq!(resource.get("service.version").map(String::as_str), Some("9.9.9"), "{resource:?}");
    }
    let names = all.names();
    assert!(all.orphans().is_empty(), "every parent was exported: {names:?}");
    let spans: Vec<&Span> = all.all().iter().collect();
    let ancestors = |span: &Span| all.ancestors(span);

    let runs: Vec<&Span> = spans.iter().copied().filter(|s| s.name == "graph.run").collect();
    assert_eq!(runs.len(), 1, "one run: {names:?}");
    let run = runs[0];
    assert!(run.parent_span_id.is_empty(), "graph.run is the root");
    let run_attributes = attributes(&run.attributes);
    assert_eq!(run_attributes.get("thread_id").map(String::as_str), Some("t-otel"), "{run_attributes:?}");
    assert!(spans.iter().all(|s| s.trace_id == run.trace_id), "one trace: {names:?}");
    let under_run = |span: &Span| ancestors(span).iter().any(|a| a.span_id == run.span_id);

    // The agent's loop: model, tools, model; `superstep` is `debug`, below the export filter.
    let nodes: Vec<&Span> = spans.iter().copied().filter(|s| s.name == "graph.node").collect();
    let node_names: Vec<String> = nodes.iter().map(|n| attributes(&n.attributes)["node"].clone()).collect();
    assert_eq!(node_names.iter().filter(|n| *n == MODEL_NODE).count(), 2, "{node_names:?}");
    assert_eq!(node_names.iter().filter(|n| *n == TOOLS_NODE).count(), 1, "{node_names:?}");
    assert!(nodes.iter().all(|n| under_run(n)), "every node is under the run");
    assert!(!names.contains(&"superstep"), "{names:?}");

    // `otel.name` names the exported span; the GenAI attributes come through.
    let chats: Vec<&Span> = spans.iter().copied().filter(|s| s.name == "chat test-model").collect();
    assert_eq!(chats.len(), 2, "{names:?}");
    for (chat, (input, output)) in chats.iter().zip([("11", "7"), ("23", "5")]) {
        assert_eq!(chat.kind, SpanKind::Client as i32);
        assert!(under_run(chat), "the chat's parents reach graph.run");
        assert!(ancestors(chat).iter().any(|a| a.name == "graph.node"), "a chat runs inside a node");
        let a = attributes(&chat.attributes);
        let get = |key: &str| a.get(key).map(String::as_str);
        assert_eq!(get("gen_ai.operation.name"), Some("chat"), "{a:?}");
        assert_eq!(get("gen_ai.system"), Some("openai"), "{a:?}");
        assert_eq!(get("gen_ai.request.model"), Some("test-model"), "{a:?}");
        assert_eq!(get("gen_ai.response.model"), Some("test-model-1"), "{a:?}");
        assert_eq!(
            (get("gen_ai.usage.input_tokens"), get("gen_ai.usage.output_tokens")),
            (Some(input), Some(output))
        );
    }
    let finish: Vec<_> = chats
        .iter()
        .map(|c| attributes(&c.attributes).get("gen_ai.response.finish_reasons").cloned())
        .collect();
    assert_eq!(finish, [Some("tool_calls".to_owned()), Some("stop".to_owned())]);

    let tools: Vec<&Span> = spans.iter().copied().filter(|s| s.name == "execute_tool lookup").collect();
    assert_eq!(tools.len(), 1, "{names:?}");
    let tool = attributes(&tools[0].attributes);
    assert_eq!(tool.get("gen_ai.tool.call.id").map(String::as_str), Some("call-1"), "{tool:?}");
    assert_eq!(tool.get("outcome").map(String::as_str), Some("ok"), "{tool:?}");
    let tool_parents = ancestors(tools[0]);
    let node = tool_parents.iter().find(|a| a.name == "graph.node").expect("the tool runs inside a node");
    assert_eq!(attributes(&node.attributes)["node"], TOOLS_NODE);
    assert!(under_run(tools[0]));
}

fn histogram<'a>(requests: &'a [ExportMetricsServiceRequest], name: &str) -> Vec<&'a HistogramDataPoint> {
    let metrics = requests.iter().flat_map(|r| &r.resource_metrics).flat_map(|rm| &rm.scope_metrics);
    let found: Vec<_> = metrics.flat_map(|sm| &sm.metrics).filter(|m| m.name == name).collect();
    found
        .iter()
        .flat_map(|m| match &m.data {
            Some(Data::Histogram(h)) => h.data_points.iter().collect::<Vec<_>>(),
            other => panic!("{name} is not a histogram: {other:?}"),
        })
        .collect()
}

fn check_metrics(requests: &[ExportMetricsServiceRequest]) {
    assert!(!requests.is_empty(), "no metrics arrived");
    for rm in requests.iter().flat_map(|r| &r.resource_metrics) {
        let resource = attributes(&rm.resource.as_ref().expect("a resource").attributes);
        assert_eq!(resource.get("service.name").map(String::as_str), Some("otlp-test"), "{resource:?}");
    }
    // Cumulative temporality: the last export holds every recording; one export at shutdown here.
    let nodes = histogram(requests, GRAPH_NODE_DURATION);
    let count = |node: &str| -> u64 {
        nodes
            .iter()
            .filter(|p| attributes(&p.attributes).get("node").map(String::as_str) == Some(node))
            .map(|p| p.count)
            .max()
            .unwrap_or(0)
    };
    assert_eq!((count(MODEL_NODE), count(TOOLS_NODE)), (2, 1), "{nodes:?}");
    assert!(nodes.iter().all(|p| p.sum.is_some_and(|s| s > 0.0)), "durations in seconds: {nodes:?}");

    let runs = histogram(requests, GRAPH_RUN_DURATION);
    assert_eq!(runs.iter().map(|p| p.count).max(), Some(1), "{runs:?}");

    let tokens = histogram(requests, GEN_AI_TOKEN_USAGE);
    let sum = |kind: &str| -> f64 {
        tokens
            .iter()
            .filter(|p| attributes(&p.attributes).get("gen_ai.token.type").map(String::as_str) == Some(kind))
            .filter_map(|p| p.sum)
            .fold(0.0, f64::max)
    };
    assert_eq!((sum("input"), sum("output")), (34.0, 12.0), "{tokens:?}");
    let model = attributes(&tokens[0].attributes);
    assert_eq!(model.get("gen_ai.request.model").map(String::as_str), Some("test-model"), "{model:?}");
    assert!(!histogram(requests, mnemograph_telemetry::GEN_AI_OPERATION_DURATION).is_empty());
}
