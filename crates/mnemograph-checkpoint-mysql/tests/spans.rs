//! The MySQL saver reports what each write of a run cost: `db.system`, the bytes it sent and its
//! round trips, on the engine's `checkpoint.*` spans. Alone in its binary: the spans are read from
//! a thread-local subscriber. Needs MariaDB or MySQL (see `support`).

mod support;

use std::future::ready;

use mnemograph_core::prelude::*;
use mnemograph_test::SpanLog;

/// The number after `field=` in a span's line.
fn number(line: &str, field: &str) -> usize {
    let key = format!("{field}=");
    let at = line.find(&key).unwrap_or_else(|| panic!("{field} in {line}")) + key.len();
    line[at..].split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn saver_spans_carry_mysql_its_bytes_and_round_trips() {
    let Some((_db, saver)) = support::fresh_database("spans").await else { return };
    saver.setup().await.expect("setup");
    let agent =
        |_s: MessagesState| ready(Ok::<_, Error>(MessagesStateUpdate::messages(vec![Message::ai("hi")])));
    // Two nodes in one step: their writes are saved as each finishes.
    let graph = StateGraph::<MessagesState>::new()
        .add_node("a", agent)
        .add_node("b", agent)
        .add_edge(START, "a")
        .add_edge(START, "b")
        .compile()
        .unwrap()
        .with_checkpointer(saver);
    let (log, _guard) = SpanLog::install();
    let update = MessagesStateUpdate::messages(vec![Message::human("hello")]);
    graph.invoke(update, &RunConfig::thread("t-spans")).await.unwrap();

    let commits = log.closed("checkpoint.commit");
    let writes = log.closed("checkpoint.put_writes");
    assert_eq!(commits.len(), 2, "{}", log.text());
    assert!(!writes.is_empty(), "{}", log.text());
    for span in commits.iter().chain(&writes) {
        assert!(span.contains("db.system=\"mysql\""), "{span}");
        assert!(number(span, "round_trips") >= 1 && number(span, "bytes") > 0, "{span}");
    }
}
