//! The Redis checkpoint stays a compact running snapshot: bounded however long the thread, and
//! untouched by a round that does not complete.

mod support;

use std::time::Duration;

use blog_assistant::routes::thread_id;
use blog_assistant::Config;
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::RunConfig;
use support::{answer, chat, ids, open_chat, start, start_with, thread_bytes, SHARED_DB};

/// Most bytes a thread may hold in Redis after [`ROUNDS`] rounds.
const MAX_THREAD_BYTES: u64 = 200 * 1024;
/// Rounds of the long-thread test.
const ROUNDS: usize = 50;

#[tokio::test]
async fn a_fifty_round_thread_holds_at_most_200_kb_in_redis() {
    let Some(t) = start_with(SHARED_DB, Duration::ZERO).await else { return };
    let (user, session) = ids("long");
    let thread = thread_id(&user, &session);
    let questions = ["Redis 快照的 TTL 设多久合适？", "上下文剪裁是怎么做的？", "冷启动怎么恢复对话？"];
    let mut after_20 = 0;
    for round in 0..ROUNDS {
        answer(&chat(&t.server.url(), &user, &session, questions[round % questions.len()]).await);
        if round + 1 == 20 {
            after_20 = thread_bytes(&t, &thread).await;
        }
    }
    let after_50 = thread_bytes(&t, &thread).await;
    eprintln!("Redis bytes of the thread: {after_20} after 20 rounds, {after_50} after {ROUNDS}");
    assert!(after_20 > 0, "the thread has no keys in Redis");
    assert!(after_50 <= MAX_THREAD_BYTES, "{after_50} bytes in Redis after {ROUNDS} rounds");

    // One checkpoint is left, and its tool results are the truncated ones.
    let keys = mnemograph_checkpoint_redis::ThreadKeys::new(&t.app_prefix(), &thread);
    let mut conn =
        redis::Client::open(t.redis_url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let checkpoints: u64 = redis::cmd("ZCARD").arg(&keys.index).query_async(&mut conn).await.unwrap();
    assert_eq!(checkpoints, 1);
    let state = t.app.agent().get_state(&RunConfig::thread(thread.as_str())).await.unwrap();
    assert!(state.values.messages.iter().all(|m| m.text().chars().count() < 2100));
}

#[tokio::test]
async fn a_client_leaving_mid_answer_leaves_the_snapshot_as_it_was() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("cancel");
    let thread = thread_id(&user, &session);
    let config = RunConfig::thread(thread.as_str());
    let first = "Redis 快照的 TTL 设多久合适？";
    answer(&chat(&t.server.url(), &user, &session, first).await);
    let before = t.app.agent().get_state(&config).await.unwrap();

    let again = "上下文剪裁是怎么做的？";
    let mut reader = open_chat(&t.server.url(), &user, &session, again).await;
    let event = tokio::time::timeout(Duration::from_secs(10), reader.next()).await.unwrap();
    assert_eq!(event.map(|e| e.0).as_deref(), Some("token"));
    drop(reader);
    // The round releases the thread once its stream is dropped; then wait past the time a
    // whole round takes, so a run that was not stopped would have committed.
    drop(tokio::time::timeout(Duration::from_secs(10), t.app.locks().lock(&thread)).await.unwrap());
    tokio::time::sleep(Duration::from_secs(2)).await;

    let after = t.app.agent().get_state(&config).await.unwrap();
    assert_eq!(after.values.messages, before.values.messages, "the cut-off round changed the snapshot");
    let id = |s: &mnemograph_core::StateSnapshot<_>| s.config.as_ref().and_then(|c| c.checkpoint_id.clone());
    assert_eq!(id(&after), id(&before), "the cut-off round committed a checkpoint");

    // Asked again, the question is in the thread once, and the answer follows the first round,
    // not the cut-off one.
    let reply = answer(&chat(&t.server.url(), &user, &session, again).await);
    assert!(!reply.contains(&format!("上一个问题「{again}」")), "the model saw the question twice: {reply}");
    let state = t.app.agent().get_state(&config).await.unwrap().values.messages;
    let asked: Vec<String> =
        state.iter().filter(|m| m.kind() == MessageType::Human).map(Message::text).collect();
    assert_eq!(asked.iter().filter(|q| *q == again).count(), 1, "{asked:?}");
    assert_eq!(state.last().map(Message::text), Some(reply));
}

#[tokio::test]
async fn a_round_that_fails_leaves_the_snapshot_as_it_was() {
    // Two apps on one Redis database and archive: one answers offline, the other's model
    // endpoint refuses every connection, so its rounds fail after taking the question in.
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("failed");
    let thread = thread_id(&user, &session);
    let config = RunConfig::thread(thread.as_str());
    answer(&chat(&t.server.url(), &user, &session, "Redis 快照的 TTL 设多久合适？").await);
    let before = t.app.agent().get_state(&config).await.unwrap();

    let refused = mnemograph_models::OpenAiConfig::new("gpt-4o-mini")
        .with_api_key("sk-test")
        .with_base_url(format!("http://127.0.0.1:{}/v1", closed_port()));
    let failing = start_app(
        Config::offline(t.redis_url.as_str(), support::mysql_url())
            .with_model(blog_assistant::ModelChoice::OpenAi(refused)),
    )
    .await;
    let again = "上下文剪裁是怎么做的？";
    let events = chat(&failing.url(), &user, &session, again).await;
    assert!(events.iter().any(|(name, _)| name == "error"), "the round did not fail: {events:?}");
    assert!(!events.iter().any(|(name, _)| name == "done"), "{events:?}");

    let after = t.app.agent().get_state(&config).await.unwrap();
    assert_eq!(after.values.messages, before.values.messages, "the failed round changed the snapshot");
    let id = |s: &mnemograph_core::StateSnapshot<_>| s.config.as_ref().and_then(|c| c.checkpoint_id.clone());
    assert_eq!(id(&after), id(&before), "the failed round committed a checkpoint");
    // The archive holds the completed round only.
    let rows = support::archived_rows(&t.app, &user, &session).await;
    assert_eq!(rows.len(), 2, "{rows:?}");

    // The offline app continues the thread with the question in it once.
    answer(&chat(&t.server.url(), &user, &session, again).await);
    let messages = t.app.agent().get_state(&config).await.unwrap().values.messages;
    let asked = messages.iter().filter(|m| m.kind() == MessageType::Human && m.text() == again).count();
    assert_eq!(asked, 1);
}

/// Serves `config`'s app on a free port (the app must connect: the test already reached both
/// servers).
async fn start_app(config: blog_assistant::Config) -> blog_assistant::Server {
    let app = blog_assistant::App::connect(&config).await.expect("connect the second app");
    blog_assistant::Server::spawn(&app, "127.0.0.1:0").await.expect("bind an ephemeral port")
}

/// A loopback port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
