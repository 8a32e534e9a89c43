//! The approximate counter against tiktoken on a mixed Chinese/English corpus.

use mnemograph_models::{ApproxTokenCounter, Encoding, TiktokenCounter, TokenCounter};

/// Per-line texts of the corpus (`\n` in a line is an escaped line break).
fn corpus() -> Vec<String> {
    include_str!("fixtures/mixed_corpus.txt").lines().map(|l| l.replace("\\n", "\n")).collect()
}

/// (total relative error, mean absolute per-line relative error) of approx against `exact`.
fn errors(exact: &dyn TokenCounter) -> (f64, f64, usize, usize) {
    let approx = ApproxTokenCounter::new();
    let lines = corpus();
    let (mut a_total, mut e_total, mut abs_sum) = (0usize, 0usize, 0.0f64);
    for line in &lines {
        let (a, e) = (approx.count_text(line), exact.count_text(line));
        if std::env::var_os("SHOW_LINES").is_some() {
            println!("{a:4} {e:4} {:+.2} {line}", (a as f64 - e as f64) / e as f64);
        }
        a_total += a;
        e_total += e;
        abs_sum += (a as f64 - e as f64).abs() / e as f64;
    }
    let total = (a_total as f64 - e_total as f64) / e_total as f64;
    (total, abs_sum / lines.len() as f64, a_total, e_total)
}

#[test]
fn approx_error_against_tiktoken_on_mixed_corpus() {
    for (encoding, max_total, max_mean) in
        [(Encoding::Cl100kBase, 0.05, 0.15), (Encoding::O200kBase, 0.25, 0.25)]
    {
        let (total, mean, a, e) = errors(&TiktokenCounter::new(encoding));
        println!(
            "{}: approx {a} vs tiktoken {e} tokens, total error {:+.1}%, mean |line error| {:.1}%",
            encoding.name(),
            total * 100.0,
            mean * 100.0
        );
        assert!(total.abs() <= max_total, "{} total error {total}", encoding.name());
        assert!(mean <= max_mean, "{} mean error {mean}", encoding.name());
    }
}

/// The benchmark text (the corpus repeated to about 100 KiB) counts exactly as Python
/// `tiktoken` 0.14.0 counts it (`encode_ordinary`, same vocabulary files), so a throughput
/// comparison of the two is on equal work.
#[test]
fn tiktoken_rs_counts_match_python_tiktoken_on_the_bench_text() {
    let corpus = include_str!("fixtures/mixed_corpus.txt");
    let text = corpus.repeat(100 * 1024 / corpus.len() + 1);
    assert_eq!(text.len(), 105_125);
    assert_eq!(TiktokenCounter::new(Encoding::Cl100kBase).count_text(&text), 31_552);
    assert_eq!(TiktokenCounter::new(Encoding::O200kBase).count_text(&text), 25_462);
}
