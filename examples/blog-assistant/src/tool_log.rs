//! [`LogToolCalls`]: every tool call becomes one structured `tracing` event, so what the agent
//! looked up, how long it took and whether it worked can be followed in the logs (tool calls
//! are in neither the archive nor, once trimmed, the snapshot).

use std::time::Instant;

use mnemograph_agent::{Middleware, ToolNext, ToolRequest};
use mnemograph_core::messages::{Message, ToolStatus};

/// The `tracing` target of the events.
pub const TOOL_LOG_TARGET: &str = "blog_assistant::tool_call";

/// Logs each tool call once it returns, at `INFO` (`WARN` when it failed), target
/// [`TOOL_LOG_TARGET`], with the fields `tool`, `call_id`, `args` (JSON), `duration_ms` and
/// `outcome` (`ok` or `error`).
#[derive(Debug, Clone, Copy, Default)]
pub struct LogToolCalls;

impl Middleware for LogToolCalls {
    fn name(&self) -> &str {
        "log_tool_calls"
    }

    async fn wrap_tool_call(&self, request: ToolRequest, next: ToolNext<'_>) -> Message {
        let tool = request.call.name.clone();
        let call_id = request.call.id.clone().unwrap_or_default();
        let args = request.call.args.to_string();
        let started = Instant::now();
        let result = next.run(request).await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        // The tools node never fails: a failed tool is a ToolMessage with status `error`.
        if result.status() == Some(ToolStatus::Error) {
            tracing::warn!(target: TOOL_LOG_TARGET, %tool, %call_id, %args, duration_ms, outcome = "error", "tool call");
        } else {
            tracing::info!(target: TOOL_LOG_TARGET, %tool, %call_id, %args, duration_ms, outcome = "ok", "tool call");
        }
        result
    }
}
