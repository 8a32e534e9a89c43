//! Agent middleware: node hooks and the model/tool call onion.
//!
//! One trait, two mechanisms (LangChain v1's `AgentMiddleware`):
//!
//! - **Node hooks** — `before_agent`, `before_model`, `after_model`, `after_agent` — each
//!   become a graph node named `"{middleware}.{hook}"`. What a hook returns is an ordinary state
//!   update, applied through the reducers and checkpointed: returning
//!   `[Message::remove_all(), kept..]` rewrites the stored history. A hook may also set
//!   [`jump_to`](crate::AgentState::jump_to) to go to the model, the tools or the end, if it
//!   declared that destination in [`Middleware::can_jump_to`] (LangChain's `can_jump_to`); the
//!   graph has edges only to declared destinations, and an undeclared jump is an error.
//! - **Functions** become middleware with [`before_model`], [`after_model`], [`before_agent`]
//!   and [`after_agent`] (LangChain's decorators), see [`FnHook`].
//! - **Wrappers** — `wrap_model_call`, `wrap_tool_call` — form an onion around each model or tool
//!   call. Editing the request there changes what this one call sees and nothing else.
//!
//! **Order.** `before_*` hooks run in registration order, `after_*` hooks in reverse; for
//! wrappers the first registered middleware is the outermost layer. With `[a, b]`:
//!
//! ```text
//! a.before_agent → b.before_agent → a.before_model → b.before_model
//!   → model (a.wrap(b.wrap(call))) → b.after_model → a.after_model → tools | …
//!   → b.after_agent → a.after_agent → END
//! ```
//!
//! Rust cannot tell which default methods a type overrode, so a middleware lists its node hooks
//! in [`Middleware::hooks`]; only those become nodes. Wrappers need no declaration (a default
//! wrapper just calls `next`).

mod func;
mod next;
mod summarization;
mod trimming;

use std::future::Future;
use std::sync::Arc;

use mnemograph_core::messages::Message;
use mnemograph_core::{BoxError, Runtime};
use mnemograph_models::BoxFuture;

pub use func::{after_agent, after_model, before_agent, before_model, FnHook};
pub use next::{ModelNext, ModelRequest, ModelResponse, ToolNext, ToolRequest};
pub use summarization::{SummarizationMiddleware, DEFAULT_SUMMARY_PROMPT, SUMMARY_PREFIX};
pub use trimming::{TrimmingMiddleware, DEFAULT_MAX_TOOL_CHARS};

use crate::state::{AgentState, AgentStateUpdate, JumpTo};

/// A node hook of a middleware.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Hook {
    /// Once per invocation, before the loop.
    BeforeAgent,
    /// Before every model call.
    BeforeModel,
    /// After every model call.
    AfterModel,
    /// Once per invocation, after the loop.
    AfterAgent,
}

impl Hook {
    /// The hook's name, the suffix of its node's name.
    pub const fn name(self) -> &'static str {
        match self {
            Self::BeforeAgent => "before_agent",
            Self::BeforeModel => "before_model",
            Self::AfterModel => "after_model",
            Self::AfterAgent => "after_agent",
        }
    }
}

/// What a node hook returns: an update applied through the reducers, or nothing.
pub type HookResult = Result<Option<AgentStateUpdate>, BoxError>;

/// Agent middleware (LangChain's `AgentMiddleware`); see the [module docs](self) for the order.
///
/// Implement it with `async fn`s; every hook has a no-op default. Declare the node hooks you
/// implement in [`hooks`](Self::hooks).
///
/// ```
/// use mnemograph_agent::{AgentState, AgentStateUpdate, Hook, HookResult, JumpTo, Middleware};
/// use mnemograph_core::Runtime;
///
/// /// Stops the loop once the conversation is long.
/// struct MaxTurns(usize);
///
/// impl Middleware for MaxTurns {
///     fn name(&self) -> &str {
///         "max_turns"
///     }
///     fn hooks(&self) -> &'static [Hook] {
///         &[Hook::BeforeModel]
///     }
///     fn can_jump_to(&self, _hook: Hook) -> &[JumpTo] {
///         &[JumpTo::End]
///     }
///     async fn before_model(&self, state: &AgentState, _rt: &Runtime) -> HookResult {
///         Ok((state.messages.len() > self.0).then(|| AgentStateUpdate::jump_to(Some(JumpTo::End))))
///     }
/// }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// The name; node hooks run as nodes named `"{name}.{hook}"`, so names must be unique.
    fn name(&self) -> &str;

    /// The node hooks this middleware implements. Default: none.
    fn hooks(&self) -> &'static [Hook] {
        &[]
    }

    /// Where node hook `hook` may jump (LangChain's `can_jump_to`). Default: nowhere. Only
    /// these destinations get an edge from the hook's node, and a hook that sets another
    /// [`jump_to`](crate::AgentState::jump_to) fails with
    /// [`Error::UndeclaredJump`](crate::Error::UndeclaredJump).
    fn can_jump_to(&self, hook: Hook) -> &[JumpTo] {
        let _ = hook;
        &[]
    }

    /// Runs once per invocation before the loop.
    fn before_agent(&self, state: &AgentState, runtime: &Runtime) -> impl Future<Output = HookResult> + Send {
        let _ = (state, runtime);
        async { Ok(None) }
    }

    /// Runs before every model call.
    fn before_model(&self, state: &AgentState, runtime: &Runtime) -> impl Future<Output = HookResult> + Send {
        let _ = (state, runtime);
        async { Ok(None) }
    }

    /// Runs after every model call.
    fn after_model(&self, state: &AgentState, runtime: &Runtime) -> impl Future<Output = HookResult> + Send {
        let _ = (state, runtime);
        async { Ok(None) }
    }

    /// Runs once per invocation after the loop.
    fn after_agent(&self, state: &AgentState, runtime: &Runtime) -> impl Future<Output = HookResult> + Send {
        let _ = (state, runtime);
        async { Ok(None) }
    }

    /// Wraps each model call; call `next.run(request)` to continue inward.
    fn wrap_model_call(
        &self,
        request: ModelRequest,
        next: ModelNext<'_>,
    ) -> impl Future<Output = Result<ModelResponse, BoxError>> + Send {
        next.run(request)
    }

    /// Wraps each tool call; call `next.run(request)` to continue inward.
    fn wrap_tool_call(
        &self,
        request: ToolRequest,
        next: ToolNext<'_>,
    ) -> impl Future<Output = Message> + Send {
        next.run(request)
    }
}

/// The object-safe twin of [`Middleware`], implemented for every middleware; agents store
/// `Arc<dyn DynMiddleware>`.
pub trait DynMiddleware: Send + Sync + 'static {
    /// See [`Middleware::name`].
    fn name_dyn(&self) -> &str;
    /// See [`Middleware::hooks`].
    fn hooks_dyn(&self) -> &'static [Hook];
    /// See [`Middleware::can_jump_to`].
    fn can_jump_to_dyn(&self, hook: Hook) -> &[JumpTo];
    /// Runs node hook `hook`.
    fn hook_boxed<'a>(
        &'a self,
        hook: Hook,
        state: &'a AgentState,
        runtime: &'a Runtime,
    ) -> BoxFuture<'a, HookResult>;
    /// See [`Middleware::wrap_model_call`].
    fn wrap_model_call_boxed<'a>(
        &'a self,
        request: ModelRequest,
        next: ModelNext<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, BoxError>>;
    /// See [`Middleware::wrap_tool_call`].
    fn wrap_tool_call_boxed<'a>(&'a self, request: ToolRequest, next: ToolNext<'a>)
        -> BoxFuture<'a, Message>;
}

impl<T: Middleware> DynMiddleware for T {
    fn name_dyn(&self) -> &str {
        self.name()
    }
    fn hooks_dyn(&self) -> &'static [Hook] {
        self.hooks()
    }
    fn can_jump_to_dyn(&self, hook: Hook) -> &[JumpTo] {
        self.can_jump_to(hook)
    }
    fn hook_boxed<'a>(
        &'a self,
        hook: Hook,
        state: &'a AgentState,
        runtime: &'a Runtime,
    ) -> BoxFuture<'a, HookResult> {
        match hook {
            Hook::BeforeAgent => Box::pin(self.before_agent(state, runtime)),
            Hook::BeforeModel => Box::pin(self.before_model(state, runtime)),
            Hook::AfterModel => Box::pin(self.after_model(state, runtime)),
            Hook::AfterAgent => Box::pin(self.after_agent(state, runtime)),
        }
    }
    fn wrap_model_call_boxed<'a>(
        &'a self,
        request: ModelRequest,
        next: ModelNext<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, BoxError>> {
        Box::pin(self.wrap_model_call(request, next))
    }
    fn wrap_tool_call_boxed<'a>(
        &'a self,
        request: ToolRequest,
        next: ToolNext<'a>,
    ) -> BoxFuture<'a, Message> {
        Box::pin(self.wrap_tool_call(request, next))
    }
}

/// A shared, type-erased middleware.
pub(crate) type SharedMiddleware = Arc<dyn DynMiddleware>;
