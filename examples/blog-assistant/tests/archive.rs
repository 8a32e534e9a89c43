//! A round is stored in Redis and in the MySQL archive, or in neither: an archive that refuses
//! the round leaves the snapshot as it was and the client sees the error, a round without an
//! answer is stored nowhere, a round the snapshot took and the archive lost (a process dying
//! between the two commits) is archived from the snapshot before anything reads or replaces the
//! thread's checkpoint, and a thread with an empty archive starts fresh. Each archived round's
//! tool calls are audited in `tool_invocations`, queryable as `docs/sql-inspection.md` shows.
//! Real Redis and MariaDB, as the other service tests.

mod support;

use std::time::Duration;

use blog_assistant::model::OfflineModel;
use blog_assistant::recovery::{ensure_checkpoint, Recovery};
use blog_assistant::routes::thread_id;
use blog_assistant::snapshot::round_config;
use mnemograph_agent::{AgentStateUpdate, MODEL_NODE};
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::{RunConfig, StateSnapshot};
use mnemograph_models::{ChatModel, ChatModelExt, ChatRequest};
use sqlx::Row as _;
use support::{
    answer, archived_rows, chat, fresh_database, ids, lose_the_archive, start, start_custom, SseEvent,
    SHARED_DB,
};

/// The database of the refusal test, whose tables get a trigger: no other test uses it.
const REFUSING_DATABASE: &str = "blog_assistant_test_refusing";

const PAGE: &str = include_str!("../../../docs/sql-inspection.md");

fn checkpoint_id<S>(s: &StateSnapshot<S>) -> Option<String> {
    s.config.as_ref().and_then(|c| c.checkpoint_id.clone())
}

fn error_of(events: &[SseEvent]) -> String {
    assert!(!events.iter().any(|(n, _)| n == "done"), "the round completed: {events:?}");
    let (_, error) =
        events.iter().find(|(n, _)| n == "error").unwrap_or_else(|| panic!("no error: {events:?}"));
    error["message"].as_str().unwrap_or_default().to_owned()
}

/// `COUNT(*)` of `tool_invocations` rows of `thread`.
async fn audited(pool: &sqlx::MySqlPool, thread: &str) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM tool_invocations WHERE thread_id = ?")
        .bind(thread)
        .fetch_one(pool)
        .await
        .expect("count tool_invocations")
}

#[tokio::test]
async fn an_archive_that_refuses_the_round_leaves_redis_as_it_was_and_a_retry_asks_once() {
    let Some(url) = fresh_database(REFUSING_DATABASE).await else { return };
    let model = OfflineModel::new(Duration::ZERO).shared();
    let Some(t) = start_custom(SHARED_DB, &url, model).await else { return };
    let (user, session) = ids("refused");
    let thread = thread_id(&user, &session);
    let config = RunConfig::thread(thread.as_str());
    let pool = t.app.archive().pool();
    answer(&chat(&t.server.url(), &user, &session, "Redis 快照的 TTL 设多久合适？").await);
    assert_eq!(audited(pool, &thread).await, 2, "the first round's two tool calls");
    let before = t.app.agent().get_state(&config).await.unwrap();

    // MySQL refuses answers: the question's row goes in, the answer's is refused, so the
    // transaction must take the question's back out too.
    sqlx::raw_sql(
        "CREATE TRIGGER refuse_answers BEFORE INSERT ON chat_messages FOR EACH ROW \
         IF NEW.role = 'ai' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the test refuses answers'; END IF",
    )
    .execute(pool)
    .await
    .expect("create the trigger");
    let again = "上下文剪裁是怎么做的？";
    let message = error_of(&chat(&t.server.url(), &user, &session, again).await);
    assert!(message.contains("MySQL archive failed"), "{message}");

    let after = t.app.agent().get_state(&config).await.unwrap();
    assert_eq!(after.values.messages, before.values.messages, "the refused round changed the snapshot");
    assert_eq!(checkpoint_id(&after), checkpoint_id(&before), "the refused round committed a checkpoint");
    assert_eq!(archived_rows(&t.app, &user, &session).await.len(), 2, "half a round was archived");
    assert_eq!(audited(pool, &thread).await, 2, "the refused round's tool calls were audited");
    assert_eq!(rounds_noted(pool, &thread).await.len(), 1, "the refused round was noted");
    assert!(t.app.pending().is_empty(), "the refused round is still pending");

    // Once MySQL accepts again, the retry is stored in both, with the question in the thread once.
    sqlx::raw_sql("DROP TRIGGER refuse_answers").execute(pool).await.unwrap();
    let reply = answer(&chat(&t.server.url(), &user, &session, again).await);
    let messages = t.app.agent().get_state(&config).await.unwrap().values.messages;
    let asked = messages.iter().filter(|m| m.kind() == MessageType::Human && m.text() == again).count();
    assert_eq!(asked, 1, "{messages:?}");
    assert!(!reply.contains(&format!("上一个问题「{again}」")), "the model saw the question twice: {reply}");
    let rows = archived_rows(&t.app, &user, &session).await;
    let questions: Vec<&str> = rows.iter().filter(|r| r.0 == "human").map(|r| r.1.as_str()).collect();
    assert_eq!(questions, ["Redis 快照的 TTL 设多久合适？", again]);
    assert_eq!(audited(pool, &thread).await, 4);
    assert_eq!(rounds_noted(pool, &thread).await.len(), 2);
}

/// Answers every request with an empty message: a round without an answer.
struct Silent;

impl ChatModel for Silent {
    async fn invoke(&self, _request: ChatRequest) -> mnemograph_models::Result<Message> {
        Ok(Message::ai(""))
    }
}

#[tokio::test]
async fn a_round_without_an_answer_is_stored_nowhere() {
    // Two apps on one Redis database and archive: one answers offline, the other's model says
    // nothing.
    let Some(t) = start(SHARED_DB).await else { return };
    let Some(silent) = start_custom(SHARED_DB, &support::mysql_url(), Silent.shared()).await else { return };
    let (user, session) = ids("silent");
    let config = RunConfig::thread(thread_id(&user, &session));
    answer(&chat(&t.server.url(), &user, &session, "Redis 快照的 TTL 设多久合适？").await);
    let before = t.app.agent().get_state(&config).await.unwrap();

    let message = error_of(&chat(&silent.server.url(), &user, &session, "上下文剪裁是怎么做的？").await);
    assert!(message.contains("no answer"), "{message}");
    let after = t.app.agent().get_state(&config).await.unwrap();
    assert_eq!(after.values.messages, before.values.messages, "the unanswered round changed the snapshot");
    assert_eq!(checkpoint_id(&after), checkpoint_id(&before));
    assert_eq!(archived_rows(&t.app, &user, &session).await.len(), 2, "the unanswered round was archived");

    // On a new thread: no checkpoint and no archive afterwards either.
    let (user, session) = ids("silent-new");
    error_of(&chat(&silent.server.url(), &user, &session, "你好").await);
    let config = RunConfig::thread(thread_id(&user, &session));
    assert!(t.app.agent().get_state(&config).await.unwrap().config.is_none(), "a checkpoint was written");
    assert!(archived_rows(&t.app, &user, &session).await.is_empty());
}

/// The answers (their first 40 characters) of `thread`'s archived rounds, oldest first, as
/// `docs/sql-inspection.md` queries `archived_rounds`.
async fn rounds_noted(pool: &sqlx::MySqlPool, thread: &str) -> Vec<String> {
    let sql = doc_query("archived_rounds_of_thread").replace("{thread_id}", thread);
    let rows = sqlx::raw_sql(&sql).fetch_all(pool).await.expect("the page's query runs");
    rows.iter()
        .map(|r| {
            let id: String = r.try_get_unchecked("checkpoint_id").expect("checkpoint_id");
            assert!(!id.is_empty());
            r.try_get_unchecked("answer").expect("answer")
        })
        .collect()
}

fn opening(text: &str) -> String {
    text.chars().take(40).collect()
}

#[tokio::test]
async fn a_round_the_snapshot_holds_and_the_archive_lacks_is_archived_before_anything_reads_it() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("lost");
    let thread = thread_id(&user, &session);
    let config = RunConfig::thread(thread.as_str());
    let pool = t.app.archive().pool();
    let first = "Redis 快照的 TTL 设多久合适？";
    let reply = answer(&chat(&t.server.url(), &user, &session, first).await);
    let snapshot = t.app.agent().get_state(&config).await.unwrap();
    let (carrying, round) =
        t.app.saver().latest_round(&thread).await.unwrap().expect("the checkpoint carries its round");
    assert_eq!(Some(carrying), checkpoint_id(&snapshot));
    assert_eq!((round.question.as_str(), round.answer.as_str()), (first, reply.as_str()));
    assert_eq!(round.tools.len(), 2, "{round:?}");
    assert!(!t.app.saver().archive_latest_round(&thread).await.unwrap(), "archived twice");

    // The archive loses the round: `GET /history` archives it from the snapshot first.
    lose_the_archive(pool, &user, &session, &thread).await;
    let url = format!("{}/history?user_id={user}&session_id={session}", t.server.url());
    let history: serde_json::Value =
        support::http_client().get(url).send().await.unwrap().json().await.unwrap();
    let bubbles: Vec<&str> =
        history["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(bubbles, [first, reply.as_str()], "{history}");
    assert_eq!(audited(pool, &thread).await, 2);
    assert_eq!(rounds_noted(pool, &thread).await, [opening(&reply)]);

    // Lost again: the next round archives it before its own, in order, and nothing twice.
    lose_the_archive(pool, &user, &session, &thread).await;
    let second = "上下文剪裁是怎么做的？";
    let next = answer(&chat(&t.server.url(), &user, &session, second).await);
    let rows = archived_rows(&t.app, &user, &session).await;
    let bubbles: Vec<(&str, &str)> = rows.iter().map(|r| (r.0.as_str(), r.1.as_str())).collect();
    assert_eq!(bubbles, [("human", first), ("ai", reply.as_str()), ("human", second), ("ai", next.as_str())]);
    assert_eq!(audited(pool, &thread).await, 4);
    assert_eq!(rounds_noted(pool, &thread).await, [opening(&reply), opening(&next)]);
    let messages = t.app.agent().get_state(&config).await.unwrap().values.messages;
    for question in [first, second] {
        let asked =
            messages.iter().filter(|m| m.kind() == MessageType::Human && m.text() == question).count();
        assert_eq!(asked, 1, "{question}: {messages:?}");
    }
}

#[tokio::test]
async fn a_state_update_archives_the_round_of_the_checkpoint_it_replaces() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("replaced");
    let thread = thread_id(&user, &session);
    let config = RunConfig::thread(thread.as_str());
    let pool = t.app.archive().pool();
    let question = "Redis 快照的 TTL 设多久合适？";
    let reply = answer(&chat(&t.server.url(), &user, &session, question).await);
    let carrying = checkpoint_id(&t.app.agent().get_state(&config).await.unwrap());

    // The archive loses the round, then a state update (as through the LangGraph API) replaces
    // the checkpoint that carries it: the round is archived before the update is stored.
    lose_the_archive(pool, &user, &session, &thread).await;
    assert!(rounds_noted(pool, &thread).await.is_empty());
    let note = Message::ai("An editor's note.");
    t.app
        .agent()
        .update_state(&config, AgentStateUpdate::messages(vec![note]), Some(MODEL_NODE))
        .await
        .unwrap();
    let after = t.app.agent().get_state(&config).await.unwrap();
    assert_ne!(checkpoint_id(&after), carrying, "the update made a new checkpoint");
    assert!(t.app.saver().latest_round(&thread).await.unwrap().is_none(), "the update carries no round");
    assert_eq!(rounds_noted(pool, &thread).await, [opening(&reply)]);
    assert_eq!(audited(pool, &thread).await, 2);
    let rows = archived_rows(&t.app, &user, &session).await;
    let bubbles: Vec<(&str, &str)> = rows.iter().map(|r| (r.0.as_str(), r.1.as_str())).collect();
    assert_eq!(bubbles, [("human", question), ("ai", reply.as_str())]);

    // A second update finds the round archived and writes nothing more.
    let again = Message::ai("Another note.");
    t.app
        .agent()
        .update_state(&config, AgentStateUpdate::messages(vec![again]), Some(MODEL_NODE))
        .await
        .unwrap();
    assert_eq!(rounds_noted(pool, &thread).await, [opening(&reply)]);
    assert_eq!(archived_rows(&t.app, &user, &session).await.len(), 2);
}

#[tokio::test]
async fn a_thread_with_an_empty_archive_starts_fresh() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("fresh");
    let config = round_config(&thread_id(&user, &session));
    let found = ensure_checkpoint(t.app.agent(), t.app.saver(), &config, &user, &session).await.unwrap();
    assert_eq!(found, Recovery::Fresh);
    assert!(
        t.app.agent().get_state(&config).await.unwrap().config.is_none(),
        "nothing to rebuild, nothing written"
    );

    let question = "冷启动怎么恢复对话？";
    let reply = answer(&chat(&t.server.url(), &user, &session, question).await);
    assert_eq!(t.app.rebuilds(), 0, "a fresh thread was rebuilt");
    let messages = t.app.agent().get_state(&config).await.unwrap().values.messages;
    assert_eq!(
        messages.first().map(|m| (m.kind(), m.text())),
        Some((MessageType::Human, question.to_owned()))
    );
    assert_eq!(messages.last().map(Message::text), Some(reply.clone()));
    let rows = archived_rows(&t.app, &user, &session).await;
    let bubbles: Vec<(&str, &str)> = rows.iter().map(|r| (r.0.as_str(), r.1.as_str())).collect();
    assert_eq!(bubbles, [("human", question), ("ai", reply.as_str())]);
}

/// The ```` ```sql blog-assistant ```` block of `docs/sql-inspection.md` named `name`.
fn doc_query(name: &str) -> String {
    PAGE.split("```sql blog-assistant\n")
        .skip(1)
        .map(|block| block.split("```").next().unwrap_or_default())
        .find(|sql| sql.lines().next() == Some(&format!("-- name: {name}")))
        .unwrap_or_else(|| panic!("no `{name}` query on the page"))
        .to_owned()
}

#[tokio::test]
async fn a_rounds_tool_calls_are_audited_as_the_inspection_page_queries_them() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("audit");
    let thread = thread_id(&user, &session);
    let reply = answer(&chat(&t.server.url(), &user, &session, "Redis 快照的 TTL 设多久合适？").await);

    let sql = doc_query("tool_invocations_of_thread").replace("{thread_id}", &thread);
    let rows = sqlx::raw_sql(&sql).fetch_all(t.app.archive().pool()).await.expect("the page's query runs");
    let get = |row: &sqlx::mysql::MySqlRow, column: &str| -> Option<String> {
        row.try_get_unchecked::<Option<String>, _>(column).unwrap_or_else(|e| panic!("{column}: {e}"))
    };
    let calls: Vec<[Option<String>; 4]> =
        rows.iter().map(|r| ["tool", "arguments", "outcome", "answer"].map(|c| get(r, c))).collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0][0].as_deref(), Some("search_blog"));
    assert_eq!(calls[1][0].as_deref(), Some("get_article_content"));
    let args: serde_json::Value = serde_json::from_str(calls[1][1].as_deref().unwrap()).unwrap();
    assert_eq!(args, serde_json::json!({ "id": "redis-checkpoint" }));
    assert!(calls.iter().all(|c| c[2].as_deref() == Some("ok")), "{calls:?}");
    let opening = opening(&reply);
    assert!(calls.iter().all(|c| c[3].as_deref() == Some(opening.as_str())), "{calls:?}");
    for row in &rows {
        let call_id = get(row, "call_id").unwrap_or_default();
        assert!(!call_id.is_empty());
        assert!(get(row, "duration_ms").unwrap_or_default().parse::<u64>().is_ok());
        assert_eq!(get(row, "error"), None);
    }
}
