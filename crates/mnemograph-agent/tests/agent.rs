//! create_agent: the loop, middleware order and semantics, trimming persisted through the
//! reducer, jumps, and token streaming.

mod support;

use std::sync::Arc;

use mnemograph_agent::{
    create_agent, AgentState, AgentStateUpdate, Hook, HookResult, JumpTo, Middleware, ModelNext,
    ModelRequest, ModelResponse, SummarizationMiddleware, ToolNext, ToolRequest, TrimmingMiddleware,
};
use mnemograph_core::messages::{Message, MessageType, ToolCall, ToolStatus};
use mnemograph_core::prelude::*;
use mnemograph_core::{BoxError, Runtime};
use mnemograph_models::{tool_with_schema, ChatModelExt, SharedTool};
use parking_lot::Mutex;
use serde_json::{json, Value};
use support::{Fake, Recorder};

fn call(name: &str, args: Value, id: &str) -> Message {
    Message::ai("").with_tool_calls(vec![ToolCall::new(name, args, id)])
}

fn lookup() -> SharedTool {
    tool_with_schema("lookup", "Looks things up", json!({"type": "object"}), |args: Value| async move {
        match args["q"].as_str() {
            Some("fail") => Err("lookup backend down".into()),
            Some(q) => Ok(format!("result for {q}")),
            None => Err::<String, BoxError>("missing q".into()),
        }
    })
    .into()
}

fn kinds(messages: &[Message]) -> Vec<MessageType> {
    messages.iter().map(Message::kind).collect()
}

#[tokio::test]
async fn react_loop_runs_tools_until_a_plain_answer() {
    let model = Fake::new([
        call("lookup", json!({"q": "rust"}), "c1"),
        Message::ai("").with_tool_calls(vec![
            ToolCall::new("lookup", json!({"q": "fail"}), "c2"),
            ToolCall::new("nope", json!({}), "c3"),
        ]),
        Message::ai("done"),
    ]);
    let agent = create_agent(model.clone(), [lookup()]).system_prompt("be brief").compile().unwrap();
    let names: Vec<&str> = agent.node_names().collect();
    assert_eq!(names, ["__start__", "model", "tools"]);
    let out = agent.invoke(Message::human("go").into(), &RunConfig::new()).await.unwrap();
    use MessageType::*;
    assert_eq!(kinds(&out.messages), [Human, Ai, Tool, Ai, Tool, Tool, Ai]);
    assert_eq!(out.messages[2].text(), "result for rust");
    assert_eq!(out.messages[4].status(), Some(ToolStatus::Error));
    assert!(out.messages[4].text().contains("lookup backend down"));
    assert!(out.messages[5].text().contains("nope is not a valid tool"));
    assert_eq!(out.messages.last().unwrap().text(), "done");
    // The system prompt is sent on every call and never stored.
    let calls = model.0.calls();
    assert_eq!(calls.len(), 3);
    assert!(calls.iter().all(|c| c[0].kind() == System && c[0].text() == "be brief"));
    assert!(out.messages.iter().all(|m| m.kind() != System));
}

#[tokio::test]
async fn hooks_are_nodes_in_langchain_order_and_wrappers_nest() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = Fake::new([call("lookup", json!({"q": "x"}), "c1"), Message::ai("done")]);
    let agent = create_agent(model, [lookup()])
        .middleware(Recorder { name: "a", log: log.clone() })
        .middleware(Recorder { name: "b", log: log.clone() })
        .compile()
        .unwrap();
    let mut names: Vec<&str> = agent.node_names().collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "__start__",
            "a.after_agent",
            "a.after_model",
            "a.before_agent",
            "a.before_model",
            "b.after_agent",
            "b.after_model",
            "b.before_agent",
            "b.before_model",
            "model",
            "tools"
        ]
    );
    agent.invoke(Message::human("go").into(), &RunConfig::new()).await.unwrap();
    let model_turn = [
        "a.before_model",
        "b.before_model",
        "a.wrap_model>",
        "b.wrap_model>",
        "<b.wrap_model",
        "<a.wrap_model",
        "b.after_model",
        "a.after_model",
    ];
    let mut expected = vec!["a.before_agent", "b.before_agent"];
    expected.extend(model_turn);
    expected.extend(["a.wrap_tool>", "b.wrap_tool>", "<b.wrap_tool", "<a.wrap_tool"]);
    expected.extend(model_turn);
    expected.extend(["b.after_agent", "a.after_agent"]);
    assert_eq!(*log.lock(), expected);
}

/// Shows the model only the last message, and marks tool results, without touching state.
struct Ephemeral;

impl Middleware for Ephemeral {
    fn name(&self) -> &str {
        "ephemeral"
    }
    async fn wrap_model_call(
        &self,
        mut request: ModelRequest,
        next: ModelNext<'_>,
    ) -> Result<ModelResponse, BoxError> {
        request.messages = request.messages.split_off(request.messages.len() - 1);
        next.run(request).await
    }
    async fn wrap_tool_call(&self, mut request: ToolRequest, next: ToolNext<'_>) -> Message {
        request.call.args = json!({"q": "rewritten"});
        next.run(request).await
    }
}

#[tokio::test]
async fn wrappers_change_what_the_call_sees_but_not_the_state() {
    let model = Fake::new([call("lookup", json!({"q": "orig"}), "c1"), Message::ai("done")]);
    let agent = create_agent(model.clone(), [lookup()]).middleware(Ephemeral).compile().unwrap();
    let out = agent
        .invoke(
            vec![Message::human("one"), Message::ai("two"), Message::human("three")].into(),
            &RunConfig::new(),
        )
        .await
        .unwrap();
    assert!(model.0.calls().iter().all(|c| c.len() == 1));
    assert_eq!(out.messages.len(), 6);
    assert_eq!(out.messages[3].tool_calls()[0].args, json!({"q": "orig"}));
    assert_eq!(out.messages[4].text(), "result for rewritten");
}

/// Ends the loop before the model once `limit` AI messages exist; sends a plain reply back to
/// the model once.
struct Jumper {
    limit: usize,
}

impl Middleware for Jumper {
    fn name(&self) -> &str {
        "jumper"
    }
    fn hooks(&self) -> &'static [Hook] {
        &[Hook::BeforeModel, Hook::AfterModel]
    }
    fn can_jump_to(&self, hook: Hook) -> &[JumpTo] {
        match hook {
            Hook::BeforeModel => &[JumpTo::End],
            _ => &[JumpTo::Model],
        }
    }
    async fn before_model(&self, state: &AgentState, _: &Runtime) -> HookResult {
        let ai = state.messages.iter().filter(|m| m.kind() == MessageType::Ai).count();
        Ok((ai >= self.limit).then(|| AgentStateUpdate::jump_to(JumpTo::End)))
    }
    async fn after_model(&self, state: &AgentState, _: &Runtime) -> HookResult {
        let last = state.messages.last().map(Message::text).unwrap_or_default();
        Ok((last == "again")
            .then(|| AgentStateUpdate::messages(vec![Message::human("retry")]).with_jump_to(JumpTo::Model)))
    }
}

#[tokio::test]
async fn jump_to_loops_and_ends() {
    let model = Fake::new([Message::ai("again"), Message::ai("again"), Message::ai("never")]);
    let agent = create_agent(model.clone(), []).middleware(Jumper { limit: 2 }).compile().unwrap();
    let out = agent.invoke(Message::human("go").into(), &RunConfig::new()).await.unwrap();
    let texts: Vec<String> = out.messages.iter().map(Message::text).collect();
    assert_eq!(texts, ["go", "again", "retry", "again", "retry"]);
    assert_eq!(model.0.calls().len(), 2);
    assert_eq!(out.jump_to, Some(JumpTo::End));
}

#[tokio::test]
async fn trimming_rewrites_the_checkpointed_history_through_the_reducer() {
    let article = "正文".repeat(3000);
    let search = tool_with_schema("get_article_content", "", json!({}), move |_: Value| {
        let article = article.clone();
        async move { Ok::<_, std::convert::Infallible>(article) }
    });
    let mut script = Vec::new();
    for turn in 0..8 {
        script.push(call("get_article_content", json!({"id": turn}), &format!("c{turn}")));
        script.push(Message::ai(format!("第 {turn} 篇文章讲的是 Redis 快照。")));
    }
    let model = Fake::new(script);
    let agent = create_agent(model.clone(), [search.into()])
        .middleware(TrimmingMiddleware::new(1500).with_max_tool_chars(500))
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let config = RunConfig::thread("u1:s1");
    for turn in 0..8 {
        // An empty AI message (an aborted generation) rides along with every question.
        let input = vec![Message::human(format!("第 {turn} 个问题")), Message::ai("")];
        agent.invoke(input.into(), &config).await.unwrap();
    }
    let stored = agent.get_state(&config).await.unwrap().values.messages;
    // The checkpoint holds the rewritten history (RemoveMessage(REMOVE_ALL) + kept), not 40
    // messages: a couple of recent turns, starting at a human message.
    assert!(stored.len() <= 10, "{}", stored.len());
    assert_eq!(stored[0].kind(), MessageType::Human);
    assert_eq!(stored.last().unwrap().text(), "第 7 篇文章讲的是 Redis 快照。");
    assert!(stored
        .iter()
        .all(|m| !(m.kind() == MessageType::Ai && m.text().is_empty() && m.tool_calls().is_empty())));
    let tools: Vec<&Message> = stored.iter().filter(|m| m.kind() == MessageType::Tool).collect();
    assert!(!tools.is_empty() && tools.iter().all(|m| m.text().chars().count() < 600));
    // Every model call was within the budget.
    let approx = mnemograph_models::ApproxTokenCounter::new();
    for sent in model.0.calls() {
        assert!(
            sent.iter().map(|m| mnemograph_models::TokenCounter::count_message(&approx, m)).sum::<usize>()
                <= 1500
        );
    }
}

#[tokio::test]
async fn summarization_replaces_the_prefix_and_keeps_tool_pairs() {
    let summarizer = Fake::new([Message::ai("用户问了很多问题。")]);
    let mut history = Vec::new();
    for i in 0..10 {
        history.push(Message::human(format!("问题 {i}：Redis 和 MySQL 的区别是什么？")));
        history.push(Message::ai(format!("回答 {i}：一个是内存数据库，一个是关系型数据库。")));
    }
    history.push(call("lookup", json!({"q": "x"}), "c9"));
    history.push(Message::tool("result", "c9"));
    let model = Fake::new([Message::ai("好的")]);
    let agent = create_agent(model.clone(), [lookup()])
        .middleware(SummarizationMiddleware::new(summarizer.clone().shared(), 200).keep_messages(1))
        .compile()
        .unwrap();
    let out = agent.invoke(history.into(), &RunConfig::new()).await.unwrap();
    use MessageType::*;
    assert_eq!(kinds(&out.messages), [Human, Ai, Tool, Ai]);
    assert!(out.messages[0]
        .text()
        .starts_with("Here is a summary of the conversation to date:\n\n用户问了很多问题。"));
    assert_eq!(out.messages[0].additional_kwargs()["lc_source"], "summarization");
    assert!(summarizer.0.calls()[0][1].text().contains("问题 9"));
    assert_eq!(model.0.calls()[0].len(), 3);
}

#[tokio::test]
async fn tokens_stream_from_the_model_node_and_final_state_matches_invoke() {
    let script = || {
        Fake::new([
            call("lookup", json!({"q": "x"}), "c1").with_id("ai-1"),
            Message::ai("the final answer is here").with_id("ai-2"),
        ])
    };
    let input = || AgentStateUpdate::from(Message::human("go").with_id("h1"));
    let build = |m: Fake| create_agent(m, [lookup()]).compile().unwrap();
    let plain = build(script()).invoke(input(), &RunConfig::new()).await.unwrap().into_state();

    let agent = build(script());
    let mut events =
        agent.stream(Some(input()), &RunConfig::new()).modes([StreamMode::Messages, StreamMode::Values]);
    let mut tokens = String::new();
    let mut tool_results = Vec::new();
    let mut last = None;
    while let Some(event) = events.next().await {
        match event.unwrap() {
            // The model's tokens, and the tool's result once the tools node returns it, as
            // LangGraph's messages mode streams a ToolNode's messages.
            StreamEvent::Messages { chunk, metadata } if chunk.kind() == MessageType::Tool => {
                assert_eq!(&*metadata.node, "tools");
                tool_results.push(chunk.text());
            }
            StreamEvent::Messages { chunk, metadata } => {
                assert_eq!(&*metadata.node, "model");
                if chunk.id() == Some("ai-2") {
                    tokens.push_str(&chunk.text());
                }
            }
            StreamEvent::Values(state) => last = Some(state),
            _ => {}
        }
    }
    assert_eq!(tokens, "the final answer is here");
    assert_eq!(tool_results.len(), 1, "{tool_results:?}");
    let streamed = last.unwrap();
    let strip = |ms: &[Message]| -> Vec<(MessageType, String, Vec<ToolCall>)> {
        ms.iter().map(|m| (m.kind(), m.text(), m.tool_calls().to_vec())).collect()
    };
    assert_eq!(strip(&streamed.messages), strip(&plain.messages));
    assert_eq!(streamed.messages[1], plain.messages[1]);
    assert_eq!(streamed.messages[3], plain.messages[3]);
}
