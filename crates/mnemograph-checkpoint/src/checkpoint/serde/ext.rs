//! LangGraph's msgpack extension types: building the ones Rust writes (LangChain messages as ext 5,
//! `Overwrite` as ext 2) and turning every ext value read from Python into plain data.

use std::fmt;

use rmpv::Value;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{Serialize, Serializer};

use super::error::SerdeError;
use super::msgpack;
use crate::messages::MessageType;

/// `cls(arg)`: UUID, Decimal, set, Enum, ...
pub(crate) const EXT_CONSTRUCTOR_SINGLE_ARG: i8 = 0;
/// `cls(*args)`: `Send`, Path, timedelta, ...
pub(crate) const EXT_CONSTRUCTOR_POS_ARGS: i8 = 1;
/// `cls(**kwargs)`: dataclasses such as `Interrupt` and `Overwrite`.
pub const EXT_CONSTRUCTOR_KW_ARGS: i8 = 2;
// 3 is `getattr(cls, method)(arg)` (datetime via `fromisoformat`); it needs no special case.
/// Pydantic v1 models.
pub(crate) const EXT_PYDANTIC_V1: i8 = 4;
/// Pydantic v2 models, including every LangChain message.
pub(crate) const EXT_PYDANTIC_V2: i8 = 5;
/// `DeltaChannel` snapshots: the payload is the wrapped value itself.
pub(crate) const EXT_DELTA_SNAPSHOT: i8 = 7;

/// The 4th element of an ext 5 payload, the classmethod Python revives models with.
pub(crate) const PYDANTIC_V2_METHOD: &str = "model_validate_json";

/// The newtype name rmp-serde (and rmpv) treat as "write/read an extension value".
const EXT_STRUCT_NAME: &str = "_ExtStruct";

/// Key under which [`normalise`] keeps the code of an ext it cannot interpret.
pub(crate) const RAW_EXT_KEY: &str = "__ext__";

/// An extension value to hand to a serde serializer: rmp-serde writes it as a msgpack ext, other
/// formats see a `(code, bytes)` tuple.
#[derive(Debug)]
pub struct ExtRef<'a> {
    /// The ext type code.
    pub code: i8,
    /// The payload, itself msgpack for every LangGraph code.
    pub data: &'a [u8],
}

impl Serialize for ExtRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(EXT_STRUCT_NAME, &(self.code, RawBytes(self.data)))
    }
}

/// The ext payload of a `langgraph.types` class built from `args`: `[module, class, args]`, where
/// `args` is the keyword map (ext 2) or the positional list (ext 1) Python's constructor takes.
pub fn langgraph_dataclass<T: Serialize>(class: &str, args: &T) -> Result<Vec<u8>, String> {
    rmp_serde::to_vec_named(&("langgraph.types", class, args)).map_err(|e| e.to_string())
}

/// Bytes serialized with `serialize_bytes` (what rmp-serde's ext writer requires).
struct RawBytes<'a>(&'a [u8]);

impl Serialize for RawBytes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(self.0)
    }
}

/// Reads the `(code, bytes)` pair rmp-serde presents inside its `_ExtStruct` newtype.
pub(crate) fn deserialize_ext<'de, D: Deserializer<'de>>(deserializer: D) -> Result<(i8, Vec<u8>), D::Error> {
    struct ExtVisitor;
    impl<'de> Visitor<'de> for ExtVisitor {
        type Value = (i8, Vec<u8>);
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a msgpack extension (code, bytes)")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let code: i8 = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(0, &self))?;
            let data: ByteBuf = seq.next_element()?.ok_or_else(|| de::Error::invalid_length(1, &self))?;
            Ok((code, data.0))
        }
    }
    deserializer.deserialize_tuple(2, ExtVisitor)
}

/// Owned bytes read through `visit_bytes` (or a sequence of bytes, for formats without a bytes type).
struct ByteBuf(Vec<u8>);

impl<'de> serde::Deserialize<'de> for ByteBuf {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BytesVisitor;
        impl<'de> Visitor<'de> for BytesVisitor {
            type Value = ByteBuf;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<ByteBuf, E> {
                Ok(ByteBuf(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ByteBuf, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = seq.next_element()? {
                    out.push(b);
                }
                Ok(ByteBuf(out))
            }
        }
        deserializer.deserialize_bytes(BytesVisitor)
    }
}

/// LangGraph's `Overwrite(value)` dataclass as ext 2: `["langgraph.types", "Overwrite", {"value":
/// v, "type": "__overwrite__"}]`, the exact payload Python 1.2 writes (its `type` field is a
/// discriminator with that constant default).
pub(crate) fn overwrite(inner: Value) -> Result<Value, SerdeError> {
    let kwargs =
        Value::Map(vec![(Value::from("value"), inner), (Value::from("type"), Value::from("__overwrite__"))]);
    constructor(EXT_CONSTRUCTOR_KW_ARGS, "langgraph.types", "Overwrite", kwargs)
}

/// A Python object as its serializer writes it: ext `code` around `[module, class, arg]`, where
/// `arg` is what the constructor takes (one value, a positional list or a keyword map).
pub(crate) fn constructor(code: i8, module: &str, class: &str, arg: Value) -> Result<Value, SerdeError> {
    let payload = Value::Array(vec![Value::from(module), Value::from(class), arg]);
    Ok(Value::Ext(code, msgpack::write(&payload)?))
}

/// The wrapped value when `value` is an ext 2 `langgraph.types.Overwrite`, left undecoded.
pub(crate) fn as_overwrite(value: &Value) -> Result<Option<Value>, SerdeError> {
    let Value::Ext(EXT_CONSTRUCTOR_KW_ARGS, data) = value else { return Ok(None) };
    let Value::Array(parts) = msgpack::read(data)? else { return Ok(None) };
    match parts.as_slice() {
        [module, class, Value::Map(kwargs), ..]
            if module.as_str() == Some("langgraph.types") && class.as_str() == Some("Overwrite") =>
        {
            let inner = kwargs.iter().find(|(k, _)| k.as_str() == Some("value")).map(|(_, v)| v.clone());
            Ok(Some(inner.unwrap_or(Value::Nil)))
        }
        _ => Ok(None),
    }
}

/// Whether the tree holds anything [`normalise`] changes (ext or binary values).
pub(crate) fn needs_normalising(value: &Value) -> bool {
    match value {
        Value::Ext(..) | Value::Binary(_) => true,
        Value::Array(items) => items.iter().any(needs_normalising),
        Value::Map(entries) => entries.iter().any(|(k, v)| needs_normalising(k) || needs_normalising(v)),
        _ => false,
    }
}

/// Replaces every ext value by plain data, recursively (payloads may nest further exts), and
/// binary by an array of byte values, so any serde type can be read from the result:
///
/// | ext | becomes |
/// |---|---|
/// | 5, a LangChain message class | its kwargs map, `type` set from the class |
/// | 1 `langgraph.types.Send` | `{"node": .., "arg": ..}` (+ `"timeout"` when set) |
/// | 0, 1, 2, 3, 4, other 5 | the constructor argument: UUID hex, datetime ISO string, dataclass or model kwargs, args list |
/// | 7 (delta snapshot) | the wrapped value |
/// | anything else (numpy 6, unknown codes) or an unexpected payload shape | `{"__ext__": code, "data": [bytes]}` |
///
/// `depth` bounds nesting across ext payloads. Bytes inside a payload that are not msgpack are an
/// error, not a silent `null`.
pub(crate) fn normalise(value: Value, depth: usize) -> Result<Value, SerdeError> {
    let depth = depth.checked_sub(1).ok_or_else(too_deep)?;
    // Plain loops rather than iterator chains, and the leaf cases out of line: this recurses once
    // per nesting level, and in debug builds every adapter of a `map().collect()` chain is a
    // stack frame of its own.
    Ok(match value {
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(normalise(item, depth)?);
            }
            Value::Array(out)
        }
        Value::Map(entries) => {
            let mut out = Vec::with_capacity(entries.len());
            for (k, v) in entries {
                out.push((normalise(k, depth)?, normalise(v, depth)?));
            }
            Value::Map(out)
        }
        Value::Binary(bytes) => byte_values(bytes),
        Value::Ext(code, data) => normalise_ext(code, data, depth)?,
        other => other,
    })
}

/// [`normalise`] of one ext value, out of line so its temporaries stay out of the recursion.
#[inline(never)]
fn normalise_ext(code: i8, data: Vec<u8>, depth: usize) -> Result<Value, SerdeError> {
    normalise(decode_ext(code, data, depth)?, depth)
}

/// Binary as an array of byte values.
#[inline(never)]
fn byte_values(bytes: Vec<u8>) -> Value {
    Value::Array(bytes.into_iter().map(Value::from).collect())
}

fn too_deep() -> SerdeError {
    SerdeError::Msgpack(format!("value nested deeper than {} levels", msgpack::MAX_DEPTH))
}

/// One ext value as plain (not yet normalised) data; see [`normalise`].
fn decode_ext(code: i8, data: Vec<u8>, depth: usize) -> Result<Value, SerdeError> {
    if code == EXT_DELTA_SNAPSHOT {
        return msgpack::read_with_depth(&data, depth);
    }
    if !(EXT_CONSTRUCTOR_SINGLE_ARG..=EXT_PYDANTIC_V2).contains(&code) {
        return Ok(raw(code, data));
    }
    let Value::Array(parts) = msgpack::read_with_depth(&data, depth)? else { return Ok(raw(code, data)) };
    let mut parts = parts.into_iter();
    let (Some(module), Some(class), Some(arg)) = (parts.next(), parts.next(), parts.next()) else {
        return Ok(raw(code, data));
    };
    let (module, class) = (module.as_str().unwrap_or_default(), class.as_str().unwrap_or_default());
    Ok(match code {
        EXT_CONSTRUCTOR_POS_ARGS if module == "langgraph.types" && class == "Send" => send(arg),
        EXT_PYDANTIC_V2 | EXT_PYDANTIC_V1 => message_kwargs(module, class, arg),
        _ => arg,
    })
}

/// The form Python falls back to for ext values it cannot rebuild, plus the code.
fn raw(code: i8, data: Vec<u8>) -> Value {
    Value::Map(vec![
        (Value::from(RAW_EXT_KEY), Value::from(code)),
        (Value::from("data"), Value::Binary(data)),
    ])
}

/// `Send(node, arg[, timeout])` as `{"node", "arg"[, "timeout"]}`, the map the engine keeps pushes in.
fn send(args: Value) -> Value {
    let Value::Array(args) = args else { return args };
    if args.len() < 2 {
        return Value::Array(args);
    }
    let mut args = args.into_iter();
    let mut map = vec![
        (Value::from("node"), args.next().unwrap_or(Value::Nil)),
        (Value::from("arg"), args.next().unwrap_or(Value::Nil)),
    ];
    if let Some(timeout) = args.next().filter(|t| !t.is_nil()) {
        map.push((Value::from("timeout"), timeout));
    }
    Value::Map(map)
}

/// A pydantic payload's kwargs; for LangChain message classes with `type` set from the class,
/// so `Message`'s `Deserialize` gets the kind even from minimal kwargs (or from a chunk class).
fn message_kwargs(module: &str, class: &str, kwargs: Value) -> Value {
    let kind = MessageType::from_lc_class(class).filter(|_| module.starts_with("langchain"));
    match (kind, kwargs) {
        (Some(kind), Value::Map(mut entries)) => {
            let type_value = Value::from(kind.as_str());
            match entries.iter_mut().find(|(k, _)| k.as_str() == Some("type")) {
                Some((_, v)) => *v = type_value,
                None => entries.push((Value::from("type"), type_value)),
            }
            Value::Map(entries)
        }
        (_, kwargs) => kwargs,
    }
}

/// Checks that every ext payload LangGraph defines as msgpack parses, without building the plain
/// form, so `loads_typed` reports malformed blobs when they are read rather than later.
pub(crate) fn validate(value: &Value, depth: usize) -> Result<(), SerdeError> {
    let depth = depth.checked_sub(1).ok_or_else(too_deep)?;
    match value {
        Value::Array(items) => {
            for item in items {
                validate(item, depth)?;
            }
            Ok(())
        }
        Value::Map(entries) => {
            for (k, v) in entries {
                validate(k, depth)?;
                validate(v, depth)?;
            }
            Ok(())
        }
        Value::Ext(code, data)
            if (EXT_CONSTRUCTOR_SINGLE_ARG..=EXT_PYDANTIC_V2).contains(code)
                || *code == EXT_DELTA_SNAPSHOT =>
        {
            validate_payload(data, depth)
        }
        _ => Ok(()),
    }
}

/// [`validate`] of an ext payload, out of line so the parsed payload is not in the recursion's
/// frame.
#[inline(never)]
fn validate_payload(data: &[u8], depth: usize) -> Result<(), SerdeError> {
    validate(&msgpack::read_with_depth(data, depth)?, depth)
}
