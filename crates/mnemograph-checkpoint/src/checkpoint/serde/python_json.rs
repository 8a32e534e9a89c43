//! JSON text written the way Python's `json.dumps` writes it, for the savers whose columns hold
//! what LangGraph's Python savers write with it (the SQL savers' documents and metadata).
//!
//! `json.dumps` separates items with `", "` and keys from values with `": "`, prints floats as
//! Python's `repr` does (`1.0`, `1e-05`, `1e+16`), and with `ensure_ascii=True` (its default)
//! escapes DEL and every non-ASCII character as UTF-16 `\uXXXX` units. The escapes serde_json
//! writes itself (quotes, backslashes, control characters) are the ones Python writes.
//!
//! Python writes `NaN` and `Infinity` for non-finite floats; serde_json writes `null` for them
//! before a formatter sees the value, and so does [`dumps`].

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

/// `json.dumps(value, ensure_ascii=ensure_ascii)` with Python's default separators: items
/// separated by `", "`, keys by `": "`, in the order `value` serializes them.
///
/// # Errors
/// When `value` fails to serialize (a map with non-string keys, a failing `Serialize`).
pub fn dumps<T: Serialize + ?Sized>(value: &T, ensure_ascii: bool) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(256);
    value.serialize(&mut Serializer::with_formatter(&mut out, PythonFormatter { ensure_ascii }))?;
    // serde_json writes whole UTF-8 characters, and the escapes are ASCII.
    String::from_utf8(out).map_err(serde::ser::Error::custom)
}

/// A [`Formatter`] producing Python's `json.dumps` layout.
struct PythonFormatter {
    /// Whether DEL and non-ASCII characters are escaped.
    ensure_ascii: bool,
}

impl Formatter for PythonFormatter {
    fn begin_array_value<W: io::Write + ?Sized>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: io::Write + ?Sized>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: io::Write + ?Sized>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn write_f64<W: io::Write + ?Sized>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(float_repr(value).as_bytes())
    }

    fn write_f32<W: io::Write + ?Sized>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        // Python has only doubles; widen first so the digits are those Python would print.
        self.write_f64(w, f64::from(value))
    }

    fn write_string_fragment<W: io::Write + ?Sized>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        if !self.ensure_ascii {
            return w.write_all(fragment.as_bytes());
        }
        // serde_json has already escaped quotes, backslashes and control characters; what is left
        // is `ensure_ascii`: DEL and everything non-ASCII as UTF-16 `\uXXXX` units.
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if c.is_ascii() && c != '\x7f' {
                continue;
            }
            w.write_all(&fragment.as_bytes()[start..i])?;
            let mut units = [0_u16; 2];
            for unit in c.encode_utf16(&mut units) {
                write!(w, "\\u{unit:04x}")?;
            }
            start = i + c.len_utf8();
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
}

/// Python's `repr` of a finite float: shortest round-trip digits, always with a `.0` or an
/// exponent, scientific form outside `1e-4 <= |x| < 1e16` with a signed two-digit exponent.
fn float_repr(x: f64) -> String {
    // `{:e}` and `{}` both print the shortest round-trip digits; only the notation differs.
    let sci = format!("{x:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if x == 0.0 || (-4..16).contains(&exponent) {
        let plain = x.to_string();
        return if plain.contains('.') { plain } else { plain + ".0" };
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::checkpoint::serde::JsonObject;

    /// Keys in insertion order, as the savers' documents are built (a `json!` object's order
    /// depends on serde_json's features).
    fn object(entries: &[(&str, serde_json::Value)]) -> JsonObject {
        entries.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
    }

    #[test]
    fn separators_match_python_json_dumps() {
        // Expected strings printed by CPython 3.12 `json.dumps`.
        let value = object(&[
            ("source", json!("loop")),
            ("step", json!(-1)),
            ("parents", json!({})),
            ("list", json!([1, 2.5, null, true])),
        ]);
        let expected = r#"{"source": "loop", "step": -1, "parents": {}, "list": [1, 2.5, null, true]}"#;
        assert_eq!(dumps(&value, true).unwrap(), expected);
        assert_eq!(dumps(&value, false).unwrap(), expected);
        assert_eq!(dumps(&json!([]), true).unwrap(), "[]");
        assert_eq!(dumps(&json!([[], {}]), false).unwrap(), "[[], {}]");
    }

    #[test]
    fn ensure_ascii_escapes_non_ascii_and_del_as_utf16_units() {
        assert_eq!(dumps("用户 Grüße 🌏", true).unwrap(), r#""\u7528\u6237 Gr\u00fc\u00dfe \ud83c\udf0f""#);
        assert_eq!(dumps("a\"b\\c\n\u{1}\u{7f}", true).unwrap(), r#""a\"b\\c\n\u0001\u007f""#);
        // Keys are escaped like values.
        assert_eq!(dumps(&object(&[("键", json!(1))]), true).unwrap(), r#"{"\u952e": 1}"#);
    }

    #[test]
    fn without_ensure_ascii_text_is_written_as_it_is() {
        // `json.dumps(..., ensure_ascii=False)` in CPython 3.11.
        assert_eq!(dumps("用户 🌏 \u{7f}", false).unwrap(), "\"用户 🌏 \u{7f}\"");
        assert_eq!(dumps("张三 \"q\"\n\u{1}", false).unwrap(), r#""张三 \"q\"\n\u0001""#);
    }

    #[test]
    fn floats_print_like_python_repr() {
        for (x, repr) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-1.0, "-1.0"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (1e-5, "1e-05"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (123456789012345.6, "123456789012345.6"),
            (-2.5e-300, "-2.5e-300"),
            (f64::MAX, "1.7976931348623157e+308"),
        ] {
            assert_eq!(float_repr(x), repr, "{x:e}");
            assert_eq!(dumps(&x, true).unwrap(), repr, "{x:e}");
        }
        // An f32 is widened first, as Python holds only doubles.
        assert_eq!(dumps(&0.1_f32, false).unwrap(), "0.10000000149011612");
    }

    #[test]
    fn non_finite_floats_are_null() {
        for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(dumps(&x, true).unwrap(), "null");
            assert_eq!(dumps(&[x], false).unwrap(), "[null]");
        }
    }

    #[test]
    fn integers_are_written_as_they_are() {
        assert_eq!(
            dumps(&json!([0, -1, u64::MAX, i64::MIN]), true).unwrap(),
            "[0, -1, 18446744073709551615, -9223372036854775808]"
        );
    }
}
