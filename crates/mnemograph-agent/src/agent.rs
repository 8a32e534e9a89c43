//! [`create_agent`]: the ReAct loop as an ordinary compiled graph, with middleware.

use std::fmt;
use std::sync::Arc;

use mnemograph_core::messages::MessageType;
use mnemograph_core::prelude::*;
use mnemograph_core::BoxError;
use mnemograph_models::{ChatModel, SharedChatModel, SharedTool, ToolNode, ToolSpec};

use crate::error::Error;
use crate::middleware::{Hook, Middleware, ModelNext, ModelRequest, SharedMiddleware, ToolNext, ToolRequest};
use crate::state::{AgentState, AgentStateUpdate, JumpTo};

/// The model node's name.
pub const MODEL_NODE: &str = "model";
/// The tools node's name.
pub const TOOLS_NODE: &str = "tools";

/// What the model and tools nodes share.
struct Core {
    /// The model.
    model: SharedChatModel,
    /// Sent before the conversation on every call, never stored in the state.
    system_prompt: Option<String>,
    /// The tools.
    tools: ToolNode,
    /// Their specs, computed once.
    specs: Vec<ToolSpec>,
    /// Every middleware, in registration order (the onion's outside first).
    middleware: Vec<SharedMiddleware>,
}

/// Builds an agent graph; made by [`create_agent`].
pub struct AgentBuilder {
    /// The model.
    model: SharedChatModel,
    /// The tools.
    tools: Vec<SharedTool>,
    /// The system prompt.
    system_prompt: Option<String>,
    /// Middleware in registration order.
    middleware: Vec<SharedMiddleware>,
}

impl fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.middleware.iter().map(|m| m.name_dyn()).collect();
        f.debug_struct("AgentBuilder")
            .field("model", &self.model)
            .field("tools", &self.tools)
            .field("middleware", &names)
            .finish_non_exhaustive()
    }
}

/// An agent: the model is called in a loop, running the tools it asks for, until it answers
/// without tool calls (LangChain's `create_agent`). The result is an ordinary graph over
/// [`AgentState`], so it checkpoints, streams (tokens included, in the `messages` mode),
/// interrupts and nests like any other.
///
/// Nodes: `model`, `tools` (when there are tools), and one `"{middleware}.{hook}"` node per
/// declared middleware hook; see [`middleware`](crate::middleware) for the order.
///
/// ```
/// use mnemograph_agent::{create_agent, TrimmingMiddleware};
/// use mnemograph_core::messages::{Message, ToolCall};
/// use mnemograph_core::prelude::*;
/// use mnemograph_models::{tool, ChatModel, ChatRequest};
///
/// struct Scripted;
/// impl ChatModel for Scripted {
///     async fn invoke(&self, r: ChatRequest) -> mnemograph_models::Result<Message> {
///         Ok(match r.messages.last() {
///             Some(m) if m.tool_call_id().is_some() => Message::ai(format!("It is {}", m.text())),
///             _ => Message::ai("").with_tool_calls(vec![ToolCall::new("clock", serde_json::json!({}), "c1")]),
///         })
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> mnemograph_core::Result<()> {
/// let clock = tool("clock", "The time", |_: serde_json::Value| async { Ok::<_, std::convert::Infallible>("noon") });
/// let agent = create_agent(Scripted, [clock.into()])
///     .system_prompt("You tell the time.")
///     .middleware(TrimmingMiddleware::new(4000))
///     .compile_with(InMemoryCheckpointer::new())?;
/// let out = agent.invoke(Message::human("time?").into(), &RunConfig::thread("t1")).await?;
/// assert_eq!(out.messages.last().unwrap().text(), "It is noon");
/// assert_eq!(out.messages.len(), 4); // human, AI call, tool result, answer
/// # Ok(()) }
/// ```
pub fn create_agent(model: impl ChatModel, tools: impl IntoIterator<Item = SharedTool>) -> AgentBuilder {
    AgentBuilder {
        model: SharedChatModel::new(model),
        tools: tools.into_iter().collect(),
        system_prompt: None,
        middleware: Vec::new(),
    }
}

impl AgentBuilder {
    /// Sets the system prompt, sent first on every model call and never stored in the state.
    #[must_use]
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Adds a middleware; the first added is the outermost.
    #[must_use]
    pub fn middleware(mut self, middleware: impl Middleware) -> Self {
        self.middleware.push(Arc::new(middleware));
        self
    }

    /// Adds an already shared middleware.
    #[must_use]
    pub fn shared_middleware(mut self, middleware: Arc<dyn crate::middleware::DynMiddleware>) -> Self {
        self.middleware.push(middleware);
        self
    }

    /// Compiles the agent graph.
    ///
    /// # Errors
    /// [`mnemograph_core::Error::InvalidGraph`] when two middlewares share a name.
    pub fn compile(self) -> mnemograph_core::Result<CompiledGraph<AgentState>> {
        self.graph().compile()
    }

    /// Compiles the agent graph with a checkpointer.
    ///
    /// # Errors
    /// As [`compile`](Self::compile).
    pub fn compile_with(
        self,
        checkpointer: impl Checkpointer,
    ) -> mnemograph_core::Result<CompiledGraph<AgentState>> {
        self.graph().compile_with(checkpointer)
    }

    /// The uncompiled graph, to add nodes or breakpoints before compiling.
    pub fn graph(self) -> StateGraph<AgentState> {
        let tools = ToolNode::new(self.tools);
        let has_tools = !tools.specs().is_empty();
        let core = Arc::new(Core {
            model: self.model,
            system_prompt: self.system_prompt,
            specs: tools.specs(),
            tools,
            middleware: self.middleware,
        });
        let hooked = |hook: Hook| -> Vec<(String, SharedMiddleware)> {
            core.middleware
                .iter()
                .filter(|m| m.hooks_dyn().contains(&hook))
                .map(|m| (format!("{}.{}", m.name_dyn(), hook.name()), Arc::clone(m)))
                .collect()
        };
        let before_agent = hooked(Hook::BeforeAgent);
        let before_model = hooked(Hook::BeforeModel);
        // `after_*` hooks run in reverse registration order, as LangChain's do.
        let after_model: Vec<_> = hooked(Hook::AfterModel).into_iter().rev().collect();
        let after_agent: Vec<_> = hooked(Hook::AfterAgent).into_iter().rev().collect();
        let first = |chain: &[(String, SharedMiddleware)], or: &str| {
            chain.first().map_or(or.to_owned(), |c| c.0.clone())
        };
        let loop_entry = first(&before_model, MODEL_NODE);
        let exit = first(&after_agent, END);
        let targets = Targets { loop_entry: loop_entry.clone(), exit: exit.clone(), has_tools };

        let mut g = StateGraph::<AgentState>::new()
            .add_node(MODEL_NODE, model_node(Arc::clone(&core)))
            .add_edge(START, first(&before_agent, &loop_entry));
        if has_tools {
            g = g
                .add_node(TOOLS_NODE, tools_node(Arc::clone(&core)))
                .add_edge(TOOLS_NODE, loop_entry.clone());
        }
        let chains = [
            (Hook::BeforeAgent, before_agent, Next::Node(loop_entry)),
            (Hook::BeforeModel, before_model, Next::Node(MODEL_NODE.to_owned())),
            (Hook::AfterModel, after_model.clone(), Next::AfterModel),
            (Hook::AfterAgent, after_agent, Next::Node(END.to_owned())),
        ];
        for (hook, chain, last) in chains {
            for (i, (name, mw)) in chain.iter().enumerate() {
                let next = chain.get(i + 1).map_or(last.clone(), |(n, _)| Next::Node(n.clone()));
                let t = targets.clone();
                let destinations = targets.destinations(&next, mw.can_jump_to_dyn(hook));
                g = g.add_node(name.clone(), hook_node(hook, Arc::clone(mw))).add_conditional_edges(
                    name.clone(),
                    move |s: &AgentState| t.route(s, &next),
                    destinations,
                );
            }
        }
        match after_model.first() {
            Some((name, _)) => g.add_edge(MODEL_NODE, name.clone()),
            None => {
                let destinations = targets.destinations(&Next::AfterModel, &[]);
                g.add_conditional_edges(
                    MODEL_NODE,
                    move |s: &AgentState| targets.after_model(s),
                    destinations,
                )
            }
        }
    }
}

/// Where a hook node goes when it does not jump.
#[derive(Clone)]
enum Next {
    /// This node (or END).
    Node(String),
    /// The end of the `after_model` chain: tools if the reply has calls, else the exit.
    AfterModel,
}

/// The fixed destinations of jumps.
#[derive(Clone)]
struct Targets {
    /// The first `before_model` hook, or the model.
    loop_entry: String,
    /// The first `after_agent` hook, or END.
    exit: String,
    /// Whether a tools node exists.
    has_tools: bool,
}

impl Targets {
    /// The node after a hook: its jump if it asked for one, else `next`.
    fn route(&self, state: &AgentState, next: &Next) -> String {
        match state.jump_to {
            Some(JumpTo::Model) => self.loop_entry.clone(),
            Some(JumpTo::Tools) if self.has_tools => TOOLS_NODE.to_owned(),
            Some(JumpTo::End) => self.exit.clone(),
            _ => match next {
                Next::Node(n) => n.clone(),
                Next::AfterModel => self.after_model(state),
            },
        }
    }

    /// Every node a hook's edge can lead to: its `next` and its declared jumps (the path map,
    /// so the drawing shows exactly these edges).
    fn destinations(&self, next: &Next, jumps: &[JumpTo]) -> Vec<String> {
        let mut out = match next {
            Next::Node(n) => vec![n.clone()],
            Next::AfterModel if self.has_tools => vec![TOOLS_NODE.to_owned(), self.exit.clone()],
            Next::AfterModel => vec![self.exit.clone()],
        };
        for jump in jumps {
            let to = match jump {
                JumpTo::Model => self.loop_entry.clone(),
                JumpTo::Tools if self.has_tools => TOOLS_NODE.to_owned(),
                JumpTo::End => self.exit.clone(),
                // No tools node: the jump falls through to `next`, already listed.
                _ => continue,
            };
            if !out.contains(&to) {
                out.push(to);
            }
        }
        out
    }

    /// After the model (and its hooks): the tools when the reply asks for some, else the exit.
    fn after_model(&self, state: &AgentState) -> String {
        let wants_tools = state.messages.last().is_some_and(|m| {
            m.kind() == MessageType::Ai && (!m.tool_calls().is_empty() || !m.invalid_tool_calls().is_empty())
        });
        if wants_tools && self.has_tools {
            TOOLS_NODE.to_owned()
        } else {
            self.exit.clone()
        }
    }
}

/// A node running one hook of one middleware. It always writes `jump_to` (the hook's jump or
/// `None`), so a jump is seen only by the edge right after it.
fn hook_node(hook: Hook, mw: SharedMiddleware) -> mnemograph_core::BoxedNode<AgentState, ()> {
    mnemograph_core::node(move |state: AgentState, rt: Runtime| {
        let mw = Arc::clone(&mw);
        async move {
            let update = mw.hook_boxed(hook, &state, &rt).await.map_err(|source| Error::Middleware {
                middleware: mw.name_dyn().to_owned(),
                hook: hook.name(),
                source,
            })?;
            let mut update = update.unwrap_or_default();
            if let Some(Some(jump)) = update.jump_to {
                if !mw.can_jump_to_dyn(hook).contains(&jump) {
                    return Err(Error::UndeclaredJump {
                        middleware: mw.name_dyn().to_owned(),
                        hook: hook.name(),
                        jump,
                    });
                }
            }
            if update.jump_to.is_none() {
                update.jump_to = Some(None);
            }
            Ok::<_, Error>(update)
        }
    })
}

/// The model node: runs the `wrap_model_call` onion around the model.
fn model_node(core: Arc<Core>) -> mnemograph_core::BoxedNode<AgentState, ()> {
    mnemograph_core::node(move |state: AgentState, runtime: Runtime| {
        let core = Arc::clone(&core);
        async move {
            let state = Arc::new(state);
            let request = ModelRequest {
                model: core.model.clone(),
                system_prompt: core.system_prompt.clone(),
                messages: state.messages.clone(),
                tools: core.specs.clone(),
                tool_choice: None,
                state: Arc::clone(&state),
                runtime,
            };
            let response = ModelNext { rest: &core.middleware }.run(request).await?;
            Ok::<_, BoxError>(AgentStateUpdate::messages(response.messages).with_jump_to(None))
        }
    })
}

/// The tools node: every call of the last AI message through the `wrap_tool_call` onion,
/// concurrently; unparsable calls get an error answer.
fn tools_node(core: Arc<Core>) -> mnemograph_core::BoxedNode<AgentState, ()> {
    mnemograph_core::node(move |state: AgentState, runtime: Runtime| {
        let core = Arc::clone(&core);
        async move {
            let state = Arc::new(state);
            let Some(last) = state.messages.last().filter(|m| m.kind() == MessageType::Ai) else {
                return Ok::<_, BoxError>(None);
            };
            let next = ToolNext { rest: &core.middleware, tools: &core.tools };
            let calls = last.tool_calls().iter().map(|call| {
                let request =
                    ToolRequest { call: call.clone(), state: Arc::clone(&state), runtime: runtime.clone() };
                next.run(request)
            });
            let mut answers = futures_util::future::join_all(calls).await;
            answers.extend(last.invalid_tool_calls().iter().map(ToolNode::answer_invalid));
            Ok(Some(AgentStateUpdate::messages(answers)))
        }
    })
}
