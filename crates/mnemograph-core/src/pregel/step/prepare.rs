//! LangGraph's `prepare_next_tasks` and `should_interrupt`: the first pure half of a superstep.

use crate::error::{Error, Result};
use crate::pregel::channels::Channels;
use crate::pregel::plan::Layout;
use crate::pregel::task::{IdPrefix, Task};
use crate::State;

impl<S: State> Channels<S> {
    /// LangGraph's `should_interrupt`: the tasks whose node is a breakpoint, if any channel changed
    /// since the run last resumed.
    pub(crate) fn breakpoint_hits<C>(
        &self,
        layout: &Layout<S, C>,
        nodes: &[usize],
        tasks: &[Task<S>],
    ) -> Vec<String> {
        let changed = self.versions.iter().zip(&self.interrupt_seen).any(|(v, seen)| v > seen);
        if !changed {
            return Vec::new();
        }
        let mut hits: Vec<String> = tasks
            .iter()
            .filter(|t| nodes.contains(&t.node))
            .map(|t| layout.nodes[t.node].name.to_string())
            .collect();
        hits.dedup();
        hits
    }

    /// The nodes that would run next, without building tasks (for `get_state().next`).
    pub(crate) fn triggered_nodes<C>(&self, layout: &Layout<S, C>) -> Vec<usize> {
        (0..layout.nodes.len()).filter(|n| self.is_triggered(layout, *n)).collect()
    }

    fn is_triggered<C>(&self, layout: &Layout<S, C>, node: usize) -> bool {
        let def = &layout.nodes[node];
        def.triggers
            .iter()
            .zip(&self.versions_seen[node])
            .any(|(ch, seen)| self.is_available(layout, *ch) && self.versions[*ch] > *seen)
    }

    /// LangGraph's `prepare_next_tasks`: pull tasks for triggered nodes (in node order), then a push
    /// task per pending [`Push`](crate::Push).
    ///
    /// # Errors
    /// [`Error::UnknownNode`] when a push names a node the graph does not have.
    pub(crate) fn prepare_tasks<C>(
        &self,
        layout: &Layout<S, C>,
        checkpoint_id: &str,
        checkpoint_ns: &str,
        step: i64,
    ) -> Result<Vec<Task<S>>> {
        let mut tasks = Vec::new();
        self.prepare_tasks_into(&mut tasks, layout, checkpoint_id, checkpoint_ns, step)?;
        Ok(tasks)
    }

    /// [`prepare_tasks`](Self::prepare_tasks) into `tasks` (empty; its capacity is reused).
    pub(crate) fn prepare_tasks_into<C>(
        &self,
        tasks: &mut Vec<Task<S>>,
        layout: &Layout<S, C>,
        checkpoint_id: &str,
        checkpoint_ns: &str,
        step: i64,
    ) -> Result<()> {
        debug_assert!(tasks.is_empty());
        let prefix = IdPrefix::new(checkpoint_id);
        for (node, def) in layout.nodes.iter().enumerate() {
            if self.is_triggered(layout, node) {
                tasks.push(Task::pull(def, node, &prefix, checkpoint_ns, step));
            }
        }
        for (i, push) in self.pushes.iter().enumerate() {
            let node = layout.node(&push.node).ok_or_else(|| Error::UnknownNode(push.node.clone()))?;
            let def = &layout.nodes[node];
            tasks.push(Task::push(def, (node, i), push.arg.clone(), &prefix, checkpoint_ns, step));
        }
        Ok(())
    }
}
