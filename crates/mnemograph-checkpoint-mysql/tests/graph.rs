//! Graphs from mnemograph-core persisted in MySQL: history, continuation and resume, each time through
//! a *new* pool, as a restarted process would see the thread.

mod support;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use mnemograph_checkpoint::checkpoint::{CheckpointSource, ListOptions};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::prelude::*;

#[derive(State, Clone, Default, Debug)]
struct Chat {
    #[reducer(add_messages)]
    messages: Vec<Message>,
    #[reducer(append)]
    log: Vec<String>,
    #[reducer(sum)]
    total: i64,
    hello: String,
}

fn sum(acc: &mut i64, v: i64) {
    *acc += v;
}

/// `START -> greet -> count`: a message, a log line and a counter per run.
fn two_step() -> StateGraph<Chat> {
    StateGraph::<Chat>::new()
        .add_node("greet", |s: Chat| async move {
            let reply = Message::ai(format!("你好 #{}", s.messages.len()));
            Ok::<_, Error>(ChatUpdate::messages(vec![reply]).with_log(vec!["greet".to_owned()]))
        })
        .add_node("count", |_s: Chat| async {
            Ok::<_, Error>(ChatUpdate::total(1).with_log(vec!["count".to_owned()]))
        })
        .add_edge(START, "greet")
        .add_edge("greet", "count")
}

/// Rows of `table` for `thread_id`, counted by SQL.
async fn rows(saver: &MySqlCheckpointer, table: &str, thread_id: &str) -> i64 {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE thread_id = ?"))
        .bind(thread_id)
        .fetch_one(saver.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn history_and_continuation_survive_a_new_connection() {
    let Some(saver) = support::saver().await else { return };
    let thread = support::unique("graph-history");
    let cfg = RunConfig::thread(&thread);

    let graph = two_step().compile_with(saver.clone()).unwrap();
    let out = graph.invoke(ChatUpdate::messages(vec![Message::human("hi")]), &cfg).await.unwrap();
    assert_eq!(out.log, ["greet", "count"]);
    let history = graph.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    let steps: Vec<(CheckpointSource, i64)> =
        history.iter().map(|s| s.metadata.as_ref().map(|m| (m.source, m.step)).unwrap()).collect();
    use CheckpointSource::{Input, Loop};
    assert_eq!(steps, [(Loop, 2), (Loop, 1), (Loop, 0), (Input, -1)]);
    assert_eq!(history[1].next, ["count"]);
    assert_eq!(history[1].values.messages.len(), 2);
    for pair in history.windows(2) {
        let parent = pair[0].parent_config.as_ref().and_then(|c| c.checkpoint_id.clone());
        assert_eq!(parent, pair[1].config.as_ref().and_then(|c| c.checkpoint_id.clone()));
    }
    assert_eq!(rows(&saver, "checkpoints", &thread).await, 4);

    // A new pool: nothing cached anywhere, everything is read back from the tables.
    let restarted = support::saver().await.unwrap();
    let graph = two_step().compile_with(restarted).unwrap();
    let before = graph.get_state(&cfg).await.unwrap();
    assert_eq!(before.values.messages[1].text(), "你好 #1");
    assert_eq!(before.values.total, 1);
    let out = graph.invoke(ChatUpdate::messages(vec![Message::human("again")]), &cfg).await.unwrap();
    assert_eq!(out.log, ["greet", "count", "greet", "count"]);
    assert_eq!(out.total, 2);
    let texts: Vec<String> = out.messages.iter().map(Message::text).collect();
    assert_eq!(texts, ["hi", "你好 #1", "again", "你好 #3"]);
    let history = graph.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), 8);
    assert_eq!(history[3].metadata.as_ref().unwrap().step, 3, "the second input continues the step count");
    mnemograph_checkpoint::checkpoint::Checkpointer::delete_thread(&saver, &thread).await.unwrap();
    assert_eq!(rows(&saver, "checkpoint_blobs", &thread).await, 0);
}

#[tokio::test]
async fn interrupt_resumes_in_another_process() {
    let Some(saver) = support::saver().await else { return };
    let cfg = RunConfig::thread(support::unique("graph-interrupt"));
    let runs = Arc::new(AtomicU32::new(0));
    let build = |runs: Arc<AtomicU32>| {
        StateGraph::<Chat>::new()
            .add_node("ask", move |_s: Chat, rt: Runtime| {
                runs.fetch_add(1, Ordering::SeqCst);
                async move {
                    let name: String = rt.interrupt(serde_json::json!({"question": "name?"}))?;
                    Ok::<_, Error>(ChatUpdate::hello(name))
                }
            })
            .add_node("after", |_s: Chat| async { Ok::<_, Error>(ChatUpdate::log(vec!["after".to_owned()])) })
            .add_edge(START, "ask")
            .add_edge("ask", "after")
    };
    let first = build(runs.clone()).compile_with(saver).unwrap();
    let out = first.invoke(ChatUpdate::default(), &cfg).await.unwrap();
    assert!(out.is_interrupted());
    assert_eq!(out.interrupts[0].value["question"], "name?");
    drop(first);

    let second = build(runs.clone()).compile_with(support::saver().await.unwrap()).unwrap();
    let state = second.get_state(&cfg).await.unwrap();
    assert_eq!(state.next, ["ask"]);
    assert_eq!(state.interrupts, out.interrupts, "the interrupt was stored as a pending write");
    let done = second.invoke_input(Input::resume("Ada"), &cfg).await.unwrap();
    assert!(!done.is_interrupted());
    assert_eq!(done.hello, "Ada");
    assert_eq!(done.log, ["after"]);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn successful_tasks_are_not_rerun_after_a_failure() {
    let Some(saver) = support::saver().await else { return };
    let cfg = RunConfig::thread(support::unique("graph-pending"));
    let (one_runs, two_runs) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
    let fail = Arc::new(AtomicBool::new(true));
    let (o, t, f) = (one_runs.clone(), two_runs.clone(), fail.clone());
    let graph = StateGraph::<Chat>::new()
        .add_node("one", move |_s: Chat| {
            o.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Error>(ChatUpdate::total(2)) }
        })
        .add_node("two", move |_s: Chat| {
            t.fetch_add(1, Ordering::SeqCst);
            let failing = f.load(Ordering::SeqCst);
            async move {
                if failing {
                    Err(Error::UnknownNode("boom".into()))
                } else {
                    Ok(ChatUpdate::total(3))
                }
            }
        })
        .add_edge(START, "one")
        .add_edge(START, "two")
        .compile_with(saver)
        .unwrap();
    assert!(graph.invoke(ChatUpdate::total(1), &cfg).await.is_err());
    let state = graph.get_state(&cfg).await.unwrap();
    assert_eq!(state.values.total, 3, "one's saved write is applied");
    assert_eq!(state.next, ["two"]);
    // The finished task is listed too, as LangGraph lists it, with no error.
    let two = state.tasks.iter().find(|t| t.name == "two").expect("the failed task is listed");
    assert!(two.error.as_deref().unwrap().contains("boom"));
    assert!(state.tasks.iter().any(|t| t.name == "one" && t.error.is_none()));

    fail.store(false, Ordering::SeqCst);
    let out = graph.resume(&cfg).await.unwrap();
    assert_eq!(out.total, 6);
    assert_eq!(one_runs.load(Ordering::SeqCst), 1, "one never re-runs");
    assert_eq!(two_runs.load(Ordering::SeqCst), 2);
}
