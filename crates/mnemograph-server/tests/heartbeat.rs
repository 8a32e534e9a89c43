//! A stream that stays quiet for longer than the heartbeat interval carries a comment line, as
//! LangGraph's server sends, so proxies and clients do not time it out; the events still arrive.

mod support;

use std::time::Duration;

use mnemograph_core::prelude::*;
use mnemograph_server::Server;
use serde_json::json;

#[derive(State, Clone, Default, Debug)]
struct Quiet {
    #[reducer(append)]
    log: Vec<String>,
}

async fn think(_: Quiet) -> Result<QuietUpdate> {
    tokio::time::sleep(Duration::from_millis(5600)).await;
    Ok(QuietUpdate::log(vec!["thought".to_owned()]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_stream_carries_a_heartbeat_comment() {
    let graph =
        StateGraph::<Quiet>::new().add_node("think", think).add_edge(START, "think").compile().unwrap();
    let server = Server::new(InMemoryCheckpointer::new()).graph("quiet", graph).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    let body = json!({"assistant_id": "quiet", "input": {"log": []}, "stream_mode": ["updates"]});
    let text = support::http_client()
        .post(format!("{url}/runs/stream"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("\r\n: heartbeat\r\n"), "{text}");
    assert!(text.contains("event: updates\r\ndata: {\"think\":{\"log\":[\"thought\"]}}"), "{text}");
    assert!(text.find(": heartbeat") < text.find("event: updates"), "the heartbeat came while the node ran");
}
