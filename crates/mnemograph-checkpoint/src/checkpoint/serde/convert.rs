//! Conversions between the msgpack tree, JSON, and Rust values: msgpack → JSON for
//! [`ChannelValue::to_json`](crate::value::ChannelValue::to_json), JSON → msgpack for
//! [`ChannelValue::Json`](crate::value::ChannelValue::Json) values, LangChain's legacy JSON
//! constructor envelopes, and a cheap "is this a JSON scalar?" probe for inlining.

use std::fmt;

use rmpv::Value as Mp;
use serde::ser::{self, Impossible, Serialize};
use serde_json::{Map, Number, Value as Json};

use crate::messages::MessageType;

/// The msgpack tree as JSON, for display and for callers that want `serde_json::Value`.
///
/// Expects a normalised tree (no ext values left). Where JSON has no equivalent the conversion
/// is documented rather than failing: binary becomes an array of byte values (what serde's
/// `Vec<u8>` reads), non-string map keys become their JSON text (`1` → `"1"`), non-finite floats
/// become `null` (JSON has none), invalid UTF-8 is replaced, and a leftover ext value becomes
/// `{"__ext__": code, "data": [bytes]}`.
pub(crate) fn to_json(value: &Mp) -> Json {
    // Loops and out-of-line leaves keep the frame of this once-per-level recursion small (see
    // `ext::normalise`).
    match value {
        Mp::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(to_json(item));
            }
            Json::Array(out)
        }
        Mp::Map(entries) => {
            let mut out = Map::with_capacity(entries.len());
            for (k, v) in entries {
                out.insert(key_text(k), to_json(v));
            }
            Json::Object(out)
        }
        leaf => leaf_json(leaf),
    }
}

/// [`to_json`] of a value that is not an array or a map.
#[inline(never)]
fn leaf_json(value: &Mp) -> Json {
    match value {
        Mp::Nil => Json::Null,
        Mp::Boolean(b) => Json::Bool(*b),
        Mp::Integer(i) => match (i.as_u64(), i.as_i64()) {
            (Some(u), _) => u.into(),
            (None, Some(n)) => n.into(),
            (None, None) => Json::Null,
        },
        Mp::F32(f) => float(f64::from(*f)),
        Mp::F64(f) => float(*f),
        Mp::String(s) => Json::String(match s.as_str() {
            Some(text) => text.to_owned(),
            None => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        }),
        Mp::Binary(bytes) => bytes_json(bytes),
        Mp::Ext(code, data) => serde_json::json!({ "__ext__": code, "data": bytes_json(data) }),
        // Containers are handled by `to_json`.
        Mp::Array(_) | Mp::Map(_) => to_json(value),
    }
}

fn float(f: f64) -> Json {
    Number::from_f64(f).map_or(Json::Null, Json::Number)
}

fn bytes_json(bytes: &[u8]) -> Json {
    Json::Array(bytes.iter().map(|b| Json::from(*b)).collect())
}

/// A map key as a JSON object key: strings as they are, anything else as its JSON text.
fn key_text(key: &Mp) -> String {
    match key.as_str() {
        Some(text) => text.to_owned(),
        None => to_json(key).to_string(),
    }
}

/// A JSON value as a msgpack tree: integers stay integers, other numbers become `float64`.
pub(crate) fn from_json(value: &Json) -> Mp {
    match value {
        Json::Null => Mp::Nil,
        Json::Bool(b) => Mp::Boolean(*b),
        Json::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Mp::from(u),
            (None, Some(i), _) => Mp::from(i),
            (None, None, f) => Mp::F64(f.unwrap_or(f64::NAN)),
        },
        Json::String(s) => Mp::from(s.as_str()),
        Json::Array(items) => Mp::Array(items.iter().map(from_json).collect()),
        Json::Object(map) => Mp::Map(map.iter().map(|(k, v)| (Mp::from(k.as_str()), from_json(v))).collect()),
    }
}

/// Replaces LangChain's JSON constructor envelopes (`{"lc": 1|2, "type": "constructor", "id":
/// [..., class], "kwargs": {...}}`), found in LangGraph's legacy `"json"` blobs, by plain data.
///
/// A LangChain message becomes its kwargs map with `type` set from the class, which is what
/// [`Message`](crate::messages::Message)'s `Deserialize` reads. Any other class becomes its
/// kwargs, or its single positional argument (`UUID`, `datetime` in `lc: 2` envelopes), or its
/// argument list; an envelope with neither is left as it is. Other maps (`"secret"`,
/// `"not_implemented"`) are kept verbatim rather than dropped.
pub(crate) fn revive(value: Json) -> Json {
    match value {
        Json::Array(items) => Json::Array(items.into_iter().map(revive).collect()),
        Json::Object(map) => {
            let map: Map<String, Json> = map.into_iter().map(|(k, v)| (k, revive(v))).collect();
            revive_envelope(map)
        }
        other => other,
    }
}

fn revive_envelope(mut map: Map<String, Json>) -> Json {
    let is_constructor = map.get("lc").and_then(Json::as_u64).is_some_and(|lc| lc == 1 || lc == 2)
        && map.get("type").and_then(Json::as_str) == Some("constructor");
    let class = match map.get("id").and_then(Json::as_array).and_then(|id| id.last()) {
        Some(Json::String(class)) if is_constructor => class.clone(),
        _ => return Json::Object(map),
    };
    let kwargs = match map.remove("kwargs") {
        Some(Json::Object(kwargs)) => Some(kwargs),
        Some(other) => {
            map.insert("kwargs".to_owned(), other);
            None
        }
        None => None,
    };
    if let Some(kind) = MessageType::from_lc_class(&class) {
        let mut kwargs = kwargs.unwrap_or_default();
        kwargs.insert("type".to_owned(), kind.as_str().into());
        return Json::Object(kwargs);
    }
    match (kwargs, map.remove("args")) {
        (Some(kwargs), _) if !kwargs.is_empty() => Json::Object(kwargs),
        (_, Some(Json::Array(mut args))) if args.len() == 1 => args.remove(0),
        (_, Some(Json::Array(args))) if !args.is_empty() => Json::Array(args),
        (kwargs, args) => {
            // Nothing to unwrap: keep the envelope so no data is silently dropped.
            if let Some(kwargs) = kwargs {
                map.insert("kwargs".to_owned(), Json::Object(kwargs));
            }
            if let Some(args) = args {
                map.insert("args".to_owned(), args);
            }
            Json::Object(map)
        }
    }
}

/// The value as a JSON scalar (null, bool, finite number, string) when it serializes to one,
/// `None` otherwise. Compound values are rejected at their first `serialize_*` call, so probing
/// a long message list costs nothing, unlike converting it to JSON first.
pub(crate) fn json_scalar<T: Serialize + ?Sized>(value: &T) -> Option<Json> {
    value.serialize(ScalarProbe).ok()
}

/// The serializer behind [`json_scalar`]; it follows `serde_json`'s choices for scalars (unit and
/// unit structs are `null`, unit variants their name) and fails on everything compound.
struct ScalarProbe;

#[derive(Debug)]
struct NotScalar;

impl fmt::Display for NotScalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a scalar")
    }
}

impl std::error::Error for NotScalar {}

impl ser::Error for NotScalar {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        NotScalar
    }
}

macro_rules! scalar_from {
    ($($method:ident: $ty:ty),*) => {
        $(fn $method(self, v: $ty) -> Result<Json, NotScalar> { Ok(Json::from(v)) })*
    };
}

impl ser::Serializer for ScalarProbe {
    type Ok = Json;
    type Error = NotScalar;
    type SerializeSeq = Impossible<Json, NotScalar>;
    type SerializeTuple = Impossible<Json, NotScalar>;
    type SerializeTupleStruct = Impossible<Json, NotScalar>;
    type SerializeTupleVariant = Impossible<Json, NotScalar>;
    type SerializeMap = Impossible<Json, NotScalar>;
    type SerializeStruct = Impossible<Json, NotScalar>;
    type SerializeStructVariant = Impossible<Json, NotScalar>;

    scalar_from!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_str: &str);

    fn serialize_f32(self, v: f32) -> Result<Json, NotScalar> {
        self.serialize_f64(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<Json, NotScalar> {
        // NaN and infinities have no JSON form (and MySQL rejects them): store them as blobs.
        Number::from_f64(v).map(Json::Number).ok_or(NotScalar)
    }
    fn serialize_char(self, v: char) -> Result<Json, NotScalar> {
        Ok(Json::String(v.to_string()))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<Json, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_none(self) -> Result<Json, NotScalar> {
        Ok(Json::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Json, NotScalar> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Json, NotScalar> {
        Ok(Json::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Json, NotScalar> {
        Ok(Json::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Json, NotScalar> {
        Ok(Json::from(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Json, NotScalar> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<Json, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, NotScalar> {
        Err(NotScalar)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, NotScalar> {
        Err(NotScalar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn msgpack_to_json_documents_its_lossy_cases() {
        let tree = Mp::Map(vec![
            (Mp::from(1), Mp::Binary(vec![7, 8])),
            (Mp::from("nan"), Mp::F64(f64::NAN)),
            (Mp::from("f"), Mp::F32(0.5)),
            (Mp::from("neg"), Mp::from(-3)),
            (Mp::from("ext"), Mp::Ext(9, vec![1])),
        ]);
        assert_eq!(
            to_json(&tree),
            json!({"1": [7, 8], "nan": null, "f": 0.5, "neg": -3, "ext": {"__ext__": 9, "data": [1]}})
        );
    }

    #[test]
    fn json_round_trips_through_msgpack() {
        let value = json!({"a": [1, -2, 2.5, null, true, "x"], "b": {"c": u64::MAX}});
        assert_eq!(to_json(&from_json(&value)), value);
    }

    #[test]
    fn lc_envelopes_revive_to_plain_data() {
        let doc = json!([
            {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
             "kwargs": {"content": "hi", "id": "h1"}},
            {"lc": 2, "type": "constructor", "id": ["uuid", "UUID"], "args": ["00ff"]},
            {"lc": 1, "type": "constructor", "id": ["x", "Doc"], "kwargs": {"page_content": "p"}},
            {"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]},
            {"lc": 1, "type": "constructor", "id": ["x", "Empty"]},
        ]);
        assert_eq!(
            revive(doc),
            json!([
                {"content": "hi", "id": "h1", "type": "human"},
                "00ff",
                {"page_content": "p"},
                {"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]},
                {"lc": 1, "type": "constructor", "id": ["x", "Empty"]},
            ])
        );
    }

    #[test]
    fn scalar_probe_accepts_only_scalars() {
        #[derive(::serde::Serialize)]
        struct Wrapper(u8);
        #[derive(::serde::Serialize)]
        enum Mode {
            Fast,
        }
        assert_eq!(json_scalar(&3_i64), Some(json!(3)));
        assert_eq!(json_scalar("x"), Some(json!("x")));
        assert_eq!(json_scalar(&Some(1.5)), Some(json!(1.5)));
        assert_eq!(json_scalar(&None::<u8>), Some(json!(null)));
        assert_eq!(json_scalar(&Wrapper(7)), Some(json!(7)));
        assert_eq!(json_scalar(&Mode::Fast), Some(json!("Fast")));
        assert_eq!(json_scalar(&f64::NAN), None);
        assert_eq!(json_scalar(&vec![1]), None);
        assert_eq!(json_scalar(&json!({"a": 1})), None);
    }
}
