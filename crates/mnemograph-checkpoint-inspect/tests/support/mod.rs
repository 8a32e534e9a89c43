//! Shared by the live tests: a real graph to populate threads with, the servers, and running the
//! built binary.
//!
//! Servers: `MYSQL_URL` (default `mysql://root@127.0.0.1:3306/graph_test`; the tests use their own
//! database `inspect_test` on that server), `DATABASE_URL` (PostgreSQL, default
//! `postgres://postgres@127.0.0.1:5432/graph_test`; likewise database `inspect_test`) and `REDIS_URL` (default `redis://127.0.0.1:6379/`; the
//! tests use their own key prefix). When a server is unreachable a test prints `SKIPPED: ...` and
//! passes, unless `CI` is set: then it fails.

#![allow(dead_code, unreachable_pub, reason = "each test file uses a different subset")]

use std::io::Write as _;
use std::process::Output;

use mnemograph_checkpoint::checkpoint::CheckpointConfig;
use mnemograph_checkpoint::messages::ToolCall;
use mnemograph_core::prelude::*;
use serde_json::json;

/// The question the thread starts with.
pub const QUESTION: &str = "我们之前讨论过的 RAG 优化方案改了哪些参数？";
/// The final answer (longer than any summary keeps, so truncation shows).
pub const ANSWER: &str = "根据你上周的描述，我们把 chunk_size 从 512 调到了 256，并且打开了 rerank。";
/// What the tool returns.
pub const TOOL_RESULT: &str = "找到 2 条笔记：chunk_size=256；rerank=on";
/// What the interrupt asks.
pub const CONFIRM: &str = "要把这个结论保存到长期记忆吗？";

/// The state of the test agent.
#[derive(State, Clone, Default, Debug)]
pub struct Agent {
    /// The conversation.
    #[reducer(add_messages)]
    pub messages: Vec<Message>,
    /// Long-term hits of the turn.
    pub retrieved: Vec<String>,
    /// Whether the user approved saving.
    pub saved: bool,
}

/// `START → retrieve → agent ⇄ tools`, then `agent → confirm → END`, where `confirm` interrupts
/// to ask the user: a run stops at `confirm` with its interrupt saved as a pending write.
pub fn agent_graph() -> StateGraph<Agent> {
    StateGraph::<Agent>::new()
        .add_node("retrieve", |_s: Agent| async {
            let hits = vec!["chunk_size=256".to_owned(), "top_k=5".to_owned(), "rerank=on".to_owned()];
            Ok::<_, Error>(AgentUpdate::retrieved(hits))
        })
        .add_node("agent", |s: Agent| async move {
            let answered = s.messages.iter().any(|m| m.tool_call_id().is_some());
            let reply = if answered {
                Message::ai(ANSWER)
            } else {
                let call = ToolCall::new("search_notes", json!({"query": "RAG 优化 参数"}), "call_1");
                Message::ai("").with_tool_calls(vec![call])
            };
            Ok::<_, Error>(AgentUpdate::messages(vec![reply]))
        })
        .add_node("tools", |_s: Agent| async {
            let result = Message::tool(TOOL_RESULT, "call_1").with_name("search_notes");
            Ok::<_, Error>(AgentUpdate::messages(vec![result]))
        })
        .add_node("confirm", |_s: Agent, rt: Runtime| async move {
            let saved: bool = rt.interrupt(json!({ "question": CONFIRM }))?;
            Ok::<_, Error>(AgentUpdate::saved(saved))
        })
        .add_edge(START, "retrieve")
        .add_edge("retrieve", "agent")
        .add_conditional_edges(
            "agent",
            |s: &Agent| match s.messages.last().is_some_and(|m| !m.tool_calls().is_empty()) {
                true => "tools",
                false => "confirm",
            },
            ["tools", "confirm"],
        )
        .add_edge("tools", "agent")
        .add_edge("confirm", END)
}

/// Runs the agent on `saver` until it stops at the interrupt; returns the Mermaid drawing of the
/// graph.
pub async fn populate<C: Checkpointer>(saver: C, thread_id: &str) -> String {
    let graph = agent_graph().compile_with(saver).expect("the test graph compiles");
    let out = graph
        .invoke(AgentUpdate::messages(vec![Message::human(QUESTION)]), &RunConfig::thread(thread_id))
        .await
        .expect("the run succeeds");
    assert!(out.is_interrupted(), "the run stops at confirm");
    assert_eq!(out.messages.last().map(Message::text).as_deref(), Some(ANSWER));
    graph.draw_mermaid()
}

/// A thread id no other test run uses.
pub fn unique(label: &str) -> String {
    format!("inspect-{label}-{}", mnemograph_checkpoint::checkpoint::backend::uuid6(0))
}

/// Reports an unreachable server: a panic under CI, otherwise a printed skip and `None`.
pub fn unavailable<T>(what: &str, reason: &str) -> Option<T> {
    if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
        panic!("{what} is required when CI is set: {reason}");
    }
    // Straight to stderr: the harness captures `eprintln!`, and a skip must be seen.
    let _ = writeln!(std::io::stderr(), "SKIPPED: {what} unreachable ({reason})");
    None
}

/// The URL in environment variable `var` (`default` when it is unset or empty) pointed at
/// database `database`, its query kept.
pub fn database_url(var: &str, default: &str, database: &str) -> String {
    let base = std::env::var(var).ok().filter(|u| !u.is_empty()).unwrap_or_else(|| default.to_owned());
    let (base, query) = match base.split_once('?') {
        Some((b, q)) => (b.to_owned(), format!("?{q}")),
        None => (base, String::new()),
    };
    let authority = base.find("://").map_or(0, |i| i + 3);
    let path = base[authority..].find('/').map_or(base.len(), |i| authority + i);
    format!("{}/{database}{query}", &base[..path])
}

/// A plain connection to `url` (a database that always exists, to create the test's own);
/// `None`, reported by [`unavailable`] naming `what`, when the server does not answer.
pub async fn admin_connection<C: sqlx::Connection>(url: &str, what: &str) -> Option<C> {
    match tokio::time::timeout(std::time::Duration::from_secs(5), C::connect(url)).await {
        Ok(Ok(conn)) => Some(conn),
        Ok(Err(e)) => unavailable(what, &e.to_string()),
        Err(_) => unavailable(what, "no answer within 5 s"),
    }
}

/// Runs the agent on `saver` into a new thread labelled `label`, checks everything the binary
/// shows of it at the interrupt and after resuming, and that `threads` lists it; then deletes it
/// (unless [`keep_threads`]).
pub async fn check_real_thread<C: Checkpointer + Clone>(saver: C, url: &str, label: &str) {
    let thread = unique(label);
    let drawing = populate(saver.clone(), &thread).await;
    check_interrupted_thread(url, &thread, &drawing);
    resume(saver.clone(), &thread).await;
    check_resumed_thread(url, &thread);
    let listed = inspect_json(&[url, "threads", "--limit", "1000"]);
    let found = listed.as_array().into_iter().flatten().find(|t| t["thread_id"] == thread.as_str());
    assert!(found.is_some_and(|t| t["checkpoints"].as_u64() > Some(1)), "{listed}");
    if !keep_threads() {
        saver.delete_thread(&thread).await.expect("delete");
    }
}

/// Runs the agent on `saver` into a new thread labelled `label`, lets `corrupt` damage its rows
/// (given the thread id): the `retrieved` value made unreadable by msgpack's reserved marker
/// `0xc1` (the blob overwritten with that byte where values are kept apart, an ext value holding
/// it inside a whole document), and the interrupt write overwritten with an ext type no
/// serializer knows (code 42, payload `0x07`), as a Python plugin might write; `corrupt` returns
/// the stored bytes of the damaged `retrieved` value. Then checks that `reader` (a saver reading
/// as another process would) refuses the thread and that the binary shows the damaged values next
/// to everything that still decodes; then deletes it (unless [`keep_threads`]).
pub async fn check_corrupt_sql_thread<C: Checkpointer + Clone>(
    saver: C,
    reader: &impl Checkpointer,
    url: &str,
    label: &str,
    corrupt: impl AsyncFn(&str) -> Vec<u8>,
) {
    let thread = unique(label);
    populate(saver.clone(), &thread).await;
    let retrieved = corrupt(&thread).await;
    assert!(reader.get_tuple(&CheckpointConfig::thread(&thread)).await.is_err());
    check_corrupt_output(url, &thread, &retrieved);
    if !keep_threads() {
        saver.delete_thread(&thread).await.expect("delete");
    }
}

/// What the binary shows of the thread [`check_corrupt_sql_thread`] damaged, its `retrieved`
/// value stored as `retrieved`.
fn check_corrupt_output(url: &str, thread: &str, retrieved: &[u8]) {
    use base64::Engine as _;
    let cp = inspect_json(&[url, "show", thread]);
    let bad = &cp["channel_values"]["retrieved"]["$undecodable"];
    let stored = base64::engine::general_purpose::STANDARD.encode(retrieved);
    assert_eq!((bad["type"].as_str(), bad["base64"].as_str()), (Some("msgpack"), Some(&*stored)), "{cp}");
    assert!(bad["error"].as_str().unwrap().contains("0xc1"), "{bad}");
    assert_eq!(cp["channel_values"]["messages"][3]["content"], ANSWER, "the rest still decodes");
    assert_eq!(cp["pending_writes"][0]["value"], json!([{"__ext__": 42, "base64": "Bw=="}]));
    let history = inspect_ok(&[url, "history", thread]);
    assert_eq!(steps(&history), [4, 3, 2, 1, 0, -1]);
    assert!(
        line_of(&history, 1).contains("retrieved = <undecodable msgpack: malformed msgpack"),
        "{history}"
    );
    let show = inspect_ok(&[url, "show", thread]);
    assert!(show.contains("\"$undecodable\"") && show.contains(ANSWER), "{show}");
}

/// The output of the built binary run with `args`.
pub fn inspect(args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_checkpoint-inspect"))
        .args(args)
        .output()
        .expect("the checkpoint-inspect binary runs")
}

/// Standard output of a run that must succeed.
pub fn inspect_ok(args: &[&str]) -> String {
    let out = inspect(args);
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed ({:?}):\n{stderr}\n{stdout}", out.status.code());
    stdout
}

/// Standard output of a `--json` run, parsed.
pub fn inspect_json(args: &[&str]) -> serde_json::Value {
    let mut with_json = vec!["--json"];
    with_json.extend_from_slice(args);
    let text = inspect_ok(&with_json);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}):\n{text}"))
}

/// Whether threads should be kept after the test (`INSPECT_KEEP_THREADS=1`), to look at them
/// with the binary by hand.
pub fn keep_threads() -> bool {
    std::env::var_os("INSPECT_KEEP_THREADS").is_some()
}

/// Resumes the interrupted thread with "yes", so it runs `confirm` and ends.
pub async fn resume<C: Checkpointer>(saver: C, thread_id: &str) {
    let graph = agent_graph().compile_with(saver).expect("the test graph compiles");
    let out = graph.invoke_input(Input::resume(true), &RunConfig::thread(thread_id)).await.expect("resume");
    assert!(!out.is_interrupted() && out.saved);
}

/// The steps of the `history` lines, in printed order.
pub fn steps(history: &str) -> Vec<i64> {
    history
        .lines()
        .filter_map(|l| l.split("  step ").nth(1))
        .map(|rest| rest.split_whitespace().next().and_then(|s| s.parse().ok()).expect("a step number"))
        .collect()
}

/// The `history` line of `step`.
pub fn line_of(history: &str, step: i64) -> &str {
    let marker = format!("  step {step} ");
    history.lines().find(|l| l.contains(&marker)).unwrap_or_else(|| panic!("no step {step} in\n{history}"))
}

/// Everything the binary shows of a thread stopped at `confirm`'s interrupt, checked on real
/// output; `drawing` is the graph's `draw_mermaid`.
pub fn check_interrupted_thread(url: &str, thread: &str, drawing: &str) {
    // threads: the thread with its six checkpoints, latest step 4.
    let listed = inspect_json(&[url, "threads"]);
    let entry = listed.as_array().unwrap().iter().find(|t| t["thread_id"] == thread).expect("thread listed");
    let counts = (entry["checkpoints"].as_u64(), entry["namespaces"].as_u64(), entry["latest_step"].as_i64());
    assert_eq!(counts, (Some(6), Some(1), Some(4)), "{entry}");
    let text = inspect_ok(&[url, "threads"]);
    let row = text.lines().find(|l| l.starts_with(thread)).expect("thread row");
    // Checkpoints, namespaces, latest step.
    assert_eq!(row.split_whitespace().skip(1).take(3).collect::<Vec<_>>(), ["6", "1", "4"], "{row}");

    // history: newest first, one line per checkpoint, messages decoded and cut on characters.
    let history = inspect_ok(&[url, "history", thread]);
    assert_eq!(steps(&history), [4, 3, 2, 1, 0, -1], "{history}");
    let latest = line_of(&history, 4);
    assert!(latest.contains(" loop ") && latest.contains(" agent "), "{latest}");
    assert!(latest.contains("messages +1 (ai: \"根据你上周的描述，我们把 ch…\")"), "{latest}");
    assert!(latest.contains(&format!("interrupt: question=\"{CONFIRM}\"")), "{latest}");
    assert!(latest.ends_with("next: confirm"), "{latest}");
    let tools = line_of(&history, 3);
    assert!(
        tools.contains(" tools ") && tools.contains("messages +1 (tool search_notes: \"找到 2 条笔记"),
        "{tools}"
    );
    assert!(line_of(&history, 2).contains("(ai → search_notes(query=\"RAG 优化 参数\"))"), "{history}");
    let retrieve = line_of(&history, 1);
    assert!(retrieve.contains(" retrieve ") && retrieve.contains("retrieved = 3 items"), "{retrieve}");
    let start = line_of(&history, 0);
    assert!(
        start.contains(" __start__ ") && start.contains("messages +1 (human: \"我们之前讨论过的"),
        "{start}"
    );
    assert!(line_of(&history, -1).contains(" input "), "{history}");

    // --limit keeps the newest; the oldest shown still knows what wrote it.
    let two = inspect_ok(&[url, "history", thread, "--limit", "2"]);
    assert_eq!(steps(&two), [4, 3]);
    assert!(line_of(&two, 3).contains(" tools "), "{two}");
    let json = inspect_json(&[url, "history", thread]);
    let newest = &json["checkpoints"][0];
    assert_eq!(
        (newest["step"].as_i64(), &newest["nodes"], &newest["next"]),
        (Some(4), &serde_json::json!(["agent"]), &serde_json::json!(["confirm"]))
    );
    assert!(newest["pending"][0].as_str().unwrap().starts_with("interrupt: "), "{newest}");

    // history --graph: the drawing first, nodes that ran marked, then the lines.
    let file = std::env::temp_dir().join(format!("{thread}.mmd"));
    std::fs::write(&file, drawing).expect("write the drawing");
    let with_graph = inspect_ok(&[url, "history", thread, "--graph", file.to_str().unwrap()]);
    std::fs::remove_file(&file).ok();
    let (drawn, lines) = with_graph.split_once("\n\n1f").expect("drawing, blank line, history");
    assert!(
        drawn.starts_with(drawing.lines().next().unwrap()) && drawn.contains("agent -.-> tools;"),
        "{drawn}"
    );
    assert!(drawn.ends_with("\tclass retrieve,agent,tools ran;"), "{drawn}");
    assert_eq!(steps(&format!("1f{lines}")), [4, 3, 2, 1, 0, -1]);

    // show: the full texts, the tool call and the pending interrupt.
    let show = inspect_ok(&[url, "show", thread]);
    for text in [
        QUESTION,
        ANSWER,
        TOOL_RESULT,
        CONFIRM,
        "\"search_notes\"",
        "pending_writes (1):",
        "channel __interrupt__",
    ] {
        assert!(show.contains(text), "show lacks {text}:\n{show}");
    }
    assert!(show.contains("written by  agent") && show.contains("next        confirm"), "{show}");
    let cp = inspect_json(&[url, "show", thread]);
    let messages = cp["channel_values"]["messages"].as_array().expect("messages decoded");
    let texts: Vec<&str> = messages.iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(texts, [QUESTION, "", TOOL_RESULT, ANSWER]);
    assert_eq!(messages[1]["tool_calls"][0]["args"]["query"], "RAG 优化 参数");
    assert_eq!(cp["pending_writes"][0]["channel"], "__interrupt__");
    assert_eq!(cp["pending_writes"][0]["value"][0]["value"]["question"], CONFIRM);
    assert_eq!((cp["metadata"]["step"].as_i64(), &cp["next"]), (Some(4), &serde_json::json!(["confirm"])));
    assert_eq!(
        cp["channel_values"]["retrieved"],
        serde_json::json!(["chunk_size=256", "top_k=5", "rerank=on"])
    );

    // show --checkpoint with a prefix: step 2, with the tools task's write pending against it.
    let step2 = json["checkpoints"][2]["checkpoint_id"].as_str().unwrap();
    let older = inspect_json(&[url, "show", thread, "--checkpoint", &step2[..step2.len() - 4]]);
    assert_eq!((older["checkpoint_id"].as_str(), older["metadata"]["step"].as_i64()), (Some(step2), Some(2)));
    assert_eq!(older["summary"]["nodes"], serde_json::json!(["agent"]));
    let write = &older["pending_writes"][0];
    assert_eq!(
        (write["channel"].as_str(), write["value"][0]["content"].as_str()),
        (Some("messages"), Some(TOOL_RESULT))
    );

    // graph: the path taken so far, stopping before confirm.
    let graph = inspect_ok(&[url, "graph", thread]);
    for edge in [
        "__start__ -->|\"step 1\"| retrieve;",
        "retrieve -->|\"step 2\"| agent;",
        "agent -->|\"step 3\"| tools;",
        "tools -->|\"step 4\"| agent;",
        "agent -. &nbsp;next&nbsp; .-> confirm;",
    ] {
        assert!(graph.contains(edge), "graph lacks {edge}:\n{graph}");
    }
    assert!(!graph.contains("__end__"), "{graph}");
    let graph = inspect_json(&[url, "graph", thread]);
    assert_eq!(graph["nodes"], serde_json::json!(["__start__", "retrieve", "agent", "tools", "confirm"]));

    // Unknown threads and checkpoints are errors with exit code 1.
    let missing = inspect(&[url, "history", &format!("{thread}-nope")]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("has no checkpoints"));
    let missing = inspect(&[url, "show", thread, "--checkpoint", "ffff"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("has no checkpoint `ffff`"));
}

/// The same thread after the resume: `confirm` ran at step 5 and the run ended.
pub fn check_resumed_thread(url: &str, thread: &str) {
    let history = inspect_ok(&[url, "history", thread]);
    assert_eq!(steps(&history), [5, 4, 3, 2, 1, 0, -1], "{history}");
    let confirm = line_of(&history, 5);
    assert!(confirm.contains(" confirm ") && confirm.ends_with("saved = true"), "{confirm}");
    let resumed = line_of(&history, 4);
    assert!(resumed.contains("interrupt: question=") && resumed.contains("; resume: true"), "{resumed}");
    let graph = inspect_ok(&[url, "graph", thread]);
    assert!(
        graph.contains("agent -->|\"step 5\"| confirm;") && graph.contains("confirm --> __end__;"),
        "{graph}"
    );
    assert!(!graph.contains("next"), "{graph}");
}
