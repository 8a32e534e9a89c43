//! Run hooks: `before_run` sees the run first and may change its configuration or refuse it;
//! `after_run` learns how it ended before anyone waiting on the run is answered.

mod support;

use std::sync::{Arc, Mutex};

use mnemograph_core::prelude::*;
use mnemograph_core::{BoxError, BoxFuture};
use mnemograph_server::{RunContext, RunEnd, RunHooks, Server};
use serde_json::{json, Value};
use support::graphs::{chain, failing, Log};

/// Records every call; refuses runs on threads whose metadata says `refuse`.
#[derive(Default, Clone)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl RunHooks<Log> for Recorder {
    fn before_run<'a>(
        &'a self,
        graph: &'a CompiledGraph<Log>,
        run: &'a RunContext,
        config: &'a mut RunConfig,
    ) -> BoxFuture<'a, Result<(), BoxError>> {
        Box::pin(async move {
            let existing = graph.get_state(&RunConfig::thread(run.thread_id.as_str())).await?;
            self.0.lock().unwrap().push(format!("before {} had {:?}", run.run_id, existing.values.log));
            if run.metadata.get("refuse") == Some(&Value::Bool(true)) {
                return Err("refused by the hook".into());
            }
            // One checkpoint per run instead of one per step.
            *config = config.clone().durability(Durability::Exit);
            Ok(())
        })
    }

    fn after_run<'a>(
        &'a self,
        _: &'a CompiledGraph<Log>,
        run: &'a RunContext,
        end: &'a RunEnd,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move { self.0.lock().unwrap().push(format!("after {} {end:?}", run.run_id)) })
    }
}

async fn start(hooks: Recorder) -> String {
    let server = Server::new(InMemoryCheckpointer::new())
        .graph_with_hooks("chain", chain().compile().unwrap(), hooks.clone())
        .unwrap()
        .graph_with_hooks("failing", failing().compile().unwrap(), hooks)
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

async fn post(url: &str, body: Value) -> Value {
    let response = support::http_client().post(url).json(&body).send().await.unwrap();
    assert!(response.status().is_success(), "{url}: {}", response.status());
    response.json().await.unwrap()
}

async fn get(url: &str) -> Value {
    support::http_client().get(url).send().await.unwrap().json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_run_sees_the_thread_and_sets_the_config_and_after_run_sees_the_end() {
    let hooks = Recorder::default();
    let url = start(hooks.clone()).await;
    let thread = post(&format!("{url}/threads"), json!({})).await;
    let tid = thread["thread_id"].as_str().unwrap();
    let out = post(
        &format!("{url}/threads/{tid}/runs/wait"),
        json!({"assistant_id": "chain", "input": {"log": []}}),
    )
    .await;
    assert_eq!(out["log"], json!(["a", "b"]));
    let runs = get(&format!("{url}/threads/{tid}/runs")).await;
    let run_id = runs[0]["run_id"].as_str().unwrap().to_owned();
    assert_eq!(
        *hooks.0.lock().unwrap(),
        [format!("before {run_id} had []"), format!("after {run_id} Success")],
        "after_run runs before wait answers"
    );
    // Durability::Exit from the hook: the final state only, where a default run saves four.
    let history = post(&format!("{url}/threads/{tid}/history"), json!({"limit": 10})).await;
    assert_eq!(history.as_array().unwrap().len(), 1, "{history}");

    let failed =
        post(&format!("{url}/threads/{tid}/runs/wait"), json!({"assistant_id": "failing", "input": {}}))
            .await;
    assert!(failed["__error__"]["message"].as_str().unwrap().contains("boom happened"), "{failed}");
    let last = hooks.0.lock().unwrap().last().cloned().unwrap();
    assert!(
        last.starts_with("after ") && last.contains("Error(") && last.contains("boom happened"),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_refuses_fails_the_run_before_the_graph_runs() {
    let hooks = Recorder::default();
    let url = start(hooks.clone()).await;
    let thread = post(&format!("{url}/threads"), json!({"metadata": {"refuse": true}})).await;
    let tid = thread["thread_id"].as_str().unwrap();
    let out = post(
        &format!("{url}/threads/{tid}/runs/wait"),
        json!({"assistant_id": "chain", "input": {"log": []}}),
    )
    .await;
    assert!(out["__error__"]["message"].as_str().unwrap().contains("refused by the hook"), "{out}");
    let thread = get(&format!("{url}/threads/{tid}")).await;
    assert_eq!(thread["status"], "error");
    let state = get(&format!("{url}/threads/{tid}/state")).await;
    assert_eq!(state["checkpoint"], Value::Null, "the graph never ran: {state}");
    assert!(hooks
        .0
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .contains("Error(\"run hook failed: refused by the hook\")"));
}
