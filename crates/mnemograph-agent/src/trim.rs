//! [`trim_messages`]: cut a conversation to a token budget without breaking tool-call pairs.

use std::collections::HashSet;

use mnemograph_core::messages::{Message, MessageType};
use mnemograph_models::TokenCounter;

/// Which end of the conversation to keep.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Strategy {
    /// Keep the most recent messages (the usual choice before a model call).
    #[default]
    Last,
    /// Keep the oldest messages.
    First,
}

/// Options of [`trim_messages`] (LangChain's keyword arguments).
///
/// ```
/// use mnemograph_agent::{Strategy, TrimOptions};
/// use mnemograph_core::messages::MessageType;
///
/// let options = TrimOptions::new(1000).include_system().start_on(MessageType::Human);
/// assert_eq!(options.strategy, Strategy::Last);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TrimOptions {
    /// The budget: the kept messages' token counts add up to at most this.
    pub max_tokens: usize,
    /// Which end to keep.
    pub strategy: Strategy,
    /// With [`Strategy::Last`], keep a leading system message whatever its age (its tokens
    /// count against the budget).
    pub include_system: bool,
    /// With [`Strategy::Last`], the kept part (after the system message) must start with one of
    /// these kinds; leading units of other kinds are dropped. Empty: no constraint.
    pub start_on: Vec<MessageType>,
    /// The kept part must end with one of these kinds; trailing units of other kinds are
    /// dropped. Empty: no constraint.
    pub end_on: Vec<MessageType>,
}

impl TrimOptions {
    /// Keep the last messages within `max_tokens`, no other constraint.
    pub fn new(max_tokens: usize) -> Self {
        Self {
            max_tokens,
            strategy: Strategy::Last,
            include_system: false,
            start_on: Vec::new(),
            end_on: Vec::new(),
        }
    }
    /// Sets the strategy.
    #[must_use]
    pub fn strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }
    /// Keeps a leading system message.
    #[must_use]
    pub fn include_system(mut self) -> Self {
        self.include_system = true;
        self
    }
    /// Adds a kind the kept part may start with.
    #[must_use]
    pub fn start_on(mut self, kind: MessageType) -> Self {
        self.start_on.push(kind);
        self
    }
    /// Adds a kind the kept part may end with.
    #[must_use]
    pub fn end_on(mut self, kind: MessageType) -> Self {
        self.end_on.push(kind);
        self
    }
}

/// A run of messages that must be kept or dropped together: an AI message with tool calls and
/// the ToolMessages answering them, or a single other message.
#[derive(Clone, Copy, Debug)]
struct Unit {
    /// First message index.
    start: usize,
    /// One past the last message index.
    end: usize,
}

/// Splits `messages` into [`Unit`]s, leaving out ToolMessages that answer no call of the AI
/// message they follow (orphans a provider would reject).
fn units(messages: &[Message]) -> Vec<Unit> {
    let mut out: Vec<Unit> = Vec::with_capacity(messages.len());
    // Ids of calls made by the AI message that opened the current unit, if it made any.
    let mut open_calls: HashSet<&str> = HashSet::new();
    for (i, m) in messages.iter().enumerate() {
        let answers_open_call = m.kind() == MessageType::Tool
            && out.last().is_some_and(|u| u.end == i)
            && m.tool_call_id().is_some_and(|id| open_calls.contains(id));
        if answers_open_call {
            if let Some(last) = out.last_mut() {
                last.end = i + 1;
            }
            continue;
        }
        open_calls.clear();
        if m.kind() == MessageType::Tool || m.kind() == MessageType::Remove {
            continue;
        }
        if m.kind() == MessageType::Ai {
            open_calls.extend(m.tool_calls().iter().filter_map(|c| c.id.as_deref()));
            open_calls.extend(m.invalid_tool_calls().iter().filter_map(|c| c.id.as_deref()));
        }
        out.push(Unit { start: i, end: i + 1 });
    }
    out
}

/// Cuts `messages` to `options.max_tokens` as counted by `counter`, like LangChain's
/// `trim_messages`, but treating an AI message with tool calls and its ToolMessages as one unit
/// that is kept or dropped whole.
///
/// LangChain's trimmer counts message by message and can cut between a tool call and its result
/// (langchain-ai/langchain#33245: with `max_tokens=30` it returns `[ToolMessage, AIMessage,
/// HumanMessage]`), which providers reject with HTTP 400. Here a unit that does not fit is
/// dropped whole, ToolMessages that answer no call are dropped, and `start_on`/`end_on` move
/// the cut by whole units, so the result never holds a ToolMessage without its AI tool call or a
/// tool call without its results.
///
/// The kept messages are a contiguous run (plus the system message with `include_system`):
/// trimming never skips a large message to keep an older small one.
///
/// ```
/// use mnemograph_agent::{trim_messages, TrimOptions};
/// use mnemograph_core::messages::{Message, MessageType, ToolCall};
/// use mnemograph_models::ApproxTokenCounter;
///
/// let history = vec![
///     Message::system("你是博客助手"),
///     Message::human("查一下 Redis 的文章"),
///     Message::ai("").with_tool_calls(vec![ToolCall::new("search_blog", serde_json::json!({"q": "redis"}), "c1")]),
///     Message::tool("找到 3 篇文章：……", "c1"),
///     Message::ai("找到了 3 篇。"),
///     Message::human("第一篇讲什么？"),
/// ];
/// let options = TrimOptions::new(40).include_system().start_on(MessageType::Human);
/// let kept = trim_messages(&history, &ApproxTokenCounter::new(), &options);
/// assert_eq!(kept.first().unwrap().kind(), MessageType::System);
/// assert_eq!(kept[1].kind(), MessageType::Human);
/// ```
pub fn trim_messages(
    messages: &[Message],
    counter: &dyn TokenCounter,
    options: &TrimOptions,
) -> Vec<Message> {
    let matches = |kinds: &[MessageType], m: &Message| kinds.is_empty() || kinds.contains(&m.kind());
    let mut budget = options.max_tokens;
    let mut system: Option<&Message> = None;
    let mut body = messages;
    if options.strategy == Strategy::Last && options.include_system {
        if let Some((first, rest)) = messages.split_first().filter(|(m, _)| m.kind() == MessageType::System) {
            let cost = counter.count_message(first);
            if cost > budget {
                return Vec::new();
            }
            budget -= cost;
            system = Some(first);
            body = rest;
        }
    }
    let all = units(body);
    let cost = |u: &Unit| body[u.start..u.end].iter().map(|m| counter.count_message(m)).sum::<usize>();
    let mut kept: &[Unit] = match options.strategy {
        Strategy::Last => {
            // Drop trailing units first so their tokens do not use up the budget.
            let mut end = all.len();
            while end > 0 && !matches(&options.end_on, &body[all[end - 1].end - 1]) {
                end -= 1;
            }
            let mut start = end;
            let mut used = 0;
            // Count from the newest unit backwards and stop at the first that does not fit:
            // only the kept part is ever counted, which keeps this fast on long histories.
            while start > 0 {
                let c = cost(&all[start - 1]);
                if used + c > budget {
                    break;
                }
                used += c;
                start -= 1;
            }
            &all[start..end]
        }
        Strategy::First => {
            let mut end = 0;
            let mut used = 0;
            while end < all.len() {
                let c = cost(&all[end]);
                if used + c > budget {
                    break;
                }
                used += c;
                end += 1;
            }
            while end > 0 && !matches(&options.end_on, &body[all[end - 1].end - 1]) {
                end -= 1;
            }
            &all[..end]
        }
    };
    if options.strategy == Strategy::Last {
        while let Some((first, rest)) = kept.split_first() {
            if matches(&options.start_on, &body[first.start]) {
                break;
            }
            kept = rest;
        }
    }
    let mut out: Vec<Message> = Vec::with_capacity(kept.iter().map(|u| u.end - u.start).sum::<usize>() + 1);
    out.extend(system.cloned());
    for u in kept {
        out.extend_from_slice(&body[u.start..u.end]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemograph_core::messages::ToolCall;
    use mnemograph_models::ApproxTokenCounter;
    use serde_json::json;

    /// Every message costs 10 tokens, so budgets read as message counts.
    struct Ten;
    impl TokenCounter for Ten {
        fn count_text(&self, _: &str) -> usize {
            0
        }
        fn count_message(&self, _: &Message) -> usize {
            10
        }
    }

    fn kinds(messages: &[Message]) -> Vec<MessageType> {
        messages.iter().map(Message::kind).collect()
    }

    fn call(id: &str) -> Message {
        Message::ai("").with_tool_calls(vec![ToolCall::new("search", json!({}), id)])
    }

    /// LangChain issue #33245: the history and budget from the issue.
    fn issue_history() -> Vec<Message> {
        vec![
            Message::system("you are helpful"),
            Message::human("what's the weather in sf?"),
            call("c1"),
            Message::tool("sunny", "c1"),
            Message::ai("It's sunny."),
            Message::human("and in nyc?"),
        ]
    }

    /// Asserts every ToolMessage follows the AI call it answers, and every call is answered.
    fn assert_pairs_intact(messages: &[Message]) {
        let mut open: Vec<String> = Vec::new();
        for m in messages {
            match m.kind() {
                MessageType::Tool => {
                    let id = m.tool_call_id().unwrap().to_owned();
                    assert!(open.contains(&id), "orphan tool message {id} in {:?}", kinds(messages));
                    open.retain(|o| *o != id);
                }
                _ => {
                    assert!(open.is_empty(), "unanswered calls {open:?} in {:?}", kinds(messages));
                    open = m.tool_calls().iter().filter_map(|c| c.id.clone()).collect();
                }
            }
        }
        assert!(open.is_empty(), "unanswered calls {open:?}");
    }

    #[test]
    fn issue_33245_never_orphans_a_tool_message() {
        let history = issue_history();
        for budget in 0..=70 {
            for system in [false, true] {
                let mut options = TrimOptions::new(budget);
                options.include_system = system;
                let kept = trim_messages(&history, &Ten, &options);
                assert_pairs_intact(&kept);
                assert!(kept.len() * 10 <= budget, "{budget}: {:?}", kinds(&kept));
            }
        }
        // Where LangChain returns [Tool, AI, Human], the pair is dropped whole.
        let kept = trim_messages(&history, &Ten, &TrimOptions::new(30));
        assert_eq!(kinds(&kept), [MessageType::Ai, MessageType::Human]);
        let kept = trim_messages(&history, &Ten, &TrimOptions::new(40));
        assert_eq!(kinds(&kept), [MessageType::Ai, MessageType::Tool, MessageType::Ai, MessageType::Human]);
    }

    #[test]
    fn include_system_and_start_on() {
        let history = issue_history();
        let options = TrimOptions::new(40).include_system().start_on(MessageType::Human);
        let kept = trim_messages(&history, &Ten, &options);
        assert_eq!(kinds(&kept), [MessageType::System, MessageType::Human]);
        let options = TrimOptions::new(60).include_system().start_on(MessageType::Human);
        assert_eq!(trim_messages(&history, &Ten, &options), history);
        assert!(trim_messages(&history, &Ten, &TrimOptions::new(5).include_system()).is_empty());
    }

    #[test]
    fn end_on_drops_whole_trailing_units() {
        let mut history = issue_history();
        history.push(call("c2"));
        history.push(Message::tool("rainy", "c2"));
        let options = TrimOptions::new(1000).end_on(MessageType::Human);
        let kept = trim_messages(&history, &Ten, &options);
        assert_eq!(kept.last().unwrap().kind(), MessageType::Human);
        assert_eq!(kept.len(), 6);
        let first = TrimOptions::new(35).strategy(Strategy::First).end_on(MessageType::Human);
        assert_eq!(kinds(&trim_messages(&history, &Ten, &first)), [MessageType::System, MessageType::Human]);
    }

    #[test]
    fn parallel_calls_stay_with_all_their_results_and_orphans_go() {
        let parallel = Message::ai("")
            .with_tool_calls(vec![ToolCall::new("a", json!({}), "p1"), ToolCall::new("b", json!({}), "p2")]);
        let history = vec![
            Message::tool("orphan", "zz"),
            Message::human("q"),
            parallel,
            Message::tool("ra", "p1"),
            Message::tool("rb", "p2"),
            Message::ai("done"),
        ];
        let kept = trim_messages(&history, &Ten, &TrimOptions::new(1000));
        assert_eq!(kept.len(), 5);
        assert_pairs_intact(&kept);
        let kept = trim_messages(&history, &Ten, &TrimOptions::new(30));
        assert_eq!(kinds(&kept), [MessageType::Ai]);
        let kept = trim_messages(&history, &Ten, &TrimOptions::new(40));
        assert_eq!(kept.len(), 4);
        assert_pairs_intact(&kept);
    }

    #[test]
    fn real_counter_respects_the_budget() {
        let counter = ApproxTokenCounter::new();
        let history: Vec<Message> =
            (0..50).map(|i| Message::human(format!("第 {i} 轮：请解释 checkpoint 的作用"))).collect();
        let kept = trim_messages(&history, &counter, &TrimOptions::new(200));
        let used: usize = kept.iter().map(|m| counter.count_message(m)).sum();
        assert!(used <= 200 && used + counter.count_message(&history[0]) > 200);
        assert_eq!(kept.last(), history.last());
    }
}
