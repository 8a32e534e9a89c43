//! The service end to end over real Redis and MariaDB: a streamed round and its archive, a
//! client that disconnects mid-answer, a flushed Redis rebuilt from the archive, and long tool
//! results truncated in the checkpoint.

mod support;

use std::time::Duration;

use blog_assistant::routes::thread_id;
use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_core::messages::{Message, MessageType};
use mnemograph_core::RunConfig;
use serde_json::{json, Value};
use support::{answer, archived_rows, chat, ids, open_chat, start, SseEvent, FLUSHED_DB, SHARED_DB};

fn names(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(|(n, _)| n.as_str()).collect()
}

fn position(events: &[SseEvent], name: &str) -> usize {
    events.iter().position(|(n, _)| n == name).unwrap_or_else(|| panic!("no {name} event: {events:?}"))
}

fn last_position(events: &[SseEvent], name: &str) -> usize {
    events.iter().rposition(|(n, _)| n == name).unwrap_or_else(|| panic!("no {name} event: {events:?}"))
}

#[tokio::test]
async fn a_round_streams_tokens_tool_calls_citations_done_and_is_archived() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("round");
    let question = "Redis 快照的 TTL 设多久合适？";
    let events = chat(&t.server.url(), &user, &session, question).await;

    // Order: tokens before the first tool call, the answer's tokens after the last one, then
    // citations, then done, and nothing after done.
    let n = names(&events);
    assert!(!n.contains(&"error"), "{events:?}");
    let calls: Vec<&Value> = events.iter().filter(|(n, _)| n == "tool_call").map(|(_, v)| v).collect();
    let called: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(called, ["search_blog", "get_article_content"]);
    assert_eq!(calls[0]["args"], json!({ "query": question }));
    assert_eq!(calls[1]["args"], json!({ "id": "redis-checkpoint" }));
    let (first_call, last_call) = (position(&events, "tool_call"), last_position(&events, "tool_call"));
    assert!(position(&events, "token") < first_call, "{n:?}");
    assert!(last_position(&events, "token") > last_call, "{n:?}");
    let citations_at = position(&events, "citations");
    assert!(citations_at > last_position(&events, "token"), "{n:?}");
    assert_eq!(n[citations_at + 1..], ["done"], "{n:?}");

    // The answer's tokens are exactly the answer, which cites the article it read.
    let streamed: String = events[last_call..]
        .iter()
        .filter(|(n, _)| n == "token")
        .map(|(_, v)| v["text"].as_str().unwrap())
        .collect();
    let answer = answer(&events);
    assert_eq!(streamed, answer);
    let article = t.app.corpus().get("redis-checkpoint").unwrap();
    assert!(answer.contains(&article.title) && answer.contains(&article.url), "{answer}");
    let citations = &events[citations_at].1["citations"];
    assert_eq!(citations, &json!([{ "title": article.title, "url": article.url }]));
    assert_eq!(events.last().unwrap().1["thread_id"], thread_id(&user, &session));

    // Archived: exactly the question and the answer, with the citations on the answer.
    let rows = archived_rows(&t.app, &user, &session).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!((rows[0].0.as_str(), rows[0].1.as_str(), &rows[0].2), ("human", question, &None));
    assert_eq!((rows[1].0.as_str(), rows[1].1.as_str()), ("ai", answer.as_str()));
    let stored: Value = serde_json::from_str(rows[1].2.as_deref().unwrap()).unwrap();
    assert_eq!(&stored, citations);

    // And /history returns those bubbles.
    let url = format!("{}/history?user_id={user}&session_id={session}", t.server.url());
    let history: Value = support::http_client().get(url).send().await.unwrap().json().await.unwrap();
    let bubbles: Vec<(&str, &str)> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    assert_eq!(bubbles, [("human", question), ("ai", answer.as_str())]);
    assert_eq!(history["messages"][0]["citations"], Value::Null);
    assert_eq!(&history["messages"][1]["citations"], citations);
    assert!(history["messages"][1]["created_at"].as_str().unwrap().ends_with('Z'));

    // The thread's checkpoint keys in Redis expire in 7 days.
    let saver = RedisCheckpointer::builder().key_prefix("blog:cp").connect(&t.redis_url).await.unwrap();
    let keys = saver.thread_keys(&thread_id(&user, &session));
    let mut conn =
        redis::Client::open(t.redis_url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let ttl_ms: i64 = redis::cmd("PTTL").arg(&keys.index).query_async(&mut conn).await.unwrap();
    let week_ms = 7 * 24 * 3600 * 1000;
    assert!(ttl_ms > week_ms - 60_000 && ttl_ms <= week_ms, "PTTL {ttl_ms}");
}

#[tokio::test]
async fn a_client_leaving_mid_answer_leaves_no_archive_and_the_run_is_cancelled() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("leave");
    let mut reader = open_chat(&t.server.url(), &user, &session, "SSE 断开了会怎样？").await;
    let first = tokio::time::timeout(Duration::from_secs(10), reader.next()).await.unwrap();
    assert_eq!(first.map(|e| e.0).as_deref(), Some("token"));
    drop(reader); // the client goes away after the first token

    // Wait well past the time a whole round takes, then look.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(archived_rows(&t.app, &user, &session).await.is_empty(), "a cut-off round was archived");
    let state = t.app.agent().get_state(&RunConfig::thread(thread_id(&user, &session))).await.unwrap();
    let answered =
        state.values.messages.iter().any(|m| m.kind() == MessageType::Ai && m.tool_calls().is_empty());
    assert!(!answered, "the run went on to answer after the client left: {:?}", state.values.messages);

    // The thread is still usable: the next round completes and only it is archived.
    let events = chat(&t.server.url(), &user, &session, "上下文剪裁是怎么做的？").await;
    answer(&events);
    let rows = archived_rows(&t.app, &user, &session).await;
    let roles: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(roles, ["human", "ai"]);
    assert_eq!(rows[0].1, "上下文剪裁是怎么做的？");
}

#[tokio::test]
async fn a_flushed_redis_is_rebuilt_from_the_archive_before_answering() {
    // FLUSHDB: only this test uses this database index.
    let Some(t) = start(FLUSHED_DB).await else { return };
    let (user, session) = ids("flush");
    let config = RunConfig::thread(thread_id(&user, &session));
    let first = "冷启动怎么恢复对话？";
    answer(&chat(&t.server.url(), &user, &session, first).await);
    assert!(t.app.agent().get_state(&config).await.unwrap().config.is_some());

    let mut conn =
        redis::Client::open(t.redis_url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    redis::cmd("FLUSHDB").query_async::<()>(&mut conn).await.unwrap();
    assert!(t.app.agent().get_state(&config).await.unwrap().config.is_none(), "the checkpoint is gone");

    let reply = answer(&chat(&t.server.url(), &user, &session, "我之前问了什么？").await);
    assert!(reply.contains(&format!("「{first}」")), "the answer lost the context: {reply}");

    // The rebuilt thread holds the archived pair (no tool messages), then the new round.
    let state = t.app.agent().get_state(&config).await.unwrap().values.messages;
    let kinds: Vec<(MessageType, String)> = state.iter().map(|m| (m.kind(), m.text())).collect();
    assert_eq!(kinds[0], (MessageType::Human, first.to_owned()));
    assert_eq!(kinds[1].0, MessageType::Ai);
    assert_eq!(kinds[2], (MessageType::Human, "我之前问了什么？".to_owned()));
    assert_eq!(kinds[3], (MessageType::Ai, reply.clone()));
    assert_eq!(kinds.len(), 4, "{kinds:?}");
    assert_eq!(archived_rows(&t.app, &user, &session).await.len(), 4);
}

#[tokio::test]
async fn long_tool_results_are_truncated_in_the_checkpoint_and_never_archived() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("trunc");
    let events = chat(&t.server.url(), &user, &session, "上下文剪裁是怎么做的？").await;
    let reply = answer(&events);
    let full =
        blog_assistant::tools::article_output(t.app.corpus(), "context-trimming").unwrap().content.text();
    let full_chars = full.chars().count();
    assert!(full_chars > 2000);

    // Read the thread back from Redis: the article's ToolMessage is cut to 2000 characters.
    let state = t.app.agent().get_state(&RunConfig::thread(thread_id(&user, &session))).await.unwrap();
    let tool: &Message = state
        .values
        .messages
        .iter()
        .find(|m| m.name() == Some("get_article_content"))
        .expect("the article's ToolMessage is in the checkpoint");
    let stored = tool.text();
    let kept: String = full.chars().take(2000).collect();
    assert!(stored.starts_with(&kept));
    assert!(stored.ends_with(&format!("[truncated: 2000 of {full_chars} characters kept]")), "{stored}");
    assert!(stored.chars().count() < 2100);

    // The archive has only the question and the answer, neither holding the article.
    let rows = archived_rows(&t.app, &user, &session).await;
    let roles: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(roles, ["human", "ai"]);
    assert_eq!(rows[1].1, reply);
    assert!(rows.iter().all(|r| r.1.chars().count() < 1000));
}

#[tokio::test]
async fn bad_requests_get_a_400_naming_the_field() {
    let Some(t) = start(SHARED_DB).await else { return };
    let client = support::http_client();
    let res = client.get(format!("{}/history?user_id=u1", t.server.url())).send().await.unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "invalid `session_id`: is required");

    let bad = json!({ "user_id": "a:b", "session_id": "s", "message": "hi" });
    let res = client.post(format!("{}/chat/stream", t.server.url())).json(&bad).send().await.unwrap();
    assert_eq!(res.status(), 400);
    let body: Value = res.json().await.unwrap();
    assert!(body["error"].as_str().unwrap().starts_with("invalid `user_id`"), "{body}");

    let page = client.get(t.server.url()).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("黑白梦博客助手"));
}
