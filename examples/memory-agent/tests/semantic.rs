//! The main command's default memory is semantic and bilingual: a question finds a fact it shares
//! no words with, in the other language, and word hashing (asked for by name) does not.

use memory_agent::{Agent, Config, EmbedderChoice};

/// Monday's facts in one language, Friday's questions in the other, no word in common.
const FACTS: [&str; 4] = [
    "我养了一只猫，叫咪咪。",
    "I work as a nurse at a children's hospital.",
    "我对花生过敏。",
    "I live in a small flat near the river in Boulder.",
];
const QUESTIONS: [(&str, &str); 4] = [
    ("What pet do I have?", "咪咪"),
    ("我是做什么工作的？", "nurse"),
    ("What food should I avoid?", "花生"),
    ("我住在哪里？", "Boulder"),
];

/// For each question, whether its fact was the top memory recalled.
async fn recalled_first(config: &Config) -> Vec<bool> {
    let agent = Agent::connect(config).await.unwrap();
    for fact in FACTS {
        agent.chat("lin", "monday", fact).await.unwrap();
    }
    let mut found = Vec::new();
    // One session per question, so no earlier answer enriches the next query.
    for (day, (question, fact)) in QUESTIONS.into_iter().enumerate() {
        let turn = agent.chat("lin", &format!("friday-{day}"), question).await.unwrap();
        let shown: Vec<_> = turn.recalled.iter().map(|r| (r.relevance, r.record.content.as_str())).collect();
        println!("{question}: {shown:?}");
        found.push(turn.recalled.first().is_some_and(|r| r.record.content.contains(fact)));
    }
    found
}

#[tokio::test]
async fn the_default_memory_recalls_across_languages() {
    if std::env::var_os("USE_MODEL_DIR").is_none() && std::env::var_os("CI").is_none() {
        // Without the variable the agent fetches the model itself, which a local run may not want.
        eprintln!("SKIPPED: USE_MODEL_DIR is not set (bash scripts/models.sh use-multilingual)");
        return;
    }
    let config = Config::embedded();
    assert!(matches!(config.embedder, EmbedderChoice::Multilingual { .. }), "{:?}", config.embedder);
    assert_eq!(recalled_first(&config).await, [true; 4]);
    // Word hashing sees no shared word, so the same questions miss: the test needs the model.
    let hashing = Config::embedded().with_embedder(EmbedderChoice::Hashing);
    assert_eq!(recalled_first(&hashing).await, [false; 4]);
}
