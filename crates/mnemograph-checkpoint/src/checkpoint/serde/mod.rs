//! LangGraph's `JsonPlusSerializer`, byte-compatible with Python: the `(type, bytes)` pairs
//! savers store for channel values and pending writes, the checkpoint JSON document of the
//! SQL savers, and the whole checkpoint as one msgpack value (the SQLite saver's).
//!
//! # Wire format
//!
//! [`dumps_typed`] returns `("null", b"")` for no value and `("msgpack", bytes)` otherwise. Plain
//! data is ordinary msgpack written exactly as Python's `ormsgpack` writes it (smallest integer
//! and length forms, `float64` for every float, `bin` for bytes). LangChain messages are ext 5
//! `[module, class, kwargs, "model_validate_json"]` with the kwargs in `model_dump()` order, and
//! [`ChannelValue::Overwrite`] is LangGraph's `Overwrite` dataclass as ext 2. Both payloads are
//! always longer than 16 bytes and so written as `ext8/16/32` (like `ormsgpack`, the writer uses
//! `fixext` only for 1/2/4/8/16-byte payloads, which only Python-written values can have).
//! `HumanMessage("hi", id="h1")` encodes to the same 140 bytes as in Python.
//!
//! [`loads_typed`] reads `null`/`empty`, `bytes`/`bytearray`, `msgpack` and the legacy `json`
//! (with LangChain `lc` constructor envelopes), keeps other types (`pickle`, encrypted payloads)
//! as opaque bytes, and returns a value that
//! [`ChannelValue::decode`] turns into any serde type: a `Vec<Message>` written by Python decodes
//! to [`Message`](crate::messages::Message)s, a dict to a struct. Ext values Rust has no type for
//! decode to their plain payload (UUID → hex string, datetime → ISO string, `Send` →
//! `{"node", "arg"}`, dataclasses and pydantic models → their kwargs map, unknown codes →
//! `{"__ext__": code, "data": [bytes]}`), never to a panic or a silent `null`.
//!
//! # How messages are recognised
//!
//! [`Message`](crate::messages::Message)'s `Serialize` writes the plain LangChain map for
//! human-readable formats (JSON) and the ext 5 value, through rmp-serde's `_ExtStruct` newtype,
//! for binary ones (rmp-serde is not human-readable by default). So the type, not the shape of a
//! map, decides: a user map that happens to have a `content` key is never mistaken for a message,
//! and a message nested anywhere in user state (a field, a map value, an `Option`) is found.
//!
//! # Key order and floats
//!
//! This crate asks serde_json for no feature, so it behaves the same in every program:
//!
//! - What this crate defines is written in Python's order whatever serde_json's features: the
//!   checkpoint document and the metadata are [`JsonObject`]s, messages and ext payloads are
//!   written field by field, and msgpack maps read from Python keep their order (stored values
//!   are written back as the bytes read).
//! - Maps held in a `serde_json::Value` or `serde_json::Map` (JSON state, message kwargs and
//!   metadata, metadata's user keys) come out in `serde_json::Map`'s order: sorted by key, or
//!   insertion order in a program that enables serde_json's `preserve_order`.
//! - JSON text is read with [`parse_json`], whose floats are correctly rounded as Python's are,
//!   so a float stored inline reads back as the same double with or without serde_json's
//!   `float_roundtrip`.
//!
//! # Example
//!
//! ```
//! use mnemograph_checkpoint::checkpoint::serde::{dumps_typed, loads_typed};
//! use mnemograph_checkpoint::value::ChannelValue;
//! use mnemograph_checkpoint::messages::Message;
//!
//! let history = vec![Message::human("hi").with_id("h1")];
//! let (kind, bytes) = dumps_typed(&ChannelValue::new(history.clone()))?;
//! assert_eq!(kind, "msgpack");
//! assert_eq!(&bytes[..4], &[0x91, 0xc7, 0x89, 0x05]); // [ext8(137 bytes, code 5)]
//! let back: Vec<Message> = loads_typed(&kind, &bytes)?.decode()?;
//! assert_eq!(back, history);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod canonical;
mod convert;
pub(crate) mod decode;
mod document;
mod error;
pub(crate) mod ext;
mod msgpack;
mod object;
mod packed;
pub(crate) mod python_json;
mod text;
pub(crate) mod trees;

pub use document::{checkpoint_from_json, checkpoint_to_json, Blob};
pub use error::SerdeError;
pub use object::JsonObject;
pub use packed::{checkpoint_from_msgpack, checkpoint_to_msgpack};
pub(crate) use packed::{split_document, value_bytes, PackedValue};
pub use text::parse as parse_json;

use decode::json_value;
pub(crate) use decode::message_from_ext;
pub(crate) use ext::{deserialize_ext, EXT_PYDANTIC_V2, PYDANTIC_V2_METHOD};

use crate::value::ChannelValue;

/// Encodes a channel value or pending write as LangGraph's `(type, bytes)`; see the module docs.
///
/// [`ChannelValue::Encoded`] values are returned unchanged, so bytes read from a saver are
/// written back bit for bit.
///
/// # Errors
/// [`SerdeError::Encode`] when a live value fails to serialize; [`SerdeError::Msgpack`] /
/// [`SerdeError::Json`] / [`SerdeError::UnknownType`] when an encoded value nested in an
/// [`ChannelValue::Overwrite`] is malformed.
pub fn dumps_typed(value: &ChannelValue) -> Result<(String, Vec<u8>), SerdeError> {
    let tree = match value {
        ChannelValue::Encoded(e) => return Ok((e.kind.to_string(), e.bytes.to_vec())),
        ChannelValue::Live(live) => {
            let bytes = live.to_msgpack().map_err(|e| SerdeError::Encode(e.to_string()))?;
            // rmp-serde's bytes are nearly always LangGraph's already: kept as they are when a
            // scan finds nothing to rewrite, rather than read into a tree and written again
            // (which, for a long conversation, cost more than encoding it).
            if canonical::is_canonical(&bytes) {
                return Ok(match bytes.as_slice() {
                    [0xc0] => ("null".to_owned(), Vec::new()),
                    _ => ("msgpack".to_owned(), bytes),
                });
            }
            live_tree(live.type_name(), &bytes)?
        }
        other => to_tree(other)?,
    };
    if tree.is_nil() {
        // Python writes `None` as type `null`, whatever produced it.
        return Ok(("null".to_owned(), Vec::new()));
    }
    Ok(("msgpack".to_owned(), msgpack::write(&tree)?))
}

/// rmp-serde's `bytes` of a live value of type `type_name` as a tree. rmp-serde's output is
/// already LangGraph's layout (messages as ext 5, see `Message`'s Serialize); writing the tree out
/// again canonicalises the few forms `ormsgpack` never writes (`f32`, `fixext`).
fn live_tree(type_name: &str, bytes: &[u8]) -> Result<rmpv::Value, SerdeError> {
    msgpack::read(bytes).map_err(|e| SerdeError::Encode(format!("{type_name}: {e}")))
}

/// A value as a msgpack tree, ready for [`msgpack::write`].
pub(crate) fn to_tree(value: &ChannelValue) -> Result<rmpv::Value, SerdeError> {
    Ok(match value {
        ChannelValue::Null => rmpv::Value::Nil,
        ChannelValue::Live(live) => {
            let bytes = live.to_msgpack().map_err(|e| SerdeError::Encode(e.to_string()))?;
            live_tree(live.type_name(), &bytes)?
        }
        ChannelValue::Json(json) => convert::from_json(json),
        ChannelValue::Encoded(e) => match &*e.kind {
            "msgpack" => msgpack::read(&e.bytes)?,
            "null" | "empty" => rmpv::Value::Nil,
            "bytes" | "bytearray" => rmpv::Value::Binary(e.bytes.to_vec()),
            "json" => convert::from_json(&json_value(&e.bytes)?),
            other => return Err(SerdeError::UnknownType(other.to_owned())),
        },
        ChannelValue::Overwrite(inner) => ext::overwrite(to_tree(inner)?)?,
    })
}

/// Decodes LangGraph's `(type, bytes)` into a value for [`ChannelValue::decode`].
///
/// `null`/`empty` give [`ChannelValue::Null`]; a top-level `Overwrite` gives
/// [`ChannelValue::Overwrite`]; everything else is checked and kept as
/// [`ChannelValue::Encoded`] (so it can be written back unchanged and decoded lazily into
/// whatever type the state field has). Types this crate does not read (`pickle`, a Python
/// serializer's own) are kept unchecked: decoding one fails with
/// [`ValueError::UnknownType`](crate::value::ValueError::UnknownType).
///
/// # Errors
/// [`SerdeError::UnknownType`] for an empty type tag; [`SerdeError::Msgpack`] /
/// [`SerdeError::Json`] for malformed bytes.
pub fn loads_typed(kind: &str, bytes: &[u8]) -> Result<ChannelValue, SerdeError> {
    match kind {
        "null" | "empty" => Ok(ChannelValue::Null),
        "bytes" | "bytearray" => Ok(ChannelValue::encoded(kind, bytes.to_vec())),
        "msgpack" => {
            let tree = msgpack::read(bytes)?;
            ext::validate(&tree, msgpack::MAX_DEPTH)?;
            if let Some(inner) = ext::as_overwrite(&tree)? {
                let inner = match inner {
                    rmpv::Value::Nil => ChannelValue::Null,
                    other => ChannelValue::encoded("msgpack", msgpack::write(&other)?),
                };
                return Ok(ChannelValue::Overwrite(Box::new(inner)));
            }
            Ok(ChannelValue::encoded("msgpack", bytes.to_vec()))
        }
        "json" => {
            json_value(bytes)?;
            Ok(ChannelValue::encoded("json", bytes.to_vec()))
        }
        // A Python serializer's own type (`pickle` from `pickle_fallback`, an encrypted
        // `msgpack+aes`, ...): kept as it is, so that a saver returns what it was given and Python
        // reads it back; decoding it into a Rust type fails with `ValueError::UnknownType`.
        "" => Err(SerdeError::UnknownType(String::new())),
        _ => Ok(ChannelValue::encoded(kind, bytes.to_vec())),
    }
}

#[cfg(test)]
mod tests;
