//! Texts Postgres cannot hold as they are.
//!
//! Postgres' `TEXT` and JSONB refuse the character U+0000, which LangGraph's own saver then fails
//! to store. This saver stores such a text escaped instead, in a form no other text takes: the
//! noncharacter U+FDD0 first, then the text with `\` doubled and U+0000 written `\0`. Texts that
//! start with U+FDD0 are escaped too, so that reading never mistakes one for the other. Every
//! other text, which is all Python can store, is stored verbatim, so rows stay LangGraph's.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Starts every escaped text.
pub(crate) const MARK: char = '\u{FDD0}';

/// Whether `text` is stored escaped.
pub(crate) fn needs_escape(text: &str) -> bool {
    text.contains('\0') || text.starts_with(MARK)
}

/// The stored form of `text`.
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    if !needs_escape(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    out.push(MARK);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The text of a stored form; a malformed escape is kept as it is.
pub(crate) fn unescape(stored: String) -> String {
    let Some(body) = stored.strip_prefix(MARK) else { return stored };
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('0') => out.push('\0'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

/// `value` with every key and string in stored form.
pub(crate) fn escape_json(value: Value) -> Value {
    map_json(value, &|s| match escape(&s) {
        Cow::Borrowed(_) => s,
        Cow::Owned(escaped) => escaped,
    })
}

/// `value` with every key and string read back from stored form.
pub(crate) fn unescape_json(value: Value) -> Value {
    map_json(value, &unescape)
}

/// Whether any key or string of `value` is stored escaped.
pub(crate) fn json_needs_escape(value: &Value) -> bool {
    match value {
        Value::String(s) => needs_escape(s),
        Value::Array(items) => items.iter().any(json_needs_escape),
        Value::Object(map) => map.iter().any(|(k, v)| needs_escape(k) || json_needs_escape(v)),
        _ => false,
    }
}

fn map_json(value: Value, f: &dyn Fn(String) -> String) -> Value {
    match value {
        Value::String(s) => Value::String(f(s)),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| map_json(v, f)).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (f(k), map_json(v, f))).collect::<Map<_, _>>())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_texts_are_stored_verbatim() {
        for text in ["", "user-42", "a\\b", "用户 🌏", "x\u{FDD0}"] {
            assert!(matches!(escape(text), Cow::Borrowed(t) if t == text), "{text:?}");
        }
    }

    #[test]
    fn escaped_texts_round_trip_and_hold_no_nul() {
        for text in ["\0", "a\0b\\0c\\", "\u{FDD0}", "\u{FDD0}\\0", "q'uo\"te \\ \0 end"] {
            let stored = escape(text).into_owned();
            assert!(!stored.contains('\0'), "{stored:?}");
            assert_eq!(unescape(stored), text);
        }
        // Distinct texts stay distinct.
        assert_ne!(escape("\0"), escape("\u{FDD0}\\0"));
    }

    #[test]
    fn json_keys_and_strings_round_trip() {
        let value = serde_json::json!({"a\0": ["b\0", 1, {"\u{FDD0}": null}], "plain": "x"});
        let stored = escape_json(value.clone());
        assert!(!stored.to_string().contains("\\u0000"));
        assert_eq!(unescape_json(stored), value);
    }
}
