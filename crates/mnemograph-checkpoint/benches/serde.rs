//! What a saver spends encoding a conversation: `dumps_typed` of the `messages` channel of an
//! echo chat at 100 and 200 turns (200 and 400 messages, the value a SQL saver stores twice per
//! turn), and `loads_typed` of the same bytes (see docs/benchmarks/compare.md).

use criterion::{black_box, criterion_main, Criterion};
use mnemograph_checkpoint::checkpoint::serde::{dumps_typed, loads_typed};
use mnemograph_checkpoint::messages::Message;
use mnemograph_checkpoint::value::ChannelValue;

/// The `messages` value after `turns` turns of `chat_turns`: a human message and its echo per
/// turn, each with the id `add_messages` gives it.
fn conversation(turns: usize) -> Vec<Message> {
    (0..turns)
        .flat_map(|i| {
            let text = format!("turn {i} 你好 hello");
            [
                Message::human(text.clone()).with_id(format!("h-{i:08}-0000-0000-0000-000000000000")),
                Message::ai(format!("echo: {text}")).with_id(format!("a-{i:08}-0000-0000-0000-000000000000")),
            ]
        })
        .collect()
}

/// Every bench (what `criterion_group!` would generate, written out so the function can carry a
/// doc comment for the workspace's `missing_docs` lint).
///
/// The same value is encoded at every iteration, so its messages' encodings are remembered after
/// the first (see `Message`): what a saver pays for the messages of earlier turns.
fn benches() {
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("serde");
    for turns in [100, 200] {
        let value = ChannelValue::new(conversation(turns));
        group.bench_function(format!("dumps_messages_{turns}_turns"), |b| {
            b.iter(|| dumps_typed(black_box(&value)).expect("encodes"))
        });
        let (kind, bytes) = dumps_typed(&value).expect("encodes");
        group.bench_function(format!("loads_messages_{turns}_turns"), |b| {
            b.iter(|| loads_typed(black_box(&kind), black_box(&bytes)).expect("decodes"))
        });
    }
    group.finish();
}

criterion_main!(benches);
