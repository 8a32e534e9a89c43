//! The crate's error type.

/// Everything that can go wrong in mnemograph-memory-milvus: a Milvus request, or one of the
/// failures every memory backend shares.
///
/// The [`Memory`](mnemograph_memory::Memory) API of [`MilvusMemory`](crate::MilvusMemory) returns
/// [`mnemograph_memory::Error`], like every backend; a Milvus failure reaches it as
/// [`mnemograph_memory::Error::Backend`] with this error as its source. Constructors, collection
/// management and [`MilvusStore`](crate::MilvusStore)'s set-up return this type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A Milvus request failed (connection, server error, malformed response). Boxed: the SDK's
    /// error is large and would make every `Result` of this crate large.
    #[error("milvus request failed")]
    Milvus(#[source] Box<milvus::v2::prelude::Error>),
    /// Invalid input, an embedding failure, an unexpected answer: what any memory backend can
    /// report.
    #[error(transparent)]
    Memory(#[from] mnemograph_memory::Error),
}

impl From<milvus::v2::prelude::Error> for Error {
    fn from(e: milvus::v2::prelude::Error) -> Self {
        Self::Milvus(Box::new(e))
    }
}

/// A Milvus failure becomes the shared error's `Backend`, keeping this error as its source; a
/// shared failure is passed on as it is.
impl From<Error> for mnemograph_memory::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Memory(e) => e,
            milvus => Self::Backend(Box::new(milvus)),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
