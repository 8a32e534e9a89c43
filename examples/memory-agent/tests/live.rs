//! The scripted demo on real backends: SQLite files (no server), Milvus for long-term memory
//! (`MILVUS_URL`), MySQL (`MYSQL_URL`, default `mysql://root@127.0.0.1:3306/graph_test`),
//! Postgres (`DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/graph_test`) and Redis
//! (`REDIS_URL`, default `redis://127.0.0.1:6379/`) for checkpoints. Each test uses its own collection, database
//! or key prefix and removes it afterwards. An unreachable server skips the test, unless `CI` is
//! set.

mod support;

use memory_agent::{run_demo, Agent, CheckpointerChoice, Config, Error, MemoryChoice, Result, SCRIPT};
use mnemograph_memory::Memory;

/// Connects, or reports the server as unavailable (`None`).
async fn connect(service: &str, config: &Config) -> Option<Agent> {
    match Agent::connect(config).await {
        Ok(agent) => Some(agent),
        Err(e @ (Error::Unreachable { .. } | Error::Timeout { .. })) => {
            support::unavailable(service, &e.to_string());
            None
        }
        Err(e) => panic!("{service}: {e:?}"),
    }
}

/// Runs the demo and checks it, then connects a second agent to the same backends, as a restarted
/// process would: a persistent checkpointer still holds ada's Monday thread, and Milvus still
/// answers a question in yet another session.
async fn demo_and_restart(agent: &Agent, config: &Config, suffix: &str) -> Result<()> {
    let report = run_demo(agent, suffix, std::io::sink()).await?;
    support::assert_demo(&report);
    let restarted = Agent::connect(config).await?;
    if !matches!(config.checkpointer, CheckpointerChoice::InMemory) {
        let monday = format!("monday{suffix}");
        let state = restarted.graph().get_state(&Agent::run_config("ada", &monday)).await?;
        assert_eq!(state.values.messages.len(), 8, "ada's monday thread survives a restart");
        assert_eq!(state.values.user_id, "ada");
    }
    if matches!(config.memory, MemoryChoice::Milvus { .. } | MemoryChoice::File { .. }) {
        let turn = restarted.chat("ada", &format!("sunday{suffix}"), "What's my dog's name?").await?;
        assert!(turn.answer.contains("Biscuit"), "long-term memory survives a restart: {turn:?}");
        restarted.forget_thread("ada", &format!("sunday{suffix}")).await?;
    }
    Ok(())
}

/// Drops the agent's Milvus collection, if it has one.
async fn drop_collection(agent: &Agent) {
    if let Some(m) = agent.context().memory.downcast_ref::<mnemograph_memory_milvus::MilvusMemory>() {
        m.drop_collection().await.expect("drop the test collection");
    }
}

/// `MILVUS_URL` with a fresh collection, or `None` (reported) when unset.
fn milvus() -> Option<MemoryChoice> {
    let Some(url) = std::env::var("MILVUS_URL").ok().filter(|u| !u.is_empty()) else {
        support::unavailable("Milvus", "MILVUS_URL is not set; start one with scripts/milvus-lite.sh");
        return None;
    };
    Some(MemoryChoice::Milvus { url, token: None, collection: support::unique("memory_agent_t") })
}

#[tokio::test]
async fn milvus_memory_runs_the_demo() {
    let Some(memory) = milvus() else { return };
    let config = Config::embedded().with_memory(memory);
    let Some(agent) = connect("Milvus", &config).await else { return };
    let outcome = demo_and_restart(&agent, &config, "").await;
    // Clean up whatever happened, then report.
    drop_collection(&agent).await;
    outcome.unwrap();
}

#[tokio::test]
async fn sqlite_files_run_the_demo_and_survive_a_restart() {
    let config = Config::embedded().in_data_dir(support::fresh_dir("live-sqlite"));
    assert!(matches!(config.memory, MemoryChoice::File { .. }), "{config:?}");
    assert!(matches!(config.checkpointer, CheckpointerChoice::Sqlite { .. }), "{config:?}");
    let agent = Agent::connect(&config).await.expect("SQLite needs no server");
    demo_and_restart(&agent, &config, "").await.unwrap();
}

#[tokio::test]
async fn postgres_checkpointer_runs_the_demo() {
    let url = std::env::var("DATABASE_URL")
        .ok()
        .filter(|u| u.starts_with("postgres"))
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/graph_test".into());
    let config = Config::embedded().with_checkpointer(CheckpointerChoice::Postgres { url });
    let Some(agent) = connect("Postgres", &config).await else { return };
    let suffix = format!("-{}", support::unique("t"));
    let outcome = demo_and_restart(&agent, &config, &suffix).await;
    for &(user, session, _) in SCRIPT {
        agent.forget_thread(user, &format!("{session}{suffix}")).await.expect("delete the test thread");
    }
    outcome.unwrap();
}

#[tokio::test]
async fn mysql_checkpointer_runs_the_demo() {
    let (database, url) = support::mysql_database();
    let config = Config::embedded().with_checkpointer(CheckpointerChoice::MySql { url: url.clone() });
    // The agent creates the database itself.
    let Some(agent) = connect("MySQL", &config).await else { return };
    let outcome = demo_and_restart(&agent, &config, "").await;
    support::drop_database(&url, &database).await;
    outcome.unwrap();
}

#[tokio::test]
async fn milvus_memory_with_mysql_checkpointer_runs_the_demo() {
    // The production layout: Milvus for long-term memory, SQL for threads.
    let Some(memory) = milvus() else { return };
    let (database, url) = support::mysql_database();
    let config = Config::embedded()
        .with_memory(memory)
        .with_checkpointer(CheckpointerChoice::MySql { url: url.clone() });
    let Some(agent) = connect("Milvus and MySQL", &config).await else {
        // MySQL answered (its database exists) but Milvus did not.
        return support::drop_database(&url, &database).await;
    };
    let outcome = demo_and_restart(&agent, &config, "").await;
    drop_collection(&agent).await;
    support::drop_database(&url, &database).await;
    outcome.unwrap();
}

#[tokio::test]
async fn redis_checkpointer_runs_the_demo() {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".into());
    let prefix = support::unique("memory-agent-test");
    let config = Config::embedded().with_checkpointer(CheckpointerChoice::Redis { url, prefix });
    let Some(agent) = connect("Redis", &config).await else { return };
    // Unique sessions too, so the thread names differ from any other run's.
    let suffix = format!("-{}", support::unique("t"));
    let outcome = demo_and_restart(&agent, &config, &suffix).await;
    for &(user, session, _) in SCRIPT {
        agent.forget_thread(user, &format!("{session}{suffix}")).await.expect("delete the test thread");
    }
    outcome.unwrap();
}

/// `memory-agent compact` on Milvus, as an operator runs it between sessions: the binary
/// summarizes the session this process wrote, retires its exchanges, and the next question
/// recalls the summary.
#[tokio::test]
async fn the_compact_command_compacts_a_milvus_session() {
    let Some(memory) = milvus() else { return };
    let MemoryChoice::Milvus { url, collection, .. } = memory.clone() else { unreachable!() };
    let config = Config::embedded().with_memory(memory);
    let Some(agent) = connect("Milvus", &config).await else { return };
    let outcome = async {
        for text in ["Hi, I'm Ada. My dog is called Biscuit.", "I'm allergic to peanuts."] {
            agent.chat("ada", "s1", text).await?;
        }
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_memory-agent"));
        for var in ["OPENAI_API_KEY", "MILVUS_TOKEN", "MYSQL_URL", "REDIS_URL", "DATABASE_URL"] {
            cmd.env_remove(var);
        }
        let out = cmd
            .args(["compact", "--user", "ada", "--older-than-days", "0"])
            .env("MILVUS_URL", &url)
            .env("MILVUS_COLLECTION", &collection)
            .output()?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("compacted ada:s1 (idle 0.0 days): 2 exchanges -> 1 summary"), "{stdout}");

        let records = agent.context().memory.session_records("ada", "s1").await?;
        let summary = records.iter().find(|r| r.role == mnemograph_memory::ROLE_SUMMARY).expect("a summary");
        let exchanges: Vec<_> =
            records.iter().filter(|r| r.role == mnemograph_memory::ROLE_EXCHANGE).collect();
        assert_eq!(exchanges.len(), 2, "retired, not deleted: {records:?}");
        assert!(exchanges.iter().all(|e| e.superseded_by() == Some(summary.id)), "{records:?}");
        let turn = agent.chat("ada", "s2", "Am I allergic to anything?").await?;
        assert!(turn.recalled.iter().any(|r| r.record.id == summary.id), "{turn:?}");
        assert!(turn.answer.contains("peanuts"), "{turn:?}");
        Ok::<_, Error>(())
    }
    .await;
    drop_collection(&agent).await;
    outcome.unwrap();
}
