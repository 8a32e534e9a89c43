//! Recall inside a long session: what trimming dropped from the model request is recalled from
//! long-term memory like an earlier session's exchange, and what the request still holds is
//! never recalled twice.

mod support;

use memory_agent::Agent;
use mnemograph_models::ChatRequest;
use support::scripted::Scripted;

/// Small enough that twenty exchanges do not fit.
const BUDGET: usize = 300;

/// A second ticket, as close to the question as the first statement but not restating it.
const FERRY: &str = "The ferry ticket in my pocket is F-77.";

/// The session's questions are asked in.
const SESSION: &str = "support";

/// The agent with the small budget, after `first` and twenty exchanges about something else.
async fn long_session(model: &Scripted, first: &str) -> Agent {
    let agent = support::agent_with(model.shared(), |c| c.with_max_context_tokens(BUDGET));
    agent.chat("ada", SESSION, first).await.unwrap();
    // An hour later, as the question says: the first statement is then strictly older than the
    // rest, whatever second the test starts in, so consolidation judges them all alike.
    agent.context().clock.set_offset(3600);
    for i in 0..20 {
        // Other words than the question's, so that word hashing ranks them below the fact.
        let text = format!("On day {i} we sailed past lighthouses, harbours and fishing villages.");
        agent.chat("ada", SESSION, &text).await.unwrap();
    }
    agent
}

/// Whether the conversation part of `request` holds `text` anywhere.
fn sends(request: &ChatRequest, text: &str) -> bool {
    request.messages[1..].iter().any(|m| m.text().contains(text))
}

#[tokio::test]
async fn a_statement_trimmed_out_of_the_request_is_recalled_from_long_term_memory() {
    let model = Scripted::default();
    let agent = long_session(&model, "My ticket number is WX-48213.").await;

    let turn =
        agent.chat("ada", SESSION, "What was the ticket number I gave you an hour ago?").await.unwrap();

    let request = model.requests().pop().unwrap();
    assert!(!sends(&request, "WX-48213"), "trimming dropped the statement from the messages");
    let hit = turn
        .recalled
        .iter()
        .find(|h| h.record.content.contains("WX-48213"))
        .unwrap_or_else(|| panic!("recalled from long-term memory: {turn:?}"));
    assert_eq!(hit.record.session_id, SESSION, "{hit:?}");
    assert!(request.messages[0].text().contains("WX-48213"), "the system prompt carries it");
    assert_eq!(turn.answer, format!("You told me in session {SESSION}: \"My ticket number is WX-48213.\""));
}

#[tokio::test]
async fn an_exchange_still_in_the_request_is_not_recalled() {
    let model = Scripted::default();
    let agent = long_session(&model, "My ticket number is WX-48213.").await;
    // As close to the question as the first statement, and still in the window.
    let ferry = agent.chat("ada", SESSION, FERRY).await.unwrap();
    assert_eq!(ferry.retired, Vec::<String>::new(), "a second ticket does not replace the first");

    let turn =
        agent.chat("ada", SESSION, "What was the ticket number I gave you an hour ago?").await.unwrap();

    let request = model.requests().pop().unwrap();
    assert!(sends(&request, FERRY), "the ferry ticket is in the messages");
    assert!(
        turn.recalled.iter().all(|h| !h.record.content.contains("F-77")),
        "what the request holds is not recalled again: {turn:?}"
    );
    assert!(turn.recalled.iter().any(|h| h.record.content.contains("WX-48213")), "{turn:?}");
    for hit in turn.recalled.iter().filter(|h| h.record.session_id == SESSION) {
        let said = hit.record.content.lines().next().and_then(|l| l.strip_prefix("User: ")).unwrap();
        assert!(!request.messages[1..].iter().any(|m| m.text() == said), "recalled and sent: {said}");
    }
}

#[tokio::test]
async fn a_session_that_fits_recalls_none_of_itself() {
    let model = Scripted::default();
    let agent = support::agent_with(model.shared(), |c| c);
    agent.chat("ada", "monday", "My locker code is 4417.").await.unwrap();
    agent.chat("ada", "monday", "I sail on Sundays.").await.unwrap();
    let turn = agent.chat("ada", "monday", "What is my locker code?").await.unwrap();
    assert!(turn.recalled.is_empty(), "the whole session is in the request: {turn:?}");
    assert_eq!(turn.answer, "Earlier in this conversation you said: \"My locker code is 4417.\"");
}
