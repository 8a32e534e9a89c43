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
//! can match it better. So when the question is on one or more of the [`Subjects`] of a life
//! (within [`QUESTION_MARGIN`](crate::QUESTION_MARGIN) of its nearest), the statements on them
//! answer it, in two tiers: those with a sentence nearest to one of the question's subjects, then
//! those with a sentence on one of them only as much as on another subject that match the question
//! at least the share of the best. Within a tier, the newest first; every other statement comes
//! after them, in the memory's order. The share alone decides when the question is on no
//! subject, or no statement answers it.

use mnemograph_memory::MemoryHit;

use crate::passages::Passages;
use crate::subjects::{Placement, Subjects, QUESTION_MARGIN, SUBJECTS, SUBJECT_MARGIN};
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
            let asked =
                subjects.place(&embedded.question).await.map_err(embedding)?.facts_on(QUESTION_MARGIN);
            if !asked.is_empty() {
                let mut placed = Vec::with_capacity(own.len());
                for parts in &embedded.sentences {
                    let vs: Vec<&[f32]> = parts.iter().map(|v| &v[..]).collect();
                    placed.push(subjects.place_all(&vs).await.map_err(embedding)?);
                }
                let tiers = tiers(&placed, &matches, &asked, self.share);
                if tiers.iter().any(Option::is_some) {
                    return Ok(on_subject_first(own, &tiers, &matches));
                }
            }
        }
        Ok(answering_first(own, &matches, self.share))
    }
}

/// How a text (its sentences `placed`, its best `match_` to the question) answers a question on
/// `asked`, when the best match of all texts is `best`: 0 with a sentence nearest to one of the
/// question's subjects, 1 with one on them only as much as on another subject (a value's name can
/// pull a sentence toward a subject: "I had lunch with an old friend from school" is on school as
/// much as on food) that matches the question at least `share` as well as the best; `None` when it
/// does not answer it.
fn tier(placed: &[Placement], match_: f64, best: f64, asked: &[usize], share: f64) -> Option<u8> {
    if placed.iter().any(|p| SUBJECTS[p.nearest].fact && asked.contains(&p.nearest)) {
        Some(0)
    } else if placed.iter().any(|p| p.on_any(asked, SUBJECT_MARGIN)) && match_ >= share * best {
        Some(1)
    } else {
        None
    }
}

/// The tier of each text (see [`tier`]).
fn tiers(placed: &[Vec<Placement>], matches: &[f64], asked: &[usize], share: f64) -> Vec<Option<u8>> {
    let best = matches.iter().copied().fold(f64::MIN, f64::max);
    placed.iter().zip(matches).map(|(sentences, m)| tier(sentences, *m, best, asked, share)).collect()
}

/// `hits` with those that answer the question first, by `tiers`, newest first within a tier
/// (better match first within a second), then the rest in their order.
fn on_subject_first(hits: Vec<MemoryHit>, tiers: &[Option<u8>], matches: &[f64]) -> Vec<MemoryHit> {
    let scored = hits.into_iter().zip(matches.iter().copied()).zip(tiers.iter().copied());
    let (mut answering, rest): (Vec<_>, Vec<_>) = scored.partition(|(_, t)| t.is_some());
    answering.sort_by(|((a, am), at), ((b, bm), bt)| {
        at.cmp(bt).then(b.record.created_at.cmp(&a.record.created_at)).then(bm.total_cmp(am))
    });
    answering.into_iter().chain(rest).map(|((h, _), _)| h).collect()
}

/// A hit with how well it matches the question.
type Scored = (MemoryHit, f64);

/// `hits` with those whose `matches` are at least `share` of the best first, newest first (better
/// match first within a second), then the rest in their order.
fn answering_first(hits: Vec<MemoryHit>, matches: &[f64], share: f64) -> Vec<MemoryHit> {
    let best = matches.iter().copied().fold(f64::MIN, f64::max);
    if best <= 0.0 {
        return hits;
    }
    let scored = hits.into_iter().zip(matches.iter().copied());
    let (mut answering, rest): (Vec<Scored>, Vec<Scored>) = scored.partition(|(_, m)| *m >= share * best);
    answering.sort_by(|a, b| b.0.record.created_at.cmp(&a.0.record.created_at).then(b.1.total_cmp(&a.1)));
    answering.into_iter().chain(rest).map(|(h, _)| h).collect()
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

    /// A sentence nearest to subject `name` at `near`, at `other` from `also`, and 0 from the rest.
    fn placed(name: &str, near: f64, also: &str, other: f64) -> Placement {
        let at = |n: &str| SUBJECTS.iter().position(|s| s.name == n).expect("a subject");
        let mut similarities = vec![0.0; SUBJECTS.len()];
        similarities[at(also)] = other;
        similarities[at(name)] = near;
        Placement { nearest: at(name), similarity: near, similarities }
    }

    #[test]
    fn a_statement_nearest_the_subject_answers_however_it_matches_and_a_nearby_one_by_its_match() {
        let at = |n: &str| SUBJECTS.iter().position(|s| s.name == n).unwrap();
        let asked = [at("job"), at("hobby")];
        let placed = vec![
            vec![placed("job", 0.4, "home", 0.1)],
            vec![placed("hobby", 0.4, "home", 0.1)],
            vec![placed("software", 0.33, "job", 0.31)],
            vec![placed("software", 0.33, "job", 0.31)],
            vec![placed("home", 0.5, "job", 0.1)],
            vec![placed("day", 0.5, "job", 0.49)],
        ];
        let tiers = tiers(&placed, &[0.1, 0.1, 0.6, 0.2, 0.9, 0.9], &asked, 0.5);
        assert_eq!(tiers, [Some(0), Some(0), Some(1), None, None, None]);
    }

    #[test]
    fn statements_on_the_subject_come_first_newest_first_whatever_their_match() {
        let hits = vec![hit("plain old", 1), hit("other subject", 5), hit("implied new", 3), hit("other", 2)];
        let order = on_subject_first(hits, &[Some(0), None, Some(0), None], &[0.8, 0.7, 0.2, 0.1]);
        let said: Vec<&str> = order.iter().map(|h| user_line(&h.record.content)).collect();
        assert_eq!(said, ["implied new", "plain old", "other subject", "other"]);
    }
}
