//! The application's own tables, `conversations` and `messages`, kept for the front end's
//! display after the conversation state moved to LangGraph's checkpoint tables.
//!
//! Every round is appended here too (one transaction per round), so the display never has to
//! decode checkpoint blobs. Conversations written before the move exist only here; see
//! [`migrate`](crate::migrate).

use mnemograph_core::messages::Message;
use serde::Serialize;
use sqlx::{MySqlPool, Row as _};

use crate::error::Result;

/// The legacy schema. `messages.id` gives the display order; roles are `user`, `assistant` and
/// `system` as the old application wrote them, though older rows may hold others (see
/// [`to_chat_message`]).
const SCHEMA: [&str; 2] = [
    "CREATE TABLE IF NOT EXISTS conversations (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        title VARCHAR(255) NOT NULL DEFAULT '',
        created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
        updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
    ) CHARACTER SET utf8mb4",
    "CREATE TABLE IF NOT EXISTS messages (
        id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
        conversation_id VARCHAR(64) NOT NULL,
        role VARCHAR(16) NOT NULL,
        content MEDIUMTEXT NOT NULL,
        created_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
        KEY messages_conversation_idx (conversation_id, id),
        CONSTRAINT messages_conversation_fk FOREIGN KEY (conversation_id)
            REFERENCES conversations (id) ON DELETE CASCADE
    ) CHARACTER SET utf8mb4",
];

/// How timestamps are rendered in JSON (the server's `DATETIME(6)`, no zone).
const TIME_FORMAT: &str = "%Y-%m-%d %H:%i:%s.%f";

/// One row of `messages`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LegacyMessage {
    /// `messages.id`.
    pub id: u64,
    /// `user`, `assistant` or `system` (rows written before may hold other roles).
    pub role: String,
    /// The text.
    pub content: String,
    /// When it was written.
    pub created_at: String,
}

/// A conversation as the front end displays it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Conversation {
    /// `conversations.id`, the `{conversation_id}` of `thread_id = conv_{conversation_id}`.
    pub id: String,
    /// Its title (the start of its first message).
    pub title: String,
    /// When it started.
    pub created_at: String,
    /// When its last round was written.
    pub updated_at: String,
    /// Its messages, oldest first.
    pub messages: Vec<LegacyMessage>,
}

/// Creates the legacy tables when missing.
///
/// # Errors
/// [`Error::Database`](crate::Error::Database) when the server rejects the DDL.
pub async fn setup(pool: &MySqlPool) -> Result<()> {
    for statement in SCHEMA {
        sqlx::query(statement).execute(pool).await?;
    }
    Ok(())
}

/// Appends one round (the user's message and the answer) to a conversation, creating the
/// conversation row on its first round, in one transaction: the display shows both messages or
/// neither.
///
/// # Errors
/// [`Error::Database`](crate::Error::Database); nothing is written then.
pub async fn append_round(
    pool: &MySqlPool,
    conversation_id: &str,
    question: &str,
    answer: &str,
) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO conversations (id, title) VALUES (?, LEFT(?, 100))
         ON DUPLICATE KEY UPDATE updated_at = CURRENT_TIMESTAMP(6)",
    )
    .bind(conversation_id)
    .bind(question)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO messages (conversation_id, role, content) VALUES (?, 'user', ?), (?, 'assistant', ?)",
    )
    .bind(conversation_id)
    .bind(question)
    .bind(conversation_id)
    .bind(answer)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The messages of a conversation, oldest first (empty for an unknown conversation).
///
/// # Errors
/// [`Error::Database`](crate::Error::Database).
pub async fn messages(pool: &MySqlPool, conversation_id: &str) -> Result<Vec<LegacyMessage>> {
    let rows = sqlx::query(
        "SELECT id, role, content, DATE_FORMAT(created_at, ?) AS created_at
         FROM messages WHERE conversation_id = ? ORDER BY id",
    )
    .bind(TIME_FORMAT)
    .bind(conversation_id)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            Ok(LegacyMessage {
                id: r.try_get("id")?,
                role: r.try_get("role")?,
                content: r.try_get("content")?,
                created_at: r.try_get("created_at")?,
            })
        })
        .collect()
}

/// A conversation with its messages, or `None` when `conversations` has no such row.
///
/// # Errors
/// [`Error::Database`](crate::Error::Database).
pub async fn conversation(pool: &MySqlPool, conversation_id: &str) -> Result<Option<Conversation>> {
    let row = sqlx::query(
        "SELECT id, title, DATE_FORMAT(created_at, ?) AS created_at, DATE_FORMAT(updated_at, ?) AS updated_at
         FROM conversations WHERE id = ?",
    )
    .bind(TIME_FORMAT)
    .bind(TIME_FORMAT)
    .bind(conversation_id)
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    Ok(Some(Conversation {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        messages: messages(pool, conversation_id).await?,
    }))
}

/// The chat message a legacy row stands for, or `None` for a row with no place in the
/// conversation the model sees. Its id is `legacy-{messages.id}`, stable across attempts, so even
/// a second migration of the same rows would replace them in the checkpoint (`add_messages`
/// merges by id) rather than duplicate them.
///
/// Roles are compared ignoring case and surrounding spaces: `user` and `human` become a human
/// message, `assistant`, `ai` and `bot` an AI message, `system` and `developer` a system
/// message. Any other role (`tool` and `function` rows lack the call they answer, which the model
/// APIs require; an empty or unknown role says nothing usable) is skipped with a warning naming
/// the row, so one odd row never makes its conversation fail.
pub fn to_chat_message(row: &LegacyMessage) -> Option<Message> {
    let text = row.content.as_str();
    let message = match row.role.trim().to_ascii_lowercase().as_str() {
        "user" | "human" => Message::human(text),
        "assistant" | "ai" | "bot" => Message::ai(text),
        "system" | "developer" => Message::system(text),
        _ => {
            tracing::warn!(message_id = row.id, role = %row.role, "skipping a legacy message with an unknown role");
            return None;
        }
    };
    Some(message.with_id(format!("legacy-{}", row.id)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemograph_core::messages::MessageType;

    fn row(id: u64, role: &str) -> LegacyMessage {
        LegacyMessage { id, role: role.to_owned(), content: "x".to_owned(), created_at: String::new() }
    }

    #[test]
    fn roles_map_to_message_kinds_with_stable_ids() {
        let human = to_chat_message(&row(7, "user")).unwrap();
        assert_eq!((human.kind(), human.id()), (MessageType::Human, Some("legacy-7")));
        assert_eq!(to_chat_message(&row(8, "assistant")).unwrap().kind(), MessageType::Ai);
        assert_eq!(to_chat_message(&row(9, "system")).unwrap().kind(), MessageType::System);
    }

    #[test]
    fn other_spellings_of_the_three_roles_are_mapped() {
        let kind = |role: &str| to_chat_message(&row(1, role)).map(|m| m.kind());
        for role in ["human", "Human", " USER "] {
            assert_eq!(kind(role), Some(MessageType::Human), "{role:?}");
        }
        for role in ["ai", "bot", "Assistant"] {
            assert_eq!(kind(role), Some(MessageType::Ai), "{role:?}");
        }
        assert_eq!(kind("developer"), Some(MessageType::System));
    }

    #[test]
    fn unknown_roles_are_skipped() {
        for role in ["tool", "function", "", "  ", "moderator"] {
            assert_eq!(to_chat_message(&row(10, role)), None, "{role:?}");
        }
    }
}
