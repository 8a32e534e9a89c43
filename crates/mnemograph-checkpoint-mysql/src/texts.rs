//! The texts of a stored checkpoint row, its document and its metadata as sent, kept to tell
//! later that the row still holds them.
//!
//! The read cache remembers them with each checkpoint it stores; a put whose parent is such a
//! checkpoint checks that the parent's row is unchanged, since what is put was computed from the
//! row as it was.

use std::sync::atomic::{AtomicU8, Ordering};

use md5::{Digest, Md5};
use mnemograph_checkpoint::checkpoint::CheckpointError;
use sqlx::mysql::MySqlRow;
use sqlx::Row as _;

use crate::error::backend;

/// The stored texts of a checkpoint: its document and its metadata, as sent.
#[derive(Debug)]
pub(crate) struct Texts {
    /// The document text.
    document: String,
    /// The metadata text.
    metadata: String,
}

impl Texts {
    /// The texts `document` and `metadata`.
    pub(crate) fn new(document: &str, metadata: &str) -> Self {
        Self { document: document.to_owned(), metadata: metadata.to_owned() }
    }

    /// Whether `row`'s columns 1 and 2 (document and metadata as `CHAR`) are these texts.
    pub(crate) fn match_row(&self, row: &MySqlRow) -> Result<bool, CheckpointError> {
        let document: Option<String> = row.try_get(1).map_err(backend)?;
        let metadata: Option<String> = row.try_get(2).map_err(backend)?;
        Ok(document.as_deref() == Some(self.document.as_str())
            && metadata.as_deref() == Some(self.metadata.as_str()))
    }

    /// The MD5 digests of the document and the metadata, as `UNHEX(MD5(…))` gives them (compared
    /// as bytes, so no collation is involved).
    pub(crate) fn md5(&self) -> [[u8; 16]; 2] {
        [Md5::digest(self.document.as_bytes()).into(), Md5::digest(self.metadata.as_bytes()).into()]
    }
}

/// What reading rows back showed of the server (see [`TextsSeen`]).
const TEXTS_UNKNOWN: u8 = 0;
const TEXTS_KEPT: u8 = 1;
const TEXTS_CHANGED: u8 = 2;

/// Whether the server gives back a checkpoint's texts as they were sent: not yet known, yes
/// (MariaDB keeps a JSON column's text), or no (MySQL 8 stores JSON in a binary form and renders
/// it its own way, or a row was rewritten). Runs start from memory, and commits compare a
/// remembered parent's texts, only once a row read back was found unchanged: on a server that
/// renders JSON anew, every comparison would fail.
#[derive(Debug, Default)]
pub(crate) struct TextsSeen(AtomicU8);

impl TextsSeen {
    /// Whether rows read back were found as this saver wrote them.
    pub(crate) fn kept(&self) -> bool {
        self.0.load(Ordering::Relaxed) == TEXTS_KEPT
    }

    /// Records what the first comparison showed; a later edit does not change what was learnt.
    pub(crate) fn learn(&self, unchanged: bool) {
        let learnt = if unchanged { TEXTS_KEPT } else { TEXTS_CHANGED };
        let _ = self.0.compare_exchange(TEXTS_UNKNOWN, learnt, Ordering::Relaxed, Ordering::Relaxed);
    }
}
