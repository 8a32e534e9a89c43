//! The chat page in a real browser: headless Chromium driven through chromedriver with the
//! W3C WebDriver protocol (plain JSON over HTTP, sent with reqwest).
//!
//! Needs Redis, MariaDB and Debian's `chromium` + `chromium-driver`
//! (`export CHROMEDRIVER=$(bash scripts/chromium.sh)`). `CHROMEDRIVER` is the driver's path
//! (default: `chromedriver` on `PATH`). Without them the test prints `SKIPPED`, unless `CI` is
//! set. Every wait is bounded.

mod support;

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt;
use mnemograph_test::browser::{chromedriver, Driver, Session};
use serde_json::json;
use support::{start, unavailable, SHARED_DB};

/// Longest wait for anything the page does.
const PAGE_TIMEOUT: Duration = Duration::from_secs(30);

/// The last AI bubble: its state, text and citation links.
const LAST_ANSWER: &str = r#"
    const all = document.querySelectorAll('.bubble.ai');
    const b = all[all.length - 1];
    if (!b) return null;
    return { state: b.dataset.state || null, text: b.querySelector('.text').textContent,
             citations: [...b.querySelectorAll('a.citation')].map(a => ({ title: a.textContent, url: a.href })) };
"#;

/// Every bubble after a history load, or null while loading.
const BUBBLES: &str = r#"
    const list = document.getElementById('messages');
    if (list.dataset.loaded === undefined) return null;
    return [...list.querySelectorAll('.bubble')].map(b => ({
        role: b.classList.contains('human') ? 'human' : 'ai',
        text: b.querySelector('.text').textContent,
        citations: [...b.querySelectorAll('a.citation')].map(a => ({ title: a.textContent, url: a.href })) }));
"#;

#[tokio::test]
async fn the_page_streams_an_answer_with_citations_and_shows_it_again_after_reload() {
    let Some(binary) = chromedriver() else {
        return unavailable("chromedriver not found (set CHROMEDRIVER or run scripts/chromium.sh)")
            .unwrap_or(());
    };
    let Some(t) = start(SHARED_DB).await else { return };
    let driver = match Driver::start(&binary, support::http_client()).await {
        Ok(d) => d,
        Err(e) => return unavailable(&e).unwrap_or(()),
    };
    let session = match driver.session().await {
        Ok(s) => s,
        Err(e) => return unavailable(&format!("headless Chromium did not start: {e}")).unwrap_or(()),
    };
    let (user, sid) = support::ids("browser");
    let page = format!("{}/?user_id={user}&session_id={sid}", t.server.url());
    // Always end the session, so no browser outlives a failed assertion.
    let outcome = AssertUnwindSafe(drive(&session, &page, &t.app)).catch_unwind().await;
    session.end().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

async fn drive(session: &Session<'_>, page: &str, app: &blog_assistant::App) {
    let question = "上下文剪裁是怎么做的？";
    session.open(page).await;
    let empty = |v: &serde_json::Value| v.as_array().is_some_and(Vec::is_empty);
    session.wait_for("the empty history", PAGE_TIMEOUT, BUBBLES, empty).await;

    session.type_into("#message", question).await;
    session.click("#send").await;

    let seen =
        session.wait_for("the streamed answer", PAGE_TIMEOUT, LAST_ANSWER, |v| v["state"] == "done").await;
    // Tokens were rendered while the answer was still streaming, not all at once at the end.
    assert!(
        seen.iter().any(|v| v["state"] == "streaming" && !v["text"].as_str().unwrap_or_default().is_empty()),
        "no partial answer was ever shown: {seen:?}"
    );
    let last = seen.last().unwrap();
    let article = app.corpus().get("context-trimming").unwrap();
    assert_eq!(last["citations"], json!([{ "title": article.title, "url": article.url }]));
    let shown = last["text"].as_str().unwrap();
    // The prefaces before the tool calls moved to the tool log: the bubble is the answer.
    assert!(shown.starts_with(&format!("根据博客文章《{}》", article.title)), "{shown}");

    // After a reload the page shows the archived round: question, answer, citation.
    session.reload().await;
    let two = |v: &serde_json::Value| v.as_array().is_some_and(|b| b.len() == 2);
    let after = session.wait_for("the history", PAGE_TIMEOUT, BUBBLES, two).await;
    let bubbles = after.last().unwrap();
    assert_eq!(bubbles[0]["role"], "human");
    assert_eq!(bubbles[0]["text"], question);
    assert_eq!(bubbles[1]["role"], "ai");
    assert_eq!(bubbles[1]["text"], shown);
    assert_eq!(bubbles[1]["citations"], last["citations"]);
}
