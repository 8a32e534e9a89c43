//! The texts of a run's channel versions: integers inside the engine, LangGraph's
//! `{n:032}.{random}` strings in checkpoints.

use std::sync::Arc;

use crate::checkpoint::backend::version_number;
use crate::checkpoint::CheckpointError;
use crate::error::Result;
use mnemograph_checkpoint::__private::{write_version_text, VERSION_TEXT_LEN};

/// Renders integer versions as LangGraph's strings, remembering each one so a version keeps the
/// same text for the whole thread — blobs are keyed by that exact text.
///
/// The texts are shared: every checkpoint that holds version `n` of some channel points at the
/// same text, so writing a checkpoint copies no version strings.
///
/// A sorted array rather than a map: a run asks for the text of every channel's version at every
/// checkpoint, an index or a binary search over a few integers is the cheapest lookup, and a new
/// version is always the largest so far, so it is appended. (A vector indexed by version would zero a slot
/// for every version of a long thread on every run; a `HashMap` would hash keys that may come
/// from stored data.)
#[derive(Default)]
pub(crate) struct VersionText {
    /// `(version, text)`, sorted by version.
    texts: Vec<(u64, Arc<str>)>,
}

impl VersionText {
    /// The text of version `n`, made (with a fresh random suffix) the first time it is asked for.
    pub(crate) fn text(&mut self, n: u64) -> Arc<str> {
        // Written on the stack and shared from there: the `Arc` is the text's only allocation.
        self.get_or_insert(n, || Arc::from(write_version_text(&mut [0; VERSION_TEXT_LEN], n)))
    }

    /// Remembers a version text read from a checkpoint; returns its counter.
    pub(crate) fn learn(&mut self, text: &Arc<str>) -> Result<u64> {
        let n = version_number(text).ok_or_else(|| {
            CheckpointError::Corrupt(format!("channel version {text:?} is not a LangGraph version"))
        })?;
        self.get_or_insert(n, || Arc::clone(text));
        Ok(n)
    }

    /// The text of `n`, stored as `make` builds it when there is none yet.
    fn get_or_insert(&mut self, n: u64, make: impl FnOnce() -> Arc<str>) -> Arc<str> {
        // Every new version goes after the newest. A run that started a thread knows versions
        // 1, 2, 3, ... with no gap, so a version is first looked for at its own offset from the
        // oldest; the binary search is for the gaps a resumed thread has.
        let at = match (self.texts.first(), self.texts.last()) {
            (_, Some((last, _))) if *last < n => Err(self.texts.len()),
            (Some((first, _)), Some(_)) => {
                let guess = n.checked_sub(*first).and_then(|d| usize::try_from(d).ok());
                match guess.and_then(|i| self.texts.get(i).filter(|(v, _)| *v == n).map(|_| i)) {
                    Some(i) => Ok(i),
                    None => self.texts.binary_search_by_key(&n, |(v, _)| *v),
                }
            }
            _ => Err(0),
        };
        match at {
            Ok(i) => Arc::clone(&self.texts[i].1),
            Err(i) => {
                let text = make();
                self.texts.insert(i, (n, Arc::clone(&text)));
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::backend::version_number;

    #[test]
    fn a_version_keeps_its_text_in_any_order() {
        let mut vt = VersionText::default();
        let order = [5, 1, 2, 17, 9, 4096, 3, u64::MAX, 0, 6];
        let first: Vec<Arc<str>> = order.iter().map(|&n| vt.text(n)).collect();
        for (&n, text) in order.iter().zip(&first) {
            assert_eq!(version_number(text), Some(n));
            assert!(Arc::ptr_eq(text, &vt.text(n)), "version {n} got a second text");
        }
        assert!(vt.texts.windows(2).all(|w| w[0].0 < w[1].0), "kept sorted");
        assert_ne!(vt.text(3), vt.text(4));
    }

    #[test]
    fn a_learned_text_is_the_one_handed_out() {
        let mut vt = VersionText::default();
        let stored: Arc<str> = "00000000000000000000000000000007.0.123".into();
        let huge: Arc<str> = format!("{:032}.0.5", 1_u64 << 40).into();
        assert_eq!(vt.learn(&huge).unwrap(), 1 << 40);
        assert_eq!(vt.learn(&stored).unwrap(), 7);
        assert!(Arc::ptr_eq(&vt.text(7), &stored));
        assert!(Arc::ptr_eq(&vt.text(1 << 40), &huge));
        // A text learned again keeps the first one: blobs are keyed by it.
        let again: Arc<str> = "00000000000000000000000000000007.0.999".into();
        assert_eq!(vt.learn(&again).unwrap(), 7);
        assert!(Arc::ptr_eq(&vt.text(7), &stored));
        let bad: Arc<str> = "seven".into();
        assert!(vt.learn(&bad).is_err());
    }
}
