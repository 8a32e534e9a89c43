//! The scripted demo end to end with the embedded defaults (no server, no key), and the agent's
//! input checks.

mod support;

use graph_core::messages::{Message, MessageType};
use memory_agent::{run_demo, Agent, Config, Error};

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

    // Short-term memory is per thread: friday's thread holds only friday's questions and answers.
    let friday = agent.graph().get_state(&Agent::run_config("ada", "friday")).await.unwrap();
    let humans: Vec<String> =
        friday.values.messages.iter().filter(|m| m.kind() == MessageType::Human).map(Message::text).collect();
    assert_eq!(humans, ["What's my dog's name?", "Am I allergic to anything?"]);
    assert_eq!(friday.values.messages.len(), 4);
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
