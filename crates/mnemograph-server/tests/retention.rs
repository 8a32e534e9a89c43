//! A finished run's events stay readable (join stream) for the retention, then are dropped
//! while the run's record and the thread's state stay.

mod support;

use std::time::Duration;

use mnemograph_core::prelude::*;
use mnemograph_server::Server;
use serde_json::{json, Value};
use support::graphs::chain;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_runs_events_are_dropped_after_the_retention() {
    let server = Server::new(InMemoryCheckpointer::new())
        .with_event_retention(Duration::from_millis(300))
        .graph("chain", chain().compile().unwrap())
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    let client = support::http_client();
    let thread: Value =
        client.post(format!("{url}/threads")).json(&json!({})).send().await.unwrap().json().await.unwrap();
    let tid = thread["thread_id"].as_str().unwrap();
    let body = json!({"assistant_id": "chain", "input": {"log": []}, "stream_mode": ["updates"]});
    let run: Value = client
        .post(format!("{url}/threads/{tid}/runs"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rid = run["run_id"].as_str().unwrap();
    let joined: Value = client
        .get(format!("{url}/threads/{tid}/runs/{rid}/join"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(joined["log"], json!(["a", "b"]));

    let stream = |url: String| async move {
        support::http_client().get(url).send().await.unwrap().text().await.unwrap()
    };
    let events = stream(format!("{url}/threads/{tid}/runs/{rid}/stream")).await;
    assert_eq!(events.matches("event: updates").count(), 2, "{events}");
    tokio::time::sleep(Duration::from_millis(600)).await;
    let later = stream(format!("{url}/threads/{tid}/runs/{rid}/stream")).await;
    assert_eq!(later, "", "the events are gone");
    let record: Value =
        client.get(format!("{url}/threads/{tid}/runs/{rid}")).send().await.unwrap().json().await.unwrap();
    assert_eq!(record["status"], "success", "the record stays");
    let state: Value =
        client.get(format!("{url}/threads/{tid}/state")).send().await.unwrap().json().await.unwrap();
    assert_eq!(state["values"]["log"], json!(["a", "b"]), "and the state");
}
