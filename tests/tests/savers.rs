//! The engine's persistence behaviours on every saver (issue "interrupts, resume, time travel,
//! subgraphs and durability": test against every saver that exists).
//!
//! Each scenario is an `async fn(saver)`; `on_every_saver!` instantiates it for the in-memory,
//! MySQL, Redis, Postgres and SQLite savers (SQLite on a file of this test process). Without a
//! reachable MySQL/Redis/Postgres (`DATABASE_URL`) the live variants print `SKIPPED` and pass,
//! unless `CI` is set: then they fail.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use mnemograph_core::checkpoint::backend::uuid6;
use mnemograph_core::checkpoint::{CheckpointSource, DynCheckpointer, InMemoryCheckpointer, ListOptions};
use mnemograph_core::messages::{Message, ToolCall};
use mnemograph_core::prelude::*;

#[derive(State, Clone, Default, Debug)]
struct S {
    #[reducer(add_messages)]
    messages: Vec<Message>,
    #[reducer(append)]
    log: Vec<String>,
    answer: String,
    total: i64,
}

type Saver = Arc<dyn DynCheckpointer>;

fn ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

fn skip(what: &str, why: &str) -> Option<Saver> {
    assert!(!ci(), "{what} is required when CI is set: {why}");
    eprintln!("SKIPPED: {what} unreachable ({why})");
    None
}

async fn memory() -> Option<Saver> {
    Some(Arc::new(InMemoryCheckpointer::new()))
}

async fn mysql() -> Option<Saver> {
    let url = std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".into());
    // The database must exist before connecting to it; create it through the server's schema.
    let server = url.rsplit_once('/').map_or(url.clone(), |(base, _)| format!("{base}/information_schema"));
    let db = url.rsplit_once('/').map(|(_, d)| d.split('?').next().unwrap_or("graph_test").to_owned());
    match mnemograph_checkpoint_mysql::MySqlCheckpointer::connect(&server).await {
        Ok(admin) => {
            let name = db.unwrap_or_else(|| "graph_test".into());
            let create = format!("CREATE DATABASE IF NOT EXISTS `{name}` CHARACTER SET utf8mb4");
            sqlx::raw_sql(&create).execute(admin.pool()).await.expect("create the test database");
        }
        Err(e) => return skip("MySQL", &e.to_string()),
    }
    let saver = match mnemograph_checkpoint_mysql::MySqlCheckpointer::connect(&url).await {
        Ok(s) => s,
        Err(e) => return skip("MySQL", &e.to_string()),
    };
    saver.setup().await.expect("setup");
    Some(Arc::new(saver))
}

async fn redis() -> Option<Saver> {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    match mnemograph_checkpoint_redis::RedisCheckpointer::connect(&url).await {
        Ok(s) => Some(Arc::new(s)),
        Err(e) => skip("Redis", &e.to_string()),
    }
}

async fn sqlite() -> Option<Saver> {
    // One file for the test process; every scenario uses threads of its own.
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("savers-{}.sqlite", std::process::id()));
    let saver =
        mnemograph_checkpoint_sqlite::SqliteCheckpointer::connect(path.to_str().expect("a UTF-8 path"));
    Some(Arc::new(saver.await.expect("open the SQLite file")))
}

async fn postgres() -> Option<Saver> {
    let Some(url) = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()) else {
        return skip("PostgreSQL", "DATABASE_URL is not set");
    };
    // The database must exist before connecting to it; create it through the server's own.
    let (server, db) = url.rsplit_once('/').unwrap_or((&url, "graph_test"));
    let db = db.split('?').next().unwrap_or("graph_test");
    let admin =
        match mnemograph_checkpoint_postgres::PostgresCheckpointer::connect(&format!("{server}/postgres"))
            .await
        {
            Ok(admin) => admin,
            Err(e) => return skip("PostgreSQL", &e.to_string()),
        };
    let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
        .bind(db)
        .fetch_one(admin.pool())
        .await
        .expect("pg_database");
    if !exists {
        // Another test may create it at the same moment; `connect` below fails if neither did.
        let _ = sqlx::raw_sql(&format!("CREATE DATABASE \"{db}\"")).execute(admin.pool()).await;
    }
    let saver = match mnemograph_checkpoint_postgres::PostgresCheckpointer::connect(&url).await {
        Ok(s) => s,
        Err(e) => return skip("PostgreSQL", &e.to_string()),
    };
    saver.setup().await.expect("setup");
    Some(Arc::new(saver))
}

fn thread(label: &str) -> RunConfig {
    RunConfig::thread(format!("e2e-{label}-{}", uuid6(0)))
}

macro_rules! on_every_saver {
    ($($scenario:ident),* $(,)?) => {
        mod in_memory { $( #[tokio::test] async fn $scenario() { if let Some(s) = super::memory().await { super::$scenario(s).await } } )* }
        mod on_mysql { $( #[tokio::test] async fn $scenario() { if let Some(s) = super::mysql().await { super::$scenario(s).await } } )* }
        mod on_redis { $( #[tokio::test] async fn $scenario() { if let Some(s) = super::redis().await { super::$scenario(s).await } } )* }
        mod on_sqlite { $( #[tokio::test] async fn $scenario() { if let Some(s) = super::sqlite().await { super::$scenario(s).await } } )* }
        mod on_postgres { $( #[tokio::test] async fn $scenario() { if let Some(s) = super::postgres().await { super::$scenario(s).await } } )* }
    };
}

on_every_saver!(
    interrupt_then_resume_reruns_the_node,
    two_interrupts_in_one_node_need_two_resumes,
    parallel_interrupts_resume_by_id,
    failed_step_resumes_without_rerunning_finished_tasks,
    fork_from_an_old_checkpoint_keeps_history,
    interrupt_inside_a_subgraph_resumes,
    durability_modes_agree_on_the_result,
    conversation_continues_on_a_new_graph_instance,
);

async fn interrupt_then_resume_reruns_the_node(saver: Saver) {
    let runs = Arc::new(AtomicU32::new(0));
    let r = runs.clone();
    let g = StateGraph::<S>::new()
        .add_node("ask", move |_s: S, rt: Runtime| {
            r.fetch_add(1, Ordering::SeqCst);
            async move {
                let name: String = rt.interrupt(serde_json::json!({"q": "你叫什么名字?"}))?;
                Ok::<_, Error>(SUpdate::answer(name))
            }
        })
        .add_edge(START, "ask")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver);
    let cfg = thread("interrupt");
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(out.interrupts.len(), 1);
    assert_eq!(out.interrupts[0].value["q"], "你叫什么名字?");
    assert_eq!(g.get_state(&cfg).await.unwrap().interrupts, out.interrupts);
    let done = g.invoke_input(Input::resume("小明"), &cfg).await.unwrap();
    assert_eq!(done.answer, "小明");
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

async fn two_interrupts_in_one_node_need_two_resumes(saver: Saver) {
    let g = StateGraph::<S>::new()
        .add_node("form", |_s: S, rt: Runtime| async move {
            let a: String = rt.interrupt("a?")?;
            let b: String = rt.interrupt("b?")?;
            Ok::<_, Error>(SUpdate::answer(format!("{a}{b}")))
        })
        .add_edge(START, "form")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver);
    let cfg = thread("two");
    assert_eq!(g.invoke(SUpdate::default(), &cfg).await.unwrap().interrupts[0].value, "a?");
    assert_eq!(g.invoke_input(Input::resume("x"), &cfg).await.unwrap().interrupts[0].value, "b?");
    assert_eq!(g.invoke_input(Input::resume("y"), &cfg).await.unwrap().answer, "xy");
}

async fn parallel_interrupts_resume_by_id(saver: Saver) {
    let ask = |q: &'static str| {
        move |_s: S, rt: Runtime| async move {
            let v: i64 = rt.interrupt(q)?;
            Ok::<_, Error>(SUpdate::default().with_log(vec![format!("{q}{v}")]))
        }
    };
    let g = StateGraph::<S>::new()
        .add_node("a", ask("a"))
        .add_node("b", ask("b"))
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver);
    let cfg = thread("parallel");
    let out = g.invoke(SUpdate::default(), &cfg).await.unwrap();
    assert_eq!(out.interrupts.len(), 2);
    assert!(matches!(g.invoke_input(Input::resume(1), &cfg).await, Err(Error::AmbiguousResume)));
    let answers = out.interrupts.iter().map(|i| (i.id.clone(), if i.value == "a" { 1 } else { 2 }));
    let done = g.invoke_input(Input::ResumeWith(Resume::by_id(answers)), &cfg).await.unwrap();
    assert_eq!(done.log, ["a1", "b2"]);
}

async fn failed_step_resumes_without_rerunning_finished_tasks(saver: Saver) {
    let (one, fail) = (Arc::new(AtomicU32::new(0)), Arc::new(std::sync::atomic::AtomicBool::new(true)));
    let (o, f) = (one.clone(), fail.clone());
    let g = StateGraph::<S>::new()
        .add_node("one", move |_s: S| {
            o.fetch_add(1, Ordering::SeqCst);
            async { Ok::<_, Error>(SUpdate::total(2)) }
        })
        .add_node("two", move |_s: S| {
            let failing = f.load(Ordering::SeqCst);
            async move {
                if failing {
                    Err(Error::UnknownNode("boom".into()))
                } else {
                    Ok(SUpdate::default().with_log(vec!["two".into()]))
                }
            }
        })
        .add_edge(START, "one")
        .add_edge(START, "two")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver);
    let cfg = thread("pending");
    assert!(g.invoke(SUpdate::total(1), &cfg).await.is_err());
    let stuck = g.get_state(&cfg).await.unwrap();
    assert_eq!(
        (stuck.values.total, stuck.next.clone()),
        (2, vec!["two".to_owned()]),
        "one's pending write is applied"
    );
    let two = stuck.tasks.iter().find(|t| t.name == "two").expect("the failed task is listed");
    assert!(two.error.as_deref().unwrap().contains("boom"));
    fail.store(false, Ordering::SeqCst);
    let done = g.resume(&cfg).await.unwrap();
    assert_eq!((done.total, done.log.clone()), (2, vec!["two".to_owned()]));
    assert_eq!(one.load(Ordering::SeqCst), 1);
}

async fn fork_from_an_old_checkpoint_keeps_history(saver: Saver) {
    let g = StateGraph::<S>::new()
        .add_node("a", |_s: S| async { Ok::<_, Error>(SUpdate::default().with_log(vec!["a".into()])) })
        .add_node("b", |_s: S| async { Ok::<_, Error>(SUpdate::default().with_log(vec!["b".into()])) })
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver);
    let cfg = thread("fork");
    g.invoke(SUpdate::default(), &cfg).await.unwrap();
    let before = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    let after_a = before[1].config.as_ref().unwrap().checkpoint_id.clone().unwrap();
    let mut replay = cfg.clone();
    replay.checkpoint_id = Some(after_a);
    assert_eq!(g.resume(&replay).await.unwrap().log, ["a", "b"]);
    let after = g.get_state_history(&cfg, ListOptions::new()).await.unwrap();
    assert_eq!(after.len(), before.len() + 2);
    assert_eq!(after[1].metadata.as_ref().unwrap().source, CheckpointSource::Fork);
    for (old, new) in before.iter().zip(after.iter().skip(2)) {
        assert_eq!(old.config, new.config);
        assert_eq!(old.values.log, new.values.log);
    }
}

async fn interrupt_inside_a_subgraph_resumes(saver: Saver) {
    let child = StateGraph::<S>::new()
        .add_node("prep", |_s: S| async { Ok::<_, Error>(SUpdate::default().with_log(vec!["prep".into()])) })
        .add_node("ask", |_s: S, rt: Runtime| async move {
            let ok: String = rt.interrupt("continue?")?;
            Ok::<_, Error>(SUpdate::answer(ok))
        })
        .add_edge(START, "prep")
        .add_edge("prep", "ask")
        .compile()
        .unwrap();
    let g = StateGraph::<S>::new()
        .add_node("sub", child)
        .add_edge(START, "sub")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver);
    let cfg = thread("subgraph");
    assert_eq!(g.invoke(SUpdate::default(), &cfg).await.unwrap().interrupts[0].value, "continue?");
    let sub = g.get_state_with_subgraphs(&cfg).await.unwrap();
    assert_eq!(sub.subgraphs[0].next, ["ask"]);
    let done = g.invoke_input(Input::resume("yes"), &cfg).await.unwrap();
    assert_eq!((done.answer.as_str(), done.log.clone()), ("yes", vec!["prep".to_owned()]));
}

async fn durability_modes_agree_on_the_result(saver: Saver) {
    let g = StateGraph::<S>::new()
        .add_node("a", |s: S| async move { Ok::<_, Error>(SUpdate::total(s.total + 1)) })
        .add_node("b", |s: S| async move { Ok::<_, Error>(SUpdate::total(s.total * 10)) })
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile()
        .unwrap()
        .with_shared_checkpointer(saver);
    let mut histories = Vec::new();
    for mode in [Durability::Sync, Durability::Async, Durability::Exit] {
        let cfg = thread("durability").durability(mode);
        assert_eq!(g.invoke(SUpdate::total(1), &cfg).await.unwrap().total, 20);
        assert_eq!(g.get_state(&cfg).await.unwrap().values.total, 20);
        histories.push(g.get_state_history(&cfg, ListOptions::new()).await.unwrap().len());
    }
    assert_eq!(histories, [4, 4, 1]);
}

async fn conversation_continues_on_a_new_graph_instance(saver: Saver) {
    let build = |saver: Saver| {
        StateGraph::<S>::new()
            .add_node("bot", |s: S| async move {
                let last = s.messages.last().map(Message::text).unwrap_or_default();
                let call = ToolCall::new(
                    "search_blog",
                    serde_json::json!({"q": last}),
                    format!("c{}", s.messages.len()),
                );
                let reply = Message::ai("").with_tool_calls(vec![call.clone()]);
                let result = Message::tool(format!("结果: {last}"), call.id.unwrap_or_default());
                Ok::<_, Error>(SUpdate::messages(vec![reply, result, Message::ai(format!("回答: {last}"))]))
            })
            .add_edge(START, "bot")
            .compile()
            .unwrap()
            .with_shared_checkpointer(saver)
    };
    let cfg = thread("chat");
    for q in ["第一个问题", "second question"] {
        build(saver.clone()).invoke(SUpdate::messages(vec![Message::human(q)]), &cfg).await.unwrap();
    }
    // A new graph instance (as after a restart) reads the thread back and continues it.
    let out = build(saver).invoke(SUpdate::messages(vec![Message::human("第三")]), &cfg).await.unwrap();
    assert_eq!(out.messages.len(), 12);
    assert_eq!(out.messages[0].text(), "第一个问题");
    assert_eq!(out.messages[1].tool_calls()[0].name, "search_blog");
    assert_eq!(out.messages[2].tool_call_id(), Some("c1"));
    assert_eq!(out.messages[11].text(), "回答: 第三");
    let ids: std::collections::HashSet<_> = out.messages.iter().filter_map(Message::id).collect();
    assert_eq!(ids.len(), 12, "every message kept its own id across saves");
}
