//! Short-term trimming: a long session's thread is cut to a token budget before every model call,
//! so a conversation that goes on for hours neither overflows the model's context nor bills every
//! old message on every turn. The thread itself (the checkpoint) keeps everything.

use mnemograph_agent::{trim_messages, TrimOptions};
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_models::{ApproxTokenCounter, TokenCounter};

use crate::state::last_human;

/// Token budget of one model request when `MEMORY_MAX_CONTEXT_TOKENS` is unset: the system
/// prompt with the recalled memories plus the trimmed conversation.
pub const DEFAULT_MAX_CONTEXT_TOKENS: usize = 2000;

/// Tokens `messages` cost as a request, counted by mnemograph-models' [`ApproxTokenCounter`] (right
/// for mixed Chinese and English, no tokenizer files).
///
/// ```
/// use mnemograph_core::messages::Message;
/// assert!(memory_agent::request_tokens(&[Message::human("你好 hello")]) > 3);
/// ```
pub fn request_tokens(messages: &[Message]) -> usize {
    ApproxTokenCounter::new().count_messages(messages)
}

/// The newest part of the conversation `messages` that fits in `max_tokens` next to `system`
/// (the system prompt, which is sent first).
///
/// Stored system messages are left out (the prompt is rebuilt every turn). What is kept is
/// mnemograph-agent's [`trim_messages`]: the newest whole units, never a tool call without its
/// results, starting on a human message. The latest human message is always kept, even alone
/// over budget: the model must see the question it answers. A conversation that fits is
/// returned whole.
pub fn trim_conversation(messages: &[Message], system: &Message, max_tokens: usize) -> Vec<Message> {
    let chat: Vec<Message> = messages.iter().filter(|m| m.kind() != MessageType::System).cloned().collect();
    let counter = ApproxTokenCounter::new();
    // The request's fixed costs: the system prompt and the reply priming.
    let fixed = counter.count_messages(std::slice::from_ref(system));
    let options = TrimOptions::new(max_tokens.saturating_sub(fixed)).start_on(MessageType::Human);
    let kept = trim_messages(&chat, &counter, &options);
    // The kept part is the newest run of units, so it holds the latest human message as soon as
    // it holds any.
    if kept.iter().any(|m| m.kind() == MessageType::Human) {
        return kept;
    }
    last_human(&chat).map_or(kept, |at| chat[at..].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(turns: usize) -> Vec<Message> {
        (0..turns)
            .flat_map(|i| {
                [
                    Message::human(format!("Turn {i}: tell me more about the harbour and its old boats.")),
                    Message::ai(format!("Reply {i}: the harbour holds fishing boats, ferries and yachts.")),
                ]
            })
            .collect()
    }

    #[test]
    fn a_long_thread_is_cut_to_the_budget_ending_on_the_latest_question() {
        let mut messages = thread(100);
        messages.push(Message::human("And the lighthouse?"));
        let system = Message::system("You answer questions.");
        assert!(request_tokens(&messages) > 2000, "the thread is over budget to begin with");

        let kept = trim_conversation(&messages, &system, 300);
        let mut request = vec![system];
        request.extend(kept.iter().cloned());
        assert!(request_tokens(&request) <= 300, "{}", request_tokens(&request));
        assert_eq!(kept.last().map(Message::text).as_deref(), Some("And the lighthouse?"));
        assert_eq!(kept[0].kind(), MessageType::Human, "starts on a question");
        assert!(kept.len() > 2, "keeps as much recent history as fits: {}", kept.len());
        assert_eq!(kept[..], messages[messages.len() - kept.len()..], "the newest messages, in order");
    }

    #[test]
    fn a_short_thread_is_unchanged() {
        let mut messages = thread(3);
        messages.push(Message::human("And the lighthouse?"));
        let kept = trim_conversation(&messages, &Message::system("You answer questions."), 2000);
        assert_eq!(kept, messages);
    }

    #[test]
    fn the_latest_question_is_kept_even_over_budget() {
        let mut messages = thread(2);
        messages.push(Message::system("an old prompt"));
        messages.push(Message::human("A long question ".repeat(50)));
        let kept = trim_conversation(&messages, &Message::system("You answer questions."), 40);
        assert_eq!(kept, messages[messages.len() - 1..]);
    }
}
