//! Short-term trimming: however long a session's thread grows, each model request stays within
//! the token budget and ends with the latest question; a short thread is sent whole. The thread
//! itself keeps every message.

mod support;

use memory_agent::{request_tokens, DEFAULT_MAX_CONTEXT_TOKENS};
use mnemograph_core::messages::MessageType;
use support::scripted::Scripted;

const BUDGET: usize = 400;

#[tokio::test]
async fn a_long_session_is_trimmed_to_the_budget_before_every_call() {
    let model = Scripted::default();
    let agent = support::agent_with(model.shared(), |c| c.with_max_context_tokens(BUDGET));
    // An earlier session, so the system prompt carries recalled memories too.
    agent
        .chat("ada", "monday", "My boat is called the Heron and it is moored in the old harbour.")
        .await
        .unwrap();
    for i in 0..30 {
        let text = format!("Day {i}: we sailed along the coast past the lighthouse and the fishing village.");
        agent.chat("ada", "tuesday", &text).await.unwrap();
    }
    let turn = agent.chat("ada", "tuesday", "What is my boat called?").await.unwrap();
    assert!(turn.answer.contains("Heron"), "{turn:?}");

    let thread = agent.graph().get_state(&memory_agent::Agent::run_config("ada", "tuesday")).await.unwrap();
    assert_eq!(thread.values.messages.len(), 62, "the thread keeps everything");
    assert!(request_tokens(&thread.values.messages) > 2 * BUDGET, "untrimmed, it would not fit");

    let requests = model.requests();
    let last = requests.last().unwrap();
    assert!(request_tokens(&last.messages) <= BUDGET, "{} tokens", request_tokens(&last.messages));
    assert_eq!(last.messages[0].kind(), MessageType::System);
    assert!(last.messages[0].text().contains("Heron"), "the recalled memory is in the prompt");
    assert_eq!(last.messages.last().unwrap().text(), "What is my boat called?");
    assert_eq!(last.messages[1].kind(), MessageType::Human, "the kept part starts on a question");
    assert!(last.messages.len() > 3, "as much recent history as fits is kept: {}", last.messages.len());
    for request in &requests {
        assert!(request_tokens(&request.messages) <= BUDGET);
    }
}

#[tokio::test]
async fn a_short_session_is_sent_whole() {
    let model = Scripted::default();
    let agent = support::agent_with(model.shared(), |c| c);
    assert_eq!(agent.context().max_context_tokens, DEFAULT_MAX_CONTEXT_TOKENS);
    for text in ["My boat is called the Heron.", "I sail on Sundays.", "What is my boat called?"] {
        agent.chat("ada", "monday", text).await.unwrap();
    }
    let thread = agent.graph().get_state(&memory_agent::Agent::run_config("ada", "monday")).await.unwrap();
    let last = model.requests().pop().unwrap();
    // The system prompt, then every message of the thread but the reply to this request.
    let sent: Vec<_> = last.messages[1..].to_vec();
    assert_eq!(sent, thread.values.messages[..thread.values.messages.len() - 1]);
}
