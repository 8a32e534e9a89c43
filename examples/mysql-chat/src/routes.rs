//! The HTTP API.
//!
//! | route | body | answer |
//! |---|---|---|
//! | `POST /api/chat` | `{"conversation_id"?, "message"}` | `{"conversation_id", "thread_id", "answer", "migrated"}` |
//! | `POST /api/chat/stream` | same | SSE: `token` events `{"text"}`, then `done` (the JSON above) or `error` `{"error"}` |
//! | `GET /api/conversations/{id}/messages` | — | `{"id", "title", "created_at", "updated_at", "messages", "thread_id", "checkpointed"}` |
//!
//! Errors are `{"error": "..."}` with 400 (bad input), 404 (unknown conversation), 409 (another
//! round of the conversation is still running) or 500.

use std::convert::Infallible;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::Stream;
use tokio::sync::mpsc;

use crate::error::{Error, Result};
use crate::service::{ChatInput, ChatService, ConversationView, Round, RoundEvent};

/// The service's routes.
pub fn router(service: ChatService) -> Router {
    Router::new()
        .route("/api/chat", post(chat))
        .route("/api/chat/stream", post(chat_stream))
        .route("/api/conversations/{id}/messages", get(messages))
        .with_state(service)
}

/// `POST /api/chat`: one round, answered when it is saved.
async fn chat(State(service): State<ChatService>, Json(input): Json<ChatInput>) -> Result<Json<Round>> {
    Ok(Json(service.chat(input).await?))
}

/// `POST /api/chat/stream`: one round as server-sent events.
async fn chat_stream(
    State(service): State<ChatService>,
    Json(input): Json<ChatInput>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let events = service.chat_stream(input)?;
    Ok(Sse::new(sse_events(events)).keep_alive(KeepAlive::default()))
}

/// `GET /api/conversations/{id}/messages`: the conversation from the legacy tables.
async fn messages(
    State(service): State<ChatService>,
    Path(id): Path<String>,
) -> Result<Json<ConversationView>> {
    Ok(Json(service.conversation(&id).await?))
}

/// The round's events as SSE events; the stream ends after `done` or `error`. A round whose task
/// died without either (a panic) still ends with an `error` event, so a client never waits for a
/// `done` that cannot come.
fn sse_events(rx: mpsc::UnboundedReceiver<RoundEvent>) -> impl Stream<Item = Result<Event, Infallible>> {
    // The state is the receiver until a terminal event has been sent, then `None`.
    futures_util::stream::unfold(Some(rx), |rx| async move {
        let mut rx = rx?;
        let (event, rest) = match rx.recv().await {
            Some(RoundEvent::Token(text)) => {
                (json_event("token", &serde_json::json!({ "text": text })), Some(rx))
            }
            Some(RoundEvent::Done(round)) => (json_event("done", &round), None),
            Some(RoundEvent::Failed(e)) => (error_event(&e), None),
            None => (error_event(&Error::RoundAborted), None),
        };
        Some((Ok(event), rest))
    })
}

/// The `error` event for `e`.
fn error_event(e: &Error) -> Event {
    json_event("error", &serde_json::json!({ "error": e.public_message() }))
}

/// An SSE event named `name` with `data` as JSON.
fn json_event(name: &str, data: &impl serde::Serialize) -> Event {
    // Serializing these plain structs cannot fail; if it somehow did, say so in the stream.
    Event::default().event(name).json_data(data).unwrap_or_else(|e| {
        Event::default().event("error").data(serde_json::json!({ "error": e.to_string() }).to_string())
    })
}

#[cfg(test)]
mod tests {
    use axum::response::IntoResponse;

    use super::*;

    /// The SSE body `events` produce.
    async fn body(events: mpsc::UnboundedReceiver<RoundEvent>) -> String {
        let response = Sse::new(sse_events(events)).into_response();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 16).await.unwrap();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_round_that_dies_still_ends_with_an_error_event() {
        let (tx, rx) = mpsc::unbounded_channel();
        tx.send(RoundEvent::Token("Hi".to_owned())).unwrap();
        drop(tx); // the task ended without Done or Failed
        assert_eq!(
            body(rx).await,
            "event: token\ndata: {\"text\":\"Hi\"}\n\n\
             event: error\ndata: {\"error\":\"internal error; see the server log\"}\n\n"
        );
    }

    #[tokio::test]
    async fn the_stream_ends_after_a_terminal_event() {
        let (tx, rx) = mpsc::unbounded_channel();
        tx.send(RoundEvent::Failed(Error::Busy { conversation_id: "c1".to_owned() })).unwrap();
        // Anything after the terminal event is never sent, though the sender is still alive.
        tx.send(RoundEvent::Token("late".to_owned())).unwrap();
        // Bounded: a stream that did not end would wait for the live sender forever.
        let ended = tokio::time::timeout(std::time::Duration::from_secs(5), body(rx)).await;
        let text = ended.expect("the stream ends after the error event");
        assert_eq!(
            text,
            "event: error\ndata: {\"error\":\"conversation \\\"c1\\\" is busy with another message; retry later\"}\n\n"
        );
        drop(tx);
    }
}
