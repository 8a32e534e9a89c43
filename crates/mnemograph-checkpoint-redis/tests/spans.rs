//! The Redis saver reports what each operation of a run cost: `db.system`, the bytes it moved and
//! its round trips, on the engine's `checkpoint.*` spans. Alone in its binary: the spans are read
//! from a thread-local subscriber. Needs a Redis server (see `support`).

mod support;

use std::future::ready;

use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_core::prelude::*;
use mnemograph_test::SpanLog;
use support::{saver_with, thread};

#[tokio::test(flavor = "current_thread")]
async fn saver_spans_carry_redis_its_bytes_and_one_round_trip() {
    let Some(saver) = saver_with(RedisCheckpointer::builder()).await else { return };
    let graph = StateGraph::<MessagesState>::new()
        .add_node("agent", |_s: MessagesState| {
            ready(Ok::<_, Error>(MessagesStateUpdate::messages(vec![Message::ai("hello")])))
        })
        .add_edge(START, "agent")
        .compile()
        .unwrap()
        .with_checkpointer(saver);
    let (log, _guard) = SpanLog::install();
    let update = MessagesStateUpdate::messages(vec![Message::human("hi")]);
    graph.invoke(update, &RunConfig::thread(thread("spans"))).await.unwrap();

    let reads = log.closed("checkpoint.get_tuple");
    let commits = log.closed("checkpoint.commit");
    assert_eq!((reads.len(), commits.len()), (1, 2), "{}", log.text());
    for span in reads.iter().chain(&commits) {
        assert!(span.contains("db.system=\"redis\"") && span.contains("round_trips=1"), "{span}");
    }
    let bytes = |line: &str| -> usize {
        let at = line.find("bytes=").expect("bytes recorded") + "bytes=".len();
        line[at..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    assert_eq!(bytes(&reads[0]), 0, "a new thread reads nothing");
    assert!(commits.iter().all(|c| bytes(c) > 0), "{commits:?}");
}
