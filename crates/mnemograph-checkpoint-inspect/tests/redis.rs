//! The binary against real Redis threads written by `RedisCheckpointer` from a real graph run,
//! under a key prefix of their own (`?key-prefix=` in the URL) and unique thread ids.

mod support;

use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, Checkpointer};
use mnemograph_checkpoint_redis::RedisCheckpointer;

use support::*;

/// The key prefix of these tests; no other test or helper writes under it.
const PREFIX: &str = "inspect-test:cp";

fn server_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned())
}

/// The URL the binary gets: the server plus this test's prefix.
fn url() -> String {
    let base = server_url();
    let sep = if base.contains('?') { '&' } else { '?' };
    format!("{base}{sep}key-prefix={PREFIX}")
}

/// A saver under [`PREFIX`] whose threads expire after an hour, should a run die before
/// deleting them; `None` when the server is unreachable.
async fn saver() -> Option<RedisCheckpointer> {
    let server = server_url();
    // A plain connection first: the saver's reconnecting manager would retry a refused one.
    let probe = async { redis::Client::open(server.as_str())?.get_multiplexed_async_connection().await };
    match tokio::time::timeout(Duration::from_secs(2), probe).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return unavailable("Redis", &e.to_string()),
        Err(_) => return unavailable("Redis", "no answer within 2 s"),
    }
    let builder = RedisCheckpointer::builder().key_prefix(PREFIX).ttl(Duration::from_secs(3600));
    Some(builder.connect(&server).await.expect("connect the saver"))
}

#[tokio::test]
async fn a_real_thread_reads_back_decoded() {
    let Some(saver) = saver().await else { return };
    check_real_thread(saver, &url(), "redis").await;
}

#[tokio::test]
async fn corrupt_fields_are_shown_next_to_the_rest() {
    let Some(saver) = saver().await else { return };
    let thread = unique("redis-corrupt");
    populate(saver.clone(), &thread).await;
    let keys = saver.thread_keys(&thread);
    let mut conn =
        redis::Client::open(server_url()).unwrap().get_multiplexed_async_connection().await.unwrap();
    // The `retrieved` blob: a well-formed field whose msgpack payload is not.
    let fields: Vec<String> = redis::cmd("HKEYS").arg(&keys.blobs).query_async(&mut conn).await.unwrap();
    let field =
        fields.iter().find(|f| f.split(':').nth(1) == Some(hex::encode("retrieved").as_str())).expect("blob");
    let mut wrapped = Vec::new();
    let record = rmpv::Value::Array(vec!["msgpack".into(), rmpv::Value::Binary(vec![0xc1])]);
    rmpv::encode::write_value(&mut wrapped, &record).unwrap();
    let () =
        redis::cmd("HSET").arg(&keys.blobs).arg(field).arg(wrapped).query_async(&mut conn).await.unwrap();
    // The interrupt write: not even the saver's field format.
    let writes: Vec<String> = redis::cmd("HKEYS").arg(&keys.writes).query_async(&mut conn).await.unwrap();
    // `__interrupt__` is stored under LangGraph's fixed index -3.
    let interrupt = writes.iter().find(|f| f.ends_with(":-3")).expect("the interrupt write");
    let () = redis::cmd("HSET")
        .arg(&keys.writes)
        .arg(interrupt)
        .arg("garbage")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(saver.get_tuple(&CheckpointConfig::thread(&thread)).await.is_err());

    let cp = inspect_json(&[&url(), "show", &thread]);
    let bad = &cp["channel_values"]["retrieved"]["$undecodable"];
    assert_eq!((bad["type"].as_str(), bad["base64"].as_str()), (Some("msgpack"), Some("wQ==")), "{cp}");
    assert_eq!(cp["channel_values"]["messages"][0]["content"], QUESTION, "the rest still decodes");
    let write = &cp["pending_writes"][0]["value"]["$undecodable"];
    assert_eq!(write["base64"], "Z2FyYmFnZQ==", "{cp}");
    assert!(write["error"].as_str().unwrap().contains("msgpack"), "{write}");
    let history = inspect_ok(&[&url(), "history", &thread]);
    assert_eq!(steps(&history), [4, 3, 2, 1, 0, -1]);
    assert!(line_of(&history, 1).contains("retrieved = <undecodable msgpack:"), "{history}");
    if !keep_threads() {
        saver.delete_thread(&thread).await.expect("delete");
    }
}
