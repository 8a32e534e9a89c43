//! Shared by the integration tests: what a correct run of the scripted demo looks like, and the
//! skip-unless-CI rule for live servers.

#![allow(dead_code, unreachable_pub)]

pub mod changing_facts;
pub mod scripted;

use memory_agent::DemoReport;
#[cfg(feature = "mysql")]
use sqlx::Connection;

/// Checks a finished demo on real outputs: short-term recall inside a session, long-term recall
/// on a new thread, user isolation, and non-empty checkpoints.
pub fn assert_demo(report: &DemoReport) {
    let monday = report.session("ada", "monday").expect("ada's monday session");
    let asked_back =
        monday.turns.iter().find(|t| t.question == "What is my dog called?").expect("asked back");
    assert!(asked_back.answer.contains("Biscuit"), "same-session answer: {asked_back:?}");
    assert!(asked_back.recalled.is_empty(), "the current session is not recalled: {asked_back:?}");

    let friday = report.session("ada", "friday").expect("ada's friday session");
    let dog = &friday.turns[0];
    assert_eq!(dog.thread_messages, 2, "friday is a new thread: {dog:?}");
    assert!(dog.answer.contains("Biscuit"), "session 2 recalls session 1's fact: {dog:?}");
    assert!(
        dog.recalled
            .iter()
            .any(|r| r.record.session_id == monday.session_id && r.record.content.contains("Biscuit")),
        "{dog:?}"
    );
    assert!(dog.recalled.windows(2).all(|w| w[0].score >= w[1].score), "best first: {dog:?}");
    assert!(friday.turns[1].answer.contains("peanuts"), "{:?}", friday.turns[1]);

    assert_update_path(report);
    assert_compaction(report);

    let bob = report.session("bob", "friday").expect("bob's friday session");
    let rex = &bob.turns[0];
    assert!(rex.answer.contains("Rex") && !rex.answer.contains("Biscuit"), "{rex:?}");
    assert!(!rex.recalled.is_empty(), "bob recalls his own memory: {rex:?}");
    for r in &rex.recalled {
        assert_eq!(r.record.user_id, "bob", "{r:?}");
        assert!(
            !r.record.content.contains("Biscuit") && !r.record.content.contains("peanuts"),
            "ada's memory leaked: {r:?}"
        );
    }
    assert_eq!(report.cross_user_recalls(), 0);

    for s in &report.sessions {
        let size = s.checkpoint.as_ref().unwrap_or_else(|| panic!("{} has a checkpoint", s.session_id));
        assert!(size.document_bytes > 0 && size.blob_bytes > 0, "{size:?}");
    }
    let bytes =
        |user, session| report.session(user, session).and_then(|s| s.checkpoint.as_ref()).map(|c| c.bytes());
    assert!(bytes("ada", "monday") > bytes("bob", "monday"), "6 messages weigh more than 2");
}

/// The update path: Ada's Friday move retires Monday's address, so Saturday's question recalls
/// and answers the new one only. Fails when `save_memory` does not consolidate.
pub fn assert_update_path(report: &DemoReport) {
    let friday = report.session("ada", "friday").expect("ada's friday session");
    let moved = friday.turns.iter().find(|t| t.question.contains("Shanghai")).expect("the move");
    assert_eq!(moved.retired.len(), 1, "the move supersedes exactly the old address: {moved:?}");
    let others: Vec<_> =
        report.sessions.iter().flat_map(|s| &s.turns).filter(|t| !t.retired.is_empty()).collect();
    assert_eq!(others.len(), 1, "no other turn retires anything: {others:?}");
    let saturday = report.session("ada", "saturday").expect("ada's saturday session");
    let live = &saturday.turns[0];
    assert!(live.answer.contains("Shanghai") && !live.answer.contains("Beijing"), "{live:?}");
    assert!(live.recalled.iter().any(|r| r.record.content.contains("Shanghai")), "{live:?}");
    assert!(
        live.recalled.iter().all(|r| !r.record.content.contains("Beijing")),
        "the old address is retired: {live:?}"
    );
}

/// The compaction step: on Sunday, Ada's Monday session (idle six days) is replaced by one
/// summary of its three live exchanges (the old address was already retired by the move); Bob's
/// single Monday exchange and the later sessions are left alone. Ada's Sunday question about a
/// Monday fact then recalls the summary and is answered from it. Fails when the demo does not
/// compact or retrieval still returns the compacted exchanges.
pub fn assert_compaction(report: &DemoReport) {
    let monday = report.session("ada", "monday").expect("ada's monday session");
    let compacted: Vec<_> =
        report.compaction.iter().map(|c| (c.user_id.as_str(), c.session_id.as_str())).collect();
    assert_eq!(compacted, [("ada", monday.session_id.as_str())], "{:?}", report.compaction);
    let c = &report.compaction[0];
    assert_eq!((c.compacted, c.summary_ids.len()), (3, 1), "{c:?}");
    assert!(
        matches!(c.reason, memory_agent::CompactReason::Ended { idle_secs } if idle_secs >= 6 * 86_400),
        "{c:?}"
    );

    let sunday = report.session("ada", "sunday").expect("ada's sunday session");
    let turn = &sunday.turns[0];
    let summary =
        turn.recalled.iter().find(|r| r.record.id == c.summary_ids[0]).unwrap_or_else(|| panic!("{turn:?}"));
    assert!(summary.record.content.contains("User: I'm allergic to peanuts."), "{summary:?}");
    assert!(!summary.record.content.contains("Beijing"), "a retired fact is not summarized: {summary:?}");
    assert!(
        turn.recalled
            .iter()
            .all(|r| r.record.session_id != monday.session_id || r.record.id == summary.record.id),
        "only the summary stands for monday, its exchanges are retired: {turn:?}"
    );
    assert_eq!(
        turn.answer,
        format!("You told me in session {}: \"I'm allergic to peanuts.\"", monday.session_id)
    );
}

/// A live server is missing: skip (print why) unless `CI` is set, where it fails.
pub fn unavailable(service: &str, reason: &str) {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    assert!(!ci, "{service} is required when CI is set: {reason}");
    eprintln!("SKIPPED: {service} unavailable ({reason})");
}

/// Milvus memory in a collection of its own, its name led by `label`, when `MILVUS_URL` names a
/// server and this build has the Milvus client; `None` otherwise, after saying why (a failure
/// when CI is set).
pub fn milvus_memory(label: &str) -> Option<memory_agent::MemoryChoice> {
    let Some(url) = std::env::var("MILVUS_URL").ok().filter(|u| !u.is_empty()) else {
        unavailable("Milvus", "MILVUS_URL is not set; start one with scripts/milvus-lite.sh");
        return None;
    };
    if !cfg!(feature = "milvus") {
        unavailable("Milvus", "this build has no Milvus client (`--features milvus`)");
        return None;
    }
    Some(memory_agent::MemoryChoice::Milvus { url, token: None, collection: unique(label) })
}

/// Drops the collection of `agent`'s memory when it is on Milvus.
pub async fn drop_milvus_collection(agent: &memory_agent::Agent) {
    #[cfg(feature = "milvus")]
    if let Some(m) = agent.context().memory.downcast_ref::<mnemograph_memory_milvus::MilvusMemory>() {
        m.drop_collection().await.expect("drop the test collection");
    }
    #[cfg(not(feature = "milvus"))]
    let _ = agent;
}

/// A name no other test run uses.
pub fn unique(label: &str) -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{label}_{}_{nanos:08x}", std::process::id())
}

/// An agent over `model` with in-process memory embedded by word hashing (fast and
/// deterministic, whatever the default embedder is) and an in-memory checkpointer; `tune` sets
/// the rest of the context.
pub fn agent_with(
    model: mnemograph_models::SharedChatModel,
    tune: impl FnOnce(memory_agent::AgentContext) -> memory_agent::AgentContext,
) -> memory_agent::Agent {
    use mnemograph_core::store::HashingEmbeddings;
    let memory = mnemograph_memory::EmbeddedMemory::new(HashingEmbeddings::new(384));
    let context = tune(memory_agent::AgentContext::new(memory, model));
    let checkpointer = std::sync::Arc::new(mnemograph_core::checkpoint::InMemoryCheckpointer::new());
    memory_agent::Agent::new(context, checkpointer).unwrap()
}

#[cfg(feature = "mysql")]
/// A fresh database name on the server of `MYSQL_URL` (default: the local test server), and the
/// URL naming it.
pub fn mysql_database() -> (String, String) {
    let base = std::env::var("MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/graph_test".into());
    let database = unique("memory_agent_t");
    let url = with_database(&base, &database);
    (database, url)
}

#[cfg(feature = "mysql")]
/// Drops a test database if the server is there.
pub async fn drop_database(url: &str, database: &str) {
    let server = with_database(url, "information_schema");
    if let Ok(mut conn) = sqlx::MySqlConnection::connect(&server).await {
        sqlx::raw_sql(&format!("DROP DATABASE IF EXISTS `{database}`"))
            .execute(&mut conn)
            .await
            .expect("drop");
    }
}

/// `url` with its database replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("mysql", url));
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    let query = rest.split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default();
    format!("{scheme}://{authority}/{name}{query}")
}

/// The binary with every backend variable removed (the embedded defaults) and a data directory
/// of its own, so no test reads what another left, nor touches the user's.
pub fn binary() -> std::process::Command {
    binary_in(&fresh_dir("data"))
}

/// A new, empty directory for one test's files.
pub fn fresh_dir(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("memory-agent").join(unique(name));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test directory");
    dir
}

/// [`binary`] whose platform data directory (`XDG_DATA_HOME`) is `data_home`: runs given the
/// same one share their files.
pub fn binary_in(data_home: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memory-agent"));
    cmd.env("XDG_DATA_HOME", data_home);
    for var in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "MILVUS_URL",
        "MYSQL_URL",
        "REDIS_URL",
        "DATABASE_URL",
        "MEMORY_MAX_CONTEXT_TOKENS",
        "MEMORY_COMPACT_AFTER_DAYS",
        "RUST_LOG",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "MNEMOGRAPH_OTEL_FILTER",
    ] {
        cmd.env_remove(var);
    }
    cmd
}
