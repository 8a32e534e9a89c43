//! A client of the assistant served over LangGraph's HTTP API ([`blog_assistant::api`]): the
//! server started with a bearer token per user, and the requests the API tests make.

use std::time::Duration;

use blog_assistant::{Config, ModelChoice};
use serde_json::{json, Value};

use super::{http_client, mysql_url};

/// A POST as the user of `token`, which must succeed.
pub async fn post(url: String, token: &str, body: Value) -> Value {
    let response =
        http_client().post(&url).bearer_auth(token).json(&body).send().await.expect("the API answers");
    assert!(response.status().is_success(), "{url}: {}", response.status());
    response.json().await.expect("a JSON body")
}

/// A GET as the user of `token`, which must succeed.
pub async fn get(url: String, token: &str) -> Value {
    let response = http_client().get(&url).bearer_auth(token).send().await.expect("the API answers");
    assert!(response.status().is_success(), "{url}: {}", response.status());
    response.json().await.expect("a JSON body")
}

/// The API server with a bearer token `token-<user>` for each of `users`; its URL.
pub async fn serve(redis_url: &str, users: &[&str]) -> (String, Config) {
    serve_on(redis_url, &mysql_url(), users).await
}

/// As [`serve`], archiving into the database of `mysql_url`.
pub async fn serve_on(redis_url: &str, mysql_url: &str, users: &[&str]) -> (String, Config) {
    let tokens: Vec<String> = users.iter().map(|u| format!("{u}:token-{u}")).collect();
    let config = Config::offline(redis_url, mysql_url)
        .with_model(ModelChoice::Offline { token_delay: Duration::ZERO })
        .with_auth_tokens(tokens.join(","));
    let server = blog_assistant::api::server(&config).await.expect("the API server starts");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    (url, config)
}

/// A new thread of `token`'s user for `session`; its id.
pub async fn new_thread(url: &str, token: &str, session: &str) -> String {
    let thread =
        post(format!("{url}/threads"), token, json!({ "metadata": { "session_id": session } })).await;
    thread["thread_id"].as_str().expect("a thread id").to_owned()
}

/// A run's body asking `question`.
pub fn ask(question: &str) -> Value {
    json!({ "assistant_id": "blog", "input": { "messages": [{ "role": "user", "content": question }] } })
}

/// The text of the last message of a run's output.
pub fn last_answer(out: &Value) -> String {
    let last =
        out["messages"].as_array().and_then(|m| m.last()).unwrap_or_else(|| panic!("no messages: {out}"));
    assert_eq!(last["type"], "ai", "{out}");
    last["content"].as_str().unwrap_or_default().to_owned()
}

/// The thread's messages as `GET /threads/{id}/state` shows them.
pub async fn thread_messages(url: &str, token: &str, thread: &str) -> Value {
    get(format!("{url}/threads/{thread}/state"), token).await["values"]["messages"].clone()
}

/// How many times the thread's state (as the API shows it) holds `question` as a human message.
pub async fn times_asked(url: &str, token: &str, thread: &str, question: &str) -> usize {
    let messages = thread_messages(url, token, thread).await;
    let messages = messages.as_array().cloned().unwrap_or_default();
    messages.iter().filter(|m| m["type"] == "human" && m["content"] == question).count()
}
