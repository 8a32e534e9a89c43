//! Headless Chromium driven through chromedriver with the W3C WebDriver protocol (plain JSON over
//! HTTP), for tests of pages in a real browser. Debian's `chromium` and `chromium-driver`
//! provide both; `CHROMEDRIVER` names the driver, or `chromedriver` is looked up on `PATH`.
//!
//! ```no_run
//! # async fn page() -> Result<(), String> {
//! use std::time::Duration;
//! use mnemograph_test::browser::{chromedriver, Driver};
//!
//! let binary = chromedriver().ok_or("no chromedriver")?;
//! let driver = Driver::start(&binary, reqwest::Client::new()).await?;
//! let session = driver.session().await?;
//! session.open("http://127.0.0.1:8080/").await;
//! session.type_into("#message", "hello").await;
//! session.click("#send").await;
//! let seen = session
//!     .wait_for("a reply", Duration::from_secs(30), "return document.title", |v| v == "done")
//!     .await;
//! assert_eq!(seen.last().map(|v| v == "done"), Some(true));
//! session.end().await;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// The W3C key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// The longest wait for one WebDriver command.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The chromedriver binary: `CHROMEDRIVER`, or `chromedriver` found on `PATH`.
pub fn chromedriver() -> Option<PathBuf> {
    let named =
        std::env::var_os("CHROMEDRIVER").filter(|v| !v.is_empty()).unwrap_or_else(|| "chromedriver".into());
    let named = PathBuf::from(named);
    if named.components().count() > 1 {
        return named.is_file().then_some(named);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(&named)).find(|p| p.is_file())
}

/// A running chromedriver, killed on drop.
#[derive(Debug)]
pub struct Driver {
    child: Child,
    /// `http://127.0.0.1:{port}`.
    base: String,
    http: reqwest::Client,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    /// Starts `binary` on a free port and waits (10 s at most) until it is ready; `http` talks to
    /// it (plain HTTP on loopback).
    ///
    /// # Errors
    /// Why the driver did not start or become ready.
    pub async fn start(binary: &Path, http: reqwest::Client) -> Result<Self, String> {
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
        let driver = Self { child, base: format!("http://127.0.0.1:{port}"), http };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(status) = driver.call(reqwest::Method::GET, "/status", None).await {
                if status["ready"] == true {
                    return Ok(driver);
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err("chromedriver did not become ready within 10 s".to_owned())
    }

    /// Opens a headless Chromium session.
    ///
    /// # Errors
    /// Why the browser did not start.
    pub async fn session(&self) -> Result<Session<'_>, String> {
        let caps = json!({ "capabilities": { "alwaysMatch": { "goog:chromeOptions": { "args": [
            "--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1200,900"
        ] } } } });
        let value = self.call(reqwest::Method::POST, "/session", Some(caps)).await?;
        let id = value["sessionId"].as_str().ok_or_else(|| format!("no session id in {value}"))?;
        Ok(Session { driver: self, path: format!("/session/{id}") })
    }

    /// One WebDriver command; its `value`, or the error it reported.
    async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value, String> {
        let mut request = self.http.request(method, format!("{}{path}", self.base)).timeout(COMMAND_TIMEOUT);
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

/// A browser session; [`Session::end`] closes its browser. Its commands panic when the browser
/// refuses them, failing the test that sent them.
#[derive(Debug)]
pub struct Session<'d> {
    driver: &'d Driver,
    /// `/session/{id}`.
    path: String,
}

impl Session<'_> {
    async fn post(&self, path: &str, body: Value) -> Value {
        let path = format!("{}{path}", self.path);
        self.driver.call(reqwest::Method::POST, &path, Some(body)).await.unwrap_or_else(|e| panic!("{e}"))
    }

    /// Opens `url`.
    pub async fn open(&self, url: &str) {
        self.post("/url", json!({ "url": url })).await;
    }

    /// Reloads the page.
    pub async fn reload(&self) {
        self.post("/refresh", json!({})).await;
    }

    /// Runs `script` (a function body) in the page and returns its result.
    pub async fn eval(&self, script: &str) -> Value {
        self.post("/execute/sync", json!({ "script": script, "args": [] })).await
    }

    /// The element `css` selects.
    async fn find(&self, css: &str) -> String {
        let found = self.post("/element", json!({ "using": "css selector", "value": css })).await;
        found[ELEMENT].as_str().unwrap_or_else(|| panic!("no element {css}: {found}")).to_owned()
    }

    /// Types `text` into the element `css` selects.
    pub async fn type_into(&self, css: &str, text: &str) {
        let element = self.find(css).await;
        self.post(&format!("/element/{element}/value"), json!({ "text": text })).await;
    }

    /// Clicks the element `css` selects.
    pub async fn click(&self, css: &str) {
        let element = self.find(css).await;
        self.post(&format!("/element/{element}/click"), json!({})).await;
    }

    /// Evaluates `script` every 50 ms until `done` accepts its result, and returns every result
    /// seen, the accepted one last; panics after `timeout` showing the last one.
    pub async fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        script: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let deadline = Instant::now() + timeout;
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

    /// Closes the browser.
    pub async fn end(self) {
        let _ = self.driver.call(reqwest::Method::DELETE, &self.path, None).await;
    }
}
