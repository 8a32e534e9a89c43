//! Around every tool call: one structured `tracing` event (tool, call id, arguments, duration,
//! outcome), and the result truncated in the tools node's own output. No services needed.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use blog_assistant::corpus::Corpus;
use blog_assistant::pending::PendingRounds;
use blog_assistant::tool_log::{LogToolCalls, TOOL_LOG_TARGET};
use blog_assistant::tools::{article_output, GET_ARTICLE_CONTENT};
use futures_util::StreamExt;
use mnemograph_agent::{AgentStateUpdate, TOOLS_NODE};
use mnemograph_core::messages::{Message, MessageType, ToolCall};
use mnemograph_core::prelude::InMemoryCheckpointer;
use mnemograph_core::{RunConfig, StreamEvent, StreamMode};
use mnemograph_models::{ChatModel, ChatModelExt, ChatRequest};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

/// The fields of one captured event, as text, plus its level under `level`.
type Fields = BTreeMap<String, String>;

/// Collects the events of [`TOOL_LOG_TARGET`].
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Fields>>>);

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != TOOL_LOG_TARGET {
            return;
        }
        let mut fields = FieldText::default();
        event.record(&mut fields);
        fields.0.insert("level".to_owned(), event.metadata().level().to_string());
        self.0.lock().unwrap().push(fields.0);
    }
}

#[derive(Default)]
struct FieldText(Fields);

impl Visit for FieldText {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
}

/// Reads a missing article (a tool error), then a long one, then answers.
struct Scripted;

impl ChatModel for Scripted {
    async fn invoke(&self, request: ChatRequest) -> mnemograph_models::Result<Message> {
        let results = request.messages.iter().filter(|m| m.kind() == MessageType::Tool).count();
        let read = |id: &str, call: &str| {
            Message::ai("").with_tool_calls(vec![ToolCall::new(
                GET_ARTICLE_CONTENT,
                json!({ "id": id }),
                call,
            )])
        };
        Ok(match results {
            0 => read("no-such-article", "call_missing"),
            1 => read("context-trimming", "call_long"),
            _ => Message::ai("读完了。"),
        })
    }
}

#[tokio::test(flavor = "current_thread")]
async fn every_tool_call_is_logged_and_its_result_truncated_in_the_tools_output() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let corpus = Arc::new(Corpus::builtin().unwrap());
    let pending = Arc::new(PendingRounds::default());
    let saver = InMemoryCheckpointer::new();
    let agent = blog_assistant::agent::build(Scripted.shared(), &corpus, 6000, &pending, saver).unwrap();
    let input = AgentStateUpdate::from(Message::human("上下文剪裁"));
    let mut run = agent.stream(Some(input), &RunConfig::thread("t")).modes([StreamMode::Updates]);
    let mut produced = Vec::new();
    while let Some(event) = run.next().await {
        if let StreamEvent::Updates { node, updates } = event.unwrap() {
            if node == TOOLS_NODE {
                produced.extend(updates.into_iter().flat_map(|u| u.messages.unwrap_or_default()));
            }
        }
    }

    // The tools node itself produced the cut article (with its citations), not the whole text.
    let full = article_output(&corpus, "context-trimming").unwrap().content.text();
    let total = full.chars().count();
    let long = produced.iter().find(|m| m.tool_call_id() == Some("call_long")).expect("the long result");
    let kept: String = full.chars().take(2000).collect();
    assert!(long.text().starts_with(&kept));
    assert!(
        long.text().ends_with(&format!("[truncated: 2000 of {total} characters kept]")),
        "{}",
        long.text()
    );
    assert!(long.artifact().is_some_and(|a| a["citations"].as_array().is_some_and(|c| c.len() == 1)));

    // Two events per call, in order: its start, then its end with every field.
    let events = capture.0.lock().unwrap().clone();
    assert_eq!(events.len(), 4, "{events:?}");
    let expect = [
        ("call_missing", "no-such-article", "error", "WARN"),
        ("call_long", "context-trimming", "ok", "INFO"),
    ];
    for (pair, (call_id, id, outcome, level)) in events.chunks(2).zip(expect) {
        let (started, event) = (&pair[0], &pair[1]);
        assert_eq!(started["message"], "tool call started", "{started:?}");
        assert_eq!(started["call_id"], call_id, "{started:?}");
        assert_eq!(started["tool"], GET_ARTICLE_CONTENT, "{started:?}");
        assert_eq!(started["level"], "INFO", "{started:?}");
        assert!(!started.contains_key("duration_ms"), "{started:?}");
        assert_eq!(event["message"], "tool call", "{event:?}");
        assert_eq!(event["tool"], GET_ARTICLE_CONTENT, "{event:?}");
        assert_eq!(event["call_id"], call_id, "{event:?}");
        assert_eq!(serde_json::from_str::<Value>(&event["args"]).unwrap(), json!({ "id": id }));
        assert_eq!(event["outcome"], outcome, "{event:?}");
        assert_eq!(event["level"], level, "{event:?}");
        assert!(event["duration_ms"].parse::<u64>().is_ok(), "{event:?}");
    }
}

/// A tool that never returns.
#[derive(Debug, Deserialize, JsonSchema)]
struct HangArgs {
    /// Anything.
    #[allow(dead_code, reason = "the tool never reads it")]
    why: String,
}

/// Calls the hanging tool once.
struct CallsHang;

impl ChatModel for CallsHang {
    async fn invoke(&self, _request: ChatRequest) -> mnemograph_models::Result<Message> {
        Ok(Message::ai("").with_tool_calls(vec![ToolCall::new(
            "hang",
            json!({ "why": "test" }),
            "call_hang",
        )]))
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_tool_call_that_never_returns_still_logs_its_start() {
    let capture = Capture::default();
    let _guard = tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let hang = mnemograph_models::tool("hang", "Never returns.", |_: HangArgs| async {
        std::future::pending::<Result<String, std::convert::Infallible>>().await
    });
    let pending = Arc::new(PendingRounds::default());
    let agent = mnemograph_agent::create_agent(CallsHang.shared(), [hang.into()])
        .middleware(LogToolCalls::new(Arc::clone(&pending)))
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let input = AgentStateUpdate::from(Message::human("hang"));
    let config = RunConfig::thread("hung");
    let run = agent.invoke(input, &config);
    assert!(tokio::time::timeout(Duration::from_millis(300), run).await.is_err(), "the tool returned");

    let events = capture.0.lock().unwrap().clone();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["message"], "tool call started");
    assert_eq!(events[0]["call_id"], "call_hang");
    assert_eq!(serde_json::from_str::<Value>(&events[0]["args"]).unwrap(), json!({ "why": "test" }));
    assert!(pending.is_empty(), "an unfinished call was noted for the audit");
}
