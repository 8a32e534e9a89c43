//! [`ApproxTokenCounter`]: a tokenizer-free estimate for mixed Chinese/English text.

use super::TokenCounter;

/// Letters per token of an ASCII word: tiktoken keeps most English words up to ~8 letters whole,
/// longer ones split in two or three.
const LETTERS_PER_TOKEN: usize = 6;
/// Digits per token: tiktoken splits numbers into groups of at most three.
const DIGITS_PER_TOKEN: usize = 3;
/// ASCII punctuation marks per token: pairs such as `("`, `",` or `://` often merge.
const PUNCT_PER_TOKEN: usize = 2;

/// Which kind of run a character continues.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    /// Not inside a run.
    None,
    /// ASCII letters (and `_`, `'` inside words).
    Letters,
    /// ASCII digits.
    Digits,
    /// ASCII punctuation and symbols.
    Punct,
}

/// A fast token estimate that needs no vocabulary, right for Chinese, Japanese and Korean as
/// well as English.
///
/// Rules, each a cheap per-character decision:
/// - a CJK character (Han, kana, Hangul, CJK and full-width punctuation) is one token, and so
///   is any other non-ASCII character (accented Latin, Cyrillic, emoji);
/// - an ASCII word is one token per 6 letters, rounded up; a number one per 3 digits;
/// - a run of ASCII punctuation is one token per 2 marks; spaces are free (tiktoken glues them
///   to the next word) except that a line break counts one;
///
/// **Accuracy.** The test `approx_error_against_tiktoken_on_mixed_corpus` compares the estimate
/// with `cl100k_base` and `o200k_base` on `tests/fixtures/mixed_corpus.txt` (Chinese prose, English
/// prose, mixed chat, code, SQL, a URL and JSON tool arguments), prints and bounds it. In total it
/// stays close to cl100k; per line it overestimates English and code and underestimates rare
/// Chinese characters against cl100k; o200k (and Qwen/DeepSeek vocabularies, similar for Chinese)
/// pack common Chinese words, so there the estimate errs high, the safe side for a context budget.
/// It reads the text once and allocates nothing, so it is much cheaper than tiktoken-rs (the
/// `tokens` benchmark compares them), which is what a trimmer that recounts a long history before
/// every model call needs. Prefer `TiktokenCounter` (feature `tiktoken`) when an exact budget
/// matters more than speed.
///
/// ```
/// use mnemograph_models::{ApproxTokenCounter, TokenCounter};
///
/// let c = ApproxTokenCounter::new();
/// assert_eq!(c.count_text("检索增强生成"), 6);
/// assert_eq!(c.count_text("hello world"), 2);
/// assert_eq!(c.count_text("用 Redis 存快照"), 5);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ApproxTokenCounter;

impl ApproxTokenCounter {
    /// The counter.
    pub const fn new() -> Self {
        Self
    }
}

/// Tokens a finished run of `len` characters of `kind` costs.
fn run_cost(kind: Run, len: usize) -> usize {
    match kind {
        Run::None => 0,
        Run::Letters => len.div_ceil(LETTERS_PER_TOKEN),
        Run::Digits => len.div_ceil(DIGITS_PER_TOKEN),
        Run::Punct => len.div_ceil(PUNCT_PER_TOKEN),
    }
}

impl TokenCounter for ApproxTokenCounter {
    fn count_text(&self, text: &str) -> usize {
        let mut tokens = 0;
        let mut run = Run::None;
        let mut len = 0;
        // Bytes, not chars: every rule needs only the ASCII class, and a non-ASCII character
        // counts once, at its UTF-8 lead byte, so decoding code points would be wasted work.
        for &b in text.as_bytes() {
            if b & 0xC0 == 0x80 {
                continue; // a UTF-8 continuation byte: already counted with its lead byte
            }
            let kind = match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => Run::Letters,
                // An apostrophe inside a word (`don't`) belongs to it.
                b'\'' if run == Run::Letters => Run::Letters,
                b'0'..=b'9' => Run::Digits,
                b'!'..=b'/' | b':'..=b'@' | b'['..=b'`' | b'{'..=b'~' => Run::Punct,
                _ => Run::None,
            };
            if kind == run && kind != Run::None {
                len += 1;
                continue;
            }
            tokens += run_cost(run, len);
            (run, len) = (kind, 1);
            if kind == Run::None {
                // Spaces are free, a line break is one token, and so is every character outside
                // ASCII: a CJK character by the rule this counter exists for (it sits between
                // cl100k's and o200k's rates per Han character), others (accents,
                // emoji) because BPE vocabularies rarely merge them.
                tokens += usize::from(!matches!(b, b' ' | b'\t' | b'\r'));
            }
        }
        tokens + run_cost(run, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        let c = ApproxTokenCounter::new();
        assert_eq!(c.count_text(""), 0);
        assert_eq!(c.count_text("你好，世界！"), 6);
        assert_eq!(c.count_text("internationalization"), 4);
        assert_eq!(c.count_text("1234567"), 3);
        assert_eq!(c.count_text("a\nb"), 3);
        assert_eq!(c.count_text("{\"q\": 1}"), 1 + 1 + 1 + 1 + 1);
        assert_eq!(c.count_text("don't"), 1);
        assert_eq!(c.count_text("🚀é"), 2);
    }
}
