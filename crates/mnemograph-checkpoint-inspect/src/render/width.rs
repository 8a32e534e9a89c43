//! Terminal width of text, and cutting it to a width: Chinese, Japanese and Korean characters
//! and emoji take two columns, combining marks none, and a cut must fall between characters
//! (slicing a `str` at a byte index inside one panics). Widths are Unicode's (UAX #11 and the
//! emoji presentation data), as the `unicode-width` crate tables them.

use unicode_width::UnicodeWidthStr;

/// Display width of a string; emoji sequences (skin tones, `ZWJ` families, flags) count as the
/// one picture they draw.
pub fn width(s: &str) -> usize {
    s.width()
}

/// `s` on one line (runs of whitespace, newlines included, become one space) and at most
/// `max_width` columns wide, ending in `…` when cut. Cuts fall between characters, never inside
/// one.
pub fn truncate(s: &str, max_width: usize) -> String {
    let one_line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if width(&one_line) <= max_width {
        return one_line;
    }
    let mut out = String::new();
    for c in one_line.chars() {
        out.push(c);
        // Measured whole rather than summed per character: a variation selector or a joiner
        // changes the width of what comes before it. One column stays free for the ellipsis.
        if width(&out) + 1 > max_width {
            out.pop();
            break;
        }
    }
    out.push('…');
    out
}

/// `s` padded with spaces to `columns` display columns.
pub fn pad(s: &str, columns: usize) -> String {
    let mut out = s.to_owned();
    out.extend(std::iter::repeat_n(' ', columns.saturating_sub(width(s))));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_counts_double_and_cuts_fall_between_characters() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("根据你"), 6);
        assert_eq!(width("ＲＡＧ！"), 8, "fullwidth forms");
        assert_eq!(truncate("根据你上周的描述", 9), "根据你上…");
        assert_eq!(truncate("根据你上周的描述", 16), "根据你上周的描述");
        // 15 columns: seven characters and the ellipsis, never half a character.
        assert_eq!(truncate("根据你上周的描述，我们", 15), "根据你上周的描…");
        assert_eq!(truncate("mixed 中文 text", 9), "mixed 中…");
        assert_eq!(truncate("😀😀😀", 4), "😀…");
    }

    #[test]
    fn emoji_are_wide_and_combining_marks_are_not() {
        for emoji in ["👍", "🚀", "✅", "🫠", "👍🏽", "👨\u{200d}👩\u{200d}👧", "🇨🇳"] {
            assert_eq!(width(emoji), 2, "{emoji}");
        }
        assert_eq!(width("e\u{301}"), 1, "e and a combining acute accent");
        assert_eq!(width("a\u{20dd}"), 1, "a and a combining enclosing circle");
        assert_eq!(width("\u{5e9}\u{5b4}"), 1, "a Hebrew letter and its vowel point");
        assert_eq!(width("a\u{200b}b"), 2, "a zero-width space");
        assert_eq!(truncate("🚀🚀🚀", 4), "🚀…");
        // The emoji variation selector widens the heart to two columns: kept, it would make five.
        assert_eq!(truncate("ab\u{2764}\u{fe0f}cd", 4), "ab\u{2764}…");
    }

    #[test]
    fn text_is_put_on_one_line() {
        assert_eq!(truncate("  first line\n\n  second\tline ", 40), "first line second line");
        assert_eq!(truncate("", 5), "");
        assert_eq!(truncate("abcdef", 1), "…");
    }

    #[test]
    fn padding_uses_display_width() {
        assert_eq!(pad("线程", 6), "线程  ");
        assert_eq!(pad("abc", 2), "abc");
    }
}
