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

async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

async fn get(url: String) -> (u16, Value) {
    let response = support::http_client().get(url).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn post(url: String, body: Value) -> (u16, Value) {
    let response = support::http_client().post(url).json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_run_is_not_found_after_its_retention() {
    let server = Server::new(InMemoryCheckpointer::new())
        .with_run_retention(Duration::from_millis(300))
        .graph("chain", chain().compile().unwrap())
        .unwrap();
    let url = serve(server).await;
    let (_, thread) = post(format!("{url}/threads"), json!({})).await;
    let tid = thread["thread_id"].as_str().unwrap();
    let body = json!({"assistant_id": "chain", "input": {"log": []}});
    let (_, run) = post(format!("{url}/threads/{tid}/runs"), body).await;
    let rid = run["run_id"].as_str().unwrap();
    let (status, _) = get(format!("{url}/threads/{tid}/runs/{rid}/join")).await;
    assert_eq!(status, 200);
    let (status, record) = get(format!("{url}/threads/{tid}/runs/{rid}")).await;
    assert_eq!((status, record["status"].as_str()), (200, Some("success")), "readable while retained");

    tokio::time::sleep(Duration::from_millis(600)).await;
    let (status, body) = get(format!("{url}/threads/{tid}/runs/{rid}")).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["detail"], format!("Run with ID {rid} not found"), "as a run that never existed");
    let (status, _) = get(format!("{url}/threads/{tid}/runs/{rid}/join")).await;
    assert_eq!(status, 404);
    let (status, _) = get(format!("{url}/threads/{tid}/runs/{rid}/stream")).await;
    assert_eq!(status, 404);
    let (_, runs) = get(format!("{url}/threads/{tid}/runs")).await;
    assert_eq!(runs, json!([]), "gone from the thread's runs");
    let (_, state) = get(format!("{url}/threads/{tid}/state")).await;
    assert_eq!(state["values"]["log"], json!(["a", "b"]), "the thread's state stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thread_past_its_ttl_is_deleted_with_its_runs_and_checkpoints() {
    let server = Server::new(InMemoryCheckpointer::new())
        .with_thread_ttl(Duration::from_millis(400))
        .with_sweep_interval(Duration::from_millis(50))
        .graph("chain", chain().compile().unwrap())
        .unwrap();
    let url = serve(server).await;
    let (_, thread) = post(format!("{url}/threads"), json!({})).await;
    let tid = thread["thread_id"].as_str().unwrap();
    let (status, _) = post(
        format!("{url}/threads/{tid}/runs/wait"),
        json!({"assistant_id": "chain", "input": {"log": []}}),
    )
    .await;
    assert_eq!(status, 200);
    let (status, _) = get(format!("{url}/threads/{tid}")).await;
    assert_eq!(status, 200, "within its TTL");

    tokio::time::sleep(Duration::from_millis(1000)).await;
    let (status, body) = get(format!("{url}/threads/{tid}")).await;
    assert_eq!(status, 404, "{body}");
    let (_, found) = post(format!("{url}/threads/search"), json!({})).await;
    assert_eq!(found, json!([]));
    // A thread made again under the same id starts without the old checkpoints.
    let (status, _) = post(format!("{url}/threads"), json!({"thread_id": tid})).await;
    assert_eq!(status, 200);
    let (_, runs) = get(format!("{url}/threads/{tid}/runs")).await;
    assert_eq!(runs, json!([]), "its runs were deleted");
    let (_, output) = post(
        format!("{url}/threads/{tid}/runs/wait"),
        json!({"assistant_id": "chain", "input": {"log": []}}),
    )
    .await;
    assert_eq!(output["log"], json!(["a", "b"]), "and its checkpoints: the log starts over");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_thread_outlives_its_ttl() {
    let sleepy = StateGraph::<support::graphs::Log>::new()
        .add_node("slow", |_s: support::graphs::Log| async move {
            tokio::time::sleep(Duration::from_millis(1200)).await;
            Ok::<_, Error>(support::graphs::LogUpdate::log(vec!["slow".to_owned()]))
        })
        .add_edge(START, "slow");
    let server = Server::new(InMemoryCheckpointer::new())
        .with_thread_ttl(Duration::from_millis(300))
        .with_sweep_interval(Duration::from_millis(50))
        .graph("sleepy", sleepy.compile().unwrap())
        .unwrap();
    let url = serve(server).await;
    let (_, thread) = post(format!("{url}/threads"), json!({})).await;
    let tid = thread["thread_id"].as_str().unwrap();
    let (_, run) =
        post(format!("{url}/threads/{tid}/runs"), json!({"assistant_id": "sleepy", "input": {"log": []}}))
            .await;
    let rid = run["run_id"].as_str().unwrap();

    tokio::time::sleep(Duration::from_millis(800)).await;
    let (status, thread) = get(format!("{url}/threads/{tid}")).await;
    assert_eq!((status, thread["status"].as_str()), (200, Some("busy")), "past its TTL, but busy");
    let (status, output) = get(format!("{url}/threads/{tid}/runs/{rid}/join")).await;
    assert_eq!((status, &output["log"]), (200, &json!(["slow"])), "the run ends as it would have");
    let (_, record) = get(format!("{url}/threads/{tid}/runs/{rid}")).await;
    assert_eq!(record["status"], "success");

    tokio::time::sleep(Duration::from_millis(900)).await;
    let (status, _) = get(format!("{url}/threads/{tid}")).await;
    assert_eq!(status, 404, "idle past its TTL after the run");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_puts_without_a_ttl_get_the_default() {
    let remember = StateGraph::<support::graphs::Log>::new()
        .add_node("remember", |_s: support::graphs::Log, rt: Runtime| async move {
            let store = rt.store().expect("the server gives every graph its store");
            let labels = ["notes".to_owned(), "graph".to_owned()];
            store.put(&labels, "node", json!({"by": "node"}), None).await.expect("put");
            Ok::<_, Error>(support::graphs::LogUpdate::log(vec!["remembered".to_owned()]))
        })
        .add_edge(START, "remember");
    let ttl = mnemograph_core::store::TtlConfig::new(Some(Duration::from_millis(400))).refresh_on_read(false);
    let server = Server::new(InMemoryCheckpointer::new())
        .with_store_ttl(ttl)
        .with_sweep_interval(Duration::from_millis(50))
        .graph("remember", remember.compile().unwrap())
        .unwrap();
    let url = serve(server).await;
    let client = support::http_client();
    let put = |key: &'static str, ttl: Option<f64>| {
        let mut body = json!({"namespace": ["notes", "api"], "key": key, "value": {"k": key}});
        if let Some(minutes) = ttl {
            body["ttl"] = json!(minutes);
        }
        client.put(format!("{url}/store/items")).json(&body).send()
    };
    assert_eq!(put("default", None).await.unwrap().status().as_u16(), 204);
    assert_eq!(put("own", Some(1.0)).await.unwrap().status().as_u16(), 204);
    let (status, _) =
        post(format!("{url}/runs/wait"), json!({"assistant_id": "remember", "input": {"log": []}})).await;
    assert_eq!(status, 200);
    let item =
        |ns: &'static str, key: &'static str| get(format!("{url}/store/items?namespace={ns}&key={key}"));
    assert_eq!(item("notes.api", "default").await.1["value"], json!({"k": "default"}));
    assert_eq!(item("notes.graph", "node").await.1["value"], json!({"by": "node"}));

    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(item("notes.api", "default").await.1, Value::Null, "expired at the default TTL");
    assert_eq!(item("notes.graph", "node").await.1, Value::Null, "a node's put too");
    assert_eq!(item("notes.api", "own").await.1["value"], json!({"k": "own"}), "a put's own TTL wins");
}
