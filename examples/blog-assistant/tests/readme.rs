//! The README's Mermaid drawing of the agent graph is the real one (mnemograph-core's
//! `draw_mermaid`), so the documentation cannot drift from the code.

use std::sync::Arc;
use std::time::Duration;

use blog_assistant::corpus::Corpus;
use blog_assistant::model::OfflineModel;
use blog_assistant::pending::PendingRounds;
use mnemograph_core::prelude::InMemoryCheckpointer;
use mnemograph_models::ChatModelExt;

/// The body of the README's first ```mermaid block.
fn readme_mermaid() -> String {
    let readme = include_str!("../README.md");
    let start =
        readme.find("```mermaid\n").expect("the README has a ```mermaid block") + "```mermaid\n".len();
    let len = readme[start..].find("```").expect("the mermaid block is closed");
    readme[start..start + len].to_owned()
}

#[test]
fn readme_mermaid_block_matches_the_agent_graph() {
    let corpus = Arc::new(Corpus::builtin().unwrap());
    let model = OfflineModel::new(Duration::ZERO).shared();
    let pending = Arc::new(PendingRounds::default());
    let agent =
        blog_assistant::agent::build(model, &corpus, 6000, &pending, InMemoryCheckpointer::new()).unwrap();
    let drawn = agent.draw_mermaid();
    assert_eq!(
        readme_mermaid().trim_end(),
        drawn.trim_end(),
        "update the README's mermaid block to:\n{drawn}"
    );
}
