//! Function hooks (LangChain's `@before_model` and friends), `can_jump_to`, and the trimming
//! middleware's budget with the system prompt counted.

mod support;

use std::sync::Arc;

use mnemograph_agent::middleware::{after_model, before_model, FnHook};
use mnemograph_agent::{create_agent, AgentState, AgentStateUpdate, Error, Hook, JumpTo, TrimmingMiddleware};
use mnemograph_core::messages::Message;
use mnemograph_core::prelude::*;
use mnemograph_models::{ApproxTokenCounter, ChatModel, ChatRequest, TokenCounter};
use parking_lot::Mutex;
use support::Fake;

async fn end_now(_: AgentState) -> Result<Option<AgentStateUpdate>, String> {
    Ok(Some(AgentStateUpdate::jump_to(JumpTo::End)))
}

#[tokio::test]
async fn can_jump_to_undeclared_jump_is_an_error() {
    let agent = create_agent(Fake::new([Message::ai("never")]), [])
        .middleware(before_model("guard", end_now))
        .compile()
        .unwrap();
    let err = agent.invoke(Message::human("hi").into(), &RunConfig::new()).await.unwrap_err();
    let mnemograph_core::Error::Node { node, source } = &err else {
        panic!("expected a node error, got {err:?}")
    };
    assert_eq!(node, "guard.before_model");
    match source.downcast_ref::<Error>() {
        Some(Error::UndeclaredJump { middleware, hook, jump }) => {
            assert_eq!((middleware.as_str(), *hook, *jump), ("guard", "before_model", JumpTo::End));
        }
        other => panic!("expected UndeclaredJump, got {other:?}"),
    }
}

#[tokio::test]
async fn can_jump_to_declared_jump_skips_the_model() {
    let agent = create_agent(Fake::new([Message::ai("never")]), [])
        .middleware(before_model("guard", end_now).can_jump_to([JumpTo::End]))
        .compile()
        .unwrap();
    let out = agent.invoke(Message::human("hi").into(), &RunConfig::new()).await.unwrap();
    assert_eq!(out.messages.len(), 1, "the model never ran: {:?}", out.messages);
    assert_eq!(out.jump_to, Some(JumpTo::End));
}

#[test]
fn can_jump_to_draws_only_declared_edges() {
    let quiet = create_agent(Fake::default(), [])
        .middleware(before_model("quiet", |_s: AgentState| async { Ok::<_, String>(None) }));
    let drawing = quiet.compile().unwrap().draw_mermaid();
    let from_hook: Vec<&str> = drawing.lines().filter(|l| l.contains("quiet_before_model -.->")).collect();
    assert_eq!(from_hook.len(), 1, "only the edge to the model:\n{drawing}");
    assert!(from_hook[0].contains("model"), "{drawing}");

    let jumper = create_agent(Fake::default(), [])
        .middleware(before_model("jumper", end_now).can_jump_to([JumpTo::End]))
        .compile()
        .unwrap()
        .draw_mermaid();
    let from_hook: Vec<&str> = jumper.lines().filter(|l| l.contains("jumper_before_model -.->")).collect();
    assert_eq!(from_hook.len(), 2, "to the model and to the end:\n{jumper}");
    assert!(from_hook.iter().any(|l| l.contains("__end__")), "{jumper}");
}

#[tokio::test]
async fn function_hooks_rewrite_the_checkpointed_history() {
    // Keeps only the latest message before each model call: `[RemoveMessage(REMOVE_ALL), last]`.
    let keep_last = before_model("keep_last", |s: AgentState| async move {
        let last = s.messages.last().cloned().into_iter();
        let kept: Vec<Message> = std::iter::once(Message::remove_all()).chain(last).collect();
        Ok::<_, String>(Some(AgentStateUpdate::messages(kept)))
    });
    let agent = create_agent(Fake::new([Message::ai("a1"), Message::ai("a2")]), [])
        .middleware(keep_last)
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let config = RunConfig::thread("t");
    agent.invoke(Message::human("q1").into(), &config).await.unwrap();
    let out = agent.invoke(Message::human("q2").into(), &config).await.unwrap();
    let texts: Vec<String> = out.messages.iter().map(Message::text).collect();
    assert_eq!(texts, ["q2", "a2"]);
}

#[tokio::test]
async fn function_hook_with_runtime_sees_its_node() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let hook = FnHook::with_runtime("probe", Hook::AfterModel, move |s: AgentState, rt: Runtime| {
        let log = Arc::clone(&log);
        async move {
            log.lock().push((rt.node().to_owned(), s.messages.len()));
            Ok::<_, String>(None)
        }
    });
    let agent = create_agent(Fake::new([Message::ai("a")]), []).middleware(hook).compile().unwrap();
    agent.invoke(Message::human("q").into(), &RunConfig::new()).await.unwrap();
    assert_eq!(*seen.lock(), [("probe.after_model".to_owned(), 2)]);
}

#[tokio::test]
async fn after_model_function_can_loop_back_to_the_model() {
    let retry_once = after_model("retry", |s: AgentState| async move {
        let again = s.messages.last().is_some_and(|m| m.text() == "draft");
        Ok::<_, String>(again.then(|| {
            AgentStateUpdate::messages(vec![Message::human("improve it")]).with_jump_to(JumpTo::Model)
        }))
    })
    .can_jump_to([JumpTo::Model]);
    let agent = create_agent(Fake::new([Message::ai("draft"), Message::ai("final")]), [])
        .middleware(retry_once)
        .compile()
        .unwrap();
    let out = agent.invoke(Message::human("write").into(), &RunConfig::new()).await.unwrap();
    let texts: Vec<String> = out.messages.iter().map(Message::text).collect();
    assert_eq!(texts, ["write", "draft", "improve it", "final"]);
}

/// Records the token count of every request it receives.
struct Measuring(Arc<Mutex<Vec<(usize, usize)>>>);

impl ChatModel for Measuring {
    async fn invoke(&self, r: ChatRequest) -> mnemograph_models::Result<Message> {
        let tokens = ApproxTokenCounter::new().count_messages(&r.messages);
        self.0.lock().push((r.messages.len(), tokens));
        Ok(Message::ai("好的，我明白了。"))
    }
}

#[tokio::test]
async fn trimming_counts_the_system_prompt_in_the_budget() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let system = "你是一个博客助手，请根据文章内容回答问题，并给出引用。".repeat(8);
    let budget = 400;
    let agent = create_agent(Measuring(Arc::clone(&seen)), [])
        .system_prompt(system.clone())
        .middleware(TrimmingMiddleware::new(budget))
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let config = RunConfig::thread("t");
    let mut stored = 0;
    for i in 0..12 {
        let question = format!("第 {i} 个问题：Redis 的 checkpoint 会保存多久？");
        stored = agent.invoke(Message::human(question).into(), &config).await.unwrap().messages.len();
    }
    let counter = ApproxTokenCounter::new();
    assert!(
        counter.count_message(&Message::system(system.as_str())) > budget / 2,
        "the prompt is a large share"
    );
    for (n, tokens) in seen.lock().iter() {
        assert!(*tokens <= budget, "a request of {n} messages had {tokens} tokens, budget {budget}");
    }
    let last = seen.lock().last().copied().unwrap();
    assert!(
        last.0 - 1 < stored,
        "the model saw fewer turns ({}) than the checkpoint holds ({stored})",
        last.0 - 1
    );
}
