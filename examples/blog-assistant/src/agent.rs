//! The agent graph: mnemograph-agent's `create_agent` with the blog tools, the trimming middleware
//! (a `@before_model` compaction) and a small repair for runs a client cancelled.

use std::collections::HashSet;
use std::sync::Arc;

use mnemograph_agent::{
    create_agent, AgentState, AgentStateUpdate, Hook, HookResult, Middleware, TrimmingMiddleware,
};
use mnemograph_core::checkpoint::Checkpointer;
use mnemograph_core::messages::{Message, MessageType, ToolStatus};
use mnemograph_core::{CompiledGraph, Runtime};
use mnemograph_models::SharedChatModel;

use crate::corpus::Corpus;
use crate::pending::{PendingRounds, StageRound};
use crate::tool_log::LogToolCalls;
use crate::tool_output::{TruncateToolOutput, MAX_TOOL_CHARS, NOTE_CHARS};
use crate::tools::blog_tools;

/// The system prompt: sent before the conversation on every model call, never stored.
pub const SYSTEM_PROMPT: &str = "你是「黑白梦」博客的助手。回答前先用 search_blog 搜索博客，\
需要细节时用 get_article_content 读取全文；回答要基于文章内容，并注明引用文章的标题和链接。\
用户问起之前的对话时，根据对话历史回答。";

/// The agent graph over `checkpointer`: nodes `patch_tool_calls.before_agent`,
/// `stage_round.before_agent`, `trimming.before_model`, `model`, `tools` and
/// `stage_round.after_agent`. `context_tokens` is the trimming budget. Around each tool call,
/// [`LogToolCalls`] logs it and notes it in `pending` and, inside it, [`TruncateToolOutput`] cuts
/// its result to 2000 characters as the tools node produces it; the trimming middleware's own
/// tool limit sits above that (room for the truncation note), so it never cuts a result twice.
/// [`StageRound`] stages each completed round in `pending` for the commit that archives it.
///
/// # Errors
/// As `AgentBuilder::compile_with` (never, for this fixed shape).
pub fn build(
    model: SharedChatModel,
    corpus: &Arc<Corpus>,
    context_tokens: usize,
    pending: &Arc<PendingRounds>,
    checkpointer: impl Checkpointer,
) -> mnemograph_core::Result<CompiledGraph<AgentState>> {
    create_agent(model, blog_tools(corpus))
        .system_prompt(SYSTEM_PROMPT)
        .middleware(PatchToolCalls)
        .middleware(StageRound::new(Arc::clone(pending)))
        .middleware(TrimmingMiddleware::new(context_tokens).with_max_tool_chars(MAX_TOOL_CHARS + NOTE_CHARS))
        .middleware(LogToolCalls::new(Arc::clone(pending)))
        .middleware(TruncateToolOutput)
        .compile_with(checkpointer)
}

/// Answers tool calls that a cancelled run left without a result, before the next run starts.
///
/// When a client disconnects, the run is aborted wherever it is; if that is between the model
/// asking for a tool and the tool answering, the checkpoint ends with an AI message whose calls
/// have no ToolMessage. OpenAI-compatible APIs reject such a conversation, so every later turn
/// of the thread would fail. This hook (LangChain's `PatchToolCallsMiddleware`) adds a
/// "cancelled" answer for each such call, through `RemoveMessage(REMOVE_ALL)` so the answers
/// sit right after their call.
#[derive(Debug, Clone, Copy, Default)]
pub struct PatchToolCalls;

impl PatchToolCalls {
    /// The conversation with every unanswered call answered, or `None` if all are answered.
    pub fn patch(messages: &[Message]) -> Option<Vec<Message>> {
        let answered: HashSet<&str> = messages.iter().filter_map(Message::tool_call_id).collect();
        let mut out = Vec::with_capacity(messages.len() + 1);
        let mut missing: Vec<Message> = Vec::new();
        let mut patched = false;
        for m in messages {
            // Patches go after the call's existing answers, before the next non-tool message.
            if m.kind() != MessageType::Tool {
                out.append(&mut missing);
            }
            out.push(m.clone());
            if m.kind() == MessageType::Ai {
                for call in m.tool_calls() {
                    let id = call.id.as_deref().unwrap_or_default();
                    if !answered.contains(id) {
                        patched = true;
                        missing.push(
                            Message::tool("工具调用被取消（客户端在运行中断开）。", id)
                                .with_name(call.name.as_str())
                                .with_status(ToolStatus::Error),
                        );
                    }
                }
            }
        }
        out.append(&mut missing);
        patched.then_some(out)
    }
}

impl Middleware for PatchToolCalls {
    fn name(&self) -> &str {
        "patch_tool_calls"
    }
    fn hooks(&self) -> &'static [Hook] {
        &[Hook::BeforeAgent]
    }
    async fn before_agent(&self, state: &AgentState, _runtime: &Runtime) -> HookResult {
        Ok(Self::patch(&state.messages).map(|fixed| {
            let mut messages = Vec::with_capacity(fixed.len() + 1);
            messages.push(Message::remove_all());
            messages.extend(fixed);
            AgentStateUpdate::messages(messages)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemograph_core::messages::ToolCall;
    use serde_json::json;

    #[test]
    fn unanswered_calls_get_a_cancelled_answer_in_place() {
        let call = Message::ai("").with_tool_calls(vec![
            ToolCall::new("search_blog", json!({}), "a"),
            ToolCall::new("search_blog", json!({}), "b"),
        ]);
        let history = vec![Message::human("q1"), call, Message::tool("hit", "a"), Message::human("q2")];
        let fixed = PatchToolCalls::patch(&history).unwrap();
        let ids: Vec<_> = fixed.iter().map(|m| (m.kind(), m.tool_call_id().map(str::to_owned))).collect();
        assert_eq!(
            ids,
            [
                (MessageType::Human, None),
                (MessageType::Ai, None),
                (MessageType::Tool, Some("a".to_owned())),
                (MessageType::Tool, Some("b".to_owned())),
                (MessageType::Human, None),
            ]
        );
        assert_eq!(fixed[3].status(), Some(ToolStatus::Error));
        assert!(PatchToolCalls::patch(&fixed).is_none());
    }
}
