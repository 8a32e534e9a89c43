//! The README's Mermaid diagram is the graph the service really runs (`draw_mermaid`), so the
//! picture cannot drift from the code. Needs no database.

use mnemograph_models::ChatModelExt;
use mysql_chat::config::DEFAULT_CONTEXT_TOKENS;
use mysql_chat::{chat_agent, OfflineModel};

/// The body of the README's first ```mermaid block.
fn readme_mermaid() -> String {
    let readme = include_str!("../README.md");
    let start = readme.find("```mermaid\n").expect("README has a ```mermaid block") + "```mermaid\n".len();
    let len = readme[start..].find("```").expect("the block is closed");
    readme[start..start + len].to_owned()
}

#[test]
fn readme_diagram_is_the_real_graph() {
    let graph =
        chat_agent(OfflineModel.shared(), DEFAULT_CONTEXT_TOKENS).compile().expect("the agent compiles");
    let drawn = graph.draw_mermaid();
    assert_eq!(
        readme_mermaid().trim_end(),
        drawn.trim_end(),
        "README.md's mermaid block differs from the graph; paste this:\n{drawn}"
    );
}
