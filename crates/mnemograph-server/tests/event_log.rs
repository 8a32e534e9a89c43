//! What a run keeps of its events for clients that join late or reconnect: each message once, at
//! its latest, instead of every token's copy of it; droppable events under a byte limit; ids
//! that stay those of the live stream.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use mnemograph_core::prelude::*;
use mnemograph_server::Server;
use serde_json::{json, Value};
use support::graphs::{Log, LogUpdate};

/// One server-sent event: its id, name and data.
#[derive(Debug, Clone, PartialEq)]
struct Sse {
    id: u64,
    event: String,
    data: Value,
}

fn parse(text: &str) -> Vec<Sse> {
    text.split("\r\n\r\n")
        .filter(|block| !block.trim().is_empty() && !block.starts_with(':'))
        .map(|block| {
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .unwrap_or_else(|| panic!("{name} in {block}"))
            };
            Sse {
                id: field("id: ").parse().expect("a numeric id"),
                event: field("event: ").to_owned(),
                data: serde_json::from_str(field("data: ")).expect("JSON data"),
            }
        })
        .collect()
}

/// A graph whose one node streams `messages` replies of `tokens` tokens each, as a model does,
/// pausing `pause` after each token.
fn talker(messages: usize, tokens: usize, pause: Option<Duration>) -> StateGraph<Log> {
    StateGraph::<Log>::new()
        .add_node("talk", move |_s: Log, rt: Runtime| async move {
            for m in 0..messages {
                for t in 0..tokens {
                    rt.stream_message(Message::ai(format!("m{m}t{t} ")).with_id(format!("msg-{m}")));
                    if let Some(pause) = pause {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
            Ok::<_, Error>(LogUpdate::log(vec!["talked".to_owned()]))
        })
        .add_edge(START, "talk")
}

/// The text of message `m` of a [`talker`] reply of `tokens` tokens.
fn reply(m: usize, tokens: usize) -> String {
    (0..tokens).map(|t| format!("m{m}t{t} ")).collect()
}

async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

async fn new_thread(url: &str) -> String {
    let client = support::http_client();
    let thread: Value =
        client.post(format!("{url}/threads")).json(&json!({})).send().await.unwrap().json().await.unwrap();
    thread["thread_id"].as_str().unwrap().to_owned()
}

/// Runs `graph` on a new thread in the background, waits for it to end, and returns the thread
/// and run ids.
async fn run_to_end(url: &str, graph: &str, stream_mode: Value) -> (String, String) {
    let client = support::http_client();
    let tid = new_thread(url).await;
    let body = json!({"assistant_id": graph, "input": {"log": []}, "stream_mode": stream_mode});
    let run: Value = client
        .post(format!("{url}/threads/{tid}/runs"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rid = run["run_id"].as_str().unwrap().to_owned();
    let joined = client.get(format!("{url}/threads/{tid}/runs/{rid}/join")).send().await.unwrap();
    assert!(joined.status().is_success());
    (tid, rid)
}

async fn join_stream(url: &str, tid: &str, rid: &str, last_event_id: Option<u64>) -> String {
    let mut request = support::http_client().get(format!("{url}/threads/{tid}/runs/{rid}/stream"));
    if let Some(id) = last_event_id {
        request = request.header("Last-Event-ID", id.to_string());
    }
    request.send().await.unwrap().text().await.unwrap()
}

/// The content of a `messages/partial` or `messages/complete` event, by message id.
fn message_of(e: &Sse) -> Option<(String, String)> {
    if !e.event.starts_with("messages/") || e.event == "messages/metadata" {
        return None;
    }
    let m = &e.data[0];
    Some((m["id"].as_str()?.to_owned(), m["content"].as_str()?.to_owned()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_kept_log_grows_with_the_reply_not_with_its_square() {
    const TOKENS: usize = 2000;
    let server =
        Server::new(InMemoryCheckpointer::new()).graph("talker", talker(2, TOKENS, None).compile().unwrap());
    let url = serve(server.unwrap()).await;
    let (tid, rid) = run_to_end(&url, "talker", json!("messages")).await;

    let text = join_stream(&url, &tid, &rid, None).await;
    let events = parse(&text);
    let partials: Vec<(String, String)> = events.iter().filter_map(message_of).collect();
    assert_eq!(
        partials,
        vec![("msg-0".to_owned(), reply(0, TOKENS)), ("msg-1".to_owned(), reply(1, TOKENS))],
        "each message once, whole"
    );
    let names: Vec<&str> = events.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(
        names,
        ["metadata", "messages/metadata", "messages/partial", "messages/metadata", "messages/partial"]
    );
    let reply_bytes = reply(0, TOKENS).len() + reply(1, TOKENS).len();
    // Every partial kept would weigh about TOKENS / 2 times the reply.
    assert!(
        text.len() < 2 * reply_bytes + 4096,
        "a late join reads {} bytes for a {reply_bytes}-byte reply",
        text.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_after_dropped_partials_misses_no_message() {
    const TOKENS: usize = 40;
    let graph = talker(2, TOKENS, Some(Duration::from_millis(2))).compile().unwrap();
    let url = serve(Server::new(InMemoryCheckpointer::new()).graph("talker", graph).unwrap()).await;
    let tid = new_thread(&url).await;
    let body = json!({"assistant_id": "talker", "input": {"log": []}, "stream_mode": "messages"});
    let response = support::http_client()
        .post(format!("{url}/threads/{tid}/runs/stream"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let live = parse(&response.text().await.unwrap());
    let rid = live[0].data["run_id"].as_str().unwrap().to_owned();
    let live_partials = live.iter().filter(|e| e.event == "messages/partial").count();
    assert_eq!(live_partials, 2 * TOKENS, "a live reader gets every partial");
    let ids: Vec<u64> = live.iter().map(|e| e.id).collect();
    assert_eq!(ids, (0..live.len() as u64).collect::<Vec<_>>(), "live ids count the events");

    // The client read up to the fifth partial of the first message, then lost the connection.
    let last = live.iter().filter(|e| e.event == "messages/partial").nth(4).unwrap().id;
    let resumed = parse(&join_stream(&url, &tid, &rid, Some(last)).await);
    let by_id: HashMap<u64, &Sse> = live.iter().map(|e| (e.id, e)).collect();
    for e in &resumed {
        assert!(e.id > last, "only events after Last-Event-ID: {} <= {last}", e.id);
        assert_eq!(by_id.get(&e.id), Some(&e), "a kept event is the live event with the same id");
    }
    assert!(resumed.windows(2).all(|w| w[0].id < w[1].id), "ids increase");
    let mut latest: HashMap<String, String> = HashMap::new();
    for (id, content) in resumed.iter().filter_map(message_of) {
        latest.insert(id, content);
    }
    assert_eq!(latest.get("msg-0"), Some(&reply(0, TOKENS)), "the message in progress, whole");
    assert_eq!(latest.get("msg-1"), Some(&reply(1, TOKENS)), "the next message, whole");
    let names: Vec<&str> = resumed.iter().map(|e| e.event.as_str()).collect();
    assert_eq!(names, ["messages/partial", "messages/metadata", "messages/partial"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_kept_events_stay_under_the_byte_limit_oldest_dropped_first() {
    const WRITES: usize = 500;
    const LIMIT: usize = 8 * 1024;
    let writer = StateGraph::<Log>::new()
        .add_node("write", |_s: Log, rt: Runtime| async move {
            for i in 0..WRITES {
                rt.write(json!({ "i": i, "pad": "x".repeat(80) }));
            }
            Ok::<_, Error>(LogUpdate::log(vec!["wrote".to_owned()]))
        })
        .add_edge(START, "write");
    let server = Server::new(InMemoryCheckpointer::new())
        .with_event_log_bytes(LIMIT)
        .graph("writer", writer.compile().unwrap())
        .unwrap();
    let url = serve(server).await;
    let (tid, rid) = run_to_end(&url, "writer", json!(["custom", "values"])).await;

    let events = parse(&join_stream(&url, &tid, &rid, None).await);
    assert_eq!(events[0].event, "metadata", "the metadata event stays");
    assert_eq!(events.last().unwrap().event, "values");
    assert_eq!(events.last().unwrap().data["log"], json!(["wrote"]), "the newest values stays");
    let custom: Vec<&Sse> = events.iter().filter(|e| e.event == "custom").collect();
    let bytes: usize = events.iter().map(|e| e.event.len() + e.data.to_string().len()).sum();
    assert!(bytes <= LIMIT, "{bytes} bytes kept");
    assert!(!custom.is_empty() && custom.len() < WRITES, "{} of {WRITES} writes kept", custom.len());
    let kept: Vec<u64> = custom.iter().map(|e| e.data["i"].as_u64().unwrap()).collect();
    let first = kept[0];
    assert_eq!(kept, (first..WRITES as u64).collect::<Vec<_>>(), "the newest writes, without gaps");
    assert!(events.windows(2).all(|w| w[0].id < w[1].id), "ids increase");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_gets_every_partial_live_and_whole_messages_on_reconnect() {
    let Some(python) = support::python::python() else { return };
    let graph = talker(3, 60, Some(Duration::from_millis(1))).compile().unwrap();
    let url = serve(Server::new(InMemoryCheckpointer::new()).graph("talker", graph).unwrap()).await;
    let script = support::python::dir().join("reconnect.py");
    let out = tokio::process::Command::new(python)
        .arg(script)
        .args([url.as_str(), "3", "60"])
        .output()
        .await
        .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && report.contains("reconnect passed"), "{report}");
}
