//! Subgraphs: a compiled graph as a node (LangGraph `test_subgraph_persistence.py`).

use mnemograph_core::checkpoint::{CheckpointConfig, Checkpointer, InMemoryCheckpointer, ListOptions};
use mnemograph_core::prelude::*;

use crate::support::*;

fn child() -> CompiledGraph<S> {
    StateGraph::<S>::new()
        .add_node("inner", |_s: S| async {
            Ok::<_, Error>(SUpdate::log(vec!["inner".into()]).with_hello("from child"))
        })
        .add_edge(START, "inner")
        .compile()
        .unwrap()
}

/// A graph knows whether one of its nodes is a compiled graph: the server refuses
/// `stream_subgraphs` for those, whose own events the engine's stream does not carry.
#[test]
fn a_graph_with_a_subgraph_node_says_so() {
    let parent = StateGraph::<S>::new().add_node("sub", child()).add_edge(START, "sub").compile().unwrap();
    assert!(parent.has_subgraphs());
    assert!(!child().has_subgraphs());
}

/// The child's checkpoints live under `"<node>:<task_id>"` with `parents` pointing at the parent's
/// checkpoint; shared reducer keys are applied twice, as in LangGraph.
#[tokio::test]
async fn test_subgraph_checkpoints_under_task_namespace() {
    let saver = std::sync::Arc::new(InMemoryCheckpointer::new());
    let g = StateGraph::<S>::new()
        .add_node("a", logger("a"))
        .add_node("sub", child())
        .add_edge(START, "a")
        .add_edge("a", "sub")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver.clone());
    let cfg = RunConfig::thread("t");
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    // The child received ["a"] and returned ["a", "inner"], which the parent's append reducer adds
    // to its own ["a"]: LangGraph's double application.
    assert_eq!(out.log, ["a", "a", "inner"]);
    assert_eq!(out.hello, "from child");

    let all = saver.list(None, ListOptions::new()).await.unwrap();
    let child_cps: Vec<_> = all.iter().filter(|t| !t.config.checkpoint_ns.is_empty()).collect();
    assert!(!child_cps.is_empty());
    let ns = &child_cps[0].config.checkpoint_ns;
    assert!(ns.starts_with("sub:"), "{ns}");
    assert_eq!(ns.len(), "sub:".len() + 36);
    let parent_ids: Vec<String> = g
        .get_state_history(&cfg, ListOptions::new())
        .await
        .unwrap()
        .iter()
        .filter_map(|s| s.config.as_ref().and_then(|c| c.checkpoint_id.clone()))
        .collect();
    for cp in &child_cps {
        let parent = cp.metadata.parents.get("").expect("parents has the root namespace");
        assert!(parent_ids.contains(parent));
    }
    // The root namespace never sees the child's checkpoints.
    assert!(g.get_state_history(&cfg, ListOptions::new()).await.unwrap().iter().all(|s| s
        .config
        .as_ref()
        .unwrap()
        .checkpoint_ns
        .is_empty()));
    let latest_child =
        saver.get_tuple(&CheckpointConfig::thread("t").with_ns(ns.clone())).await.unwrap().unwrap();
    assert_eq!(latest_child.metadata.step, 1);
}

/// An interrupt inside a subgraph stops the parent; resuming continues the child where it stopped.
#[tokio::test]
async fn test_interrupt_inside_subgraph_resumes() {
    let child = StateGraph::<S>::new()
        .add_node("prep", logger("prep"))
        .add_node("ask", |_s: S, rt: Runtime| async move {
            let answer: String = rt.interrupt("continue?")?;
            Ok::<_, Error>(SUpdate::hello(answer))
        })
        .add_edge(START, "prep")
        .add_edge("prep", "ask")
        .compile()
        .unwrap();
    let g = StateGraph::<S>::new()
        .add_node("sub", child)
        .add_node("after", logger("after"))
        .add_edge(START, "sub")
        .add_edge("sub", "after")
        .compile_with(InMemoryCheckpointer::new())
        .unwrap();
    let cfg = RunConfig::thread("t");
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(out.interrupts.len(), 1);
    assert_eq!(out.interrupts[0].value, "continue?");
    assert_eq!(g.get_state(&cfg).await.unwrap().next, ["sub"]);
    // get_state(subgraphs=True): the child's own snapshot, stopped before "ask".
    let with_sub = g.get_state_with_subgraphs(&cfg).await.unwrap();
    assert_eq!(with_sub.subgraphs.len(), 1);
    let child = &with_sub.subgraphs[0];
    assert_eq!(child.next, ["ask"]);
    assert_eq!(child.values.log, ["prep"]);
    assert_eq!(child.interrupts[0].value, "continue?");
    assert!(child.config.as_ref().unwrap().checkpoint_ns.starts_with("sub:"));
    let out = g.invoke_input(Input::resume("yes"), &cfg).await.unwrap();
    assert!(!out.is_interrupted(), "{:?}", out.interrupts);
    assert_eq!(out.hello, "yes");
    // "prep" ran once in the child (not again on resume); the child's final log lands once more in
    // the parent through the append reducer.
    assert_eq!(out.log, ["prep", "after"]);
}

/// Nodes reach the graph's store through their runtime, in subgraphs too (LangGraph's
/// `runtime.store`).
#[tokio::test]
async fn test_nodes_use_the_store_through_the_runtime() {
    use mnemograph_core::store::{InMemoryStore, Store};
    let store = std::sync::Arc::new(InMemoryStore::new());
    let remember = |_s: S, rt: Runtime| async move {
        let store = rt.store().expect("compiled with a store");
        let ns = vec!["memories".to_owned(), "u1".to_owned()];
        store
            .put(&ns, "fact", serde_json::json!({"likes": "tea"}), None)
            .await
            .map_err(|e| Error::UnknownNode(e.to_string()))?;
        Ok::<_, Error>(SUpdate::hello("stored"))
    };
    let child =
        StateGraph::<S>::new().add_node("remember", remember).add_edge(START, "remember").compile().unwrap();
    let g = StateGraph::<S>::new()
        .add_node("sub", child)
        .add_edge(START, "sub")
        .compile()
        .unwrap()
        .with_shared_store(store.clone());
    assert_eq!(g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap().hello, "stored");
    let item = Store::get(&*store, &["memories".to_owned(), "u1".to_owned()], "fact").await.unwrap().unwrap();
    assert_eq!(item.value["likes"], "tea");
}

/// LangGraph hands a run's `config["configurable"]` to every node, subgraphs' included.
#[tokio::test]
async fn test_configurable_reaches_nodes_and_subgraphs() {
    let user = |_s: S, rt: Runtime| async move {
        let who = rt.configurable().get("user").and_then(|v| v.as_str()).unwrap_or("nobody");
        Ok::<_, Error>(SUpdate::log(vec![format!("{}:{who}", rt.node())]))
    };
    let child = StateGraph::<S>::new().add_node("inner", user).add_edge(START, "inner").compile().unwrap();
    let g = StateGraph::<S>::new()
        .add_node("outer", user)
        .add_node("sub", child)
        .add_edge(START, "outer")
        .add_edge("outer", "sub")
        .compile()
        .unwrap();
    let out = g.invoke(SUpdate::default(), &RunConfig::new().configurable("user", "alice")).await.unwrap();
    assert_eq!(out.log, ["outer:alice", "outer:alice", "inner:alice"]);
    let out = g.invoke(SUpdate::default(), &RunConfig::new()).await.unwrap();
    assert_eq!(out.log, ["outer:nobody", "outer:nobody", "inner:nobody"]);
}
