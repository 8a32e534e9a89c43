//! The chat page in a real browser: headless Chromium driven through chromedriver with the
//! W3C WebDriver protocol (plain JSON over HTTP, sent with reqwest).
//!
//! Needs Redis, MariaDB and Debian's `chromium` + `chromium-driver`
//! (`export CHROMEDRIVER=$(bash scripts/chromium.sh)`). `CHROMEDRIVER` is the driver's path
//! (default: `chromedriver` on `PATH`). Without them the test prints `SKIPPED`, unless `CI` is
//! set. Every wait is bounded.

mod support;

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use serde_json::{json, Value};
use support::{start, unavailable, SHARED_DB};

/// The W3C key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// Longest wait for anything the page does.
const PAGE_TIMEOUT: Duration = Duration::from_secs(30);

/// The chromedriver binary: `CHROMEDRIVER`, or `chromedriver` found on `PATH`.
fn chromedriver() -> Option<PathBuf> {
    let named =
        std::env::var_os("CHROMEDRIVER").filter(|v| !v.is_empty()).unwrap_or_else(|| "chromedriver".into());
    let named = PathBuf::from(named);
    if named.components().count() > 1 {
        return named.is_file().then_some(named);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(&named)).find(|p| p.is_file())
}

/// A running chromedriver, killed on drop.
struct Driver {
    /// The process.
    child: Child,
    /// `http://127.0.0.1:{port}`.
    base: String,
    /// Client for its HTTP API.
    http: reqwest::Client,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    /// Starts `binary` on a free port and waits (10 s at most) until it is ready.
    async fn start(binary: &PathBuf) -> Result<Self, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = Command::new(binary)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", binary.display()))?;
        let driver = Self { child, base: format!("http://127.0.0.1:{port}"), http: support::http_client() };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let status = driver.http.get(format!("{}/status", driver.base)).send().await;
            if let Ok(res) = status {
                if let Ok(v) = res.json::<Value>().await {
                    if v["value"]["ready"] == true {
                        return Ok(driver);
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err("chromedriver did not become ready within 10 s".to_owned())
    }

    /// Opens a headless Chromium session.
    async fn session(&self) -> Result<Session<'_>, String> {
        let caps = json!({ "capabilities": { "alwaysMatch": { "goog:chromeOptions": { "args": [
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1200,900"
        ] } } } });
        let value = self.call(reqwest::Method::POST, "/session", Some(caps)).await?;
        let id = value["sessionId"].as_str().ok_or_else(|| format!("no session id in {value}"))?;
        Ok(Session { driver: self, path: format!("/session/{id}") })
    }

    /// One WebDriver command; its `value`, or the error it reported.
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        let mut request = self.http.request(method, format!("{}{path}", self.base)).timeout(PAGE_TIMEOUT);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let res = request.send().await.map_err(|e| e.to_string())?;
        let ok = res.status().is_success();
        let body: Value = res.json().await.map_err(|e| e.to_string())?;
        if ok {
            Ok(body["value"].clone())
        } else {
            Err(format!("WebDriver {path}: {}", body["value"]))
        }
    }
}

/// A browser session.
struct Session<'d> {
    /// Its driver.
    driver: &'d Driver,
    /// `/session/{id}`.
    path: String,
}

impl Session<'_> {
    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let path = format!("{}{path}", self.path);
        self.driver.call(method, &path, body).await.unwrap_or_else(|e| panic!("{e}"))
    }

    async fn post(&self, path: &str, body: Value) -> Value {
        self.cmd(reqwest::Method::POST, path, Some(body)).await
    }

    /// Runs `script` in the page and returns its result.
    async fn eval(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({ "script": script, "args": [] })).await
    }

    /// The element `css` selects.
    async fn find(&self, css: &str) -> String {
        let found = self.post("/element", json!({ "using": "css selector", "value": css })).await;
        found[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}: {found}")).to_owned()
    }

    /// Evaluates `script` every 50 ms until `done` accepts its result; panics after
    /// [`PAGE_TIMEOUT`] showing the last result. Returns every result seen.
    async fn wait_for(&self, what: &str, script: &str, done: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + PAGE_TIMEOUT;
        let mut seen = Vec::new();
        loop {
            let v = self.eval(script).await;
            let finished = done(&v);
            seen.push(v);
            if finished {
                return seen;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}; last: {:?}", seen.last());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn delete(&self) {
        let _ = self.driver.call(reqwest::Method::DELETE, &self.path, None).await;
    }
}

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
    let driver = match Driver::start(&binary).await {
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
    session.delete().await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

async fn drive(session: &Session<'_>, page: &str, app: &blog_assistant::App) {
    let question = "上下文剪裁是怎么做的？";
    session.post("/url", json!({ "url": page })).await;
    session.wait_for("the empty history", BUBBLES, |v| v.as_array().is_some_and(Vec::is_empty)).await;

    let input = session.find("#message").await;
    session.post(&format!("/element/{input}/value"), json!({ "text": question })).await;
    let send = session.find("#send").await;
    session.post(&format!("/element/{send}/click"), json!({})).await;

    let seen = session.wait_for("the streamed answer", LAST_ANSWER, |v| v["state"] == "done").await;
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
    session.post("/refresh", json!({})).await;
    let after =
        session.wait_for("the history", BUBBLES, |v| v.as_array().is_some_and(|b| b.len() == 2)).await;
    let bubbles = after.last().unwrap();
    assert_eq!(bubbles[0]["role"], "human");
    assert_eq!(bubbles[0]["text"], question);
    assert_eq!(bubbles[1]["role"], "ai");
    assert_eq!(bubbles[1]["text"], shown);
    assert_eq!(bubbles[1]["citations"], last["citations"]);
}
