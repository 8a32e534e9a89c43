//! Reading LangGraph's stored bytes into Rust values: msgpack with Python's ext types, legacy
//! JSON blobs, and message lists kept byte for byte. Nothing here knows the channel value type,
//! so [`ChannelValue`](crate::value::ChannelValue) decodes through it.

use serde::de::DeserializeOwned;

use super::convert;
pub(crate) use super::convert::json_scalar;
use super::error::SerdeError;
use super::ext::{self, EXT_PYDANTIC_V2};
use super::msgpack;
use super::text;
use crate::messages::Message;

/// Reads LangGraph msgpack into `T`: Python's ext values are turned into plain data first (see
/// [`ext::normalise`]), then rmp-serde reads `T`, so enums, options, integer-keyed maps and
/// non-finite floats behave as with any rmp-serde round trip.
pub(crate) fn decode_msgpack<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    let tree = msgpack::read(bytes).map_err(|e| e.to_string())?;
    if !ext::needs_normalising(&tree) {
        return rmp_serde::from_slice(bytes).map_err(|e| e.to_string());
    }
    let plain = ext::normalise(tree, msgpack::MAX_DEPTH).map_err(|e| e.to_string())?;
    rmp_serde::from_slice(&msgpack::write(&plain).map_err(|e| e.to_string())?).map_err(|e| e.to_string())
}

/// LangGraph msgpack as JSON, ext values turned into plain data; see [`convert::to_json`].
pub(crate) fn msgpack_to_json(bytes: &[u8]) -> Result<serde_json::Value, SerdeError> {
    Ok(convert::to_json(&ext::normalise(msgpack::read(bytes)?, msgpack::MAX_DEPTH)?))
}

/// A legacy `json` blob as plain JSON, LangChain constructor envelopes revived.
pub(crate) fn json_value(bytes: &[u8]) -> Result<serde_json::Value, SerdeError> {
    Ok(convert::revive(text::parse(bytes)?))
}

/// A message from an ext value rmp-serde handed to `Message`'s `Deserialize`.
pub(crate) fn message_from_ext(code: i8, data: Vec<u8>) -> Result<Message, String> {
    message_within(code, data, msgpack::MAX_DEPTH)
}

/// [`message_from_ext`] with a nesting budget. A LangChain message (ext 5) keeps `data` as its
/// encoding (see `Message::with_payload`), so it is written back as Python wrote it until edited.
fn message_within(code: i8, data: Vec<u8>, depth: usize) -> Result<Message, String> {
    let payload = (code == EXT_PYDANTIC_V2).then(|| data.clone());
    let plain = ext::normalise(rmpv::Value::Ext(code, data), depth).map_err(|e| e.to_string())?;
    let message: Message = serde_json::from_value(convert::to_json(&plain))
        .map_err(|e| format!("ext {code} is not a message: {e}"))?;
    Ok(match payload {
        Some(payload) => message.with_payload(payload),
        None => message,
    })
}

/// A stored list of LangChain messages (a `messages` channel) as [`Message`]s that each keep the
/// ext 5 payload they were read from, so the ones a run does not edit are written back byte for
/// byte: the maps inside them in Python's order, which a `serde_json::Map` would not keep.
///
/// `None` when the bytes are anything else (not a list, an item that is not ext 5, a payload
/// that is not a message): the general decoding then reads them, or reports why it cannot.
pub(crate) fn decode_message_list(bytes: &[u8]) -> Option<Vec<Message>> {
    let rmpv::Value::Array(items) = msgpack::read(bytes).ok()? else { return None };
    if items.is_empty() {
        return None;
    }
    let mut messages = Vec::with_capacity(items.len());
    for item in items {
        let rmpv::Value::Ext(EXT_PYDANTIC_V2, data) = item else { return None };
        messages.push(message_within(EXT_PYDANTIC_V2, data, msgpack::MAX_DEPTH - 1).ok()?);
    }
    Some(messages)
}
