//! The parity operations performed by mnemograph-core, as `tests/python/parity.py` performs them
//! in Python (the same ops as the MySQL parity target's).

use std::collections::BTreeMap;

use mnemograph_core::checkpoint::ListOptions;
use mnemograph_core::prelude::*;
use mnemograph_core::Resume;
use serde_json::{json, Value};

use crate::cases::{SUpdate, FAILING, S};

fn log_update(values: &Value) -> SUpdate {
    let log: Option<Vec<String>> = values["log"]
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect());
    SUpdate::log(log.unwrap_or_default())
}

/// Performs `op` on `thread` with mnemograph-core.
pub(crate) async fn rust(graph: &CompiledGraph<S>, thread: &str, op: &Value) {
    let config = RunConfig::thread(thread);
    let fail = op["fail"] == json!(true);
    if fail {
        FAILING.lock().unwrap().get_or_insert_with(Default::default).insert(thread.to_owned());
    }
    let result = match op["op"].as_str().expect("an op") {
        "invoke" => graph.invoke(log_update(&op["input"]), &config).await.map(drop),
        "continue" => graph.invoke_input(Input::Resume, &config).await.map(drop),
        "resume" => {
            graph.invoke_input(Input::ResumeWith(Resume::Value(op["value"].clone())), &config).await.map(drop)
        }
        "resume_by_node" => {
            let state = graph.get_state(&config).await.expect("get_state");
            let mut answers = BTreeMap::new();
            for task in &state.tasks {
                if let Some(answer) = op["answers"].get(&task.name) {
                    answers.extend(task.interrupts.iter().map(|i| (i.id.clone(), answer.clone())));
                }
            }
            graph.invoke_input(Input::ResumeWith(Resume::ById(answers)), &config).await.map(drop)
        }
        "update" => {
            let as_node = op["as_node"].as_str();
            graph.update_state(&config, log_update(&op["values"]), as_node).await.map(drop)
        }
        "fork" => {
            let history = graph.get_state_history(&config, ListOptions::default()).await.expect("history");
            let before = op["before"].as_str().expect("a node");
            let target = history.iter().find(|s| s.next == [before]).expect("a checkpoint before the node");
            let id = target.config.as_ref().and_then(|c| c.checkpoint_id.clone()).expect("an id");
            graph.invoke_input(Input::Resume, &RunConfig::thread(thread).checkpoint_id(id)).await.map(drop)
        }
        "command" => graph.invoke_input(command_input(op), &config).await.map(drop),
        other => panic!("unknown op {other}"),
    };
    if fail {
        FAILING.lock().unwrap().get_or_insert_with(Default::default).remove(thread);
    }
    if let Err(e) = result {
        // The push_failure worker's failure is the point of its step.
        let mut root: &dyn std::error::Error = &e;
        while let Some(next) = root.source() {
            root = next;
        }
        assert_eq!(root.to_string(), "boom", "{op} failed: {e}");
    }
}

/// The `command` op's `Command(update=..., goto=..., resume=...)`.
fn command_input(op: &Value) -> Input<S> {
    let mut command = mnemograph_core::Command::<S>::new();
    if let Some(log) = op["update"].get("log") {
        command = command.update(log_update(&json!({ "log": log })));
    }
    if let Some(answer) = op["update"].get("answer") {
        command = command.update(SUpdate::answer(answer.as_str().map(str::to_owned)));
    }
    for to in op["goto"].as_array().into_iter().flatten() {
        command = match to.as_str() {
            Some(node) => command.goto(node),
            None => {
                let item = to["arg"]["item"].as_str().map(str::to_owned);
                command.goto(Push::new(to["node"].as_str().expect("a node"), S { item, ..S::default() }))
            }
        };
    }
    match op.get("resume") {
        Some(value) => Input::command_with(command, Resume::Value(value.clone())),
        None => Input::command(command),
    }
}
