//! JSON text written the way Python's `json.dumps` writes it.
//!
//! The Python saver stores the checkpoint document and the metadata with `json.dumps`, which
//! escapes every non-ASCII character (`\u5f20`) and separates items with `", "` and `": "`. MySQL
//! parses JSON columns into a binary form, so there the text does not matter; MariaDB keeps the
//! text verbatim and its `JSON_CONTAINS` compares strings *as written*: `"\u5f20"` does not contain
//! `"张"`. Writing documents and metadata filters in Python's style keeps filters working across
//! rows written by either implementation.

use std::io;

use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

/// `json.dumps(value)` with Python's defaults (`ensure_ascii=True`, default separators).
pub(crate) fn dumps<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(256);
    value.serialize(&mut Serializer::with_formatter(&mut out, PythonFormatter))?;
    // The formatter writes ASCII only.
    Ok(String::from_utf8(out).expect("ASCII output"))
}

/// A [`Formatter`] producing Python's `json.dumps` layout.
struct PythonFormatter;

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
        // serde_json has already escaped quotes, backslashes and control characters; what is left
        // is Python's `ensure_ascii`: DEL and everything non-ASCII as UTF-16 `\uXXXX` units.
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
    use mnemograph_checkpoint::checkpoint::serde::JsonObject;
    use serde_json::json;

    use super::*;

    #[test]
    fn layout_matches_python_json_dumps() {
        // Expected strings printed by CPython 3.12 `json.dumps`.
        // Keys in insertion order, as the saver's documents are built (a `json!` object's order
        // depends on serde_json's features).
        let value: JsonObject = [
            ("source", json!("loop")),
            ("step", json!(-1)),
            ("parents", json!({})),
            ("list", json!([1, 2.5, null, true])),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        assert_eq!(
            dumps(&value).unwrap(),
            r#"{"source": "loop", "step": -1, "parents": {}, "list": [1, 2.5, null, true]}"#
        );
        assert_eq!(dumps(&json!([])).unwrap(), "[]");
    }

    #[test]
    fn non_ascii_is_escaped_like_ensure_ascii() {
        assert_eq!(dumps("用户 Grüße 🌏").unwrap(), r#""\u7528\u6237 Gr\u00fc\u00dfe \ud83c\udf0f""#);
        assert_eq!(dumps("a\"b\\c\n\u{1}\u{7f}").unwrap(), r#""a\"b\\c\n\u0001\u007f""#);
    }

    #[test]
    fn floats_print_like_python_repr() {
        for (x, repr) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e-4, "0.0001"),
            (1.5e-5, "1.5e-05"),
            (1e16, "1e+16"),
            (123456789012345.6, "123456789012345.6"),
            (-2.5e-300, "-2.5e-300"),
        ] {
            assert_eq!(float_repr(x), repr, "{x:e}");
        }
    }
}
