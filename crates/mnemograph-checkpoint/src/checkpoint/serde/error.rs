//! The codec's error.

/// Why a value or document could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SerdeError {
    /// The serializer type tag is not one LangGraph's `JsonPlusSerializer` writes (e.g. `pickle`).
    #[error("unknown serializer type `{0}`")]
    UnknownType(String),
    /// The bytes are not valid msgpack (truncated, trailing bytes, too deeply nested, ...).
    #[error("malformed msgpack: {0}")]
    Msgpack(String),
    /// The bytes are not valid JSON.
    #[error("malformed json: {0}")]
    Json(String),
    /// A live value could not be serialized.
    #[error("cannot encode value: {0}")]
    Encode(String),
    /// A checkpoint document is missing a required key or has one of the wrong shape.
    #[error("invalid checkpoint document: {0}")]
    Document(String),
    /// Checkpoint metadata is malformed.
    #[error("invalid checkpoint metadata: {0}")]
    Metadata(String),
}
