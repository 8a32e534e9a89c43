//! The crate's error type.

use mnemograph_core::BoxError;

/// `Result` with mnemograph-agent's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A failure inside an agent: a model call, a middleware hook, or building the graph.
///
/// Inside a run these reach the caller as `mnemograph_core::Error::Node { node, source }`, with this
/// error (or a middleware's own) as the source, recoverable by downcasting.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The chat model failed.
    #[error("model call failed")]
    Model(#[from] mnemograph_models::Error),
    /// A middleware hook failed.
    #[error("middleware `{middleware}` failed in `{hook}`")]
    Middleware {
        /// The middleware's name.
        middleware: String,
        /// The hook, e.g. `before_model`.
        hook: &'static str,
        /// What it returned.
        #[source]
        source: BoxError,
    },
    /// A middleware hook jumped somewhere it did not declare in
    /// [`Middleware::can_jump_to`](crate::Middleware::can_jump_to).
    #[error(
        "middleware `{middleware}` jumped to {jump:?} from `{hook}` without declaring it in can_jump_to"
    )]
    UndeclaredJump {
        /// The middleware's name.
        middleware: String,
        /// The hook, e.g. `before_model`.
        hook: &'static str,
        /// Where it tried to go.
        jump: crate::JumpTo,
    },
    /// The agent's graph did not compile (e.g. two middlewares with the same name).
    #[error("agent graph is invalid")]
    Graph(#[from] mnemograph_core::Error),
}
