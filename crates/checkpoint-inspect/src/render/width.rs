//! Terminal width of text, and cutting it to a width: Chinese, Japanese and Korean characters
//! take two columns, and a cut must fall between characters (slicing a `str` at a byte index
//! inside one panics).

/// Columns a character takes in a terminal: 2 for East Asian wide and fullwidth characters
/// (CJK ideographs, kana, Hangul, fullwidth forms, most emoji), 0 for combining marks, else 1.
pub fn char_width(c: char) -> usize {
    match u32::from(c) {
        0x0300..=0x036F | 0x200B..=0x200F | 0xFE00..=0xFE0F => 0,
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
}

/// Display width of a string.
pub fn width(s: &str) -> usize {
    s.chars().map(char_width).sum()
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
    let mut used = 0;
    for c in one_line.chars() {
        let w = char_width(c);
        // Keep one column for the ellipsis.
        if used + w + 1 > max_width {
            break;
        }
        out.push(c);
        used += w;
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
