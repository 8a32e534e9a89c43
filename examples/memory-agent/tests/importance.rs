//! Importance at write time: with a real model the chat model scores each exchange and the score
//! is what long-term memory stores; a reply without a number, or a failed call, falls back to the
//! offline rule without costing the turn.

mod support;

use memory_agent::{Agent, ImportanceScorer, IMPORTANCE_PROMPT};
use mnemograph_core::messages::MessageType;
use mnemograph_memory::Memory;
use support::scripted::{Scripted, FAIL};

/// The agent of `model`, scoring importance with it.
fn llm_agent(model: &Scripted) -> Agent {
    let shared = model.shared();
    support::agent_with(shared.clone(), |c| c.with_importance(ImportanceScorer::Llm(shared)))
}

/// The importance stored for each exchange of a session, in order.
async fn stored(agent: &Agent, user: &str, session: &str) -> Vec<f32> {
    let records = agent.context().memory.session_records(user, session).await.unwrap();
    records.iter().map(|r| r.importance).collect()
}

#[tokio::test]
async fn the_models_score_is_stored_with_the_memory() {
    let model = Scripted::new(["0.93", "Importance: 0.15"], []);
    let agent = llm_agent(&model);
    agent.chat("ada", "monday", "My dog is called Biscuit.").await.unwrap();
    agent.chat("ada", "monday", "What is my dog called?").await.unwrap();

    // The rule would have stored 0.7 and 0.2.
    assert_eq!(stored(&agent, "ada", "monday").await, [0.93, 0.15]);

    // Each request holds the scoring prompt and the whole exchange, at temperature 0.
    let scored = model.scored();
    assert_eq!(scored.len(), 2);
    assert_eq!(scored[0].temperature, Some(0.0));
    assert_eq!(scored[0].messages[0].text(), IMPORTANCE_PROMPT);
    let exchange = scored[0].messages.iter().find(|m| m.kind() == MessageType::Human).unwrap().text();
    assert!(exchange.starts_with("User: My dog is called Biscuit.\nAssistant: Noted"), "{exchange}");
}

#[tokio::test]
async fn an_unreadable_reply_or_a_failed_call_falls_back_to_the_rule() {
    let model = Scripted::new(["very important!", FAIL, "nothing", "2.5"], []);
    let agent = llm_agent(&model);
    for text in ["I'm allergic to peanuts.", "I live in Beijing.", "Where do I live?", "I play the cello."] {
        let turn = agent.chat("ada", "monday", text).await.expect("scoring never fails the turn");
        assert!(!turn.answer.is_empty());
    }
    // Garbage and a failed call: the rule (statement 0.7, question 0.2); out of range: clamped.
    assert_eq!(stored(&agent, "ada", "monday").await, [0.7, 0.7, 0.2, 1.0]);
    assert_eq!(model.importance.remaining(), 0, "the model was asked every time");
}

#[tokio::test]
async fn offline_the_rule_scores_and_the_model_is_not_asked() {
    let model = Scripted::new(["0.99"], []);
    let agent = support::agent_with(model.shared(), |c| c);
    agent.chat("ada", "monday", "My dog is called Biscuit.").await.unwrap();
    agent.chat("ada", "monday", "What is my dog called?").await.unwrap();
    assert_eq!(stored(&agent, "ada", "monday").await, [0.7, 0.2]);
    assert!(model.scored().is_empty());
}
