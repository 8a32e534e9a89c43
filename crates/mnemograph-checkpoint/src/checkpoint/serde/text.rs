//! Reading JSON text with every float correctly rounded.
//!
//! Unless the application enables serde_json's `float_roundtrip` feature (shared by every crate
//! of the program, so not a library's to impose), serde_json parses floats with a fast method
//! that lands one unit in the last place off for some inputs: `3.0261999441573203e-52`, the
//! shortest text of a double that Python writes as is, reads back as its neighbour. A float
//! channel value inlined in a checkpoint document would then change on every save and load.
//!
//! [`parse`] keeps serde_json's parser (its grammar, errors and recursion limit) and only
//! replaces each float it produces: a scan of the text lists the number tokens in order, which
//! is the order serde_json hands numbers to the visitor, and each float is parsed again from its
//! token with [`str::parse`], which rounds correctly as Python's `float()` does.

use std::cell::Cell;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value as Json};

use super::error::SerdeError;

/// Parses one JSON value from `bytes` (surrounding whitespace allowed) with exact floats.
///
/// # Errors
/// [`SerdeError::Json`] when the text is not one valid JSON value.
pub fn parse(bytes: &[u8]) -> Result<Json, SerdeError> {
    let tokens = number_tokens(bytes);
    let next = Cell::new(0);
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Exact { tokens: &tokens, next: &next }
        .deserialize(&mut de)
        .and_then(|value| de.end().map(|()| value))
        .map_err(|e| SerdeError::Json(e.to_string()))?;
    Ok(value)
}

/// The number tokens of JSON text, in order: every run of `-+.eE0-9` that starts with `-` or a
/// digit outside a string. Only valid text needs exact tokens; for anything else serde_json
/// reports the error.
fn number_tokens(bytes: &[u8]) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                // The run is ASCII, so always valid UTF-8.
                tokens.push(std::str::from_utf8(&bytes[start..i]).unwrap_or_default());
            }
            _ => i += 1,
        }
    }
    tokens
}

/// Builds a [`Json`] from serde_json's events, taking each float from its token.
#[derive(Clone, Copy)]
struct Exact<'t, 'a> {
    tokens: &'t [&'a str],
    next: &'t Cell<usize>,
}

impl Exact<'_, '_> {
    /// The token of the number being visited; every number, integer or float, takes one.
    fn token(&self) -> Option<&str> {
        let at = self.next.get();
        self.next.set(at + 1);
        self.tokens.get(at).copied()
    }

    /// `fast`, serde_json's reading of a float, replaced by the correctly rounded reading of its
    /// token (the two differ in at most the last bit).
    fn float(&self, fast: f64) -> Json {
        let exact = self.token().and_then(|t| t.parse::<f64>().ok()).filter(|f| f.is_finite());
        Number::from_f64(exact.unwrap_or(fast)).map_or(Json::Null, Json::Number)
    }
}

impl<'de> DeserializeSeed<'de> for Exact<'_, '_> {
    type Value = Json;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Exact<'_, '_> {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
        self.token();
        Ok(Json::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
        self.token();
        Ok(Json::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json, E> {
        Ok(self.float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self)?;
            object.insert(key, value);
        }
        Ok(Json::Object(object))
    }

    fn visit_none<E>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_bytes<E: serde::de::Error>(self, _: &[u8]) -> Result<Json, E> {
        Err(E::custom("bytes are not JSON"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Shortest texts of doubles (as Python's `repr` and Rust's `{:e}` write them) that serde_json
    /// without `float_roundtrip` reads one bit off, plus a boundary subnormal written long.
    const HARD: [&str; 4] = [
        "3.0261999441573203e-52",
        "-1.603964615428183e143",
        "1.0715660391465826e-75",
        "2.2250738585072011e-308",
    ];

    #[test]
    fn floats_read_back_bit_for_bit() {
        for text in HARD {
            let exact: f64 = text.parse().unwrap();
            let doc = format!(r#"{{"x": [{text}, "1.5e3 \" 7", {{"y": {text}}}], "n": -12, "z": 0.1}}"#);
            let value = parse(doc.as_bytes()).unwrap();
            assert_eq!(value["x"][0].as_f64().map(f64::to_bits), Some(exact.to_bits()), "{text}");
            assert_eq!(value["x"][2]["y"].as_f64().map(f64::to_bits), Some(exact.to_bits()), "{text}");
            assert_eq!(
                (&value["x"][1], &value["n"], &value["z"]),
                (&json!("1.5e3 \" 7"), &json!(-12), &json!(0.1))
            );
        }
    }

    #[test]
    fn other_numbers_and_values_read_as_serde_json_reads_them() {
        let text = br#" [0.1, 0.30000000000000004, 1e-310, 5e-324, 9007199254740993, 18446744073709551615,
            -9223372036854775808, 18446744073709551616, -0, -0.0, 1E2, true, null, "\u00e9\ud83d\ude00", {}] "#;
        assert_eq!(parse(text).unwrap(), serde_json::from_slice::<Json>(text).unwrap());
        assert_eq!(parse(b"[1e-310]").unwrap()[0].as_f64(), Some(1e-310));
    }

    #[test]
    fn bad_text_is_a_typed_error() {
        for bad in [&b"{"[..], b"[1,]", b"1 2", b"\"\\x\"", b"1e400", b""] {
            assert!(matches!(parse(bad), Err(SerdeError::Json(_))), "{bad:?}");
        }
    }
}
