//! The scripted demo end to end with the embedded defaults (no server, no key), and the agent's
//! input checks.

mod support;

use memory_agent::{run_demo, Agent, Config, Error};
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_memory::{Memory, RetrieveQuery};

#[tokio::test]
async fn embedded_demo_recalls_across_sessions_and_isolates_users() {
    let agent = Agent::connect(&Config::embedded()).await.unwrap();
    let mut transcript = Vec::new();
    let report = run_demo(&agent, "", &mut transcript).await.unwrap();
    support::assert_demo(&report);

    // The transcript shows what the report holds.
    let text = String::from_utf8(transcript).unwrap();
    assert!(text.contains("== ada · session friday · thread ada:friday =="), "{text}");
    assert!(text.contains("[monday] User: Hi, I'm Ada. My dog is called Biscuit."), "{text}");
    assert!(text.contains("isolation: 0 recalled memories belonged to another user"), "{text}");
    assert!(text.contains("== background job · sunday · compact sessions idle 5+ days =="), "{text}");
    assert!(text.contains("compacted ada:monday (idle 6.0 days): 3 exchanges -> 1 summary"), "{text}");
    assert!(text.contains("[monday] Summary of 3 exchanges: | User: Hi, I'm Ada."), "{text}");

    // Short-term memory is per thread: friday's thread holds only friday's questions and answers.
    let friday = agent.graph().get_state(&Agent::run_config("ada", "friday")).await.unwrap();
    let humans: Vec<String> =
        friday.values.messages.iter().filter(|m| m.kind() == MessageType::Human).map(Message::text).collect();
    assert_eq!(humans, ["What's my dog's name?", "Am I allergic to anything?", "I live in Shanghai now."]);
    assert_eq!(friday.values.messages.len(), 6);
    assert!(text.contains("superseded an older memory, now retired (rule: similarity"), "{text}");
}

/// `save_memory` consolidates: a changed fact retires the old memory, which is then left out of
/// recall in later sessions but kept, marked, for audits. Fails if consolidation is not wired.
#[tokio::test]
async fn a_changed_fact_retires_the_old_one_for_later_sessions() {
    let agent = Agent::connect(&Config::embedded()).await.unwrap();
    let report = run_demo(&agent, "", std::io::sink()).await.unwrap();
    support::assert_update_path(&report);
    let moved =
        report.session("ada", "friday").unwrap().turns.iter().find(|t| t.question.contains("Shanghai"));
    assert!(moved.unwrap().retired[0].starts_with("rule: similarity"), "{moved:?}");

    // Retired, not deleted: asked for, the old memory comes back, pointing at its successor.
    let query = RetrieveQuery::new("ada", "Where do I live? Beijing").include_retired(true).top_k(10);
    let all = agent.context().memory.retrieve(query).await.unwrap();
    let old = all.iter().find(|h| h.record.content.contains("I live in Beijing.")).expect("kept");
    let new =
        all.iter().find(|h| h.record.content.starts_with("User: I live in Shanghai")).expect("the move");
    assert_eq!(old.record.superseded_by(), Some(new.record.id), "{old:?}");
    assert!(!new.record.is_retired());

    // A question is never consolidated: asking about the address again retires nothing.
    let again = agent.chat("ada", "sunday", "Do I still live in Shanghai?").await.unwrap();
    assert!(again.retired.is_empty(), "{again:?}");
}

#[tokio::test]
async fn bad_input_is_a_typed_error() {
    let agent = Agent::connect(&Config::embedded()).await.unwrap();
    for (user, session, text) in [("a:b", "s", "hi"), ("", "s", "hi"), ("u", "s\n1", "hi"), ("u", "s", "  ")]
    {
        let err = agent.chat(user, session, text).await.unwrap_err();
        assert!(matches!(err, Error::Invalid { .. }), "{user:?} {session:?} {text:?}: {err:?}");
    }
    // Nothing was run, so nothing was checkpointed.
    assert!(agent.checkpoint_size("u", "s").await.unwrap().is_none());
}
