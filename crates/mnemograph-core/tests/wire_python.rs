//! Byte compatibility with Python LangGraph's `JsonPlusSerializer`, checked against the real
//! thing.
//!
//! The tests need a Python with `langgraph` and `langchain_core` importable, named by
//! `LANGGRAPH_PYTHON` (`scripts/python-peer.sh` creates one; `scripts/test.sh` sets it). Without
//! it they print why and pass, so a plain `cargo test` works offline, unless `CI` is set; a
//! `LANGGRAPH_PYTHON` that does not work is a failure.

use std::io::Write;
use std::process::{Command, Stdio};

use mnemograph_core::checkpoint::serde::{dumps_typed, loads_typed};
use mnemograph_core::messages::{Message, ToolCall, ToolStatus, UsageMetadata};
use mnemograph_core::value::ChannelValue;
use serde::Deserialize;
use serde_json::{json, Value};

/// The Python side. `decode`: reads `msgpack` bytes as hex on stdin, `loads_typed`s them and
/// prints, for each message, its module, class, `model_dump()` and its own `dumps_typed` bytes.
/// `encode`: prints `dumps_typed` hex of the same messages built natively, of a dict of plain
/// values, of `HumanMessage("hi", id="h1")` and of `Overwrite(["b"])`.
const PY: &str = r#"
import json, sys
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Overwrite
from langchain_core.messages import (
    AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage,
)

serde = JsonPlusSerializer()

def dump(obj):
    kind, data = serde.dumps_typed(obj)
    assert kind == "msgpack", kind
    return data.hex()

if sys.argv[1] == "decode":
    value = serde.loads_typed(("msgpack", bytes.fromhex(sys.stdin.read().strip())))
    out = [
        {"module": type(m).__module__, "class": type(m).__name__, "dump": m.model_dump(), "bytes": dump(m)}
        for m in value
    ]
    print(json.dumps({"messages": out, "list_bytes": dump(value)}))
else:
    messages = [
        HumanMessage("你好，世界！今天天气怎么样？", id="h1"),
        AIMessage(
            "让我查一下。",
            id="a1",
            tool_calls=[{"name": "get_weather", "args": {"city": "北京", "days": 3}, "id": "call_1"}],
            usage_metadata={"input_tokens": 12, "output_tokens": 30, "total_tokens": 42},
            response_metadata={"model_name": "deepseek-chat"},
        ),
        ToolMessage("城市不存在", tool_call_id="call_1", id="t1", status="error", name="get_weather"),
        SystemMessage("你是一个有帮助的助手", id="s1"),
        RemoveMessage(id="h1"),
    ]
    plain = {"count": 3, "name": "x", "nested": {"a": [1, 2.5, None, True]}}
    # Maps inside a message whose insertion order is not sorted order.
    unsorted = [AIMessage(
        [{"type": "text", "text": "查一下"}],
        id="a1",
        tool_calls=[{"name": "weather", "args": {"days": 3, "city": "北京"}, "id": "c1"}],
        response_metadata={"model_name": "m", "finish_reason": "stop"},
    )]
    print(json.dumps({
        "messages": dump(messages),
        "unsorted": dump(unsorted),
        "plain": dump(plain),
        "human_hi": dump(HumanMessage("hi", id="h1")),
        "overwrite": dump(Overwrite(["b"])),
    }))
"#;

/// The messages both sides build: Chinese text, an AI message with tool calls, usage and
/// metadata, a failed tool result, a system prompt and a `RemoveMessage`.
fn messages() -> Vec<Message> {
    let mut metadata = serde_json::Map::new();
    metadata.insert("model_name".to_owned(), json!("deepseek-chat"));
    vec![
        Message::human("你好，世界！今天天气怎么样？").with_id("h1"),
        Message::ai("让我查一下。")
            .with_id("a1")
            .with_tool_calls(vec![ToolCall::new("get_weather", json!({"city": "北京", "days": 3}), "call_1")])
            .with_usage(UsageMetadata::new(12, 30))
            .with_response_metadata(metadata),
        Message::tool("城市不存在", "call_1")
            .with_id("t1")
            .with_status(ToolStatus::Error)
            .with_name("get_weather"),
        Message::system("你是一个有帮助的助手").with_id("s1"),
        Message::remove("h1"),
    ]
}

/// Whether `python` can import LangGraph's serializer and LangChain's messages.
fn has_langgraph(python: &str) -> bool {
    Command::new(python)
        .args(["-c", "import langgraph.checkpoint.serde.jsonplus, langchain_core.messages"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A Python with LangGraph, or `None` (after saying why) when there is none and `CI` is not set.
fn python() -> Option<String> {
    match std::env::var("LANGGRAPH_PYTHON").ok().filter(|p| !p.is_empty()) {
        Some(python) => {
            assert!(has_langgraph(&python), "LANGGRAPH_PYTHON={python} cannot import langgraph");
            Some(python)
        }
        None => {
            let why = "LANGGRAPH_PYTHON is not set (scripts/python-peer.sh makes one)";
            assert!(
                std::env::var_os("CI").is_none_or(|v| v.is_empty()),
                "Python LangGraph is required when CI is set: {why}"
            );
            eprintln!("SKIPPED: Python LangGraph unavailable ({why})");
            None
        }
    }
}

/// Runs the Python side in `mode`, feeding `input` on stdin, and parses its JSON output.
fn run_python(python: &str, mode: &str, input: &str) -> Value {
    let mut child = Command::new(python)
        .args(["-c", PY, mode])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python");
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write to python");
    let out = child.wait_with_output().expect("wait for python");
    assert!(out.status.success(), "python {mode} failed:\n{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("python prints JSON")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(hex: &Value) -> Vec<u8> {
    let hex = hex.as_str().expect("hex string");
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex")).collect()
}

fn msgpack(value: &ChannelValue) -> Vec<u8> {
    let (kind, bytes) = dumps_typed(value).expect("encode");
    assert_eq!(kind, "msgpack");
    bytes
}

#[test]
fn python_loads_rust_messages_as_langchain_objects() {
    let Some(python) = python() else { return };
    let expected = messages();
    let bytes = msgpack(&ChannelValue::new(expected.clone()));
    let out = run_python(&python, "decode", &hex(&bytes));

    let decoded = out["messages"].as_array().expect("a list");
    assert_eq!(decoded.len(), expected.len());
    for (py, rust) in decoded.iter().zip(&expected) {
        let (module, class) = rust.lc_class();
        assert_eq!((py["module"].as_str(), py["class"].as_str()), (Some(module), Some(class)));
        // Field for field: Python's model_dump() equals Rust's JSON form.
        assert_eq!(py["dump"], serde_json::to_value(rust).expect("json"), "{class}");
        // Python re-encodes the object it decoded to exactly the bytes Rust wrote.
        assert_eq!(unhex(&py["bytes"]), msgpack(&ChannelValue::new(rust.clone())), "{class}");
    }
    assert_eq!(unhex(&out["list_bytes"]), bytes);
    assert_eq!(decoded[1]["dump"]["tool_calls"][0]["args"]["city"], json!("北京"));
    assert_eq!(decoded[1]["dump"]["usage_metadata"]["total_tokens"], json!(42));
    assert_eq!(decoded[2]["dump"]["status"], json!("error"));
}

#[test]
fn rust_decodes_python_messages_and_plain_values() {
    let Some(python) = python() else { return };
    let out = run_python(&python, "encode", "");

    let history: Vec<Message> =
        loads_typed("msgpack", &unhex(&out["messages"])).expect("loads").decode().expect("decode");
    assert_eq!(history, messages());

    #[derive(Deserialize, Debug, Clone, PartialEq)]
    struct Nested {
        a: Vec<Value>,
    }
    #[derive(Deserialize, Debug, Clone, PartialEq)]
    struct Plain {
        count: i64,
        name: String,
        nested: Nested,
    }
    let plain: Plain =
        loads_typed("msgpack", &unhex(&out["plain"])).expect("loads").decode().expect("decode");
    let nested = Nested { a: vec![json!(1), json!(2.5), Value::Null, json!(true)] };
    assert_eq!(plain, Plain { count: 3, name: "x".to_owned(), nested });
}

#[test]
fn python_messages_are_written_back_in_pythons_key_order() {
    let Some(python) = python() else { return };
    let out = run_python(&python, "encode", "");
    let stored = unhex(&out["unsorted"]);
    let history: Vec<Message> = loads_typed("msgpack", &stored).expect("loads").decode().expect("decode");
    assert_eq!(history[0].tool_calls()[0].args, json!({"city": "北京", "days": 3}));
    // Read and written back unchanged: Python's bytes, whatever serde_json's map order is.
    assert_eq!(hex(&msgpack(&ChannelValue::new(history))), hex(&stored));
}

#[test]
fn rust_bytes_equal_python_bytes() {
    let Some(python) = python() else { return };
    let out = run_python(&python, "encode", "");

    let human = msgpack(&ChannelValue::new(Message::human("hi").with_id("h1")));
    assert_eq!(human.len(), 140);
    assert_eq!(hex(&human), out["human_hi"].as_str().expect("hex"));
    assert_eq!(msgpack(&ChannelValue::new(messages())), unhex(&out["messages"]));
    let plain = json!({"count": 3, "name": "x", "nested": {"a": [1, 2.5, null, true]}});
    assert_eq!(msgpack(&ChannelValue::Json(plain.into())), unhex(&out["plain"]));
    let overwrite = ChannelValue::Overwrite(Box::new(ChannelValue::new(vec!["b".to_owned()])));
    assert_eq!(msgpack(&overwrite), unhex(&out["overwrite"]));
}
