//! Which of the user's own statements answer a question about the user, and the newest of those
//! first.
//!
//! A user who said "I drive a Corolla." and sessions later "换车了，现在开的是Model 3。" has two
//! statements that answer "what car do I drive?", worded apart and in two languages: too far apart
//! for a similarity between the two statements to tell that one replaces the other. Each is close
//! to the question, though, since each answers it. Among the user's statements about
//! themselves, those that match the question at least [`Answers::share`] as well as the best one
//! (by their best sentence, see [`Passages`]) are taken to answer the same question, and the
//! newest of them comes first: it is the user's latest word on it. The others follow in the
//! memory's order. Nothing is retired: the older answers stay in the list, after the newer.
//!
//! How well a statement matches the question still depends on its wording: an update that only
//! implies the change ("Settling into the new apartment in Madrid.") matches "where do I live?"
//! far less than a plain statement, and a statement on another subject worded like the question
//! can match it better. So when the question is on one or two of the [`Subjects`] of a life
//! (within [`QUESTION_MARGIN`](crate::QUESTION_MARGIN) of its nearest, at most
//! [`QUESTION_SUBJECTS`](crate::QUESTION_SUBJECTS)), the statements with a sentence on one of them
//! ([`Placement::on`]: a sentence is on its nearest subject, and on the next one within
//! [`SUBJECT_MARGIN`](crate::SUBJECT_MARGIN)) answer it, newest first, however well they match;
//! every other statement comes after them, in the memory's order. The share decides when the
//! question is on no subject, or no statement is on its subjects.

use mnemograph_memory::MemoryHit;

use crate::passages::Passages;
use crate::subjects::{Subjects, QUESTION_MARGIN, QUESTION_SUBJECTS, SUBJECT_MARGIN};
use crate::summarizer::user_line;

/// Orders the user's own statements for a question about the user.
#[derive(Debug, Clone)]
pub struct Answers {
    /// Sentence vectors.
    passages: Passages,
    /// The share of the best match (cosine similarity of a sentence to the question) from which
    /// a statement answers the question too.
    pub share: f64,
    /// The subjects statements and questions are on; `None` orders by the share alone.
    subjects: Option<Subjects>,
}

impl Answers {
    /// Statements matching at least `share` of the best match answer the question.
    pub fn new(passages: Passages, share: f64) -> Self {
        Self { passages, share, subjects: None }
    }

    /// Takes the statements on the question's subject as its answers, when it is on one.
    #[must_use]
    pub fn with_subjects(mut self, subjects: Option<Subjects>) -> Self {
        self.subjects = subjects;
        self
    }

    /// Embeds the sentences of a statement the user just made, ahead of the questions it will
    /// answer.
    ///
    /// # Errors
    /// The embedding model's failure.
    pub async fn remember(&self, said: &str) -> Result<(), mnemograph_memory::Error> {
        self.passages.remember(&[said]).await.map_err(mnemograph_memory::Error::Embedding)
    }

    /// Whether the statements on the question's subject answer it.
    pub fn by_subject(&self) -> bool {
        self.subjects.is_some()
    }

    /// `own` (the user's statements about themselves, in the memory's order), those that answer
    /// `question` first, newest first, then the others.
    ///
    /// # Errors
    /// The embedding model's failure.
    pub async fn order(
        &self,
        question: &str,
        own: Vec<MemoryHit>,
    ) -> Result<Vec<MemoryHit>, mnemograph_memory::Error> {
        if own.len() < 2 {
            return Ok(own);
        }
        let said: Vec<&str> = own.iter().map(|h| user_line(&h.record.content)).collect();
        let embedded =
            self.passages.embed(question, &said).await.map_err(mnemograph_memory::Error::Embedding)?;
        let matches = embedded.best();
        if let Some(subjects) = &self.subjects {
            let embedding = mnemograph_memory::Error::Embedding;
            let mut asked =
                subjects.place(&embedded.question).await.map_err(embedding)?.facts_on(QUESTION_MARGIN);
            asked.truncate(QUESTION_SUBJECTS);
            if !asked.is_empty() {
                let mut on = Vec::with_capacity(own.len());
                for parts in &embedded.sentences {
                    let vs: Vec<&[f32]> = parts.iter().map(|v| &v[..]).collect();
                    let placed = subjects.place_all(&vs).await.map_err(embedding)?;
                    on.push(placed.iter().any(|p| p.on_any(&asked, SUBJECT_MARGIN)));
                }
                if on.contains(&true) {
                    return Ok(on_subject_first(own, &on, &matches));
                }
            }
        }
        Ok(answering_first(own, &matches, self.share))
    }
}

/// `hits` with those `on` the question's subjects first, newest first (better match first within
/// a second), then the rest in their order.
fn on_subject_first(hits: Vec<MemoryHit>, on: &[bool], matches: &[f64]) -> Vec<MemoryHit> {
    let scored = hits.into_iter().zip(matches.iter().copied()).zip(on.iter().copied());
    let (mut answering, rest): (Vec<_>, Vec<_>) = scored.partition(|(_, on)| *on);
    answering.sort_by(|((a, am), _), ((b, bm), _)| {
        b.record.created_at.cmp(&a.record.created_at).then(bm.total_cmp(am))
    });
    answering.into_iter().chain(rest).map(|((h, _), _)| h).collect()
}

/// `hits` with those whose `matches` are at least `share` of the best first, newest first (better
/// match first within a second), then the rest in their order.
fn answering_first(hits: Vec<MemoryHit>, matches: &[f64], share: f64) -> Vec<MemoryHit> {
    let best = matches.iter().copied().fold(f64::MIN, f64::max);
    if best <= 0.0 {
        return hits;
    }
    let answering: Vec<bool> = matches.iter().map(|m| *m >= share * best).collect();
    on_subject_first(hits, &answering, matches)
}

#[cfg(test)]
mod tests {
    use mnemograph_memory::{MemoryRecord, NewMemory};

    use super::*;

    fn hit(said: &str, created_at: i64) -> MemoryHit {
        let turn = NewMemory::turn("u", "s", said, "Noted.");
        let record = MemoryRecord {
            id: created_at,
            user_id: turn.user_id,
            session_id: turn.session_id,
            role: turn.role,
            content: turn.content,
            created_at,
            importance: turn.importance,
            metadata: turn.metadata,
        };
        MemoryHit { record, relevance: 0.5, score: 0.5 }
    }

    #[test]
    fn the_newest_answer_comes_first_and_the_rest_by_match() {
        let hits = vec![hit("old answer", 1), hit("new answer", 3), hit("unrelated", 4), hit("related", 2)];
        let order = answering_first(hits, &[0.8, 0.5, 0.2, 0.3], 0.5);
        let said: Vec<&str> = order.iter().map(|h| user_line(&h.record.content)).collect();
        assert_eq!(said, ["new answer", "old answer", "unrelated", "related"], "the rest keep their order");
    }

    #[test]
    fn statements_on_the_subject_come_first_newest_first_whatever_their_match() {
        let hits = vec![hit("plain old", 1), hit("other subject", 5), hit("implied new", 3), hit("other", 2)];
        let order = on_subject_first(hits, &[true, false, true, false], &[0.8, 0.7, 0.2, 0.1]);
        let said: Vec<&str> = order.iter().map(|h| user_line(&h.record.content)).collect();
        assert_eq!(said, ["implied new", "plain old", "other subject", "other"]);
    }
}
