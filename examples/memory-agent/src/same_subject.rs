//! Retiring an older statement only for a newer one about the same subject of the user's life.
//!
//! The offline rule retires an older statement that is similar enough to the new one. Every
//! memory is a whole exchange, and two exchanges can be similar for what they share besides the
//! fact: the same opening words, the same acknowledgement, a value's name that belongs to another
//! subject. "I switched to Neovim last month." and "I switched banks last month." are close, yet
//! the second changes nothing about the editor. [`SameSubject`] lets a decision stand only when
//! the two statements share a subject ([`Subjects`]: where the user lives, their job, their car,
//! …), by any of their sentences; a new statement on no fact at all retires nothing.

use std::collections::HashSet;

use mnemograph_memory::{Candidate, MemoryRecord, Result, SupersedeDecider, Supersession};

use crate::passages::Passages;
use crate::subjects::{Subjects, SUBJECT_MARGIN};
use crate::summarizer::user_line;

/// A decider whose decisions stand only between statements on a common subject.
///
/// Without subjects (an embedding model that places sentences too loosely for them) it passes
/// the inner decisions through unchanged.
#[derive(Debug, Clone)]
pub struct SameSubject<D> {
    /// The decider whose decisions are checked.
    inner: D,
    /// The sentence vectors and the subjects they are placed among.
    subjects: Option<(Passages, Subjects)>,
}

impl<D> SameSubject<D> {
    /// `inner`'s decisions, kept when the statements share a subject of `subjects`; all of them
    /// when `subjects` is `None`.
    pub fn new(inner: D, subjects: Option<(Passages, Subjects)>) -> Self {
        Self { inner, subjects }
    }

    /// The decider whose decisions are checked.
    pub fn inner(&self) -> &D {
        &self.inner
    }

    /// Whether decisions are checked against the subjects.
    pub fn by_subject(&self) -> bool {
        self.subjects.is_some()
    }
}

impl<D: SupersedeDecider> SupersedeDecider for SameSubject<D> {
    async fn decide(&self, new: &MemoryRecord, candidates: &[Candidate]) -> Result<Vec<Supersession>> {
        let decided = self.inner.decide(new, candidates).await?;
        let Some((passages, subjects)) = &self.subjects else {
            return Ok(decided);
        };
        if decided.is_empty() {
            return Ok(decided);
        }
        let retired: Vec<&str> = decided
            .iter()
            .map(|d| {
                candidates.iter().find(|c| c.record.id == d.id).map_or("", |c| user_line(&c.record.content))
            })
            .collect();
        let texts: Vec<&str> = std::iter::once(user_line(&new.content)).chain(retired).collect();
        match on_subjects(passages, subjects, &texts).await {
            Ok(on) => {
                let mut on = on.into_iter();
                let new_on = on.next().unwrap_or_default();
                Ok(decided
                    .into_iter()
                    .zip(on)
                    .filter(|(_, older)| !new_on.is_disjoint(older))
                    .map(|(d, _)| d)
                    .collect())
            }
            // The turn is answered and saved: a statement whose subject cannot be told retires
            // nothing, and everything stays recallable.
            Err(e) => {
                tracing::warn!(error = %e, "placing statements among subjects failed; nothing is retired");
                Ok(Vec::new())
            }
        }
    }
}

/// The fact subjects each of `texts` is on, by any of its sentences.
async fn on_subjects(
    passages: &Passages,
    subjects: &Subjects,
    texts: &[&str],
) -> std::result::Result<Vec<HashSet<usize>>, mnemograph_core::BoxError> {
    let vectors = passages.sentence_vectors(texts).await?;
    let mut on = Vec::with_capacity(texts.len());
    for parts in &vectors {
        let vs: Vec<&[f32]> = parts.iter().map(|v| &v[..]).collect();
        let placed = subjects.place_all(&vs).await?;
        on.push(placed.iter().flat_map(|p| p.facts_on(SUBJECT_MARGIN)).collect());
    }
    Ok(on)
}
