//! Label escaping for each drawing format.

use std::fmt::Write as _;

/// `text` for a quoted Mermaid label (`id("…")`, `|"…"|`).
///
/// Mermaid decodes `#<decimal>;` entities in labels, so every character that could end the label
/// (`"`), start an entity (`#`), open markup (`<`, `&`, a leading backtick for Markdown), or end
/// the line is written as one; so is every other ASCII punctuation mark but `.`, which keeps the
/// label out of the reach of Mermaid's whole-text rewrites (`style…:…#…;`). Letters, digits,
/// spaces, `_ - .` and non-ASCII text stay as they are.
pub(super) fn mermaid_label(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_plain_char(c) {
            out.push(c);
        } else {
            // Writing to a String cannot fail.
            let _ = write!(out, "#{};", u32::from(c));
        }
    }
    out
}

/// Whether `c` stands for itself in a Mermaid label.
fn is_plain_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(c, ' ' | '_' | '-' | '.')
        || (!c.is_ascii() && !c.is_control() && !c.is_whitespace())
}

/// Whether `text` can be written unquoted inside `id(…)`, the way LangGraph writes names such as
/// `trimming.before_model`: only when `id` is the name with its dots as `_` (so the name is made of
/// letters, digits, `_` and `.`, and is no keyword, or its id would differ).
pub(super) fn is_bare_mermaid_label(text: &str, id: &str) -> bool {
    text.contains('.')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))
        && text.replace('.', "_") == id
}

/// `text` inside a DOT double-quoted string used as a label or an id (`"…"`).
///
/// In a quoted string DOT itself unescapes only `\"`; labels are then read as escString (where `\`
/// starts an escape such as `\n` or `\N`) with HTML character entities (`&amp;`) decoded. So `\`
/// doubles, `"` gets its backslash, `&` becomes `&amp;`, a newline becomes the label line break
/// `\n`, and other control characters become numeric entities, which keeps every statement on one
/// line.
pub(super) fn dot_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '&' => out.push_str("&amp;"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {
                let _ = write!(out, "&#{};", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}
