//! Chat rounds over HTTP against the real database: the thread continues between requests, the
//! streaming endpoint sends tokens then `done`, every round lands in the legacy tables, and bad
//! input gets a clear error.

mod support;

use mnemograph_core::checkpoint::ListOptions;
use mnemograph_core::RunConfig;
use serde_json::json;

#[tokio::test]
async fn chat_rounds_continue_the_thread() {
    let Some(app) = support::start().await else { return };
    let id = support::new_conversation_id();

    let first = app.chat(&id, "Hi, my name is Alice.").await;
    assert_eq!(first["conversation_id"], id.as_str());
    assert_eq!(first["thread_id"], format!("conv_{id}"));
    assert_eq!(first["migrated"], false, "a new conversation has nothing to migrate");
    assert_eq!(first["answer"], "[offline] Nice to meet you, Alice! I will remember your name.");

    // A separate request: the model only knows the name through the restored checkpoint.
    let second = app.chat(&id, "What is my name?").await;
    assert_eq!(second["answer"], "[offline] Your name is Alice, you told me earlier.");

    // One thread, its checkpoints chained: input, after START, after trimming, after the model,
    // per round.
    let config = RunConfig::thread(format!("conv_{id}"));
    let history = app.service.graph().get_state_history(&config, ListOptions::new()).await.unwrap();
    assert_eq!(history.len(), 8);
    for pair in history.windows(2) {
        let parent = pair[0].parent_config.as_ref().and_then(|c| c.checkpoint_id.clone());
        assert_eq!(parent, pair[1].config.as_ref().and_then(|c| c.checkpoint_id.clone()));
    }
    let texts: Vec<String> = history[0].values.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts.len(), 4);
    assert_eq!(texts[3], second["answer"].as_str().unwrap());

    // The display tables hold the same rounds.
    let (status, shown) = app.get(&format!("/api/conversations/{id}/messages")).await;
    assert_eq!(status, 200);
    assert_eq!(shown["checkpointed"], true);
    assert_eq!(shown["title"], "Hi, my name is Alice.");
    let rows: Vec<(&str, &str)> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["content"].as_str().unwrap()))
        .collect();
    let roles: Vec<&str> = rows.iter().map(|r| r.0).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    let contents: Vec<&str> = rows.iter().map(|r| r.1).collect();
    assert_eq!(contents, texts);
}

#[tokio::test]
async fn a_conversation_without_id_gets_a_new_one() {
    let Some(app) = support::start().await else { return };
    let (status, answer) = app.post("/api/chat", &json!({ "message": "你好，我叫小明。" })).await;
    assert_eq!(status, 200, "{answer}");
    let id = answer["conversation_id"].as_str().unwrap();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    assert_eq!(answer["answer"], "[offline] Nice to meet you, 小明! I will remember your name.");
    let again = app.chat(id, "我叫什么？").await;
    assert_eq!(again["answer"], "[offline] Your name is 小明, you told me earlier.");
}

#[tokio::test]
async fn streaming_emits_tokens_then_done() {
    let Some(app) = support::start().await else { return };
    let id = support::new_conversation_id();
    app.chat(&id, "My name is Grace.").await;

    let events = app.chat_stream(&id, "What is my name?").await;
    let (last, tokens) = events.split_last().expect("events");
    assert_eq!(last.0, "done", "{events:?}");
    assert!(tokens.len() > 5, "the answer comes in pieces: {tokens:?}");
    assert!(tokens.iter().all(|(event, _)| event == "token"), "{events:?}");
    let streamed: String = tokens.iter().map(|(_, data)| data["text"].as_str().unwrap()).collect();
    assert_eq!(streamed, "[offline] Your name is Grace, you told me earlier.");
    assert_eq!(last.1["answer"], streamed.as_str());
    assert_eq!(last.1["thread_id"], format!("conv_{id}"));

    // `done` is sent after the round is saved.
    let (_, shown) = app.get(&format!("/api/conversations/{id}/messages")).await;
    let messages = shown["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[3]["content"], streamed.as_str());
    let state = app.service.graph().get_state(&RunConfig::thread(format!("conv_{id}"))).await.unwrap();
    assert_eq!(state.values.messages.last().unwrap().text(), streamed);
}

#[tokio::test]
async fn bad_requests_get_clear_errors() {
    let Some(app) = support::start().await else { return };
    let (status, body) =
        app.post("/api/chat", &json!({ "conversation_id": "x' OR 1=1 --", "message": "hi" })).await;
    assert_eq!(status, 400);
    assert!(body["error"].as_str().unwrap().contains("invalid conversation id"), "{body}");

    let (status, body) = app.post("/api/chat", &json!({ "message": "   " })).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("the message is empty")));

    let unknown = support::new_conversation_id();
    let (status, body) = app.get(&format!("/api/conversations/{unknown}/messages")).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"], format!("no conversation {unknown:?}"));
}
