//! Type-erased channel values: what a checkpoint holds for one channel.
//!
//! The engine keeps state as the user's typed struct. When a checkpoint is taken, each changed field
//! is wrapped in a [`ChannelValue`] that shares the live value behind an `Arc` (no serialization, no
//! deep copy), so the in-memory saver stays cheap. Savers that write bytes use
//! [`checkpoint::serde`](crate::checkpoint::serde) (LangGraph's `JsonPlusSerializer`); values they
//! read back arrive as [`ChannelValue::Encoded`] or [`ChannelValue::Json`] and are decoded into the
//! field's type by [`ChannelValue::decode`].

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use serde::de::value::SeqDeserializer;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::checkpoint::serde::decode;

/// A live Rust value that can be stored in a checkpoint.
///
/// Implemented for every `T: Serialize + Debug + Send + Sync + 'static`; you never implement it by hand.
pub trait AnyValue: Any + Send + Sync + fmt::Debug {
    /// The value as `&dyn Any`, for downcasting back to its concrete type.
    fn as_any(&self) -> &dyn Any;
    /// The value as JSON (used for inline primitives and for human-readable output).
    fn to_json(&self) -> Result<serde_json::Value, ValueError>;
    /// The value as MessagePack, with struct fields as maps and LangChain messages as ext 5
    /// (LangGraph's layout; [`dumps_typed`](crate::checkpoint::serde::dumps_typed) canonicalises
    /// it to Python's exact bytes).
    fn to_msgpack(&self) -> Result<Vec<u8>, ValueError>;
    /// The value as a JSON scalar (null, bool, finite number, string) when it serializes to one,
    /// `None` for anything else. Cheap for compound values: nothing is serialized for them.
    fn to_json_scalar(&self) -> Option<serde_json::Value>;
    /// The Rust type name, for error messages.
    fn type_name(&self) -> &'static str;
}

impl<T> AnyValue for T
where
    T: Serialize + Send + Sync + fmt::Debug + 'static,
{
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn to_json(&self) -> Result<serde_json::Value, ValueError> {
        serde_json::to_value(self).map_err(|e| ValueError::Encode(e.to_string()))
    }
    fn to_msgpack(&self) -> Result<Vec<u8>, ValueError> {
        rmp_serde::to_vec_named(self).map_err(|e| ValueError::Encode(e.to_string()))
    }
    fn to_json_scalar(&self) -> Option<serde_json::Value> {
        decode::json_scalar(self)
    }
    fn type_name(&self) -> &'static str {
        std::any::type_name::<T>()
    }
}

/// Bytes as a saver stored them, tagged with LangGraph's serializer type (`"msgpack"`, `"json"`,
/// `"bytes"`, `"null"`, ...).
#[derive(Clone, PartialEq, Eq)]
pub struct Encoded {
    /// The serializer type tag, as stored in the `type` column of LangGraph's tables.
    pub kind: Arc<str>,
    /// The payload.
    pub bytes: Arc<[u8]>,
}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Encoded({}, {} bytes)", self.kind, self.bytes.len())
    }
}

/// The value of one channel (or one pending write) in a checkpoint.
///
/// Cloning is cheap: every variant shares its payload.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ChannelValue {
    /// No payload: Python's `None`. Edge channels (`branch:to:x`) carry it.
    Null,
    /// A live Rust value, shared with the run that produced it.
    Live(Arc<dyn AnyValue>),
    /// A JSON value (inline primitives read back from a checkpoint document).
    Json(Arc<serde_json::Value>),
    /// Serialized bytes read back from a saver.
    Encoded(Encoded),
    /// A reducer write that replaces the channel's value instead of being folded in
    /// (LangGraph's `Overwrite`).
    Overwrite(Box<ChannelValue>),
}

impl ChannelValue {
    /// Wraps a live value.
    pub fn new<T: Serialize + Send + Sync + fmt::Debug + 'static>(value: T) -> Self {
        Self::Live(Arc::new(value))
    }

    /// Wraps bytes read from storage.
    pub fn encoded(kind: impl Into<Arc<str>>, bytes: impl Into<Arc<[u8]>>) -> Self {
        Self::Encoded(Encoded { kind: kind.into(), bytes: bytes.into() })
    }

    /// Whether this is [`ChannelValue::Null`] (or an encoded `null`).
    pub fn is_null(&self) -> bool {
        match self {
            Self::Null => true,
            Self::Json(v) => v.is_null(),
            Self::Encoded(e) => &*e.kind == "null",
            _ => false,
        }
    }

    /// Borrows the live value as `T` when it is one, without decoding.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        match self {
            Self::Live(v) => v.as_any().downcast_ref::<T>(),
            _ => None,
        }
    }

    /// Produces a `T` from this value: a clone of the live value when it already is a `T`,
    /// otherwise a decode of its JSON or MessagePack form.
    ///
    /// Encoded values are read as LangGraph's `JsonPlusSerializer` wrote them: `msgpack` with its
    /// ext types turned into plain data first (LangChain messages decode to
    /// [`Message`](crate::messages::Message), see [`checkpoint::serde`](crate::checkpoint::serde)),
    /// legacy `json` with LangChain constructor envelopes revived, and `bytes`/`bytearray` as a
    /// sequence of bytes (`Vec<u8>`).
    ///
    /// # Errors
    /// [`ValueError::Decode`] when the stored bytes are not a valid `T`.
    pub fn decode<T>(&self) -> Result<T, ValueError>
    where
        T: DeserializeOwned + Clone + 'static,
    {
        match self {
            Self::Null => serde_json::from_value(serde_json::Value::Null).map_err(decode_err::<T>),
            Self::Live(v) => match v.as_any().downcast_ref::<T>() {
                Some(t) => Ok(t.clone()),
                // A live value of another Rust type (e.g. restored from a different build): go
                // through JSON, which every serde type supports.
                None => serde_json::from_value(v.to_json()?).map_err(decode_err::<T>),
            },
            Self::Json(v) => T::deserialize(&**v).map_err(decode_err::<T>),
            Self::Encoded(e) => match &*e.kind {
                "msgpack" => {
                    if let Some(messages) = message_list::<T>(&e.bytes) {
                        return Ok(messages);
                    }
                    decode::decode_msgpack(&e.bytes).map_err(decode_err::<T>)
                }
                "json" => {
                    let json = decode::json_value(&e.bytes).map_err(decode_err::<T>)?;
                    T::deserialize(json).map_err(decode_err::<T>)
                }
                "bytes" | "bytearray" => {
                    let seq = SeqDeserializer::<_, serde::de::value::Error>::new(e.bytes.iter().copied());
                    T::deserialize(seq).map_err(decode_err::<T>)
                }
                "null" | "empty" => serde_json::from_value(serde_json::Value::Null).map_err(decode_err::<T>),
                other => Err(ValueError::UnknownType(other.to_owned())),
            },
            Self::Overwrite(inner) => inner.decode(),
        }
    }

    /// The value as JSON, whatever its form.
    ///
    /// Stored msgpack is converted as documented in
    /// [`checkpoint::serde`](crate::checkpoint::serde) (ext values become plain data, bytes an
    /// array of numbers, non-string keys their text, non-finite floats `null`). An
    /// [`ChannelValue::Overwrite`] is LangGraph's JSON form of its dataclass,
    /// `{"value": ..., "type": "__overwrite__"}`.
    ///
    /// # Errors
    /// [`ValueError`] when the value cannot be represented as JSON.
    pub fn to_json(&self) -> Result<serde_json::Value, ValueError> {
        match self {
            Self::Null => Ok(serde_json::Value::Null),
            Self::Live(v) => v.to_json(),
            Self::Json(v) => Ok((**v).clone()),
            Self::Encoded(e) => match &*e.kind {
                "msgpack" => decode::msgpack_to_json(&e.bytes).map_err(decode_err::<serde_json::Value>),
                _ => self.decode::<serde_json::Value>(),
            },
            Self::Overwrite(inner) => {
                Ok(serde_json::json!({ "value": inner.to_json()?, "type": "__overwrite__" }))
            }
        }
    }
}

/// When `T` is `Vec<Message>`, the stored list decoded so that every message keeps the bytes it
/// was read from (see `checkpoint::serde::decode_message_list`); `None` for other types and
/// other bytes.
fn message_list<T: 'static>(bytes: &[u8]) -> Option<T> {
    if TypeId::of::<T>() != TypeId::of::<Vec<crate::messages::Message>>() {
        return None;
    }
    let messages: Box<dyn Any> = Box::new(decode::decode_message_list(bytes)?);
    messages.downcast::<T>().ok().map(|t| *t)
}

fn decode_err<T>(e: impl fmt::Display) -> ValueError {
    ValueError::Decode { type_name: std::any::type_name::<T>(), reason: e.to_string() }
}

/// Why a value could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    /// Serialization failed.
    #[error("cannot encode value: {0}")]
    Encode(String),
    /// The stored bytes are not a valid value of the expected type.
    #[error("cannot decode value as `{type_name}`: {reason}")]
    Decode {
        /// The Rust type that was expected.
        type_name: &'static str,
        /// What the decoder reported.
        reason: String,
    },
    /// The serializer type tag is not one this build understands.
    #[error("unknown serializer type `{0}`")]
    UnknownType(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_values_downcast_without_copy() {
        let v = ChannelValue::new(vec![1_u32, 2, 3]);
        assert_eq!(v.downcast_ref::<Vec<u32>>(), Some(&vec![1, 2, 3]));
        assert_eq!(v.decode::<Vec<u32>>().unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn encoded_values_decode_through_msgpack_and_json() {
        let bytes = rmp_serde::to_vec_named(&vec!["a", "b"]).unwrap();
        let v = ChannelValue::encoded("msgpack", bytes);
        assert_eq!(v.decode::<Vec<String>>().unwrap(), vec!["a", "b"]);
        let v = ChannelValue::encoded("json", b"[1,2]".to_vec());
        assert_eq!(v.decode::<Vec<i64>>().unwrap(), vec![1, 2]);
    }

    #[test]
    fn decoding_the_wrong_type_is_a_typed_error() {
        let v = ChannelValue::encoded("msgpack", rmp_serde::to_vec(&"text").unwrap());
        let err = v.decode::<u64>().unwrap_err();
        assert!(matches!(err, ValueError::Decode { .. }), "{err}");
        let err = ChannelValue::encoded("pickle", vec![1]).decode::<u64>().unwrap_err();
        assert_eq!(err, ValueError::UnknownType("pickle".into()));
    }
}
