//! Run-level options the engine cannot honour, or given malformed, are refused with 422 when the
//! run is created, with a message naming the option; nothing runs.

mod support;

use mnemograph_core::prelude::*;
use mnemograph_server::Server;
use serde_json::{json, Value};
use support::graphs::{chain, Log};

/// A server with `chain` (a → b) and `nested` (whose node `inner` is `chain` compiled).
async fn serve() -> String {
    let nested = StateGraph::<Log>::new()
        .add_node("inner", chain().compile().unwrap())
        .add_edge(START, "inner")
        .compile()
        .unwrap();
    let server = Server::new(InMemoryCheckpointer::new())
        .graph("chain", chain().compile().unwrap())
        .unwrap()
        .graph("nested", nested)
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

async fn wait(url: &str, body: Value) -> (u16, Value) {
    let response = support::http_client().post(format!("{url}/runs/wait")).json(&body).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn stream_subgraphs_is_refused_for_a_graph_with_subgraphs_and_taken_for_one_without() {
    let url = serve().await;
    let (status, body) =
        wait(&url, json!({"assistant_id": "nested", "input": {"log": []}, "stream_subgraphs": true})).await;
    assert_eq!(status, 422, "{body}");
    assert!(body["detail"].as_str().unwrap().contains("stream_subgraphs"), "{body}");
    let (status, body) =
        wait(&url, json!({"assistant_id": "nested", "input": {"log": []}, "stream_subgraphs": false})).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) =
        wait(&url, json!({"assistant_id": "chain", "input": {"log": []}, "stream_subgraphs": true})).await;
    assert_eq!((status, &body["log"]), (200, &json!(["a", "b"])), "{body}");
}

#[tokio::test]
async fn malformed_run_options_are_unprocessable_and_name_the_option() {
    let url = serve().await;
    for (option, value) in [
        ("after_seconds", json!(-1)),
        ("after_seconds", json!("soon")),
        ("checkpoint_during", json!("yes")),
        ("stream_resumable", json!(1)),
        ("durability", json!("eventually")),
        ("on_completion", json!("never")),
        ("interrupt_before", json!(["nope"])),
    ] {
        let mut body = json!({"assistant_id": "chain", "input": {"log": []}});
        body[option] = value.clone();
        let (status, answer) = wait(&url, body).await;
        assert_eq!(status, 422, "{option} = {value}: {answer}");
        let detail = answer["detail"].as_str().unwrap_or_default().to_lowercase();
        let named = detail.contains(option) || detail.contains("node") || detail.contains("durability");
        assert!(named, "{option} = {value}: {answer}");
    }
}
