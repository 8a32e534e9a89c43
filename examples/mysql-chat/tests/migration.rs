//! First-access migration of legacy-only conversations, against the real database: it happens
//! on the first round, exactly once even when first requests race, and the model then knows the
//! legacy history.

mod support;

use std::time::Duration;

use mnemograph_core::checkpoint::ListOptions;
use mnemograph_core::messages::Message;
use mnemograph_core::messages::MessageType;
use mnemograph_core::RunConfig;
use mnemograph_models::ChatModelExt;
use mysql_chat::{migrate, ConversationLock, OfflineModel, ThreadStatus};

/// The legacy history every test starts from.
const LEGACY: [(&str, &str); 3] = [
    ("user", "Hello, my name is Bob. I am planning a trip."),
    ("assistant", "Nice to meet you, Bob. Where to?"),
    ("user", "Somewhere warm in March."),
];

#[tokio::test]
async fn concurrent_first_requests_migrate_once() {
    // Every checkpoint kept, to look at the whole history.
    let mut settings = support::config();
    settings.keep_checkpoints = 1000;
    let Some(app) = support::start_with(support::DATABASE, OfflineModel.shared(), &settings).await else {
        return;
    };
    let id = support::new_conversation_id();
    support::insert_legacy(&app.pool, &id, &LEGACY).await;
    let config = RunConfig::thread(format!("conv_{id}"));
    let before = app.service.graph().get_state(&config).await.unwrap();
    assert!(before.config.is_none(), "legacy only: no checkpoint yet");

    // Eight first requests at once.
    let rounds = (0..8).map(|i| {
        let app = &app;
        let id = id.as_str();
        async move { app.chat(id, &format!("question {i}: what is my name?")).await }
    });
    let answers = futures_util::future::join_all(rounds).await;

    assert_eq!(answers.iter().filter(|a| a["migrated"] == true).count(), 1, "{answers:?}");
    for answer in &answers {
        // Every round, whichever ran first, saw the migrated history.
        assert_eq!(answer["answer"], "[offline] Your name is Bob, you told me earlier.");
    }

    // The history holds one migration checkpoint (`update_state` writes `source = "update"`),
    // the first of the thread, then four checkpoints per round.
    let history = app.service.graph().get_state_history(&config, ListOptions::new()).await.unwrap();
    let sources: Vec<&str> = history.iter().map(|s| s.metadata.as_ref().unwrap().source.as_str()).collect();
    assert_eq!(sources.iter().filter(|s| **s == "update").count(), 1, "{sources:?}");
    assert_eq!(sources.last(), Some(&"update"));
    assert_eq!(history.len(), 1 + 8 * 4);

    // No message twice: the legacy rows once each (ids `legacy-<row id>`), then 8 rounds.
    let state = app.service.graph().get_state(&config).await.unwrap();
    let messages = &state.values.messages;
    assert_eq!(messages.len(), LEGACY.len() + 8 * 2);
    let ids: Vec<&str> = messages.iter().filter_map(Message::id).collect();
    let unique: std::collections::HashSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), messages.len(), "{ids:?}");
    let migrated: Vec<String> = messages[..LEGACY.len()].iter().map(Message::text).collect();
    assert_eq!(migrated, LEGACY.map(|(_, text)| text));
    assert!(ids[..LEGACY.len()].iter().all(|i| i.starts_with("legacy-")));
    assert_eq!(messages.iter().filter(|m| m.text() == LEGACY[0].1).count(), 1);

    // The display tables: the legacy rows plus each round once.
    let (_, shown) = app.get(&format!("/api/conversations/{id}/messages")).await;
    assert_eq!(shown["messages"].as_array().unwrap().len(), LEGACY.len() + 8 * 2);
}

#[tokio::test]
async fn ensure_thread_under_the_lock_is_idempotent() {
    let Some(app) = support::start().await else { return };
    let id = support::new_conversation_id();
    support::insert_legacy(&app.pool, &id, &LEGACY).await;
    let locks = support::lock_pool().await;

    let attempts = (0..8).map(|_| {
        let (locks, id, service, pool) = (&locks, id.as_str(), &app.service, &app.pool);
        async move {
            let lock = ConversationLock::acquire(locks, id, Duration::from_secs(30)).await.unwrap();
            let status = migrate::ensure_thread(&lock, service.graph(), service.saver(), pool).await.unwrap();
            lock.release().await.unwrap();
            status
        }
    });
    let statuses = futures_util::future::join_all(attempts).await;
    assert_eq!(statuses.iter().filter(|s| **s == ThreadStatus::Migrated { messages: 3 }).count(), 1);
    assert_eq!(statuses.iter().filter(|s| **s == ThreadStatus::Existing).count(), 7, "{statuses:?}");

    let config = RunConfig::thread(format!("conv_{id}"));
    let state = app.service.graph().get_state(&config).await.unwrap();
    assert_eq!(state.values.messages.len(), 3);
    assert!(state.next.is_empty(), "written as the model's output: nothing left to run");
    let meta = state.metadata.unwrap();
    assert_eq!((meta.source.as_str(), meta.step), ("update", 0));

    // A conversation with neither a checkpoint nor legacy messages is new.
    let fresh = support::new_conversation_id();
    let lock = ConversationLock::acquire(&locks, &fresh, Duration::from_secs(5)).await.unwrap();
    let status =
        migrate::ensure_thread(&lock, app.service.graph(), app.service.saver(), &app.pool).await.unwrap();
    lock.release().await.unwrap();
    assert_eq!(status, ThreadStatus::New);
}

#[tokio::test]
async fn a_held_lock_makes_other_rounds_wait_then_report_busy() {
    // Starting the app creates the test database the lock pool connects to.
    let Some(_app) = support::start().await else { return };
    let id = support::new_conversation_id();
    let locks = support::lock_pool().await;
    let held = ConversationLock::acquire(&locks, &id, Duration::from_secs(5)).await.unwrap();
    let blocked = ConversationLock::acquire(&locks, &id, Duration::from_secs(1)).await;
    assert!(matches!(blocked, Err(mysql_chat::Error::Busy { .. })), "{blocked:?}");

    // Dropping the guard without `release` closes its session, which frees the lock.
    drop(held);
    let again = ConversationLock::acquire(&locks, &id, Duration::from_secs(10)).await.unwrap();
    again.release().await.unwrap();
}

#[tokio::test]
async fn legacy_rows_with_other_roles_are_mapped_or_skipped() {
    let Some(app) = support::start().await else { return };
    let id = support::new_conversation_id();
    let rows = [
        ("system", "Be brief."),
        ("human", "Hello, my name is Carol."),
        ("bot", "Hello Carol."),
        ("tool", "{\"weather\": \"sunny\"}"),
        ("function", "42"),
        ("", "a row without a role"),
        ("AI", "Anything else?"),
    ];
    support::insert_legacy(&app.pool, &id, &rows).await;

    // The odd rows do not make the conversation fail, neither on migration nor after.
    let first = app.chat(&id, "What is my name?").await;
    assert_eq!(first["migrated"], true);
    assert_eq!(first["answer"], "[offline] Your name is Carol, you told me earlier.");
    let second = app.chat(&id, "Who am I?").await;
    assert_eq!(second["answer"], "[offline] Your name is Carol, you told me earlier.");

    // The thread holds the rows with a known role, mapped, then the two rounds.
    let state = app.service.graph().get_state(&RunConfig::thread(format!("conv_{id}"))).await.unwrap();
    let kinds: Vec<MessageType> = state.values.messages.iter().map(Message::kind).collect();
    use MessageType::{Ai, Human, System};
    assert_eq!(kinds, [System, Human, Ai, Ai, Human, Ai, Human, Ai]);
    let texts: Vec<String> = state.values.messages[..4].iter().map(Message::text).collect();
    assert_eq!(texts, ["Be brief.", "Hello, my name is Carol.", "Hello Carol.", "Anything else?"]);

    // The display tables keep every row as it was written.
    let (status, shown) = app.get(&format!("/api/conversations/{id}/messages")).await;
    assert_eq!(status, 200);
    let roles: Vec<&str> =
        shown["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles[..rows.len()], rows.map(|(role, _)| role));
    assert_eq!(roles.len(), rows.len() + 4);
}

#[tokio::test]
async fn a_conversation_with_only_unknown_roles_starts_fresh() {
    let Some(app) = support::start().await else { return };
    let id = support::new_conversation_id();
    support::insert_legacy(&app.pool, &id, &[("tool", "result"), ("moderator", "flagged")]).await;
    let answer = app.chat(&id, "Hi, my name is Dan.").await;
    assert_eq!(answer["migrated"], false, "nothing the model could be given");
    assert_eq!(answer["answer"], "[offline] Nice to meet you, Dan! I will remember your name.");
}
