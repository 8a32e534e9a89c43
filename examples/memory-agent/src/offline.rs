//! [`OfflineModel`]: a deterministic chat model that answers from what was recalled, so the agent
//! runs with no API key.

use mnemograph_core::messages::{Message, MessageType};
use mnemograph_models::{ChatModel, ChatRequest, Result};

use crate::nodes::MEMORY_HEADER;
use crate::question::is_question;

/// Printed whenever the offline model is in use, so nobody mistakes its answers for an LLM's.
pub const OFFLINE_NOTICE: &str = "[offline model: answering from recalled memories]";

/// Words that carry no topic; without them, word overlap means "about the same thing".
const STOP_WORDS: &[&str] = &[
    "a", "about", "am", "an", "and", "any", "anything", "are", "at", "be", "by", "can", "could", "did", "do",
    "does", "for", "from", "have", "has", "hello", "hi", "how", "i", "im", "in", "is", "it", "its", "know",
    "me", "my", "of", "on", "or", "please", "remember", "should", "so", "tell", "that", "the", "this", "to",
    "was", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would", "you",
    "your", "我", "的", "是", "吗", "什么", "你", "了",
];

/// A real [`ChatModel`] with no network and no randomness: it answers a question by quoting the
/// user's own earlier statement that shares the most topic words with it, looking first in the
/// current conversation (short-term memory) and then in the memories recalled into the system
/// prompt (long-term memory). A statement is acknowledged.
///
/// It reads the prompt [`system_prompt`](crate::system_prompt) builds, so it answers only from
/// what the graph actually retrieved: if retrieval misses a fact, so does the answer.
///
/// ```
/// use mnemograph_core::messages::Message;
/// use mnemograph_models::{ChatModel, ChatRequest};
/// use memory_agent::OfflineModel;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> mnemograph_models::Result<()> {
/// let request = ChatRequest::new(vec![
///     Message::human("My dog is called Biscuit."),
///     Message::ai("Noted."),
///     Message::human("What is my dog called?"),
/// ]);
/// let reply = OfflineModel.invoke(request).await?;
/// assert!(reply.text().contains("Biscuit"));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineModel;

/// A statement the user made, and where it was found.
struct Fact {
    /// What the user said.
    text: String,
    /// `None`: this conversation; `Some(session)`: a recalled memory of that session.
    session: Option<String>,
}

impl ChatModel for OfflineModel {
    async fn invoke(&self, request: ChatRequest) -> Result<Message> {
        let Some(question) = request.messages.iter().rev().find(|m| m.kind() == MessageType::Human) else {
            return Ok(Message::ai("Hello! Tell me something and I will remember it."));
        };
        let question = question.text();
        if !is_question(&question) {
            return Ok(Message::ai("Noted, I will remember that."));
        }
        let wanted = topic_words(&question);
        let mut best: Option<(usize, &Fact)> = None;
        let facts = facts(&request.messages);
        for fact in &facts {
            let overlap = topic_words(&fact.text).iter().filter(|w| wanted.contains(w)).count();
            // Strictly greater: on a tie the earlier candidate (this conversation, then the
            // better-ranked memory) wins.
            if overlap > 0 && best.is_none_or(|(n, _)| overlap > n) {
                best = Some((overlap, fact));
            }
        }
        Ok(Message::ai(match best {
            Some((_, Fact { text, session: None })) => {
                format!("Earlier in this conversation you said: \"{text}\"")
            }
            Some((_, Fact { text, session: Some(session) })) => {
                format!("You told me in session {session}: \"{text}\"")
            }
            None => "I don't remember you telling me anything about that.".to_owned(),
        }))
    }

    fn model_name(&self) -> &str {
        "offline"
    }
}

/// The user's statements: earlier human messages of this conversation (newest first), then the
/// user lines of the recalled memories (in recall order). Questions are not facts.
fn facts(messages: &[Message]) -> Vec<Fact> {
    let mut out = Vec::new();
    let humans: Vec<&Message> = messages.iter().filter(|m| m.kind() == MessageType::Human).collect();
    for m in humans.iter().rev().skip(1) {
        out.push(Fact { text: m.text(), session: None });
    }
    for m in messages.iter().filter(|m| m.kind() == MessageType::System) {
        let mut session = None;
        for line in m.text().lines() {
            if let Some(header) = line.strip_prefix(MEMORY_HEADER) {
                session =
                    header.split(" | ").nth(1).and_then(|s| s.strip_prefix("session ")).map(str::to_owned);
            } else if let (Some(said), Some(s)) = (line.strip_prefix("User: "), &session) {
                out.push(Fact { text: said.to_owned(), session: Some(s.clone()) });
            }
        }
    }
    out.retain(|f| !is_question(&f.text));
    out
}

/// Lowercased words minus stop words, with English possessives and contractions cut ("dog's" →
/// "dog", "I'm" → "i"); CJK text contributes its adjacent character pairs.
fn topic_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '\'')) {
        let word = raw.split('\'').next().unwrap_or("").to_lowercase();
        if word.chars().any(is_cjk) {
            let chars: Vec<char> = word.chars().filter(|c| is_cjk(*c)).collect();
            words.extend(chars.windows(2).map(|w| w.iter().collect::<String>()));
        } else if word.chars().count() > 1 && !STOP_WORDS.contains(&word.as_str()) {
            words.push(word);
        }
    }
    words.retain(|w| !STOP_WORDS.contains(&w.as_str()));
    words.dedup();
    words
}

fn is_cjk(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nodes::system_prompt;
    use mnemograph_memory::{MemoryHit, MemoryRecord};

    fn recalled(session: &str, content: &str) -> MemoryHit {
        let record = MemoryRecord {
            id: 1,
            user_id: "u".into(),
            session_id: session.into(),
            role: mnemograph_memory::ROLE_EXCHANGE.into(),
            content: content.into(),
            created_at: 0,
            importance: 0.5,
            metadata: Default::default(),
        };
        MemoryHit { record, relevance: 0.5, score: 0.5 }
    }

    #[test]
    fn questions_are_recognised() {
        for q in ["What's my dog's name?", "am I allergic to anything", "我的狗叫什么", "Is it late"] {
            assert!(is_question(q), "{q}");
        }
        for s in ["My dog is called Biscuit.", "I'm allergic to peanuts.", "Whatever works."] {
            assert!(!is_question(s), "{s}");
        }
    }

    #[test]
    fn topic_words_drop_stop_words_and_possessives() {
        assert_eq!(topic_words("What's my dog's name?"), ["dog", "name"]);
        assert_eq!(
            topic_words("Hi, I'm Ada. My dog is called Biscuit."),
            ["ada", "dog", "called", "biscuit"]
        );
        assert_eq!(topic_words("我的狗叫饼干"), ["我的", "的狗", "狗叫", "叫饼", "饼干"]);
    }

    #[tokio::test]
    async fn answers_from_recalled_memories_and_skips_remembered_questions() {
        let prompt = system_prompt(&[
            recalled("monday", "User: What is my dog called?\nAssistant: I don't know."),
            recalled("monday", "User: My dog is called Biscuit.\nAssistant: Noted."),
            recalled("monday", "User: I'm allergic to peanuts.\nAssistant: Noted."),
        ]);
        let ask =
            |q: &str| ChatRequest::new(vec![Message::system(prompt.clone()), Message::human(q.to_owned())]);
        let dog = OfflineModel.invoke(ask("What's my dog's name?")).await.unwrap().text();
        assert_eq!(dog, "You told me in session monday: \"My dog is called Biscuit.\"");
        let food = OfflineModel.invoke(ask("Am I allergic to anything?")).await.unwrap().text();
        assert!(food.contains("peanuts"), "{food}");
        let none = OfflineModel.invoke(ask("Where do I live?")).await.unwrap().text();
        assert!(none.starts_with("I don't remember"), "{none}");
    }
}
