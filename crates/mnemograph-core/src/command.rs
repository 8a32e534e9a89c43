//! What a run starts from ([`Input`]), what a node returns (updates, [`Command`]s and [`Push`]es),
//! and where a routing function sends control ([`Route`]).

use std::fmt;

use crate::interrupt::Resume;
use crate::state::StateWrite;
use crate::State;

/// A task to run a node with its own input (LangGraph's `Send`, named after LangGraph's internal
/// `PUSH` so it does not shadow `std::marker::Send`). Used for map-reduce: a conditional edge or a
/// [`Command`] returns several pushes and each runs as a separate task in the next superstep.
pub struct Push<S> {
    /// The node to run.
    pub node: String,
    /// The state that node receives instead of the graph state.
    pub arg: S,
}

impl<S> Push<S> {
    /// A push of `arg` to `node`.
    pub fn new(node: impl Into<String>, arg: S) -> Self {
        Self { node: node.into(), arg }
    }
}

impl<S: Clone> Clone for Push<S> {
    fn clone(&self) -> Self {
        Self { node: self.node.clone(), arg: self.arg.clone() }
    }
}

impl<S> fmt::Debug for Push<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Push").field("node", &self.node).finish_non_exhaustive()
    }
}

/// Where a [`Command`] or a conditional edge sends control.
pub enum Goto<S> {
    /// Run a node in the next superstep (with the graph state).
    Node(String),
    /// Run a node with its own input.
    Push(Push<S>),
}

impl<S: Clone> Clone for Goto<S> {
    fn clone(&self) -> Self {
        match self {
            Self::Node(n) => Self::Node(n.clone()),
            Self::Push(p) => Self::Push(p.clone()),
        }
    }
}

impl<S> fmt::Debug for Goto<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Node(n) => f.debug_tuple("Node").field(n).finish(),
            Self::Push(p) => f.debug_tuple("Push").field(p).finish(),
        }
    }
}

impl<S> From<&str> for Goto<S> {
    fn from(node: &str) -> Self {
        Self::Node(node.to_owned())
    }
}

impl<S> From<String> for Goto<S> {
    fn from(node: String) -> Self {
        Self::Node(node)
    }
}

impl<S> From<Push<S>> for Goto<S> {
    fn from(push: Push<S>) -> Self {
        Self::Push(push)
    }
}

/// A node's combined instruction: state updates applied in order, then where to go
/// (LangGraph's `Command(update=..., goto=...)`).
///
/// The node's static edges still fire; `goto` adds destinations.
pub struct Command<S: State> {
    /// Updates, applied in order (several may write the same field).
    pub update: Vec<StateWrite<S::Update>>,
    /// Destinations for the next superstep.
    pub goto: Vec<Goto<S>>,
}

impl<S: State> Default for Command<S> {
    fn default() -> Self {
        Self { update: Vec::new(), goto: Vec::new() }
    }
}

impl<S: State> Clone for Command<S> {
    fn clone(&self) -> Self {
        Self { update: self.update.clone(), goto: self.goto.clone() }
    }
}

impl<S: State> fmt::Debug for Command<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Command").field("update", &self.update).field("goto", &self.goto).finish()
    }
}

impl<S: State> Command<S> {
    /// An empty command.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds an update.
    #[must_use]
    pub fn update(mut self, update: S::Update) -> Self {
        self.update.push(StateWrite::new(update));
        self
    }
    /// Adds an update whose reducer fields replace the current values (LangGraph's `Overwrite`).
    #[must_use]
    pub fn overwrite(mut self, update: S::Update) -> Self {
        self.update.push(StateWrite { update, overwrite: true });
        self
    }
    /// Adds a destination: a node name or a [`Push`].
    #[must_use]
    pub fn goto(mut self, goto: impl Into<Goto<S>>) -> Self {
        self.goto.push(goto.into());
        self
    }
    /// Whether the command has neither updates nor destinations.
    pub fn is_empty(&self) -> bool {
        self.update.is_empty() && self.goto.is_empty()
    }
}

/// Everything a node produced, in the engine's form.
pub struct NodeOutput<S: State> {
    pub(crate) writes: Vec<StateWrite<S::Update>>,
    pub(crate) goto: Vec<Goto<S>>,
}

impl<S: State> fmt::Debug for NodeOutput<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeOutput").field("writes", &self.writes).field("goto", &self.goto).finish()
    }
}

impl<S: State> NodeOutput<S> {
    /// No writes.
    pub fn empty() -> Self {
        Self { writes: Vec::new(), goto: Vec::new() }
    }
    /// One update.
    pub fn update(update: S::Update) -> Self {
        Self { writes: vec![StateWrite::new(update)], goto: Vec::new() }
    }
}

/// Types a node may return: the state's `Update` (and `Option` of it, via `#[derive(State)]`),
/// [`Command`], `Vec<Push<S>>`, `()`, and [`NodeOutput`] itself.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a valid node output for state `{S}`",
    note = "a node returns the state's Update type, Option<Update>, Command<S>, Vec<Push<S>> or ()"
)]
pub trait IntoNodeOutput<S: State> {
    /// Converts to the engine's form.
    fn into_node_output(self) -> NodeOutput<S>;
}

impl<S: State> IntoNodeOutput<S> for NodeOutput<S> {
    fn into_node_output(self) -> NodeOutput<S> {
        self
    }
}

impl<S: State> IntoNodeOutput<S> for Command<S> {
    fn into_node_output(self) -> NodeOutput<S> {
        NodeOutput { writes: self.update, goto: self.goto }
    }
}

impl<S: State> IntoNodeOutput<S> for Vec<Push<S>> {
    fn into_node_output(self) -> NodeOutput<S> {
        NodeOutput { writes: Vec::new(), goto: self.into_iter().map(Goto::Push).collect() }
    }
}

impl<S: State> IntoNodeOutput<S> for () {
    fn into_node_output(self) -> NodeOutput<S> {
        NodeOutput::empty()
    }
}

/// Where a routing function sends control: node names (or path-map keys), `END`, and pushes.
pub struct Route<S>(pub(crate) Vec<Goto<S>>);

impl<S> fmt::Debug for Route<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Route").field(&self.0).finish()
    }
}

impl<S> Route<S> {
    /// Nowhere (same as returning `END`).
    pub fn none() -> Self {
        Self(Vec::new())
    }
}

impl<S> From<&str> for Route<S> {
    fn from(s: &str) -> Self {
        Self(vec![Goto::Node(s.to_owned())])
    }
}
impl<S> From<String> for Route<S> {
    fn from(s: String) -> Self {
        Self(vec![Goto::Node(s)])
    }
}
impl<S> From<Vec<&str>> for Route<S> {
    fn from(v: Vec<&str>) -> Self {
        Self(v.into_iter().map(|s| Goto::Node(s.to_owned())).collect())
    }
}
impl<S> From<Vec<String>> for Route<S> {
    fn from(v: Vec<String>) -> Self {
        Self(v.into_iter().map(Goto::Node).collect())
    }
}
impl<S> From<Vec<Push<S>>> for Route<S> {
    fn from(v: Vec<Push<S>>) -> Self {
        Self(v.into_iter().map(Goto::Push).collect())
    }
}
impl<S> From<Vec<Goto<S>>> for Route<S> {
    fn from(v: Vec<Goto<S>>) -> Self {
        Self(v)
    }
}
impl<S> From<Push<S>> for Route<S> {
    fn from(p: Push<S>) -> Self {
        Self(vec![Goto::Push(p)])
    }
}

/// What a run starts from.
#[derive(Debug)]
#[non_exhaustive]
pub enum Input<S: State> {
    /// New input: written to the state through the reducers, then the graph runs from START.
    Update(S::Update),
    /// No input (LangGraph's `None`): continue the thread from its checkpoint — after a failure,
    /// at a breakpoint, or from an older checkpoint (time travel).
    Resume,
    /// Answer the pending interrupt(s) and continue (LangGraph's `Command(resume=...)`).
    ResumeWith(Resume),
    /// A whole state as input: every field is written through its reducer (LangGraph's
    /// `invoke(full_state_dict)`). Subgraphs receive their parent's state this way.
    State(S),
    /// A command as input (LangGraph's `invoke(Command(update=..., goto=..., resume=...))`).
    ///
    /// On a thread with a checkpoint, the updates and destinations are saved as the null task's
    /// pending writes of that checkpoint and applied to its channels before the next superstep is
    /// planned: they join the step the thread was waiting for, and make no checkpoint of their
    /// own. `resume` answers pending interrupts as [`ResumeWith`](Self::ResumeWith) does. On a
    /// thread without a checkpoint (or a graph without a checkpointer) the command is also the
    /// run's input, as in LangGraph: its updates are applied before the input checkpoint and again
    /// by the START task, which then goes to the command's destinations as well as its own.
    Command {
        /// The updates and destinations.
        command: Command<S>,
        /// Answers to pending interrupts, if any.
        resume: Option<Resume>,
    },
}

impl<S: State> Input<S> {
    /// Resume the single pending interrupt with `value`.
    pub fn resume(value: impl serde::Serialize) -> Self {
        Self::ResumeWith(Resume::value(value))
    }
    /// A command as input, without resume values (`Command(update=..., goto=...)`).
    pub fn command(command: Command<S>) -> Self {
        Self::Command { command, resume: None }
    }
    /// A command as input that also answers pending interrupts
    /// (`Command(update=..., goto=..., resume=...)`).
    pub fn command_with(command: Command<S>, resume: Resume) -> Self {
        Self::Command { command, resume: Some(resume) }
    }
}
