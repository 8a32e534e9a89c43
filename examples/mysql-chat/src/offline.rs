//! [`OfflineModel`]: a deterministic chat model for running the example without an API key.
//!
//! It is not a language model: it answers from rules over the conversation it is given, so what
//! it says depends on the history the checkpointer restored. That makes the persistence visible
//! (ask "what is my name?" after saying it in an earlier request, or in a migrated legacy
//! conversation) and makes tests exact.

use mnemograph_core::messages::{Message, MessageType};
use mnemograph_models::{ChatChunk, ChatModel, ChatRequest, ChunkStream, Result};

/// The name it reports in `response_metadata.model_name`.
pub const OFFLINE_MODEL_NAME: &str = "offline-echo";

/// A deterministic [`ChatModel`] that streams its answer word by word (one token per CJK
/// character) and answers from the conversation's earlier human messages.
///
/// ```
/// use mnemograph_core::messages::Message;
/// use mysql_chat::OfflineModel;
///
/// let history = [Message::human("Hi, my name is Alice."), Message::ai("…"), Message::human("What is my name?")];
/// assert!(OfflineModel::reply(&history).contains("Alice"));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineModel;

impl OfflineModel {
    /// The answer to the last human message of `messages`.
    pub fn reply(messages: &[Message]) -> String {
        let said: Vec<String> =
            messages.iter().filter(|m| m.kind() == MessageType::Human).map(Message::text).collect();
        let Some((question, earlier)) = said.split_last() else {
            return "[offline] Hello! Say something and I will remember it.".to_owned();
        };
        let lower = question.to_lowercase();
        let body = if asks_for_name(&lower, question) {
            match earlier.iter().rev().find_map(|m| introduced_name(m)) {
                Some(name) => format!("Your name is {name}, you told me earlier."),
                None => "You have not told me your name yet.".to_owned(),
            }
        } else if let Some(name) = introduced_name(question) {
            format!("Nice to meet you, {name}! I will remember your name.")
        } else if asks_for_history(&lower, question) {
            match (earlier.first(), earlier.last()) {
                (Some(first), Some(last)) => format!(
                    "You first said \"{first}\" and most recently \"{last}\" ({} earlier messages).",
                    earlier.len()
                ),
                _ => "This is the first thing you said in this conversation.".to_owned(),
            }
        } else {
            match earlier.last() {
                Some(previous) => format!(
                    "You said \"{question}\". Before that you said \"{previous}\" ({} earlier messages).",
                    earlier.len()
                ),
                None => format!("You said \"{question}\". This is the start of our conversation."),
            }
        };
        format!("[offline] {body}")
    }

    /// `text` split into stream tokens: ASCII words with their trailing spaces, and each other
    /// character on its own (Chinese has no spaces between words).
    pub fn tokens(text: &str) -> Vec<String> {
        let mut tokens = Vec::new();
        let mut current = String::new();
        for c in text.chars() {
            if !c.is_ascii() {
                if !current.is_empty() {
                    tokens.push(std::mem::take(&mut current));
                }
                tokens.push(c.to_string());
                continue;
            }
            // A word starts after the spaces that ended the previous one.
            if !c.is_whitespace() && current.ends_with(char::is_whitespace) {
                tokens.push(std::mem::take(&mut current));
            }
            current.push(c);
        }
        if !current.is_empty() {
            tokens.push(current);
        }
        tokens
    }
}

impl ChatModel for OfflineModel {
    async fn invoke(&self, request: ChatRequest) -> Result<Message> {
        let mut metadata = serde_json::Map::new();
        metadata.insert("model_name".to_owned(), OFFLINE_MODEL_NAME.into());
        metadata.insert("finish_reason".to_owned(), "stop".into());
        Ok(Message::ai(Self::reply(&request.messages)).with_response_metadata(metadata))
    }

    async fn stream(&self, request: ChatRequest) -> Result<ChunkStream> {
        let mut chunks: Vec<Result<ChatChunk>> = Self::tokens(&Self::reply(&request.messages))
            .into_iter()
            .map(|t| Ok(ChatChunk::text(t)))
            .collect();
        // The last chunk says the reply is complete, as a provider's `finish_reason` does.
        let mut last = ChatChunk::text("");
        last.response_metadata.insert("model_name".to_owned(), OFFLINE_MODEL_NAME.into());
        last.response_metadata.insert("finish_reason".to_owned(), "stop".into());
        chunks.push(Ok(last));
        Ok(Box::pin(futures_util::stream::iter(chunks)))
    }

    fn model_name(&self) -> &str {
        OFFLINE_MODEL_NAME
    }
}

/// Whether the message asks the model for the user's name.
fn asks_for_name(lower: &str, original: &str) -> bool {
    ["what is my name", "what's my name", "who am i"].iter().any(|p| lower.contains(p))
        || ["我叫什么", "我的名字是什么", "我是谁"].iter().any(|p| original.contains(p))
}

/// Whether the message asks what was said before.
fn asks_for_history(lower: &str, original: &str) -> bool {
    ["what did i say", "what have i said", "earlier", "before"].iter().any(|p| lower.contains(p))
        || ["之前", "刚才", "说过什么"].iter().any(|p| original.contains(p))
}

/// The name in "my name is X" / "I'm X" / "我叫X", if the message introduces one.
fn introduced_name(message: &str) -> Option<String> {
    // ASCII lowercasing keeps byte offsets, so an offset found in `lower` is valid in `message`.
    let lower = message.to_ascii_lowercase();
    let ascii = ["my name is ", "i am called ", "call me "];
    let start = ascii
        .iter()
        .find_map(|p| lower.find(p).map(|i| i + p.len()))
        .or_else(|| message.find("我叫").map(|i| i + "我叫".len()))?;
    let name: String = message[start..].chars().take_while(|c| c.is_alphanumeric()).collect();
    // "我叫什么" is the question, not an introduction.
    (!name.is_empty() && !name.starts_with("什么")).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[test]
    fn remembers_a_name_from_an_earlier_message() {
        let history =
            [Message::human("my name is Bob, hello"), Message::ai("hi"), Message::human("Who am I?")];
        assert_eq!(OfflineModel::reply(&history), "[offline] Your name is Bob, you told me earlier.");
        let chinese = [Message::human("我叫小明。"), Message::ai("你好"), Message::human("我叫什么？")];
        assert_eq!(OfflineModel::reply(&chinese), "[offline] Your name is 小明, you told me earlier.");
        assert!(OfflineModel::reply(&[Message::human("what is my name?")]).contains("not told me"));
    }

    #[test]
    fn quotes_earlier_messages() {
        let history =
            [Message::human("one"), Message::ai("a"), Message::human("two"), Message::human("three")];
        assert_eq!(
            OfflineModel::reply(&history),
            "[offline] You said \"three\". Before that you said \"two\" (2 earlier messages)."
        );
        let asked = [Message::human("one"), Message::human("two"), Message::human("What did I say?")];
        assert!(OfflineModel::reply(&asked).contains("first said \"one\" and most recently \"two\""));
    }

    #[test]
    fn tokens_split_words_and_cjk_characters() {
        assert_eq!(OfflineModel::tokens("Hi  there 你好!"), ["Hi  ", "there ", "你", "好", "!"]);
        assert_eq!(OfflineModel::tokens("Hi  there 你好!").concat(), "Hi  there 你好!");
        assert!(OfflineModel::tokens("").is_empty());
    }

    #[tokio::test]
    async fn the_stream_concatenates_to_the_invoked_answer() {
        let request = || ChatRequest::new(vec![Message::human("my name is Ada")]);
        let invoked = OfflineModel.invoke(request()).await.unwrap().text();
        let chunks: Vec<ChatChunk> =
            OfflineModel.stream(request()).await.unwrap().map(|c| c.unwrap()).collect().await;
        assert!(chunks.len() > 3);
        assert!(chunks.last().unwrap().is_final());
        assert_eq!(chunks.iter().map(|c| c.content.as_str()).collect::<String>(), invoked);
    }
}
