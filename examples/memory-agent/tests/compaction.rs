//! Compaction: a session that has ended (or grown long) is replaced by summaries written by the
//! configured summarizer; its exchanges are retired in favour of the summary, not deleted, and a
//! question about one of its facts recalls the summary instead.

mod support;

use std::collections::HashSet;

use memory_agent::{Agent, AgentSummarizer, CompactPolicy, CompactReason, Error};
use mnemograph_memory::SUMMARY_PROMPT;
use mnemograph_memory::{Memory, MemoryRecord, COMPACTED_REASON, ROLE_EXCHANGE, ROLE_SUMMARY};
use support::scripted::{Scripted, FAIL};

const DAY: i64 = 86_400;

const MONDAY: [&str; 4] =
    ["My dog is called Biscuit.", "I'm allergic to peanuts.", "What is my dog called?", "I play the cello."];

/// Plays `texts` as one session of `user`.
async fn session(agent: &Agent, user: &str, session: &str, texts: &[&str]) {
    for text in texts {
        agent.chat(user, session, text).await.unwrap();
    }
}

async fn records(agent: &Agent, user: &str, session: &str) -> Vec<MemoryRecord> {
    agent.context().memory.session_records(user, session).await.unwrap()
}

#[tokio::test]
async fn an_ended_session_is_replaced_by_its_summary_and_retired_not_deleted() {
    let agent = support::agent_with(Scripted::default().shared(), |c| c);
    session(&agent, "ada", "monday", &MONDAY).await;
    session(&agent, "bob", "monday", &["My dog is called Rex.", "I live in Oslo."]).await;
    // Eight days later Ada is back; Bob is not compacted because he is not asked for.
    agent.context().clock.set_offset(8 * DAY);
    session(&agent, "ada", "tuesday", &["Which train goes to the coast?", "Is it raining there today?"])
        .await;

    let done = agent.compact(&["ada".to_owned()], &CompactPolicy::default()).await.unwrap();
    assert_eq!(done.len(), 1, "only the ended session: {done:?}");
    let c = &done[0];
    assert_eq!((c.user_id.as_str(), c.session_id.as_str(), c.compacted), ("ada", "monday", 4));
    assert!(matches!(c.reason, CompactReason::Ended { idle_secs } if idle_secs >= 8 * DAY), "{c:?}");
    assert_eq!(c.summary_ids.len(), 1);

    // Retired, not deleted: every exchange is kept and points at the summary.
    let monday = records(&agent, "ada", "monday").await;
    let summary = monday.iter().find(|r| r.role == ROLE_SUMMARY).expect("a summary");
    assert_eq!(summary.id, c.summary_ids[0]);
    assert!(!summary.is_retired());
    let exchanges: Vec<&MemoryRecord> = monday.iter().filter(|r| r.role == ROLE_EXCHANGE).collect();
    assert_eq!(exchanges.len(), 4);
    for e in &exchanges {
        assert_eq!(e.superseded_by(), Some(summary.id), "{e:?}");
        assert_eq!(e.metadata["superseded_reason"], COMPACTED_REASON);
    }
    // The offline summary keeps the user's statements, word for word.
    for fact in ["My dog is called Biscuit.", "I'm allergic to peanuts.", "I play the cello."] {
        assert!(summary.content.contains(&format!("User: {fact}")), "{}", summary.content);
    }
    // The other sessions are untouched.
    assert!(records(&agent, "ada", "tuesday").await.iter().all(|r| !r.is_retired()));
    assert!(records(&agent, "bob", "monday")
        .await
        .iter()
        .all(|r| r.role == ROLE_EXCHANGE && !r.is_retired()));

    // A question about a compacted fact recalls the summary, never a retired exchange.
    let retired: HashSet<i64> = exchanges.iter().map(|e| e.id).collect();
    let turn = agent.chat("ada", "wednesday", "Am I allergic to anything?").await.unwrap();
    assert!(turn.recalled.iter().any(|r| r.record.id == summary.id), "{turn:?}");
    assert!(turn.recalled.iter().all(|r| !retired.contains(&r.record.id)), "{turn:?}");
    assert_eq!(turn.answer, "You told me in session monday: \"I'm allergic to peanuts.\"");

    // A second pass has nothing left to do.
    let again = agent.compact(&["ada".to_owned()], &CompactPolicy::default()).await.unwrap();
    assert!(again.is_empty(), "{again:?}");
}

#[tokio::test]
async fn a_long_session_keeps_its_newest_exchanges() {
    let agent = support::agent_with(Scripted::default().shared(), |c| c);
    let texts: Vec<String> = (0..9).map(|i| format!("Fact number {i} about my garden.")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    session(&agent, "ada", "today", &texts).await;

    let policy = CompactPolicy::default().max_exchanges(6);
    let done = agent.compact(&["ada".to_owned()], &policy).await.unwrap();
    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(done[0].reason, CompactReason::Long { exchanges: 9 });
    // 9 - the newest 4 = 5 summarized.
    assert_eq!(done[0].compacted, 5);
    let live: Vec<MemoryRecord> =
        records(&agent, "ada", "today").await.into_iter().filter(|r| !r.is_retired()).collect();
    let kept: Vec<&str> =
        live.iter().filter(|r| r.role == ROLE_EXCHANGE).map(|r| r.content.as_str()).collect();
    assert_eq!(kept.len(), 4);
    assert!(
        kept.iter()
            .all(|c| ["5", "6", "7", "8"].iter().any(|n| c.starts_with(&format!("User: Fact number {n} ")))),
        "{kept:?}"
    );
}

#[tokio::test]
async fn with_a_model_the_model_writes_the_summary() {
    let model = Scripted::new([], ["User: has a dog called Biscuit\nUser: is allergic to peanuts"]);
    let shared = model.shared();
    let agent = support::agent_with(shared.clone(), |c| c.with_summarizer(AgentSummarizer::Llm(shared)));
    session(&agent, "ada", "monday", &MONDAY).await;
    agent.context().clock.set_offset(8 * DAY);

    let done = agent.compact(&["ada".to_owned()], &CompactPolicy::default()).await.unwrap();
    assert_eq!(done[0].compacted, 4);
    let summary =
        records(&agent, "ada", "monday").await.into_iter().find(|r| r.role == ROLE_SUMMARY).unwrap();
    assert_eq!(
        summary.content,
        "Summary of 4 exchanges:\nUser: has a dog called Biscuit\nUser: is allergic to peanuts"
    );

    // The model was given the prompt and every exchange.
    let calls = model.summary.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0][0].text(), SUMMARY_PROMPT);
    for text in MONDAY {
        assert!(calls[0][1].text().contains(&format!("User: {text}")), "{}", calls[0][1].text());
    }
}

#[tokio::test]
async fn a_failed_summary_is_an_error_and_retires_nothing() {
    for reply in [FAIL, "  "] {
        let model = Scripted::new([], [reply]);
        let shared = model.shared();
        let agent = support::agent_with(shared.clone(), |c| c.with_summarizer(AgentSummarizer::Llm(shared)));
        session(&agent, "ada", "monday", &MONDAY).await;
        agent.context().clock.set_offset(8 * DAY);

        let err = agent.compact(&["ada".to_owned()], &CompactPolicy::default()).await.unwrap_err();
        assert!(matches!(err, Error::Memory(mnemograph_memory::Error::Summarizer(_))), "{reply:?}: {err:?}");
        let monday = records(&agent, "ada", "monday").await;
        assert!(monday.iter().all(|r| r.role == ROLE_EXCHANGE && !r.is_retired()), "{monday:?}");
    }
}

#[tokio::test]
async fn a_bad_user_id_is_a_typed_error() {
    let agent = support::agent_with(Scripted::default().shared(), |c| c);
    let err = agent.compact(&[String::new()], &CompactPolicy::default()).await.unwrap_err();
    assert!(matches!(err, Error::Memory(mnemograph_memory::Error::InvalidInput { .. })), "{err:?}");
}
