//! A compiled graph used as a node of another graph (LangGraph's subgraphs).
//!
//! The child runs in the parent's thread under its own namespace, `"<node>:<task_id>"` (nested
//! namespaces joined by `|`), with `metadata.parents` pointing at the parent's checkpoint. It
//! inherits the parent's checkpointer when it has none, and the parent's context. Its input is the
//! parent's whole state; its final state is written back to the parent through the parent's
//! reducers — so, exactly as in LangGraph, a reducer field that both graphs share is applied twice
//! (an `append` list gets the child's copy of the parent's items again, while `add_messages`
//! replaces messages with the same ids and so does not duplicate them).
//!
//! An interrupt inside the child stops the parent too; resuming the parent re-runs the child node,
//! which finds its own checkpoint (the namespace is the same, since task ids are deterministic) and
//! resumes from it with the resume value.

use std::any::Any;
use std::sync::Arc;

use super::compiled::CompiledGraph;
use super::node::IntoNode;
use crate::checkpoint::CheckpointConfig;
use crate::command::Input;
use crate::command::NodeOutput;
use crate::config::RunConfig;
use crate::interrupt::{NodeInterrupt, Resume};
use crate::pregel::node::{BoxedNode, ErasedNode, NodeFuture};
use crate::pregel::run::{full_update, run};
use crate::runtime::Runtime;
use crate::state::StateWrite;
use crate::State;

/// Marker for a [`CompiledGraph`] used as a node.
#[derive(Debug)]
pub struct Subgraph;

struct SubgraphNode<S: State, C>(CompiledGraph<S, C>);

impl<S: State, C: Send + Sync + 'static> IntoNode<S, C, Subgraph> for CompiledGraph<S, C> {
    fn into_node(self) -> BoxedNode<S, C> {
        BoxedNode(Arc::new(SubgraphNode(self)))
    }
}

impl<S: State, C: Send + Sync + 'static> ErasedNode<S, C> for SubgraphNode<S, C> {
    fn subgraph(&self) -> Option<&dyn Any> {
        Some(&self.0)
    }

    /// The child's final state is the node's only output.
    fn may_goto(&self) -> bool {
        false
    }

    fn call(&self, state: S, runtime: Runtime<C>) -> NodeFuture<S> {
        let mut graph = self.0.clone();
        let scope = runtime.scope();
        if graph.pregel.checkpointer.is_none() {
            graph.pregel.checkpointer.clone_from(&scope.checkpointer);
        }
        graph.pregel.context = Some(runtime.context_arc());
        if graph.pregel.store.is_none() {
            graph.pregel.store.clone_from(&scope.store);
        }
        let (task_ns, null_resume, resume_map) = {
            let pad = scope.scratchpad.lock();
            (pad.task_ns(), std::sync::Arc::clone(&pad.null_resume), pad.resume_map.clone())
        };
        let mut config = RunConfig { recursion_limit: scope.recursion_limit, ..RunConfig::default() };
        config.thread_id = runtime.thread_id().map(str::to_owned);
        config.configurable.clone_from(&scope.configurable);
        config.parents.clone_from(&scope.parents);
        config.parents.insert(scope.metadata.checkpoint_ns.to_string(), scope.checkpoint_id.to_string());
        config.checkpoint_ns = task_ns;
        config.resume_from_parent = true;
        config.input_fields = Some(scope.available);
        Box::pin(async move {
            // A child checkpoint in this namespace means this task ran before and stopped (at an
            // interrupt or a failure): continue it instead of starting over.
            let existing = match (&graph.pregel.checkpointer, &config.thread_id) {
                (Some(saver), Some(thread)) => {
                    let cfg = CheckpointConfig::thread(thread.clone()).with_ns(config.checkpoint_ns.clone());
                    saver.get_tuple(&cfg).await?.is_some()
                }
                _ => false,
            };
            // The parent's answers reach the child's tasks as LangGraph hands them down: answers
            // by id as they are, the parent's unclaimed answer taken by the child.
            let input = match (existing, resume_map) {
                (false, _) => Input::State(state),
                (true, Some(map)) => Input::ResumeWith(Resume::ById((*map).clone())),
                (true, None) => match null_resume.lock().take() {
                    Some(value) => Input::ResumeWith(Resume::Value(value)),
                    None => Input::Resume,
                },
            };
            let out = run(&graph.pregel, input, &config, None).await?;
            if !out.interrupts.is_empty() {
                return Err(NodeInterrupt::Subgraph(out.interrupts).into());
            }
            let writes =
                full_update(&out.state, Some(out.available))?.into_iter().map(StateWrite::new).collect();
            Ok(NodeOutput { writes, goto: Vec::new() })
        })
    }
}
