//! Tools: the [`Tool`] trait, tools made from async fns ([`tool`], [`tool_with_schema`]), the
//! [`ToolNode`] that runs a reply's tool calls, and [`tools_condition`].

mod func;
mod node;

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use mnemograph_core::messages::Content;
use mnemograph_core::BoxError;
use serde_json::Value;

pub use func::{tool, tool_with_schema, FnTool};
pub use node::{tools_condition, HasMessages, ToolNode, ToolNodeMarker};

use mnemograph_core::BoxFuture;

/// What a model is told about a tool: name, description and a JSON schema of its arguments
/// (OpenAI's `function` object).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The name the model calls it by.
    pub name: String,
    /// When to use it, for the model.
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
}

impl ToolSpec {
    /// A spec.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self { name: name.into(), description: description.into(), parameters }
    }

    /// The OpenAI `tools[]` entry.
    pub fn to_openai(&self) -> Value {
        serde_json::json!({
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        })
    }
}

/// What a tool returns: the content the model sees, and optionally an artifact kept in the
/// ToolMessage for the application but never sent to the model.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolOutput {
    /// Sent to the model.
    pub content: Content,
    /// Kept for the application.
    pub artifact: Option<Value>,
}

impl ToolOutput {
    /// Output with this content.
    pub fn new(content: impl Into<Content>) -> Self {
        Self { content: content.into(), artifact: None }
    }
    /// Adds an artifact.
    #[must_use]
    pub fn with_artifact(mut self, artifact: Value) -> Self {
        self.artifact = Some(artifact);
        self
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        Self::new(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<Value> for ToolOutput {
    /// A JSON string is used as text; any other value as its compact JSON text.
    fn from(value: Value) -> Self {
        match value {
            Value::String(text) => Self::new(text),
            other => Self::new(other.to_string()),
        }
    }
}

impl From<Content> for ToolOutput {
    fn from(content: Content) -> Self {
        Self::new(content)
    }
}

/// A tool a model can call (LangChain's `BaseTool`).
///
/// Implement it with an `async fn`, or build one from a closure with [`tool`] or
/// [`tool_with_schema`]. An `Err` does not stop the graph: [`ToolNode`] turns it into a
/// ToolMessage with status `error`, so the model can read it and try again.
pub trait Tool: Send + Sync + 'static {
    /// Name, description and argument schema.
    fn spec(&self) -> ToolSpec;

    /// Runs the tool on the call's arguments (a JSON object).
    ///
    /// # Errors
    /// Any failure; its `Display` text is what the model is shown.
    fn call(&self, args: Value) -> impl Future<Output = Result<ToolOutput, BoxError>> + Send;
}

/// The object-safe twin of [`Tool`], implemented for every tool.
pub trait DynTool: Send + Sync + 'static {
    /// See [`Tool::spec`].
    fn spec_dyn(&self) -> ToolSpec;
    /// See [`Tool::call`].
    fn call_boxed(&self, args: Value) -> BoxFuture<'_, Result<ToolOutput, BoxError>>;
}

impl<T: Tool> DynTool for T {
    fn spec_dyn(&self) -> ToolSpec {
        self.spec()
    }
    fn call_boxed(&self, args: Value) -> BoxFuture<'_, Result<ToolOutput, BoxError>> {
        Box::pin(self.call(args))
    }
}

/// A type-erased, shared tool; every [`Tool`] converts into one with `.into()`.
#[derive(Clone)]
pub struct SharedTool {
    /// The tool.
    tool: Arc<dyn DynTool>,
    /// Its spec, read once: specs are sent with every model call.
    spec: Arc<ToolSpec>,
}

impl SharedTool {
    /// Erases `tool`.
    pub fn new(tool: impl Tool) -> Self {
        Self::from_dyn(Arc::new(tool))
    }
    /// Wraps an already erased tool.
    pub fn from_dyn(tool: Arc<dyn DynTool>) -> Self {
        let spec = Arc::new(tool.spec_dyn());
        Self { tool, spec }
    }
    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }
    /// Runs the tool.
    ///
    /// # Errors
    /// As [`Tool::call`].
    pub async fn call(&self, args: Value) -> Result<ToolOutput, BoxError> {
        self.tool.call_boxed(args).await
    }
}

impl<T: Tool> From<T> for SharedTool {
    fn from(tool: T) -> Self {
        Self::new(tool)
    }
}

impl fmt::Debug for SharedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SharedTool").field(&self.spec.name).finish()
    }
}
