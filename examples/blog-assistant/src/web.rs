//! The chat page served at `/`: one static HTML file with inline CSS and JS, compiled in.
//!
//! The page keeps a user id and a session id in `localStorage` (or takes `?user_id=` and
//! `?session_id=` from its URL), loads `GET /history` when it opens, and posts questions to
//! `POST /chat/stream`, reading the SSE response with `fetch` (an `EventSource` cannot POST):
//! `token` events grow the answer bubble, `tool_call` events show what the agent looks up,
//! `citations` become links under the answer.

/// The page.
pub const INDEX_HTML: &str = include_str!("web/index.html");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_what_the_browser_test_drives() {
        for needle in ["id=\"message\"", "id=\"send\"", "id=\"messages\"", "/chat/stream", "/history"] {
            assert!(INDEX_HTML.contains(needle), "{needle}");
        }
    }
}
