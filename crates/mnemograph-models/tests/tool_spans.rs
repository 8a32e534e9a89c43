//! Every tool call is an `execute_tool` span with OpenTelemetry's GenAI attributes and its
//! outcome, seen through a real `tracing` subscriber.

#[path = "support/spans.rs"]
mod spans;

use mnemograph_core::messages::{Message, ToolCall};
use mnemograph_models::{tool_with_schema, ToolNode};
use serde_json::{json, Value};
use spans::Spans;

#[tokio::test]
async fn every_tool_call_is_an_execute_tool_span_with_its_outcome() {
    let spans = Spans::default();
    let _guard = spans.install();
    let add = tool_with_schema("add", "adds", json!({}), |_: Value| async { Ok::<_, String>("3") });
    let fails = tool_with_schema("fails", "", json!({}), |_: Value| async { Err::<String, _>("boom") });
    let node = ToolNode::new([add.into(), fails.into()]);
    let calls = vec![
        ToolCall::new("add", json!({"a": 1, "b": 2}), "call-1"),
        ToolCall::new("fails", json!({}), "call-2"),
        ToolCall::new("missing", json!({}), "call-3"),
    ];
    let answers = node.run(&[Message::ai("").with_tool_calls(calls)]).await;
    assert_eq!(answers.len(), 3);

    let tools = spans.named("execute_tool");
    assert_eq!(tools.len(), 3, "one span per call: {tools:?}");
    let expect = [
        ("add", "call-1", "ok", None),
        ("fails", "call-2", "error", Some("tool_error")),
        ("missing", "call-3", "error", Some("unknown_tool")),
    ];
    for (fields, (name, id, outcome, error)) in tools.iter().zip(expect) {
        assert_eq!(fields.get("gen_ai.operation.name").map(String::as_str), Some("execute_tool"));
        assert_eq!(fields.get("gen_ai.tool.name").map(String::as_str), Some(name), "{fields:?}");
        assert_eq!(fields.get("gen_ai.tool.call.id").map(String::as_str), Some(id), "{fields:?}");
        assert_eq!(fields.get("otel.name"), Some(&format!("execute_tool {name}")), "{fields:?}");
        assert_eq!(fields.get("outcome").map(String::as_str), Some(outcome), "{fields:?}");
        assert_eq!(fields.get("error.type").map(String::as_str), error, "{fields:?}");
        assert!(!fields.values().any(|v| v.contains("\"a\"")), "arguments are not recorded: {fields:?}");
    }
}
