//! Token counting throughput: tiktoken-rs (cl100k_base, o200k_base) against the approximate
//! counter, on the mixed Chinese/English corpus repeated to about 100 KiB.

use criterion::{black_box, criterion_main, Criterion, Throughput};
use mnemograph_models::{ApproxTokenCounter, Encoding, TiktokenCounter, TokenCounter};

fn text() -> String {
    let corpus = include_str!("../tests/fixtures/mixed_corpus.txt");
    corpus.repeat(100 * 1024 / corpus.len() + 1)
}

fn counting(c: &mut Criterion) {
    let text = text();
    let mut group = c.benchmark_group("count_text_100KiB_mixed");
    group.throughput(Throughput::Bytes(text.len() as u64));
    for encoding in [Encoding::Cl100kBase, Encoding::O200kBase] {
        let counter = TiktokenCounter::new(encoding);
        counter.count_text("warm up"); // load the vocabulary outside the measurement
        group.bench_function(format!("tiktoken_{}", encoding.name()), |b| {
            b.iter(|| counter.count_text(black_box(&text)));
        });
    }
    group.bench_function("approx", |b| b.iter(|| ApproxTokenCounter::new().count_text(black_box(&text))));
    group.finish();
}

/// Every bench (what `criterion_group!` would generate, written out so it can carry a doc comment
/// for the workspace's `missing_docs` lint).
fn benches() {
    let mut c = Criterion::default().configure_from_args();
    counting(&mut c);
}

criterion_main!(benches);
