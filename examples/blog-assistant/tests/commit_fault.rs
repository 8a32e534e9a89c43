//! A round whose MySQL `COMMIT` fails after its snapshot reached Redis (the round's commit
//! point), by a real fault on the link to MariaDB ([`support::commit_fault`]), under the plain
//! service and under the LangGraph API server: the client is told the round is stored, the
//! thread holds its question once, and the archive gets it exactly once: at once when the
//! `COMMIT`'s retry gets through or the `COMMIT` took effect unseen, otherwise from the snapshot
//! before anything reads the archive or replaces the snapshot. While MySQL still fails, whatever
//! would need the round archived first (the history, the next round, a state update) fails with
//! the error and changes nothing.

mod support;

use std::time::Duration;

use blog_assistant::model::OfflineModel;
use blog_assistant::routes::thread_id;
use mnemograph_core::messages::MessageType;
use mnemograph_core::RunConfig;
use mnemograph_models::ChatModelExt;
use reqwest::StatusCode;
use serde_json::{json, Value};
use support::commit_fault::{CommitFault, CommitFaultProxy};
use support::langgraph::{ask, last_answer, new_thread, post, serve_on, thread_messages, times_asked};
use support::{answer, archived_rows, chat, http_client, ids, start, start_custom, SseEvent, TestApp};
use support::{SHARED_DB, TEST_DATABASE};

/// Until [`CommitFaultProxy::heal`].
const UNTIL_HEALED: usize = usize::MAX;

/// The service archiving through `proxy` into the tests' database.
async fn start_behind(proxy: &CommitFaultProxy) -> Option<TestApp> {
    let model = OfflineModel::new(Duration::ZERO).shared();
    start_custom(SHARED_DB, &proxy.url(TEST_DATABASE), model).await
}

/// `(role, content)` of the session's archived rows, oldest first.
async fn bubbles(t: &TestApp, user: &str, session: &str) -> Vec<(String, String)> {
    archived_rows(&t.app, user, session).await.into_iter().map(|(role, content, _)| (role, content)).collect()
}

/// The rounds of `thread` noted in `archived_rounds`, and its rows in `tool_invocations`.
async fn noted(t: &TestApp, thread: &str) -> (i64, i64) {
    let count = |table: &str| {
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE thread_id = ?");
        let pool = t.app.archive().pool().clone();
        let thread = thread.to_owned();
        async move { sqlx::query_scalar::<_, i64>(&sql).bind(thread).fetch_one(&pool).await.unwrap() }
    };
    (count("archived_rounds").await, count("tool_invocations").await)
}

/// `(role, content)` pairs of questions and answers, in order.
fn rounds(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .flat_map(|(q, a)| [("human".to_owned(), (*q).to_owned()), ("ai".to_owned(), (*a).to_owned())])
        .collect()
}

/// How many times the snapshot of `thread` holds `question`.
async fn asked(t: &TestApp, thread: &str, question: &str) -> usize {
    let messages = t.app.agent().get_state(&RunConfig::thread(thread)).await.unwrap().values.messages;
    messages.iter().filter(|m| m.kind() == MessageType::Human && m.text() == question).count()
}

/// `GET /history` of the session: its status and body.
async fn history(t: &TestApp, user: &str, session: &str) -> (StatusCode, Value) {
    let url = format!("{}/history?user_id={user}&session_id={session}", t.server.url());
    let response = http_client().get(url).send().await.expect("GET /history");
    (response.status(), response.json().await.expect("a JSON body"))
}

/// The `(role, content)` bubbles of a `GET /history` answer.
fn history_bubbles(body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().unwrap_or_else(|| panic!("no messages: {body}"));
    messages
        .iter()
        .map(|m| (m["role"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned()))
        .collect()
}

/// Asserts the round ended `done` with no `error` event: the client is told it is stored.
fn stored(events: &[SseEvent]) -> String {
    assert!(!events.iter().any(|(name, _)| name == "error"), "{events:?}");
    answer(events)
}

#[tokio::test]
async fn a_round_whose_commit_is_cut_is_archived_once_from_the_snapshot_before_it_is_read() {
    let proxy = CommitFaultProxy::start().await;
    let Some(t) = start_behind(&proxy).await else { return };
    let (user, session) = ids("cut");
    let thread = thread_id(&user, &session);
    let url = t.server.url();
    let first = "Redis 快照的 TTL 设多久合适？";
    let one = stored(&chat(&url, &user, &session, first).await);
    assert_eq!(proxy.fired(), 0);

    // Every COMMIT is cut before it reaches MariaDB: the round's, then its retry's.
    proxy.arm(CommitFault::Cut, UNTIL_HEALED);
    let second = "上下文剪裁是怎么做的？";
    let two = stored(&chat(&url, &user, &session, second).await);
    assert_eq!(proxy.fired(), 2, "the round's COMMIT and its retry");
    assert_eq!(bubbles(&t, &user, &session).await, rounds(&[(first, &one)]), "a cut COMMIT wrote rows");
    assert_eq!(noted(&t, &thread).await, (1, 2));
    assert_eq!(asked(&t, &thread, second).await, 1);
    let (_, round) =
        t.app.saver().latest_round(&thread).await.unwrap().expect("the snapshot carries the round");
    assert_eq!((round.question.as_str(), round.answer.as_str()), (second, two.as_str()));

    // MySQL still fails: the history and the next question say so rather than skip the round.
    let (status, body) = history(&t, &user, &session).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let third = "冷启动怎么恢复对话？";
    let refused = http_client()
        .post(format!("{url}/chat/stream"))
        .json(&json!({ "user_id": user, "session_id": session, "message": third }))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(proxy.fired(), 4);
    assert_eq!(asked(&t, &thread, third).await, 0, "the refused question reached the thread");

    // Healed: the history archives the round from the snapshot, once however often it is read.
    proxy.heal();
    for _ in 0..2 {
        let (status, body) = history(&t, &user, &session).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(history_bubbles(&body), rounds(&[(first, &one), (second, &two)]));
    }
    assert_eq!(noted(&t, &thread).await, (2, 4));

    // The next round comes after it, and every question is in the thread and the archive once.
    let three = stored(&chat(&url, &user, &session, third).await);
    assert_eq!(bubbles(&t, &user, &session).await, rounds(&[(first, &one), (second, &two), (third, &three)]));
    assert_eq!(noted(&t, &thread).await, (3, 6));
    for question in [first, second, third] {
        assert_eq!(asked(&t, &thread, question).await, 1, "{question}");
    }
}

#[tokio::test]
async fn a_commit_whose_answer_is_lost_or_that_is_cut_once_is_archived_once_at_once() {
    let proxy = CommitFaultProxy::start().await;
    let Some(t) = start_behind(&proxy).await else { return };
    let (user, session) = ids("lost-reply");
    let thread = thread_id(&user, &session);
    let url = t.server.url();

    // MariaDB commits, the answer never arrives: the retry finds the round archived.
    proxy.arm(CommitFault::LoseReply, 1);
    let first = "Redis 快照的 TTL 设多久合适？";
    let one = stored(&chat(&url, &user, &session, first).await);
    assert_eq!(proxy.fired(), 1);
    assert_eq!(bubbles(&t, &user, &session).await, rounds(&[(first, &one)]));
    assert_eq!(noted(&t, &thread).await, (1, 2));

    // The COMMIT is cut once: the retry archives the round.
    proxy.arm(CommitFault::Cut, 1);
    let second = "上下文剪裁是怎么做的？";
    let two = stored(&chat(&url, &user, &session, second).await);
    assert_eq!(proxy.fired(), 2);
    assert_eq!(bubbles(&t, &user, &session).await, rounds(&[(first, &one), (second, &two)]));
    assert_eq!(noted(&t, &thread).await, (2, 4));

    let (status, body) = history(&t, &user, &session).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(history_bubbles(&body), rounds(&[(first, &one), (second, &two)]));
    for question in [first, second] {
        assert_eq!(asked(&t, &thread, question).await, 1, "{question}");
    }
}

/// `POST /threads/{id}/state` adding an AI note as the model node: its status and body.
async fn add_note(url: &str, token: &str, thread: &str, note: &str) -> (StatusCode, String) {
    let body = json!({ "values": { "messages": [{ "type": "ai", "content": note }] }, "as_node": "model" });
    let response = http_client()
        .post(format!("{url}/threads/{thread}/state"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("the API answers");
    (response.status(), response.text().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_the_api_a_cut_commit_is_a_stored_run_and_what_would_replace_it_first_waits_for_mysql() {
    let proxy = CommitFaultProxy::start().await;
    // `start` checks Redis and MariaDB (skipping or failing as the other tests do) and reads
    // the archive directly, past the proxy.
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("api-cut");
    let (url, _) = serve_on(&t.redis_url, &proxy.url(TEST_DATABASE), &[&user]).await;
    let token = format!("token-{user}");
    let tid = new_thread(&url, &token, &session).await;
    let run = |question: &str| post(format!("{url}/threads/{tid}/runs/wait"), &token, ask(question));
    let first = "上下文剪裁是什么？";
    let one = last_answer(&run(first).await);

    // The run's COMMIT and its retry are cut: the run succeeded, its round is in the snapshot.
    proxy.arm(CommitFault::Cut, UNTIL_HEALED);
    let second = "再说一遍";
    let out = run(second).await;
    assert!(out.get("__error__").is_none(), "{out}");
    let two = last_answer(&out);
    assert_eq!(proxy.fired(), 2);
    assert_eq!(bubbles(&t, &user, &session).await, rounds(&[(first, &one)]));
    assert_eq!(times_asked(&url, &token, &tid, second).await, 1);

    // MySQL still fails: the next run is refused with the error, waited for or streamed, and
    // the thread is unchanged.
    let before = thread_messages(&url, &token, &tid).await;
    let third = "Redis 快照的 TTL 设多久合适？";
    let out = run(third).await;
    let error = out["__error__"]["message"].as_str().unwrap_or_else(|| panic!("no error reported: {out}"));
    assert!(error.contains("MySQL archive failed"), "{out}");
    let streamed = http_client()
        .post(format!("{url}/threads/{tid}/runs/stream"))
        .bearer_auth(&token)
        .json(&ask(third))
        .send()
        .await
        .expect("the API answers")
        .text()
        .await
        .unwrap_or_default();
    assert!(streamed.contains("event: error") && streamed.contains("MySQL archive failed"), "{streamed}");
    assert_eq!(thread_messages(&url, &token, &tid).await, before, "the refused runs changed the thread");

    // A state update would replace the checkpoint that carries the round: refused too, and the
    // checkpoint is kept.
    let (status, body) = add_note(&url, &token, &tid, "An editor's note.").await;
    assert!(!status.is_success(), "{status}: {body}");
    assert_eq!(proxy.fired(), 5);
    let (_, round) = t.app.saver().latest_round(&tid).await.unwrap().expect("the checkpoint is kept");
    assert_eq!((round.question.as_str(), round.answer.as_str()), (second, two.as_str()));

    // Deleting the thread would drop the checkpoint that carries the round: refused, and the
    // thread is still there, its round with it, to be deleted once MySQL is back.
    let deleted = http_client()
        .delete(format!("{url}/threads/{tid}"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("the API answers");
    assert!(!deleted.status().is_success(), "{}", deleted.status());
    let kept = http_client()
        .get(format!("{url}/threads/{tid}"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("the API answers");
    assert_eq!(kept.status(), StatusCode::OK, "the thread's record went with a failed delete");
    assert!(t.app.saver().latest_round(&tid).await.unwrap().is_some(), "the round's checkpoint is kept");

    // Healed: the update archives the round before replacing its checkpoint, then the next run
    // comes after it; every question is in the thread and the archive once.
    proxy.heal();
    let (status, body) = add_note(&url, &token, &tid, "An editor's note.").await;
    assert!(status.is_success(), "{status}: {body}");
    assert!(t.app.saver().latest_round(&tid).await.unwrap().is_none(), "the note carries no round");
    assert_eq!(bubbles(&t, &user, &session).await, rounds(&[(first, &one), (second, &two)]));
    assert_eq!(noted(&t, &tid).await.0, 2);
    let three = last_answer(&run(third).await);
    assert_eq!(bubbles(&t, &user, &session).await, rounds(&[(first, &one), (second, &two), (third, &three)]));
    for question in [first, second, third] {
        assert_eq!(times_asked(&url, &token, &tid, question).await, 1, "{question}");
    }
}
