//! A chat page on the official React hook (`useStream` from `@langchain/langgraph-sdk/react`,
//! `tests/react/src`), in headless Chromium, against this server and against `langgraph dev`
//! serving the same `chat` graph: a reply streamed token by token, an interrupt shown and resumed,
//! and the thread's history shown again when the page is reloaded on the thread.
//!
//! Needs Node.js 20 or newer and npm (the pinned packages of `tests/react/package-lock.json` are
//! installed with `npm ci` when missing, and the page is bundled with the pinned esbuild on every
//! run), Debian's `chromium` and `chromium-driver` (`scripts/chromium.sh`; `CHROMEDRIVER` names
//! the driver), and for `langgraph dev` the Python peer (`LANGGRAPH_PYTHON`). Without them the
//! tests print why and pass, unless `CI` is set.

mod support;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use axum::http::header::CONTENT_TYPE;
use futures_util::FutureExt;
use mnemograph_test::browser::{chromedriver, Driver, Session};
use serde_json::{json, Value};

/// The longest wait for anything the page does.
const PAGE_TIMEOUT: Duration = Duration::from_secs(30);

/// What the page shows: whether it is busy, its thread, its messages, the interrupt's question,
/// an error, and every text each AI message was rendered with (`window.chatRenders`).
const PAGE: &str = r#"
    const main = document.querySelector('main');
    if (!main) return null;
    return {
        busy: main.dataset.busy === 'true',
        thread: main.dataset.thread,
        url: location.href,
        messages: [...document.querySelectorAll('#messages .message')].map(m => ({
            type: m.classList.contains('human') ? 'human' : 'ai', id: m.dataset.id, text: m.textContent })),
        interrupt: document.querySelector('#interrupt .question')?.textContent ?? null,
        error: document.querySelector('#error')?.textContent ?? null,
        renders: window.chatRenders,
    };
"#;

fn page_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/react")
}

fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Skips the test with `why`, or fails it when `CI` is set.
fn skip(why: &str) {
    assert!(!ci(), "the browser test's tools are required when CI is set: {why}");
    eprintln!("SKIPPED: {why}");
}

/// What a command printed, stdout then stderr.
fn report(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Runs `program` with `args` in the page's folder; why it failed, if it did.
fn run(program: &str, args: &[&str]) -> Result<Output, String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(page_dir())
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(format!("`{program} {}` in {} failed:\n{}", args.join(" "), page_dir().display(), report(&out)))
    }
}

/// Every package `package.json` pins with the version it pins.
fn pins() -> Vec<(String, String)> {
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(page_dir().join("package.json")).unwrap()).unwrap();
    ["dependencies", "devDependencies"]
        .iter()
        .filter_map(|field| json[field].as_object())
        .flatten()
        .map(|(name, version)| (name.clone(), version.as_str().expect("an exact version").to_owned()))
        .collect()
}

/// The version of `package` installed in `node_modules`, if any.
fn installed(package: &str) -> Option<String> {
    let path = page_dir().join("node_modules").join(package).join("package.json");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    json["version"].as_str().map(str::to_owned)
}

/// Installs the locked packages unless every pinned one is there, then bundles the page into
/// `tests/react/dist`; why it could not.
fn install_and_bundle() -> Result<(), String> {
    let out = Command::new("node").arg("--version").output().map_err(|e| format!("node: {e}"))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let major: u32 =
        version.trim_start_matches('v').split('.').next().and_then(|m| m.parse().ok()).unwrap_or(0);
    // The pinned SDK's dependencies need Node.js 20.
    if major < 20 {
        return Err(format!("node {version:?} is older than 20"));
    }
    let missing = || pins().into_iter().any(|(name, pinned)| installed(&name).as_deref() != Some(&pinned));
    if missing() {
        // `ci` installs exactly the lockfile and fails rather than change it.
        run("npm", &["ci", "--no-audit", "--no-fund"])?;
        if missing() {
            return Err("`npm ci` did not install the versions package.json pins".to_owned());
        }
    }
    run("node", &["build.mjs"]).map(drop)
}

/// The page bundled once for every test of this file, or why it could not be.
fn bundled() -> Result<(), String> {
    static BUNDLED: OnceLock<Result<(), String>> = OnceLock::new();
    BUNDLED.get_or_init(install_and_bundle).clone()
}

/// Serves the page (`index.html` and the bundle) on loopback; returns its origin.
async fn serve_page() -> String {
    let html = std::fs::read_to_string(page_dir().join("index.html")).unwrap();
    let script = std::fs::read_to_string(page_dir().join("dist/chat.js")).unwrap();
    let app = axum::Router::new()
        .route("/", axum::routing::get(move || async move { ([(CONTENT_TYPE, "text/html")], html) }))
        .route(
            "/dist/chat.js",
            axum::routing::get(move || async move { ([(CONTENT_TYPE, "text/javascript")], script) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    origin
}

/// The chromedriver binary, or `None` after saying why there is none.
fn driver_binary() -> Option<PathBuf> {
    let found = chromedriver();
    if found.is_none() {
        skip("chromedriver not found (set CHROMEDRIVER or run scripts/chromium.sh)");
    }
    found
}

/// Opens the page in Chromium (driven by `binary`) on the `chat` assistant of the server at
/// `api`, and chats.
async fn chat_in_chromium(binary: &Path, page_origin: &str, api: &str) {
    let driver = match Driver::start(binary, support::http_client()).await {
        Ok(d) => d,
        Err(e) => return skip(&e),
    };
    let session = match driver.session().await {
        Ok(s) => s,
        Err(e) => return skip(&format!("headless Chromium did not start: {e}")),
    };
    let url = format!("{page_origin}/?apiUrl={api}&assistantId=chat");
    // Always end the session, so no browser outlives a failed assertion.
    let outcome = AssertUnwindSafe(chat(&session, &url)).catch_unwind().await;
    session.end().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// The texts of `page`'s messages, each with its type.
fn texts(page: &Value) -> Vec<(String, String)> {
    let messages = page["messages"].as_array().unwrap();
    messages
        .iter()
        .map(|m| (m["type"].as_str().unwrap().into(), m["text"].as_str().unwrap().into()))
        .collect()
}

fn conversation(turns: &[(&str, &str)]) -> Vec<(String, String)> {
    turns.iter().map(|(kind, text)| ((*kind).to_owned(), (*text).to_owned())).collect()
}

/// Checks that the AI message `index` of `page` was rendered while its tokens arrived: more than
/// once, each time with a longer beginning of its final text.
fn assert_streamed(page: &Value, index: usize) {
    let message = &page["messages"][index];
    let text = message["text"].as_str().unwrap();
    let renders: Vec<&str> = page["renders"][message["id"].as_str().unwrap()]
        .as_array()
        .unwrap_or_else(|| panic!("no renders recorded for {message}: {page}"))
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(renders.len() > 1, "{text:?} was shown whole, not as its tokens arrived: {renders:?}");
    assert!(renders.windows(2).all(|w| w[1].starts_with(w[0]) && w[1].len() > w[0].len()), "{renders:?}");
    assert_eq!(renders.last(), Some(&text), "{renders:?}");
}

async fn chat(session: &Session<'_>, url: &str) {
    session.open(url).await;
    let idle = |v: &Value| v.is_object() && v["busy"] == false;
    let page = session.wait_for("the empty chat", PAGE_TIMEOUT, PAGE, idle).await.pop().unwrap_or_default();
    assert_eq!(page["messages"], json!([]), "{page}");

    session.type_into("#message", "hello").await;
    session.click("#send").await;
    let asked = |v: &Value| idle(v) && v["interrupt"].is_string();
    let page = session
        .wait_for("the reply and the interrupt", PAGE_TIMEOUT, PAGE, asked)
        .await
        .pop()
        .unwrap_or_default();
    assert_eq!(texts(&page), conversation(&[("human", "hello"), ("ai", "You said: hello")]), "{page}");
    assert_eq!(page["interrupt"], "Send this reply?", "{page}");
    assert_eq!(page["error"], Value::Null, "{page}");
    assert_streamed(&page, 1);
    // The page keeps the new thread in its URL, as the way back to it.
    let thread = page["thread"].as_str().unwrap().to_owned();
    assert!(!thread.is_empty() && page["url"].as_str().unwrap().contains(&thread), "{page}");

    // Reopened on the interrupted thread, the page shows its messages and the pending interrupt.
    session.reload().await;
    let page = session
        .wait_for("the interrupted thread's history", PAGE_TIMEOUT, PAGE, asked)
        .await
        .pop()
        .unwrap_or_default();
    assert_eq!(texts(&page), conversation(&[("human", "hello"), ("ai", "You said: hello")]), "{page}");
    assert_eq!(page["thread"], thread.as_str(), "{page}");

    session.click("#approve").await;
    let answered = |v: &Value| idle(v) && v["messages"].as_array().is_some_and(|m| m.len() == 3);
    let page = session
        .wait_for("the reply after resuming", PAGE_TIMEOUT, PAGE, answered)
        .await
        .pop()
        .unwrap_or_default();
    let whole = conversation(&[("human", "hello"), ("ai", "You said: hello"), ("ai", "Approved: yes")]);
    assert_eq!(texts(&page), whole, "{page}");
    assert_eq!(page["interrupt"], Value::Null, "{page}");
    assert_eq!(page["error"], Value::Null, "{page}");
    assert_streamed(&page, 2);

    session.reload().await;
    let page = session
        .wait_for("the finished thread's history", PAGE_TIMEOUT, PAGE, answered)
        .await
        .pop()
        .unwrap_or_default();
    assert_eq!(texts(&page), whole, "{page}");
    assert_eq!(page["interrupt"], Value::Null, "{page}");
    assert_eq!(page["thread"], thread.as_str(), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_react_page_chats_with_this_server() {
    let Some(binary) = driver_binary() else { return };
    if let Err(why) = bundled() {
        return skip(&why);
    }
    let page = serve_page().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = format!("http://{}", listener.local_addr().unwrap());
    let server = support::graphs::server().cors_origins([page.clone()]);
    let serving = tokio::spawn(server.serve(listener));
    let outcome = AssertUnwindSafe(chat_in_chromium(&binary, &page, &api)).catch_unwind().await;
    serving.abort();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_react_page_chats_with_langgraph_dev() {
    let Some(python) = support::python::python() else { return };
    let Some(binary) = driver_binary() else { return };
    if let Err(why) = bundled() {
        return skip(&why);
    }
    let page = serve_page().await;
    let server =
        tokio::task::spawn_blocking(move || support::langgraph_dev::LanggraphDev::start(&python, &[]))
            .await
            .unwrap();
    chat_in_chromium(&binary, &page, &server.url).await;
}
