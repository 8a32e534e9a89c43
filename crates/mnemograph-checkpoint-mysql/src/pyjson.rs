//! JSON text written the way Python's `json.dumps` writes it.
//!
//! The Python saver stores the checkpoint document and the metadata with `json.dumps`, which
//! escapes every non-ASCII character (`\u5f20`) and separates items with `", "` and `": "`. MySQL
//! parses JSON columns into a binary form, so there the text does not matter; MariaDB keeps the
//! text verbatim and its `JSON_CONTAINS` compares strings *as written*: `"\u5f20"` does not contain
//! `"张"`. Writing documents and metadata filters in Python's style keeps filters working across
//! rows written by either implementation.

use serde::Serialize;

/// `json.dumps(value)` with Python's defaults (`ensure_ascii=True`, default separators).
pub(crate) fn dumps<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    mnemograph_checkpoint::__private::python_json::dumps(value, true)
}
