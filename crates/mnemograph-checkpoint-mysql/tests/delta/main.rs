//! Delta mode (`with_delta_channels`): the history it returns is the plain saver's, value by
//! value; prune keeps the chains kept checkpoints need (the saver's own and LangGraph's
//! `keep_latest`), as do `delete_for_runs` and `copy_thread`; delete removes everything; broken
//! chains are typed errors; Python refuses delta rows instead of misreading them.
//!
//! Every test uses a fresh database of its own (dropped at the end), with a collation that is not
//! the server's default, so the range reads are exercised under a case-insensitive collation.

#[path = "../support/mod.rs"]
mod support;

mod history;
mod lifecycle;

use std::process::Command;

use mnemograph_checkpoint::checkpoint::backend::{checkpoint_id, next_version};
use mnemograph_checkpoint::checkpoint::serde::dumps_typed;
use mnemograph_checkpoint::checkpoint::{
    ChannelVersions, Checkpoint, CheckpointConfig, CheckpointError, CheckpointMetadata, CheckpointSource,
    CheckpointTuple, Checkpointer, Commit, ExpectParent, ListOptions, PruneStrategy,
};
use mnemograph_checkpoint::messages::ToolCall;
use mnemograph_checkpoint::value::ChannelValue;
use mnemograph_checkpoint_mysql::{DeltaChannels, MySqlCheckpointer};
use mnemograph_core::prelude::*;

/// Writes every checkpoint and write to two savers; reads from the first (the delta one), so a
/// run exercises delta reads and the cache as a graph uses them.
struct Tee {
    delta: MySqlCheckpointer,
    plain: MySqlCheckpointer,
}

impl Checkpointer for Tee {
    async fn get_tuple(&self, config: &CheckpointConfig) -> Result<Option<CheckpointTuple>, CheckpointError> {
        self.delta.get_tuple(config).await
    }
    async fn list(
        &self,
        config: Option<&CheckpointConfig>,
        options: ListOptions,
    ) -> Result<Vec<CheckpointTuple>, CheckpointError> {
        self.delta.list(config, options).await
    }
    async fn put(
        &self,
        config: &CheckpointConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> Result<CheckpointConfig, CheckpointError> {
        self.plain.put(config, checkpoint.clone(), metadata.clone(), new_versions.clone()).await?;
        self.delta.put(config, checkpoint, metadata, new_versions).await
    }
    async fn commit(&self, commit: Commit) -> Result<CheckpointConfig, CheckpointError> {
        self.plain.commit(Commit { expect: ExpectParent::Any, ..commit.clone() }).await?;
        self.delta.commit(commit).await
    }
    async fn put_writes(
        &self,
        config: &CheckpointConfig,
        writes: Vec<(String, ChannelValue)>,
        task_id: &str,
        task_path: &str,
    ) -> Result<(), CheckpointError> {
        self.plain.put_writes(config, writes.clone(), task_id, task_path).await?;
        self.delta.put_writes(config, writes, task_id, task_path).await
    }
    async fn delete_thread(&self, thread_id: &str) -> Result<(), CheckpointError> {
        self.plain.delete_thread(thread_id).await?;
        self.delta.delete_thread(thread_id).await
    }
}

/// An agent that echoes, calls a tool when asked, and on "trim" rewrites the history with
/// `RemoveMessage(REMOVE_ALL)` plus the last two messages, as the trimming middleware does.
fn agent_graph() -> StateGraph<MessagesState> {
    StateGraph::<MessagesState>::new()
        .add_node("agent", |s: MessagesState| async move {
            let last = s.messages.last().cloned().unwrap_or_else(|| Message::human(""));
            let text = last.text();
            let reply = if text == "trim" {
                let kept = s.messages[s.messages.len().saturating_sub(3)..s.messages.len() - 1].to_vec();
                [vec![Message::remove_all()], kept, vec![Message::ai("trimmed")]].concat()
            } else if text.starts_with("tool") {
                let call =
                    ToolCall::new("lookup", serde_json::json!({"q": text, "n": 1}), format!("call-{text}"));
                vec![Message::ai("").with_tool_calls(vec![call])]
            } else {
                vec![Message::ai(format!("echo: {text} {}", "lorem ipsum ".repeat(8)))]
            };
            Ok::<_, Error>(MessagesStateUpdate::messages(reply))
        })
        .add_node("tools", |s: MessagesState| async move {
            let calls = s.messages.last().map(|m| m.tool_calls().to_vec()).unwrap_or_default();
            let answers: Vec<Message> = calls
                .iter()
                .map(|c| {
                    Message::tool(format!("result for {}", c.args["q"]), c.id.clone().unwrap_or_default())
                })
                .collect();
            Ok::<_, Error>(MessagesStateUpdate::messages(answers))
        })
        .add_edge(START, "agent")
        .add_conditional_edges(
            "agent",
            |s: &MessagesState| {
                let calls = s.messages.last().is_some_and(|m| !m.tool_calls().is_empty());
                if calls {
                    "tools"
                } else {
                    END
                }
            },
            (),
        )
        .add_edge("tools", "agent")
}

/// Runs `inputs` as turns of one thread on `saver`.
async fn converse(saver: impl Checkpointer, thread: &str, inputs: &[&str]) {
    let graph = agent_graph().compile_with(saver).unwrap();
    let config = RunConfig::thread(thread);
    for input in inputs {
        graph.invoke(MessagesStateUpdate::messages(vec![Message::human(*input)]), &config).await.unwrap();
    }
}

const TURNS: &[&str] = &[
    "hello",
    "how are you",
    "tool weather",
    "thanks",
    "more",
    "tool news",
    "trim",
    "after trim",
    "again",
    "tool stocks",
    "and again",
    "trim",
    "last",
];

/// Everything of a tuple, values as their stored bytes.
fn fingerprint(t: &CheckpointTuple) -> String {
    let values: Vec<(String, (String, Vec<u8>))> = t
        .checkpoint
        .channel_values
        .iter()
        .map(|(channel, value)| (channel.to_string(), dumps_typed(value).unwrap()))
        .collect();
    let writes: Vec<(String, String, (String, Vec<u8>))> = t
        .pending_writes
        .iter()
        .map(|w| (w.task_id.clone(), w.channel.clone(), dumps_typed(&w.value).unwrap()))
        .collect();
    let cp = &t.checkpoint;
    format!(
        "{:?} {:?} {} {} {} {:?} {:?} {:?} {} {values:?} {writes:?}",
        t.config,
        t.parent_config,
        cp.v,
        cp.id,
        cp.ts,
        cp.channel_versions,
        cp.versions_seen,
        cp.updated_channels,
        t.metadata.to_json().into_value(),
    )
}

async fn history(saver: &MySqlCheckpointer, thread: &str) -> Vec<String> {
    let listed = saver.list(Some(&CheckpointConfig::thread(thread)), ListOptions::new()).await.unwrap();
    listed.iter().map(fingerprint).collect()
}

/// `(rows, bytes)` of the thread's blobs of `kind` (all kinds when `None`).
async fn blobs(saver: &MySqlCheckpointer, thread: &str, kind: Option<&str>) -> (i64, i64) {
    sqlx::query_as(
        "SELECT COUNT(*), CAST(COALESCE(SUM(LENGTH(`blob`)), 0) AS SIGNED) FROM checkpoint_blobs \
         WHERE thread_id = ? AND (? IS NULL OR type = ?)",
    )
    .bind(thread)
    .bind(kind)
    .bind(kind)
    .fetch_one(saver.pool())
    .await
    .unwrap()
}

async fn rows(saver: &MySqlCheckpointer, table: &str, thread: &str) -> i64 {
    sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table} WHERE thread_id = ?"))
        .bind(thread)
        .fetch_one(saver.pool())
        .await
        .unwrap()
}

/// A delta-mode saver (snapshot every `every` versions) on a fresh database, and a plain saver on
/// another, both migrated. Drop them with [`drop_both`].
async fn savers(label: &str, every: u32) -> Option<(Vec<String>, MySqlCheckpointer, MySqlCheckpointer)> {
    let (db, delta) = support::fresh_database(label).await?;
    let (db_plain, plain) = support::fresh_database(&format!("{label}_plain")).await?;
    delta.setup().await.unwrap();
    plain.setup().await.unwrap();
    let delta = delta.with_delta(DeltaChannels::new(["messages"]).snapshot_every(every));
    Some((vec![db, db_plain], delta, plain))
}

async fn drop_all(databases: Vec<String>) {
    for db in databases {
        support::drop_database(&db).await;
    }
}

/// Direct puts of a `messages` list on `at`, versioned after `after`; returns the new address and
/// the version used.
async fn put_messages(
    saver: &MySqlCheckpointer,
    at: &CheckpointConfig,
    step: i64,
    after: Option<&str>,
    messages: ChannelValue,
) -> (CheckpointConfig, String) {
    let version = next_version(after);
    let mut cp = Checkpoint {
        v: 4,
        id: checkpoint_id(step),
        ts: mnemograph_checkpoint::checkpoint::backend::now_iso(),
        ..Checkpoint::default()
    };
    cp.channel_values.insert("messages".into(), messages);
    cp.channel_versions.insert("messages".into(), version.as_str().into());
    let new_versions = cp.channel_versions.clone();
    let meta = CheckpointMetadata::new(CheckpointSource::Loop, step);
    (saver.put(at, cp, meta, new_versions).await.unwrap(), version)
}

fn chat(n: usize) -> Vec<Message> {
    (0..n)
        .map(|i| Message::human(format!("message {i} {}", "x".repeat(200))).with_id(format!("m{i}")))
        .collect()
}
