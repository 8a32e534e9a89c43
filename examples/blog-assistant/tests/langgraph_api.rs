//! The assistant served over LangGraph's HTTP API by mnemograph-server, graph unchanged: a run
//! answers and its round is archived in MySQL, a thread whose Redis checkpoint is gone is rebuilt
//! from the archive before the next run, a thread without a session in its metadata is refused,
//! a round the archive refuses is a failed run that leaves the thread as it was, a round the
//! archive lost after the snapshot took it is archived before the next run's, and a user
//! reaches only its own conversations, whatever its metadata says. The round a checkpoint carries
//! for the archive never shows in the state or history served, and deleting a thread archives it
//! first when the archive lacks it. Real Redis and MariaDB, as the other service tests;
//! `tests/commit_fault.rs` fails the archive's `COMMIT` under both servers.

mod support;

use blog_assistant::archiving_saver::ROUND_KEY;
use mnemograph_core::checkpoint::Checkpointer;
use serde_json::{json, Value};
use support::langgraph::{ask, get, last_answer, new_thread, post, serve, serve_on, thread_messages};
use support::{archived_rows, fresh_database, http_client, ids, lose_the_archive, start, SHARED_DB};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_are_archived_and_a_cold_thread_is_rebuilt_from_the_archive() {
    // `start` checks Redis and MariaDB (and skips or fails as the other tests do) and gives
    // the archive to read back.
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("api");
    let (url, config) = serve(&t.redis_url, &[&user]).await;
    let token = format!("token-{user}");
    let token = token.as_str();
    let thread =
        post(format!("{url}/threads"), token, json!({ "metadata": { "session_id": session } })).await;
    let tid = thread["thread_id"].as_str().unwrap().to_owned();
    let out = post(format!("{url}/threads/{tid}/runs/wait"), token, ask("上下文剪裁是什么？")).await;
    let first = last_answer(&out);
    assert!(!first.is_empty(), "{out}");
    let rows = archived_rows(&t.app, &user, &session).await;
    let roles_and_text: Vec<(&str, &str)> = rows.iter().map(|(r, c, _)| (r.as_str(), c.as_str())).collect();
    assert_eq!(roles_and_text, [("human", "上下文剪裁是什么？"), ("ai", first.as_str())]);

    // The checkpoint expires (or Redis is flushed): the archive brings the thread back.
    let saver = blog_assistant::snapshot::connect_saver(&config).await.unwrap();
    Checkpointer::delete_thread(&saver, &tid).await.unwrap();
    let state: Value = http_client()
        .get(format!("{url}/threads/{tid}/state"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(state["checkpoint"], Value::Null, "the checkpoint is gone: {state}");
    let out = post(format!("{url}/threads/{tid}/runs/wait"), token, ask("再说一遍")).await;
    let messages = out["messages"].as_array().unwrap();
    assert_eq!(messages[0]["content"], "上下文剪裁是什么？", "rebuilt from the archive: {out}");
    assert_eq!(messages[1]["content"], first.as_str());
    assert_eq!(archived_rows(&t.app, &user, &session).await.len(), 4);

    // A thread that names no session cannot be archived: the run is refused.
    let bare = post(format!("{url}/threads"), token, json!({})).await;
    let bare_id = bare["thread_id"].as_str().unwrap();
    let out = post(format!("{url}/threads/{bare_id}/runs/wait"), token, ask("hi")).await;
    assert!(out["__error__"]["message"].as_str().unwrap().contains("session_id"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_the_archive_lost_is_archived_before_the_next_run() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("api-lost");
    let (url, _) = serve(&t.redis_url, &[&user]).await;
    let token = format!("token-{user}");
    let thread =
        post(format!("{url}/threads"), &token, json!({ "metadata": { "session_id": session } })).await;
    let tid = thread["thread_id"].as_str().unwrap().to_owned();
    let first =
        last_answer(&post(format!("{url}/threads/{tid}/runs/wait"), &token, ask("上下文剪裁是什么？")).await);

    // The archive loses the round, as when the process dies between the snapshot's commit and
    // the archive's: the next run archives it from the snapshot before its own round.
    lose_the_archive(t.app.archive().pool(), &user, &session, &tid).await;
    let second = last_answer(&post(format!("{url}/threads/{tid}/runs/wait"), &token, ask("再说一遍")).await);
    let rows = archived_rows(&t.app, &user, &session).await;
    let bubbles: Vec<(&str, &str)> = rows.iter().map(|(r, c, _)| (r.as_str(), c.as_str())).collect();
    assert_eq!(
        bubbles,
        [
            ("human", "上下文剪裁是什么？"),
            ("ai", first.as_str()),
            ("human", "再说一遍"),
            ("ai", second.as_str())
        ]
    );
}

/// A client that names someone else in its thread's metadata gets its own, empty conversation:
/// it neither reads their archive into its thread nor writes its rounds into their archive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_cannot_reach_another_users_conversation_through_metadata() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (alice, session) = ids("owner");
    let (mallory, _) = ids("other");
    let (url, _) = serve(&t.redis_url, &[&alice, &mallory]).await;
    let (alice_token, mallory_token) = (format!("token-{alice}"), format!("token-{mallory}"));
    let hers =
        post(format!("{url}/threads"), &alice_token, json!({ "metadata": { "session_id": session } })).await;
    let hers = hers["thread_id"].as_str().unwrap().to_owned();
    post(format!("{url}/threads/{hers}/runs/wait"), &alice_token, ask("我的秘密问题")).await;
    assert_eq!(archived_rows(&t.app, &alice, &session).await.len(), 2);

    let metadata = json!({ "metadata": { "user_id": alice, "owner": alice, "session_id": session } });
    let theirs = post(format!("{url}/threads"), &mallory_token, metadata).await;
    assert_eq!(theirs["metadata"]["owner"], mallory.as_str(), "{theirs}");
    let theirs = theirs["thread_id"].as_str().unwrap().to_owned();
    let out = post(format!("{url}/threads/{theirs}/runs/wait"), &mallory_token, ask("她问了什么？")).await;
    let messages = out["messages"].as_array().unwrap();
    assert!(messages.iter().all(|m| m["content"] != "我的秘密问题"), "her archive leaked: {out}");
    assert_eq!(archived_rows(&t.app, &alice, &session).await.len(), 2, "nothing written into hers");
    assert_eq!(archived_rows(&t.app, &mallory, &session).await.len(), 2, "his round is his");
    let read = http_client()
        .get(format!("{url}/threads/{hers}/state"))
        .bearer_auth(&mallory_token)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), reqwest::StatusCode::NOT_FOUND);
}

/// The database of the refusal test, whose tables get a trigger: no other test uses it.
const REFUSING_DATABASE: &str = "blog_assistant_test_refusing_api";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_the_archive_refuses_is_reported_to_the_client_and_stored_nowhere() {
    let Some(database) = fresh_database(REFUSING_DATABASE).await else { return };
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("api-refused");
    let (url, config) = serve_on(&t.redis_url, &database, &[&user]).await;
    let archive = blog_assistant::archive::Archive::connect(&config.mysql_url).await.unwrap();
    let token = format!("token-{user}");
    let thread =
        post(format!("{url}/threads"), &token, json!({ "metadata": { "session_id": session } })).await;
    let tid = thread["thread_id"].as_str().unwrap().to_owned();
    post(format!("{url}/threads/{tid}/runs/wait"), &token, ask("上下文剪裁是什么？")).await;
    let before = thread_messages(&url, &token, &tid).await;
    let count = |sql: &'static str| {
        let pool = archive.pool().clone();
        async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&pool).await.unwrap() }
    };
    assert_eq!(count("SELECT COUNT(*) FROM chat_messages").await, 2);
    assert_eq!(count("SELECT COUNT(*) FROM tool_invocations").await, 2);

    // MySQL refuses the audit rows: the round's transaction fails after its two messages.
    sqlx::raw_sql(
        "CREATE TRIGGER refuse_audit BEFORE INSERT ON tool_invocations FOR EACH ROW \
         SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the test refuses the audit'",
    )
    .execute(archive.pool())
    .await
    .expect("create the trigger");
    let out = post(format!("{url}/threads/{tid}/runs/wait"), &token, ask("再说一遍")).await;
    let error = out["__error__"]["message"].as_str().unwrap_or_else(|| panic!("no error reported: {out}"));
    assert!(error.contains("MySQL archive failed"), "{out}");
    assert_eq!(thread_messages(&url, &token, &tid).await, before, "the refused round changed the thread");
    assert_eq!(count("SELECT COUNT(*) FROM chat_messages").await, 2, "half a round was archived");
    assert_eq!(count("SELECT COUNT(*) FROM tool_invocations").await, 2);

    // Accepted again, the retry is in both stores once.
    sqlx::raw_sql("DROP TRIGGER refuse_audit").execute(archive.pool()).await.unwrap();
    let out = post(format!("{url}/threads/{tid}/runs/wait"), &token, ask("再说一遍")).await;
    let messages = out["messages"].as_array().unwrap_or_else(|| panic!("no messages: {out}"));
    let asked = messages.iter().filter(|m| m["type"] == "human" && m["content"] == "再说一遍").count();
    assert_eq!(asked, 1, "{out}");
    assert_eq!(count("SELECT COUNT(*) FROM chat_messages").await, 4);
}

/// The round a checkpoint carries for the archive is the saver's own record: the state and the
/// history the API serves show the checkpoints' metadata without it, while Redis keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_and_history_leave_out_the_round_the_checkpoint_carries_for_the_archive() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("api-hidden");
    let (url, _) = serve(&t.redis_url, &[&user]).await;
    let token = format!("token-{user}");
    let tid = new_thread(&url, &token, &session).await;
    let question = "上下文剪裁是什么？";
    let reply = last_answer(&post(format!("{url}/threads/{tid}/runs/wait"), &token, ask(question)).await);

    let state = get(format!("{url}/threads/{tid}/state"), &token).await;
    let checkpoint = state["checkpoint_id"].as_str().unwrap_or_else(|| panic!("no checkpoint: {state}"));
    let served = [
        state.clone(),
        get(format!("{url}/threads/{tid}/state/{checkpoint}"), &token).await,
        post(
            format!("{url}/threads/{tid}/state/checkpoint"),
            &token,
            json!({ "checkpoint": { "checkpoint_id": checkpoint } }),
        )
        .await,
        get(format!("{url}/threads/{tid}/history"), &token).await,
        post(format!("{url}/threads/{tid}/history"), &token, json!({ "limit": 10 })).await,
    ];
    for body in &served {
        let text = body.to_string();
        assert!(!text.contains(ROUND_KEY), "the round shows: {text}");
        assert!(text.contains(&format!("\"session_id\":\"{session}\"")), "no metadata shown: {text}");
    }
    assert_eq!(served[3].as_array().map(Vec::len), Some(1), "{}", served[3]);

    // Redis keeps the round, and so it is what archives it when the archive lacks it.
    let (kept, round) = t.app.saver().latest_round(&tid).await.unwrap().expect("Redis keeps the round");
    assert_eq!(kept, checkpoint);
    assert_eq!((round.question.as_str(), round.answer.as_str()), (question, reply.as_str()));
}

/// Deleting a thread whose last round the archive lost archives that round first: the archive
/// keeps every stored round, whatever happens to the thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_thread_leaves_its_last_round_in_the_archive() {
    let Some(t) = start(SHARED_DB).await else { return };
    let (user, session) = ids("api-deleted");
    let (url, _) = serve(&t.redis_url, &[&user]).await;
    let token = format!("token-{user}");
    let tid = new_thread(&url, &token, &session).await;
    let question = "上下文剪裁是什么？";
    let reply = last_answer(&post(format!("{url}/threads/{tid}/runs/wait"), &token, ask(question)).await);
    lose_the_archive(t.app.archive().pool(), &user, &session, &tid).await;

    let deleted =
        http_client().delete(format!("{url}/threads/{tid}")).bearer_auth(&token).send().await.unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert!(t.app.saver().latest_round(&tid).await.unwrap().is_none(), "the checkpoint is still there");
    let rows = archived_rows(&t.app, &user, &session).await;
    let bubbles: Vec<(&str, &str)> = rows.iter().map(|(r, c, _)| (r.as_str(), c.as_str())).collect();
    assert_eq!(bubbles, [("human", question), ("ai", reply.as_str())]);
}
