//! Cold-start recovery over real Redis and MariaDB: a long archive comes back as its last 20
//! messages, and two first requests on a cold thread rebuild it once and are both answered.

mod support;

use blog_assistant::recovery::{ensure_checkpoint, Recovery, RECOVERY_LIMIT};
use blog_assistant::routes::thread_id;
use blog_assistant::snapshot::round_config;
use mnemograph_core::messages::{Message, MessageType};
use support::{answer, archived_rows, chat, ids, start, SHARED_DB};

#[tokio::test]
async fn a_thread_with_45_archived_messages_comes_back_as_the_last_20_in_order() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("cold45");
    let archived: Vec<(&str, String)> =
        (1..=45).map(|i| (if i % 2 == 1 { "human" } else { "ai" }, format!("消息 {i}"))).collect();
    for (role, content) in &archived {
        sqlx::query(
            "INSERT INTO chat_messages (user_id, session_id, role, content, citations, created_at) \
             VALUES (?, ?, ?, ?, NULL, UTC_TIMESTAMP(3))",
        )
        .bind(&user)
        .bind(&session)
        .bind(role)
        .bind(content)
        .execute(t.app.archive().pool())
        .await
        .expect("insert an archived message");
    }
    assert_eq!(archived_rows(&t.app, &user, &session).await.len(), 45);

    let config = round_config(&thread_id(&user, &session));
    let found = ensure_checkpoint(t.app.agent(), t.app.saver(), &config, &user, &session).await.unwrap();
    assert_eq!(found, Recovery::Rebuilt(20));
    assert_eq!(RECOVERY_LIMIT, 20);

    let state = t.app.agent().get_state(&config).await.unwrap().values.messages;
    let got: Vec<(MessageType, String)> = state.iter().map(|m| (m.kind(), m.text())).collect();
    let want: Vec<(MessageType, String)> = archived[25..]
        .iter()
        .map(|(role, text)| {
            (if *role == "human" { MessageType::Human } else { MessageType::Ai }, text.clone())
        })
        .collect();
    assert_eq!(got, want);

    // Present now: a second look changes nothing.
    let again = ensure_checkpoint(t.app.agent(), t.app.saver(), &config, &user, &session).await.unwrap();
    assert_eq!(again, Recovery::Present);
}

#[tokio::test]
async fn two_first_requests_on_a_cold_thread_rebuild_it_once_and_both_are_answered() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("coldpair");
    let earlier = "冷启动怎么恢复对话？";
    t.app.archive().save_round(&user, &session, earlier, "从 MySQL 取回最近的消息。", &[]).await.unwrap();
    let config = round_config(&thread_id(&user, &session));
    assert!(t.app.agent().get_state(&config).await.unwrap().config.is_none(), "the thread is cold");
    assert_eq!(t.app.rebuilds(), 0);

    let url = t.server.url();
    let (a, b) = ("Redis 快照的 TTL 设多久合适？", "上下文剪裁是怎么做的？");
    let (first, second) = tokio::join!(chat(&url, &user, &session, a), chat(&url, &user, &session, b));
    let (first, second) = (answer(&first), answer(&second));
    assert!(!first.is_empty() && !second.is_empty());
    assert_eq!(t.app.rebuilds(), 1, "the cold thread was rebuilt more than once");

    // Both rounds are archived once each after the earlier one, and the snapshot ends with the
    // round that ran second (trimming may have dropped older turns from it, never duplicated).
    let rows = archived_rows(&t.app, &user, &session).await;
    let questions: Vec<&str> = rows.iter().filter(|r| r.0 == "human").map(|r| r.1.as_str()).collect();
    assert_eq!(questions.len(), 3, "{rows:?}");
    assert_eq!(questions[0], earlier);
    assert!(questions.contains(&a) && questions.contains(&b), "{questions:?}");
    let state = t.app.agent().get_state(&config).await.unwrap().values.messages;
    let asked: Vec<String> =
        state.iter().filter(|m| m.kind() == MessageType::Human).map(Message::text).collect();
    assert_eq!(asked.last().map(String::as_str), Some(questions[2]), "{asked:?}");
    assert!(asked.iter().all(|q| asked.iter().filter(|o| *o == q).count() == 1), "{asked:?}");
}
