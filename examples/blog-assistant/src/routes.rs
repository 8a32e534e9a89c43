//! The HTTP API: `GET /` (the chat page), `POST /chat/stream` (SSE), `GET /history`.

use std::convert::Infallible;

use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::Html;
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use mnemograph_agent::AgentStateUpdate;
use mnemograph_core::messages::Message;
use mnemograph_core::StreamMode;
use serde::{Deserialize, Serialize};

use crate::archive::ArchivedMessage;
use crate::error::{Error, Result};
use crate::pending::Conversation;
use crate::recovery::{ensure_checkpoint, Recovery};
use crate::snapshot::round_config;
use crate::sse::{round_events, Round};
use crate::App;

/// Longest user or session id, in characters (the archive's column width).
pub const MAX_ID_CHARS: usize = 64;
/// Longest question, in characters.
pub const MAX_MESSAGE_CHARS: usize = 4000;

/// The service's routes over `app`.
pub fn router(app: App) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/chat/stream", post(chat_stream))
        .route("/history", get(history))
        .with_state(app)
}

/// Body of `POST /chat/stream`. Fields are optional here so that a missing one is reported by
/// [`Error::InvalidInput`] like any other bad value.
#[derive(Debug, Deserialize)]
pub struct ChatBody {
    /// The user.
    pub user_id: Option<String>,
    /// The session (one conversation of the user).
    pub session_id: Option<String>,
    /// The question.
    pub message: Option<String>,
}

/// Query of `GET /history`.
#[derive(Debug, Deserialize)]
pub struct HistoryQuery {
    /// The user.
    pub user_id: Option<String>,
    /// The session.
    pub session_id: Option<String>,
}

/// Answer of `GET /history`.
#[derive(Debug, Serialize)]
pub struct HistoryResponse {
    /// `user_id:session_id`.
    pub thread_id: String,
    /// The archived bubbles, oldest first.
    pub messages: Vec<ArchivedMessage>,
}

/// The chat page.
async fn index() -> Html<&'static str> {
    Html(crate::web::INDEX_HTML)
}

/// Streams one round: cold-start recovery if the checkpoint is gone, then the agent run as
/// SSE. Bad input and backend failures before the stream starts are ordinary JSON errors.
///
/// The thread's lock is taken before the recovery and held by the stream until the round ends
/// (or the client leaves), so a second request on the thread waits for the first: it finds the
/// thread rebuilt and answered instead of rebuilding it again.
async fn chat_stream(
    State(app): State<App>,
    Json(body): Json<ChatBody>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let user_id = check_id("user_id", body.user_id)?;
    let session_id = check_id("session_id", body.session_id)?;
    let question = check_message(body.message)?;
    let thread_id = thread_id(&user_id, &session_id);
    let conversation = Conversation { user_id: user_id.clone(), session_id: session_id.clone() };
    let config = conversation.configure(round_config(&thread_id));
    let guard = app.locks().lock(&thread_id).await;
    if let Recovery::Rebuilt(n) =
        ensure_checkpoint(app.agent(), app.saver(), &config, &user_id, &session_id).await?
    {
        app.note_rebuild();
        tracing::debug!(%thread_id, messages = n, "answering on a rebuilt thread");
    }
    let input = AgentStateUpdate::from(Message::human(question.as_str()));
    let run = app.agent().stream(Some(input), &config).modes([StreamMode::Messages, StreamMode::Updates]);
    let round = Round { user_id, session_id, thread_id, question };
    Ok(Sse::new(round_events(round, run, guard)).keep_alive(KeepAlive::default()))
}

/// The archived bubbles of one session, including a last round that reached the snapshot but
/// not yet the archive ([`ArchivingSaver::archive_latest_round`]). Without Redis that round is
/// left for later and the history is the archive's; without MySQL the history fails.
///
/// [`ArchivingSaver::archive_latest_round`]: crate::archiving_saver::ArchivingSaver::archive_latest_round
async fn history(State(app): State<App>, Query(query): Query<HistoryQuery>) -> Result<Json<HistoryResponse>> {
    let user_id = check_id("user_id", query.user_id)?;
    let session_id = check_id("session_id", query.session_id)?;
    let thread_id = thread_id(&user_id, &session_id);
    match app.saver().archive_latest_round(&thread_id).await {
        Ok(_) => {}
        Err(e @ Error::Graph(_)) => {
            tracing::warn!(%thread_id, error = %e.chain(), "history without the snapshot")
        }
        Err(e) => return Err(e),
    }
    let messages = app.archive().history(&user_id, &session_id).await?;
    Ok(Json(HistoryResponse { thread_id, messages }))
}

/// The checkpoint thread of a session, `"{user_id}:{session_id}"`. Ids cannot
/// contain `:` (see [`check_id`]), so two different pairs never share a thread.
pub fn thread_id(user_id: &str, session_id: &str) -> String {
    format!("{user_id}:{session_id}")
}

/// A user or session id: 1 to [`MAX_ID_CHARS`] characters of `A-Z a-z 0-9 _ - . @`.
///
/// # Errors
/// [`Error::InvalidInput`] naming `field`.
pub fn check_id(field: &'static str, value: Option<String>) -> Result<String> {
    let bad = |reason| Error::InvalidInput { field, reason };
    let value = value.ok_or_else(|| bad("is required"))?;
    if value.is_empty() {
        return Err(bad("must not be empty"));
    }
    if value.chars().count() > MAX_ID_CHARS {
        return Err(bad("is longer than 64 characters"));
    }
    if !value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@')) {
        return Err(bad("may only contain letters, digits and _ - . @"));
    }
    Ok(value)
}

/// A question: trimmed, 1 to [`MAX_MESSAGE_CHARS`] characters.
///
/// # Errors
/// [`Error::InvalidInput`] for `message`.
pub fn check_message(value: Option<String>) -> Result<String> {
    let bad = |reason| Error::InvalidInput { field: "message", reason };
    let value = value.ok_or_else(|| bad("is required"))?;
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(bad("must not be blank"));
    }
    if trimmed.chars().count() > MAX_MESSAGE_CHARS {
        return Err(bad("is longer than 4000 characters"));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_messages_are_checked() {
        assert_eq!(check_id("user_id", Some("u-1.a@b_c".into())).unwrap(), "u-1.a@b_c");
        for bad in [None, Some(String::new()), Some("a:b".into()), Some("x".repeat(65)), Some("名字".into())]
        {
            let e = check_id("user_id", bad).unwrap_err();
            assert!(matches!(e, Error::InvalidInput { field: "user_id", .. }), "{e}");
        }
        assert_eq!(check_message(Some("  你好 \n".into())).unwrap(), "你好");
        assert!(check_message(Some(" \n".into())).is_err());
        assert!(check_message(Some("长".repeat(4001))).is_err());
        assert!(check_message(None).is_err());
        assert_eq!(thread_id("u", "s"), "u:s");
    }
}
