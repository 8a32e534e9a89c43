//! Middleware from a plain async function: LangChain's `@before_model` / `@after_model` /
//! `@before_agent` / `@after_agent` decorators.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use mnemograph_core::{BoxError, Runtime};
use mnemograph_models::BoxFuture;

use super::{Hook, HookResult, Middleware};
use crate::state::{AgentState, AgentStateUpdate, JumpTo};

/// The function behind a [`FnHook`], type-erased.
type HookFn = dyn Fn(AgentState, Runtime) -> BoxFuture<'static, HookResult> + Send + Sync;

/// A middleware with one node hook, made from an async function by [`before_model`],
/// [`after_model`], [`before_agent`], [`after_agent`] or [`FnHook::with_runtime`].
///
/// The function receives the state by value (messages are cheap to clone) and returns
/// `Ok(Some(update))`, `Ok(None)` for no change, or an error. Jumps must be declared with
/// [`can_jump_to`](Self::can_jump_to), as LangChain's `@hook_config(can_jump_to=[...])`:
/// an undeclared jump fails the run with [`Error::UndeclaredJump`](crate::Error::UndeclaredJump).
///
/// ```
/// use mnemograph_agent::middleware::before_model;
/// use mnemograph_agent::{create_agent, AgentState, AgentStateUpdate, JumpTo};
/// use mnemograph_core::messages::Message;
/// use mnemograph_core::prelude::*;
/// use mnemograph_models::{ChatModel, ChatRequest};
///
/// struct Echo;
/// impl ChatModel for Echo {
///     async fn invoke(&self, r: ChatRequest) -> mnemograph_models::Result<Message> {
///         Ok(Message::ai(format!("echo {}", r.messages.len())))
///     }
/// }
///
/// /// Ends the loop, without calling the model, once the conversation holds three messages.
/// async fn at_most_three(state: AgentState) -> Result<Option<AgentStateUpdate>, String> {
///     Ok((state.messages.len() >= 3).then(|| AgentStateUpdate::jump_to(JumpTo::End)))
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> mnemograph_core::Result<()> {
/// let agent = create_agent(Echo, [])
///     .middleware(before_model("at_most_three", at_most_three).can_jump_to([JumpTo::End]))
///     .compile_with(InMemoryCheckpointer::new())?;
/// let config = RunConfig::thread("t1");
/// agent.invoke(Message::human("one").into(), &config).await?;
/// let out = agent.invoke(Message::human("two").into(), &config).await?;
/// assert_eq!(out.messages.len(), 3, "the second turn ended before the model");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct FnHook {
    /// The middleware's name (nodes are `"{name}.{hook}"`).
    name: String,
    /// The one hook it implements.
    hook: Hook,
    /// Where it may jump.
    jumps: Vec<JumpTo>,
    /// The function.
    f: Arc<HookFn>,
}

impl fmt::Debug for FnHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnHook")
            .field("name", &self.name)
            .field("hook", &self.hook)
            .field("can_jump_to", &self.jumps)
            .finish_non_exhaustive()
    }
}

impl FnHook {
    /// A hook at `hook` running `f(state)`.
    pub fn new<F, Fut, E>(name: impl Into<String>, hook: Hook, f: F) -> Self
    where
        F: Fn(AgentState) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<AgentStateUpdate>, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        Self::with_runtime(name, hook, move |state, _runtime| f(state))
    }

    /// A hook at `hook` running `f(state, runtime)`: for hooks that need the run's context,
    /// store or stream writer.
    pub fn with_runtime<F, Fut, E>(name: impl Into<String>, hook: Hook, f: F) -> Self
    where
        F: Fn(AgentState, Runtime) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Option<AgentStateUpdate>, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let f = Arc::new(f);
        let erased = move |state: AgentState, runtime: Runtime| -> BoxFuture<'static, HookResult> {
            let f = Arc::clone(&f);
            Box::pin(async move { f(state, runtime).await.map_err(Into::into) })
        };
        Self { name: name.into(), hook, jumps: Vec::new(), f: Arc::new(erased) }
    }

    /// Declares where the hook may jump (LangChain's `can_jump_to`); replaces earlier declarations.
    #[must_use]
    pub fn can_jump_to(mut self, jumps: impl IntoIterator<Item = JumpTo>) -> Self {
        self.jumps = jumps.into_iter().collect();
        self
    }

    /// Runs the function if `hook` is this middleware's hook.
    fn call(&self, hook: Hook, state: &AgentState, runtime: &Runtime) -> BoxFuture<'static, HookResult> {
        if hook == self.hook {
            (self.f)(state.clone(), runtime.clone())
        } else {
            Box::pin(async { Ok(None) })
        }
    }
}

/// A `before_model` hook from an async function (LangChain's `@before_model`).
pub fn before_model<F, Fut, E>(name: impl Into<String>, f: F) -> FnHook
where
    F: Fn(AgentState) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<AgentStateUpdate>, E>> + Send + 'static,
    E: Into<BoxError>,
{
    FnHook::new(name, Hook::BeforeModel, f)
}

/// An `after_model` hook from an async function (LangChain's `@after_model`).
pub fn after_model<F, Fut, E>(name: impl Into<String>, f: F) -> FnHook
where
    F: Fn(AgentState) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<AgentStateUpdate>, E>> + Send + 'static,
    E: Into<BoxError>,
{
    FnHook::new(name, Hook::AfterModel, f)
}

/// A `before_agent` hook from an async function (LangChain's `@before_agent`).
pub fn before_agent<F, Fut, E>(name: impl Into<String>, f: F) -> FnHook
where
    F: Fn(AgentState) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<AgentStateUpdate>, E>> + Send + 'static,
    E: Into<BoxError>,
{
    FnHook::new(name, Hook::BeforeAgent, f)
}

/// An `after_agent` hook from an async function (LangChain's `@after_agent`).
pub fn after_agent<F, Fut, E>(name: impl Into<String>, f: F) -> FnHook
where
    F: Fn(AgentState) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Option<AgentStateUpdate>, E>> + Send + 'static,
    E: Into<BoxError>,
{
    FnHook::new(name, Hook::AfterAgent, f)
}

impl Middleware for FnHook {
    fn name(&self) -> &str {
        &self.name
    }
    fn hooks(&self) -> &'static [Hook] {
        match self.hook {
            Hook::BeforeAgent => &[Hook::BeforeAgent],
            Hook::BeforeModel => &[Hook::BeforeModel],
            Hook::AfterModel => &[Hook::AfterModel],
            Hook::AfterAgent => &[Hook::AfterAgent],
        }
    }
    fn can_jump_to(&self, hook: Hook) -> &[JumpTo] {
        if hook == self.hook {
            &self.jumps
        } else {
            &[]
        }
    }
    fn before_agent(&self, state: &AgentState, runtime: &Runtime) -> impl Future<Output = HookResult> + Send {
        self.call(Hook::BeforeAgent, state, runtime)
    }
    fn before_model(&self, state: &AgentState, runtime: &Runtime) -> impl Future<Output = HookResult> + Send {
        self.call(Hook::BeforeModel, state, runtime)
    }
    fn after_model(&self, state: &AgentState, runtime: &Runtime) -> impl Future<Output = HookResult> + Send {
        self.call(Hook::AfterModel, state, runtime)
    }
    fn after_agent(&self, state: &AgentState, runtime: &Runtime) -> impl Future<Output = HookResult> + Send {
        self.call(Hook::AfterAgent, state, runtime)
    }
}
