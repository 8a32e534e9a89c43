//! The update path with a chat model: its decision retires what a statement supersedes, and
//! when the call fails or the reply is out of format, the offline rule decides instead and the
//! retirement's reason says so; the turn is never lost.

mod support;

use memory_agent::{Agent, AgentConsolidator, FALLBACK_REASON, RULE_SIMILARITY};
use support::scripted::{Scripted, FAIL};

/// The agent of `model`, deciding supersession with it (the rule behind it at word hashing's
/// threshold).
fn llm_agent(model: &Scripted) -> Agent {
    let shared = model.shared();
    support::agent_with(shared.clone(), |c| {
        c.with_consolidator(AgentConsolidator::llm(shared, RULE_SIMILARITY))
    })
}

/// Ada's move: Beijing on Monday, Shanghai four days later. Returns the move's retirements.
async fn move_house(agent: &Agent) -> Vec<String> {
    agent.context().clock.set_offset(-4 * 86_400);
    agent.chat("ada", "monday", "I live in Beijing.").await.unwrap();
    agent.context().clock.set_offset(0);
    let turn = agent.chat("ada", "friday", "I live in Shanghai now.").await.expect("the turn is not lost");
    assert_eq!(turn.answer, "Noted, I will remember that.");
    turn.retired
}

/// The addresses recalled for "Where do I live?" in a new session.
async fn recalled_addresses(agent: &Agent) -> Vec<String> {
    let turn = agent.chat("ada", "saturday", "Where do I live?").await.unwrap();
    turn.recalled.iter().map(|h| h.record.content.lines().next().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn a_failed_or_unreadable_decision_falls_back_to_the_rule_and_says_so() {
    for reply in [FAIL, "Candidate 1 is outdated."] {
        let model = Scripted::default().with_decisions([reply]);
        let agent = llm_agent(&model);
        let retired = move_house(&agent).await;
        assert_eq!(model.decide.remaining(), 0, "{reply}: the model was asked");
        assert_eq!(retired.len(), 1, "{reply}: the rule retired the old address: {retired:?}");
        assert!(retired[0].starts_with(FALLBACK_REASON), "{reply}: {retired:?}");
        assert!(retired[0].contains("rule: similarity"), "{reply}: {retired:?}");
        assert_eq!(recalled_addresses(&agent).await, ["User: I live in Shanghai now."], "{reply}");
    }
}

#[tokio::test]
async fn a_working_model_decides_alone() {
    // The rule would retire Beijing; the model keeps it, and is followed.
    let model = Scripted::default().with_decisions([r#"{"superseded": []}"#]);
    let agent = llm_agent(&model);
    assert!(move_house(&agent).await.is_empty());
    assert_eq!(model.decide.remaining(), 0);
    assert_eq!(recalled_addresses(&agent).await.len(), 2);

    let model =
        Scripted::default().with_decisions([r#"{"superseded": [{"candidate": 1, "reason": "moved"}]}"#]);
    let agent = llm_agent(&model);
    assert_eq!(move_house(&agent).await, ["moved"]);
}

#[test]
fn the_banner_names_the_fallback() {
    let described = AgentConsolidator::llm(Scripted::default().shared(), 0.7).describe();
    assert!(described.contains("offline rule, similarity >= 0.7, if it fails"), "{described}");
}
