//! The inspection queries people run against LangGraph's MySQL tables (for a chat service that
//! maps `conversation_id` to `thread_id = conv_{conversation_id}`) work on what this crate
//! writes and show the expected chain, writes and blob versions.

mod support;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::prelude::*;
use sqlx::mysql::MySqlRow;
use sqlx::Row as _;

/// `START -> agent`: the agent answers the last human message.
fn chat() -> StateGraph<MessagesState> {
    StateGraph::<MessagesState>::new()
        .add_node("agent", |s: MessagesState| async move {
            let question = s.messages.last().map(Message::text).unwrap_or_default();
            Ok::<_, Error>(MessagesStateUpdate::messages(vec![Message::ai(format!("回答: {question}"))]))
        })
        .add_edge(START, "agent")
}

/// Runs `sql` with its placeholder `conv_{conversation_id}` replaced by `thread_id`, as a
/// person pastes it into a client.
async fn run(saver: &MySqlCheckpointer, sql: &str, thread_id: &str) -> Vec<MySqlRow> {
    let sql = sql.replace("conv_{conversation_id}", thread_id);
    sqlx::raw_sql(&sql).fetch_all(saver.pool()).await.unwrap_or_else(|e| panic!("{sql}\nfailed: {e}"))
}

/// A text column, whatever type the server gives it (`JSON_EXTRACT` is JSON on MySQL).
fn text(row: &MySqlRow, column: &str) -> Option<String> {
    row.try_get_unchecked::<Option<String>, _>(column).unwrap()
}

#[tokio::test]
async fn chat_service_inspection_queries() {
    let Some(saver) = support::saver().await else { return };
    let conversation_id = mnemograph_checkpoint::checkpoint::backend::uuid6(0);
    let thread_id = format!("conv_{conversation_id}");
    let graph = chat().compile_with(saver.clone()).unwrap();
    let cfg = RunConfig::thread(&thread_id);
    for question in ["第一个问题", "second question"] {
        graph.invoke(MessagesStateUpdate::messages(vec![Message::human(question)]), &cfg).await.unwrap();
    }

    // 查询会话的所有检查点: the chain, oldest first, each pointing at the previous one.
    let history = run(
        &saver,
        "SELECT
            checkpoint_id,
            parent_checkpoint_id,
            JSON_EXTRACT(checkpoint, '$.ts') as timestamp
        FROM checkpoints
        WHERE thread_id = 'conv_{conversation_id}'
        ORDER BY checkpoint_id;",
        &thread_id,
    )
    .await;
    // Two runs of input (-1) + two steps each.
    assert_eq!(history.len(), 6);
    let mut previous: Option<String> = None;
    for row in &history {
        let id: String = row.try_get("checkpoint_id").unwrap();
        let parent: Option<String> = row.try_get("parent_checkpoint_id").unwrap();
        assert_eq!(parent, previous, "checkpoint {id}");
        let ts = text(row, "timestamp").expect("a timestamp");
        assert!(ts.starts_with('"') && ts.ends_with("+00:00\""), "{ts}");
        previous = Some(id);
    }

    // 查询会话的所有写入记录: the tasks' writes, with their sizes.
    let writes = run(
        &saver,
        "SELECT
            checkpoint_id,
            task_id,
            channel,
            type,
            LENGTH(`blob`) as blob_size
        FROM checkpoint_writes
        WHERE thread_id = 'conv_{conversation_id}'
        ORDER BY checkpoint_id;",
        &thread_id,
    )
    .await;
    let messages: Vec<&MySqlRow> =
        writes.iter().filter(|r| text(r, "channel").as_deref() == Some("messages")).collect();
    assert!(messages.len() >= 2, "the agent's replies are saved as writes");
    for row in messages {
        assert_eq!(text(row, "type").as_deref(), Some("msgpack"));
        assert!(row.try_get::<i64, _>("blob_size").unwrap() > 0);
        assert!(!row.try_get::<String, _>("task_id").unwrap().is_empty());
    }

    // 查询会话的消息历史: one blob per version of `messages`, growing with the conversation.
    let blobs = run(
        &saver,
        "SELECT
            channel,
            version,
            type,
            LENGTH(`blob`) as blob_size
        FROM checkpoint_blobs
        WHERE thread_id = 'conv_{conversation_id}'
          AND channel = 'messages'
        ORDER BY version;",
        &thread_id,
    )
    .await;
    // Input and agent reply, per run.
    assert_eq!(blobs.len(), 4);
    let sizes: Vec<i64> = blobs.iter().map(|r| r.try_get("blob_size").unwrap()).collect();
    assert!(sizes.windows(2).all(|w| w[0] < w[1]), "the whole list is stored at every version: {sizes:?}");
    for row in &blobs {
        assert_eq!(text(row, "type").as_deref(), Some("msgpack"));
        assert!(text(row, "version").unwrap().starts_with("000000000000000000000000000000"));
    }
}
