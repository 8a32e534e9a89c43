//! A question about one of the user's people, whatever word it uses for them: what the user said
//! about that person comes first, before what they said about another relative in words closer
//! to the question's, or later.

mod support;

use memory_agent::Agent;
use support::scripted::Scripted;

/// Ada's statement about her mother.
const MOTHER: &str = "My mother's birthday is on March 3.";

/// Ada's statement about her daughter, sharing words with a question about a "big day".
const DAUGHTER: &str = "Our daughter Lily's big day is on Friday, when she is in the school play.";

/// Ada after saying `first`, then `second` a day later; her questions come a day after that.
async fn ada_said(first: &str, second: &str) -> Agent {
    let agent = support::agent_with(Scripted::default().shared(), |c| c);
    agent.chat("ada", "monday", first).await.unwrap();
    agent.context().clock.set_offset(86_400);
    agent.chat("ada", "tuesday", second).await.unwrap();
    agent.context().clock.set_offset(2 * 86_400);
    agent
}

/// The user's words of the first memory recalled for `question`.
async fn first_recalled(agent: &Agent, question: &str) -> String {
    let turn = agent.chat("ada", "wednesday", question).await.unwrap();
    turn.recalled
        .first()
        .map(|h| h.record.content.lines().next().unwrap_or_default().to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_question_about_mum_recalls_what_was_said_of_the_mother_first() {
    let agent = ada_said(MOTHER, DAUGHTER).await;
    for question in ["When is mum's big day?", "老妈哪天过生日？"] {
        assert_eq!(first_recalled(&agent, question).await, format!("User: {MOTHER}"), "{question}");
    }
}
