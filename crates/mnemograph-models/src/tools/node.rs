//! [`ToolNode`]: runs the tool calls of the last AI message, and [`tools_condition`].

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use mnemograph_core::messages::{
    InvalidToolCall, Message, MessageType, MessagesState, MessagesStateUpdate, ToolCall, ToolStatus,
};
use mnemograph_core::State;
use mnemograph_core::{BoxedNode, IntoNode, NodeOutput, END};
use serde_json::Value;
use tracing::Instrument;

use super::{SharedTool, ToolSpec};

/// A state with a conversation, so generic nodes ([`ToolNode`], [`tools_condition`], agents) can
/// read it and write to it. Implemented for [`MessagesState`]; implement it for your own state
/// with two one-line methods.
pub trait HasMessages: State {
    /// The conversation.
    fn messages(&self) -> &[Message];
    /// An update that merges `messages` into the conversation (through its reducer).
    fn messages_update(messages: Vec<Message>) -> Self::Update;
}

impl HasMessages for MessagesState {
    fn messages(&self) -> &[Message] {
        &self.messages
    }
    fn messages_update(messages: Vec<Message>) -> MessagesStateUpdate {
        MessagesStateUpdate::messages(messages)
    }
}

/// Runs the tool calls of the conversation's last AI message, all at once, and answers each
/// with a ToolMessage in call order (LangGraph's `ToolNode`).
///
/// A tool that fails, panics, does not exist or gets arguments that were not valid JSON still
/// gets an answer: a ToolMessage with status `error` whose text tells the model what went
/// wrong, so the conversation stays valid (every tool call answered) and the model can retry.
///
/// It is a graph node for any [`HasMessages`] state:
///
/// ```
/// use mnemograph_core::prelude::*;
/// use mnemograph_core::messages::ToolCall;
/// use mnemograph_models::{tool, tools_condition, ToolNode};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> mnemograph_core::Result<()> {
/// let echo = tool("echo", "Echoes", |v: serde_json::Value| async move { Ok::<_, std::convert::Infallible>(v) });
/// let graph = StateGraph::<MessagesState>::new()
///     .add_node("tools", ToolNode::new([echo.into()]))
///     .add_conditional_edges(START, tools_condition, ())
///     .compile()?;
/// let call = Message::ai("").with_tool_calls(vec![ToolCall::new("echo", serde_json::json!({"x": 1}), "c1")]);
/// let out = graph.invoke(MessagesStateUpdate::messages(vec![call]), &RunConfig::new()).await?;
/// assert_eq!(out.messages[1].text(), r#"{"x":1}"#);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, Default)]
pub struct ToolNode {
    /// Tools by name.
    tools: Arc<HashMap<String, SharedTool>>,
    /// Names in the order given, for specs and error messages.
    order: Arc<[String]>,
}

impl ToolNode {
    /// A node running these tools. A later tool with the same name as an earlier one replaces it.
    pub fn new(tools: impl IntoIterator<Item = SharedTool>) -> Self {
        let mut map = HashMap::new();
        let mut order = Vec::new();
        for t in tools {
            if map.insert(t.name().to_owned(), t.clone()).is_none() {
                order.push(t.name().to_owned());
            }
        }
        Self { tools: Arc::new(map), order: order.into() }
    }

    /// The tools' specs, in the order given: what to bind to the model.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.order.iter().map(|n| self.tools[n].spec().clone()).collect()
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&SharedTool> {
        self.tools.get(name)
    }

    /// Runs one call; never fails (see the type's docs).
    ///
    /// Each call runs in an `info` span named `execute_tool`, with OpenTelemetry's GenAI
    /// attributes (`gen_ai.operation.name`, `gen_ai.tool.name`, `gen_ai.tool.call.id`) and, once
    /// it ends, `outcome` (`ok` or `error`) and for a failure `error.type` (`unknown_tool`,
    /// `tool_error` or `panic`). Arguments and results are not recorded: they may hold user data.
    pub async fn call(&self, call: &ToolCall) -> Message {
        let id = call.id.clone().unwrap_or_default();
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = %format_args!("execute_tool {}", call.name),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %call.name,
            gen_ai.tool.call.id = %id,
            outcome = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        let (message, failure) = self.answer(call, id).instrument(span.clone()).await;
        match failure {
            None => span.record("outcome", "ok"),
            Some(kind) => span.record("outcome", "error").record("error.type", kind),
        };
        message
    }

    /// The answer to one call and, when it failed, the kind of failure.
    async fn answer(&self, call: &ToolCall, id: String) -> (Message, Option<&'static str>) {
        let Some(tool) = self.tools.get(&call.name) else {
            let available = self.order.join(", ");
            let text = format!("Error: {} is not a valid tool, try one of [{available}].", call.name);
            let message =
                Message::tool(text, id).with_name(call.name.as_str()).with_status(ToolStatus::Error);
            return (message, Some("unknown_tool"));
        };
        // A panicking tool must not take the graph down with it; it becomes an error answer.
        let outcome = AssertUnwindSafe(tool.call(call.args.clone())).catch_unwind().await;
        match outcome {
            Ok(Ok(out)) => {
                let mut message = Message::tool(out.content, id).with_name(call.name.as_str());
                if let Some(artifact) = out.artifact {
                    message = message.with_artifact(artifact);
                }
                (message, None)
            }
            Ok(Err(e)) => (error_message(&call.name, id, &e.to_string()), Some("tool_error")),
            Err(_) => (error_message(&call.name, id, "the tool panicked"), Some("panic")),
        }
    }

    /// Answers every tool call of the last message, if it is an AI message: valid calls run
    /// concurrently; calls whose arguments did not parse get an error answer. Results are in
    /// call order, whatever order the tools finish in.
    pub async fn run(&self, messages: &[Message]) -> Vec<Message> {
        let Some(last) = messages.last().filter(|m| m.kind() == MessageType::Ai) else {
            return Vec::new();
        };
        let mut results =
            futures_util::future::join_all(last.tool_calls().iter().map(|c| self.call(c))).await;
        results.extend(last.invalid_tool_calls().iter().map(Self::answer_invalid));
        results
    }

    /// The error answer to a call whose arguments did not parse, so the call is not left
    /// unanswered (providers reject a history with an unanswered call).
    pub fn answer_invalid(call: &InvalidToolCall) -> Message {
        let name = call.name.clone().unwrap_or_default();
        let reason = call.error.as_deref().unwrap_or("arguments are not valid JSON");
        error_message(&name, call.id.clone().unwrap_or_default(), reason)
    }
}

/// The ToolMessage for a failed call, worded as LangGraph's ToolNode words it.
fn error_message(name: &str, id: String, error: &str) -> Message {
    Message::tool(format!("Error: {error}\n Please fix your mistakes."), id)
        .with_name(name)
        .with_status(ToolStatus::Error)
        .with_artifact(Value::Null)
}

/// Marker that keeps [`ToolNode`]'s [`IntoNode`] impl apart from the closure impls.
#[derive(Debug)]
pub struct ToolNodeMarker;

impl<S, C> IntoNode<S, C, ToolNodeMarker> for ToolNode
where
    S: HasMessages,
    C: Send + Sync + 'static,
{
    fn into_node(self) -> BoxedNode<S, C> {
        mnemograph_core::node(move |state: S| {
            let node = self.clone();
            async move {
                let answers = node.run(state.messages()).await;
                let output = if answers.is_empty() {
                    NodeOutput::empty()
                } else {
                    NodeOutput::update(S::messages_update(answers))
                };
                Ok::<_, std::convert::Infallible>(output)
            }
        })
    }
}

/// Routes to `"tools"` when the last message is an AI message with tool calls, else to `END`
/// (LangGraph's `tools_condition`). Use it as a conditional edge after the model node.
pub fn tools_condition<S: HasMessages>(state: &S) -> &'static str {
    match state.messages().last() {
        Some(m)
            if m.kind() == MessageType::Ai
                && (!m.tool_calls().is_empty() || !m.invalid_tool_calls().is_empty()) =>
        {
            "tools"
        }
        _ => END,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{tool, tool_with_schema};
    use serde_json::json;
    use std::time::Duration;

    fn tools() -> ToolNode {
        let slow = tool_with_schema("slow", "", json!({}), |_: Value| async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok::<_, std::convert::Infallible>("slow done")
        });
        let fast = tool_with_schema("fast", "", json!({}), |_: Value| async {
            Ok::<_, std::convert::Infallible>("fast done")
        });
        let fails = tool_with_schema("fails", "", json!({}), |_: Value| async { Err::<String, _>("boom") });
        let panics = tool_with_schema("panics", "", json!({}), |_: Value| async {
            if true {
                panic!("tool bug");
            }
            Ok::<_, std::convert::Infallible>("")
        });
        ToolNode::new([slow.into(), fast.into(), fails.into(), panics.into()])
    }

    fn ai_calling(names: &[&str]) -> Message {
        let calls =
            names.iter().enumerate().map(|(i, n)| ToolCall::new(*n, json!({}), format!("c{i}"))).collect();
        Message::ai("").with_tool_calls(calls)
    }

    #[tokio::test(start_paused = true)]
    async fn calls_run_concurrently_and_answer_in_call_order() {
        let started = tokio::time::Instant::now();
        let out = tools().run(&[ai_calling(&["slow", "fast", "slow"])]).await;
        assert!(started.elapsed() < Duration::from_millis(100), "{:?}", started.elapsed());
        let ids: Vec<_> = out.iter().map(|m| m.tool_call_id().unwrap()).collect();
        assert_eq!(ids, ["c0", "c1", "c2"]);
        assert_eq!(out[1].text(), "fast done");
        assert!(out.iter().all(|m| m.status() == Some(ToolStatus::Success)));
    }

    #[tokio::test]
    async fn failures_become_error_tool_messages() {
        let mut ai = ai_calling(&["fails", "panics", "nope"]);
        ai = ai.with_invalid_tool_calls(vec![InvalidToolCall {
            name: Some("fast".to_owned()),
            args: Some("{oops".to_owned()),
            id: Some("bad".to_owned()),
            error: Some("expected value".to_owned()),
        }]);
        let out = tools().run(&[ai]).await;
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|m| m.status() == Some(ToolStatus::Error)));
        assert!(out[0].text().starts_with("Error: boom"));
        assert!(out[1].text().contains("panicked"));
        assert!(out[2].text().contains("nope is not a valid tool, try one of [slow, fast, fails, panics]"));
        assert_eq!(out[3].tool_call_id(), Some("bad"));
    }

    #[test]
    fn condition_routes_on_tool_calls() {
        let state = |m: Message| MessagesState { messages: vec![Message::human("q"), m] };
        assert_eq!(tools_condition(&state(ai_calling(&["fast"]))), "tools");
        assert_eq!(tools_condition(&state(Message::ai("done"))), END);
        assert_eq!(tools_condition(&MessagesState::default()), END);
    }

    #[test]
    fn typed_tool_spec_is_listed() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        struct A {
            #[allow(dead_code)]
            x: i32,
        }
        let t = tool("typed", "d", |_: A| async { Ok::<_, std::convert::Infallible>("") });
        let node = ToolNode::new([t.into()]);
        assert_eq!(node.specs()[0].parameters["properties"]["x"]["type"], "integer");
    }
}
