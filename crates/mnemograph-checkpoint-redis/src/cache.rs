//! What the read cache keeps of each checkpoint it remembers: the stored bytes the server is
//! asked to still hold before a remembered checkpoint is trusted (see `cached_read`).

/// What was stored for a remembered checkpoint, to compare with what the server holds.
#[derive(Debug)]
pub(crate) struct Stored {
    /// Its member of the thread's index.
    pub(crate) member: String,
    /// Its record (document, metadata, parent).
    pub(crate) record: Vec<u8>,
    /// Its blob references.
    pub(crate) refs: String,
}
