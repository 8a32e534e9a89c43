//! Time expressions: "what did I tell you yesterday?" (or "我昨天跟你说了什么？") recalls only what
//! was saved yesterday by the agent's clock; a window that holds nothing falls back to recall
//! from any time, and says so.

mod support;

use memory_agent::{render_turn, Agent};
use mnemograph_memory::now_secs;
use support::scripted::Scripted;

const DAY: i64 = 86_400;

/// Sets the agent's clock to noon UTC `days_ago` days before today: midnight is hours away,
/// whenever the test runs.
fn at_noon(agent: &Agent, days_ago: i64) {
    let now = now_secs();
    let noon = now.div_euclid(DAY) * DAY + DAY / 2 - days_ago * DAY;
    agent.context().clock.set_offset(noon - now);
}

/// An agent told one fact three days ago, two yesterday and one today, each day in its own
/// session named after it; the clock is left at today's noon.
async fn a_few_days() -> Agent {
    let agent = support::agent_with(Scripted::default().shared(), |c| c);
    for (days_ago, session, text) in [
        (3, "three-days-ago", "My ticket number is WX-48213."),
        (1, "yesterday", "I bought a red bicycle."),
        (1, "yesterday", "I planted tomatoes in the garden."),
        (0, "today", "I booked a dentist appointment."),
    ] {
        at_noon(&agent, days_ago);
        agent.chat("ada", session, text).await.unwrap();
    }
    at_noon(&agent, 0);
    agent
}

#[tokio::test]
async fn yesterday_recalls_only_what_was_said_yesterday_in_english_and_chinese() {
    let agent = a_few_days().await;
    for (session, question, phrase) in
        [("evening", "What did I tell you yesterday?", "yesterday"), ("晚上", "我昨天跟你说了什么？", "昨天")]
    {
        let turn = agent.chat("ada", session, question).await.unwrap();
        let mut said: Vec<&str> =
            turn.recalled.iter().map(|h| h.record.content.lines().next().unwrap()).collect();
        said.sort_unstable();
        assert_eq!(
            said,
            ["User: I bought a red bicycle.", "User: I planted tomatoes in the garden."],
            "{question}: {turn:?}"
        );
        let window = turn.recall_window.as_ref().expect("the question names a time");
        assert_eq!(window.phrase, phrase);
        assert!(!turn.window_fallback, "{turn:?}");
        assert!(
            render_turn(&turn).contains(&format!("time: recalling from {phrase} (")),
            "{}",
            render_turn(&turn)
        );
    }
}

#[tokio::test]
async fn an_empty_window_falls_back_to_any_time_and_says_so() {
    let agent = a_few_days().await;
    let turn =
        agent.chat("ada", "evening", "What did I tell you 10 days ago about my ticket?").await.unwrap();
    assert!(turn.window_fallback, "nothing was saved ten days ago: {turn:?}");
    assert_eq!(turn.recall_window.as_ref().map(|w| w.phrase.as_str()), Some("10 days ago"));
    assert_eq!(turn.recalled.len(), 3, "{turn:?}");
    assert!(turn.recalled[0].record.content.contains("WX-48213"), "{turn:?}");
    assert!(render_turn(&turn).contains("recalled from any time"), "{}", render_turn(&turn));
}

#[tokio::test]
async fn a_question_naming_no_time_recalls_from_any_time() {
    let agent = a_few_days().await;
    let turn = agent.chat("ada", "evening", "What is my ticket number?").await.unwrap();
    assert_eq!((turn.recall_window.as_ref(), turn.window_fallback), (None, false));
    assert!(turn.recalled.iter().any(|h| h.record.session_id == "three-days-ago"), "{turn:?}");
    assert!(!render_turn(&turn).contains("time:"), "{}", render_turn(&turn));
}
