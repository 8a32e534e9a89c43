//! The texts of a run's channel versions: integers inside the engine, LangGraph's
//! `{n:032}.{random}` strings in checkpoints.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::checkpoint::{version_number, write_version_text, CheckpointError, VERSION_TEXT_LEN};
use crate::error::Result;

/// Versions below this are kept in a vector indexed by the version: a thread's versions are
/// consecutive integers from 1, so a lookup is an index rather than a search. Larger ones (from
/// stored data, or a thread past this many steps) go to a map.
const DENSE: u64 = 1 << 12;

/// Renders integer versions as LangGraph's strings, remembering each one so a version keeps the
/// same text for the whole thread — blobs are keyed by that exact text.
///
/// The texts are shared: every checkpoint that holds version `n` of some channel points at the
/// same text, so writing a checkpoint copies no version strings.
///
/// The map is a `BTreeMap` rather than a `HashMap`: its keys may come from stored data, so a weak
/// hash would not do, and SipHash costs more than comparing a few integers.
#[derive(Default)]
pub(crate) struct VersionText {
    /// Text of version `n` at index `n`, for `n < DENSE`.
    dense: Vec<Option<Arc<str>>>,
    /// Texts of versions from `DENSE` on.
    sparse: BTreeMap<u64, Arc<str>>,
}

impl VersionText {
    /// The text of version `n`, made (with a fresh random suffix) the first time it is asked for.
    pub(crate) fn text(&mut self, n: u64) -> Arc<str> {
        // Written on the stack and shared from there: the `Arc` is the text's only allocation.
        let make = || Arc::from(write_version_text(&mut [0; VERSION_TEXT_LEN], n));
        let slot = match self.slot(n) {
            Some(slot) => slot.get_or_insert_with(make),
            None => self.sparse.entry(n).or_insert_with(make),
        };
        Arc::clone(slot)
    }

    /// Remembers a version text read from a checkpoint; returns its counter.
    pub(crate) fn learn(&mut self, text: &Arc<str>) -> Result<u64> {
        let n = version_number(text).ok_or_else(|| {
            CheckpointError::Corrupt(format!("channel version {text:?} is not a LangGraph version"))
        })?;
        let known = || Arc::clone(text);
        match self.slot(n) {
            Some(slot) => slot.get_or_insert_with(known),
            None => self.sparse.entry(n).or_insert_with(known),
        };
        Ok(n)
    }

    /// The dense slot of `n`, grown to reach it; `None` when `n` is kept in the map.
    fn slot(&mut self, n: u64) -> Option<&mut Option<Arc<str>>> {
        let i = usize::try_from(n).ok().filter(|_| n < DENSE)?;
        if i >= self.dense.len() {
            // Doubling from 16 slots: a run of a few steps allocates once.
            self.dense.resize((i + 1).next_power_of_two().max(16), None);
        }
        self.dense.get_mut(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::version_number;

    #[test]
    fn a_version_keeps_its_text_whether_dense_or_sparse() {
        let mut vt = VersionText::default();
        for n in [1, 2, 17, DENSE - 1, DENSE, DENSE + 5, u64::MAX] {
            let first = vt.text(n);
            assert_eq!(version_number(&first), Some(n));
            assert!(Arc::ptr_eq(&first, &vt.text(n)), "version {n} got a second text");
        }
        assert_ne!(vt.text(3), vt.text(4));
    }

    #[test]
    fn a_learned_text_is_the_one_handed_out() {
        let mut vt = VersionText::default();
        let stored: Arc<str> = "00000000000000000000000000000007.0.123".into();
        let huge: Arc<str> = format!("{:032}.0.5", DENSE * 3).into();
        assert_eq!(vt.learn(&stored).unwrap(), 7);
        assert_eq!(vt.learn(&huge).unwrap(), DENSE * 3);
        assert!(Arc::ptr_eq(&vt.text(7), &stored));
        assert!(Arc::ptr_eq(&vt.text(DENSE * 3), &huge));
        let bad: Arc<str> = "seven".into();
        assert!(vt.learn(&bad).is_err());
    }
}
