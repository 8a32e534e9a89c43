//! Metadata as the bytes LangGraph's SQLite saver stores: `json.dumps(metadata,
//! ensure_ascii=False)` in UTF-8, and back.

use std::io;

use mnemograph_checkpoint::checkpoint::serde::parse_json;
use mnemograph_checkpoint::checkpoint::CheckpointMetadata;
use serde::Serialize;
use serde_json::ser::{Formatter, Serializer};

use crate::error::{Error, Result};

/// The metadata column of a checkpoint: keys in LangGraph's order, items separated by `", "` and
/// `": "`, non-ASCII text written as it is, floats as Python's `repr` prints them.
pub(crate) fn encode(metadata: &CheckpointMetadata) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(128);
    metadata.to_json().serialize(&mut Serializer::with_formatter(&mut out, PythonFormatter)).map_err(
        |e| Error::Codec(mnemograph_checkpoint::checkpoint::serde::SerdeError::Encode(e.to_string())),
    )?;
    Ok(out)
}

/// Reads the metadata column (JSON text in UTF-8, whichever side wrote it).
pub(crate) fn decode(bytes: &[u8]) -> std::result::Result<CheckpointMetadata, String> {
    let json = parse_json(bytes).map_err(|e| e.to_string())?;
    CheckpointMetadata::from_json(&json).map_err(|e| e.to_string())
}

/// A [`Formatter`] producing the layout of Python's `json.dumps` with `ensure_ascii=False`. The
/// escapes serde_json writes (quotes, backslashes, control characters) are the ones Python writes.
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
    use mnemograph_checkpoint::checkpoint::CheckpointSource;
    use serde_json::json;

    use super::*;

    #[test]
    fn layout_matches_python_json_dumps_without_ascii_escapes() {
        let mut metadata = CheckpointMetadata::new(CheckpointSource::Loop, 0);
        metadata.extra.insert("user".into(), json!("张三 \"q\"\n\u{7f}"));
        metadata.extra.insert("score".into(), json!(1e-5));
        // `json.dumps({..}, ensure_ascii=False)` in CPython 3.11; user keys first, then LangGraph's.
        let expected = "{\"score\": 1e-05, \"user\": \"张三 \\\"q\\\"\\n\u{7f}\", \"source\": \"loop\", \
                        \"step\": 0, \"parents\": {}}";
        assert_eq!(String::from_utf8(encode(&metadata).unwrap()).unwrap(), expected);
        assert_eq!(decode(expected.as_bytes()).unwrap(), metadata);
    }

    #[test]
    fn floats_print_like_python_repr() {
        for (x, repr) in [(0.0, "0.0"), (1.0, "1.0"), (0.1, "0.1"), (1.5e-5, "1.5e-05"), (1e16, "1e+16")] {
            assert_eq!(float_repr(x), repr, "{x:e}");
        }
    }
}
