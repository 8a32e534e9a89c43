//! [`LogToolCalls`]: every tool call becomes two structured `tracing` events, one when it starts
//! and one when it returns, so what the agent looked up, how long it took and whether it worked
//! can be followed in the logs, and a call that never returns still shows that it began. Each
//! finished call is also noted for the round's audit rows ([`tool_audit`](crate::tool_audit)).

use std::sync::Arc;
use std::time::Instant;

use mnemograph_agent::{Middleware, ToolNext, ToolRequest};
use mnemograph_core::messages::{Message, ToolStatus};

use crate::pending::PendingRounds;
use crate::tool_audit::{Outcome, ToolInvocation};

/// The `tracing` target of the events.
pub const TOOL_LOG_TARGET: &str = "blog_assistant::tool_call";

/// Logs each tool call, target [`TOOL_LOG_TARGET`]: when it starts, at `INFO` with the fields
/// `tool`, `call_id` and `args` (JSON), message `tool call started`; when it returns, at `INFO`
/// (`WARN` when it failed) with those fields plus `duration_ms` and `outcome` (`ok` or
/// `error`), message `tool call`. Then notes the call in [`PendingRounds`] for the round's
/// audit.
#[derive(Debug, Clone, Default)]
pub struct LogToolCalls {
    /// Where the round's calls are noted.
    pending: Arc<PendingRounds>,
}

impl LogToolCalls {
    /// Noting calls in `pending`.
    pub fn new(pending: Arc<PendingRounds>) -> Self {
        Self { pending }
    }
}

impl Middleware for LogToolCalls {
    fn name(&self) -> &str {
        "log_tool_calls"
    }

    async fn wrap_tool_call(&self, request: ToolRequest, next: ToolNext<'_>) -> Message {
        let tool = request.call.name.clone();
        let call_id = request.call.id.clone().unwrap_or_default();
        let args = request.call.args.to_string();
        let thread_id = request.runtime.thread_id().map(str::to_owned);
        tracing::info!(target: TOOL_LOG_TARGET, %tool, %call_id, %args, "tool call started");
        let started = Instant::now();
        let result = next.run(request).await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        // The tools node never fails: a failed tool is a ToolMessage with status `error`.
        let outcome = if result.status() == Some(ToolStatus::Error) { Outcome::Error } else { Outcome::Ok };
        if outcome == Outcome::Error {
            tracing::warn!(target: TOOL_LOG_TARGET, %tool, %call_id, %args, duration_ms, outcome = "error", "tool call");
        } else {
            tracing::info!(target: TOOL_LOG_TARGET, %tool, %call_id, %args, duration_ms, outcome = "ok", "tool call");
        }
        if let Some(thread_id) = thread_id {
            let error = (outcome == Outcome::Error).then(|| result.text());
            let call = ToolInvocation { call_id, tool, arguments: args, duration_ms, outcome, error };
            self.pending.note_tool(&thread_id, call);
        }
        result
    }
}
