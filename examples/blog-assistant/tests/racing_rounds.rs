//! Two processes answering one thread at once: two apps on one Redis database and one archive,
//! each with its own per-thread locks, so nothing but the stores keeps their rounds apart. The
//! round that commits second started from a checkpoint that is no longer the latest: Redis
//! refuses its commit, and its archive transaction, written first, is rolled back, so the
//! refused round is in neither store and the other in both. Real Redis and MariaDB.

mod support;

use std::time::Duration;

use blog_assistant::routes::thread_id;
use mnemograph_core::messages::MessageType;
use mnemograph_core::RunConfig;
use support::{answer, archived_rows, chat, ids, start_with, SseEvent, TestApp, SHARED_DB};

/// Long enough per token that two rounds started together overlap.
const TOKEN_DELAY: Duration = Duration::from_millis(5);

fn completed(events: &[SseEvent]) -> bool {
    events.iter().any(|(name, _)| name == "done")
}

/// How many times the snapshot of `thread` holds `question`.
async fn asked(t: &TestApp, thread: &str, question: &str) -> usize {
    let messages = t.app.agent().get_state(&RunConfig::thread(thread)).await.unwrap().values.messages;
    messages.iter().filter(|m| m.kind() == MessageType::Human && m.text() == question).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_rounds_racing_on_one_thread_the_refused_one_is_in_neither_store() {
    let Some(one) = start_with(SHARED_DB, TOKEN_DELAY).await else { return };
    let Some(other) = start_with(SHARED_DB, TOKEN_DELAY).await else { return };
    let (user, session) = ids("race");
    let thread = thread_id(&user, &session);
    let first = "Redis 快照的 TTL 设多久合适？";
    let reply = answer(&chat(&one.server.url(), &user, &session, first).await);

    let (a, b) = ("上下文剪裁是怎么做的？", "冷启动怎么恢复对话？");
    let (one_url, other_url) = (one.server.url(), other.server.url());
    let (to_one, to_other) =
        tokio::join!(chat(&one_url, &user, &session, a), chat(&other_url, &user, &session, b));
    assert_eq!(
        usize::from(completed(&to_one)) + usize::from(completed(&to_other)),
        1,
        "one round commits, the other is refused: {to_one:?} {to_other:?}"
    );
    let ((won, won_events), (lost, lost_events)) =
        if completed(&to_one) { ((a, &to_one), (b, &to_other)) } else { ((b, &to_other), (a, &to_one)) };
    assert!(lost_events.iter().any(|(name, _)| name == "error"), "{lost_events:?}");
    let won_reply = answer(won_events);

    let rows = archived_rows(&one.app, &user, &session).await;
    let bubbles: Vec<(&str, &str)> = rows.iter().map(|r| (r.0.as_str(), r.1.as_str())).collect();
    assert_eq!(
        bubbles,
        [("human", first), ("ai", reply.as_str()), ("human", won), ("ai", won_reply.as_str())]
    );
    let pool = one.app.archive().pool();
    let count = |table: &'static str| {
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE thread_id = ?");
        let thread = thread.clone();
        async move { sqlx::query_scalar::<_, i64>(&sql).bind(thread).fetch_one(pool).await.unwrap() }
    };
    assert_eq!(count("archived_rounds").await, 2, "the refused round was noted");
    assert_eq!(count("tool_invocations").await, 4, "the refused round's tool calls were audited");
    assert_eq!(asked(&one, &thread, won).await, 1);
    assert_eq!(asked(&one, &thread, lost).await, 0, "the refused round reached the snapshot");

    // Asked again, the refused question is stored once in both.
    let again = answer(&chat(&other.server.url(), &user, &session, lost).await);
    assert_eq!(archived_rows(&one.app, &user, &session).await.last().map(|r| r.1.clone()), Some(again));
    assert_eq!(count("archived_rounds").await, 3);
    assert_eq!(asked(&one, &thread, lost).await, 1);
}
