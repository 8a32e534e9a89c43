//! The README's diagram is the graph's current drawing, so it cannot go stale.

#[test]
fn readme_mermaid_block_is_the_current_graph() {
    let readme = include_str!("../README.md");
    let start = readme.find("```mermaid\n").expect("README has a mermaid block") + "```mermaid\n".len();
    let len = readme[start..].find("```").expect("the mermaid block is closed");
    let drawn = memory_agent::build_graph().unwrap().draw_mermaid();
    assert_eq!(
        &readme[start..start + len],
        drawn,
        "regenerate with `cargo run -p memory-agent -- --mermaid`"
    );
}
