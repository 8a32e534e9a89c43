//! A bilingual memory-quality set, generated deterministically, stored the way the `memory-agent`
//! main command stores a conversation offline (examples/memory-agent/src/nodes.rs and
//! importance.rs): one memory per exchange, `User: …\nAssistant: …`, importance 0.7 for a
//! statement and 0.2 for a question, the offline model's replies ("Noted, I will remember that."
//! to every statement).
//!
//! Per asking user (40 by default): four sessions of different ages (120, 60, 21 and 3 days old),
//! six small-talk exchanges in each (Chinese and English, questions and statements, some touching
//! the same topics as the facts), and six personal facts, each asked back once by a paraphrased
//! question that shares few words with it:
//! - every user mixes the languages: fact `j` of user `u` is Chinese when `u + j` is even;
//! - about one question in five is **cross-lingual** (asked in the other language than its fact);
//! - one or two facts per user (60 of 240 in all) **change**: an older version in session 0 or 1,
//!   a newer one in session 2 or 3; only the newer one answers the question, and about one change
//!   in five is said in the other language than the old version;
//! - every fourth user has a **decoy**, `<user>-twin` (the user's id is a prefix of it), who states
//!   the same kinds of facts about themself, with other values, in the language the user's
//!   questions are asked in, and every other user holds the same kinds of facts too: a memory of
//!   another user in a result is a cross-user hit, and there are near-perfect matches to leak.
//!
//! Each question is asked in a new session ("today", excluded from retrieval as the main command
//! excludes the current one) right after a greeting, which the main command's enriched query
//! puts before the question.

use mnemograph_memory::NewMemory;

pub use super::bilingual_corpus::Lang;
use super::bilingual_corpus::{CHANGING, FILLER, STABLE};

/// The reference time: questions are asked now; sessions are dated back from it.
pub const NOW: i64 = 1_790_000_000;
/// Seconds in a day.
const DAY: i64 = 86_400;
/// Age in days of each stored session, oldest first.
pub const SESSION_AGES: [i64; 4] = [120, 60, 21, 3];
/// The session the questions are asked in (never stored).
pub const TODAY: &str = "today";
/// Small-talk exchanges per stored session.
const FILLER_PER_SESSION: usize = 6;
/// Facts per asking user, each asked back once.
const FACTS_PER_USER: usize = 6;

/// The offline model's reply to a statement (examples/memory-agent/src/offline.rs).
pub const STATEMENT_REPLY: &str = "Noted, I will remember that.";
/// The offline model's reply to a question it finds no fact for.
pub const UNKNOWN_REPLY: &str = "I don't remember you telling me anything about that.";
/// The main command's offline importance of a statement (importance.rs `importance`).
pub const STATEMENT_IMPORTANCE: f32 = 0.7;
/// The main command's importance of a question.
pub const QUESTION_IMPORTANCE: f32 = 0.2;
/// The least importance the main command recalls (importance.rs `MIN_RECALL_IMPORTANCE`).
pub const MIN_RECALL_IMPORTANCE: f32 = 0.3;

/// English words that open a question (examples/memory-agent/src/offline.rs `QUESTION_WORDS`).
const QUESTION_WORDS: [&str; 22] = [
    "what", "which", "who", "whom", "whose", "where", "when", "why", "how", "do", "does", "did", "is", "are",
    "am", "can", "could", "should", "would", "will", "have", "has",
];

/// Whether the main command takes `text` for a question (examples/memory-agent/src/offline.rs
/// `is_question`): questions are saved with importance 0.2 and never consolidated.
pub fn is_question(text: &str) -> bool {
    let t = text.trim();
    if t.ends_with('?') || t.ends_with('？') || t.ends_with('吗') || t.contains("什么") {
        return true;
    }
    let first = t.split_whitespace().next().unwrap_or("").to_lowercase();
    let first = first.split('\'').next().unwrap_or("");
    QUESTION_WORDS.contains(&first)
}

/// One stored exchange.
#[derive(Debug, Clone)]
pub struct Exchange {
    /// Whose.
    pub user: String,
    /// Index into [`SESSION_AGES`].
    pub session: usize,
    /// What the user said.
    pub said: String,
    /// When.
    pub at: i64,
}

impl Exchange {
    /// Whether the main command consolidates it (a statement, not a question).
    pub fn statement(&self) -> bool {
        !is_question(&self.said)
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        session_id(self.session)
    }

    /// The memory the main command's `save_memory` writes for it.
    pub fn memory(&self) -> NewMemory {
        let (reply, importance) = if self.statement() {
            (STATEMENT_REPLY, STATEMENT_IMPORTANCE)
        } else {
            (UNKNOWN_REPLY, QUESTION_IMPORTANCE)
        };
        NewMemory::turn(&self.user, self.session_id(), &self.said, reply)
            .importance(importance)
            .created_at(self.at)
    }

    /// The stored content (what retrieval returns).
    pub fn content(&self) -> String {
        content(&self.said)
    }
}

/// The content the main command stores for the user saying `said`.
pub fn content(said: &str) -> String {
    let reply = if is_question(said) { UNKNOWN_REPLY } else { STATEMENT_REPLY };
    format!("User: {said}\nAssistant: {reply}")
}

/// Session id of stored session `s`.
pub fn session_id(s: usize) -> String {
    format!("s{s}")
}

/// A question and how its answer is recognised.
#[derive(Debug, Clone)]
pub struct Question {
    /// Who asks; only this user's memories may come back.
    pub user: String,
    /// The question.
    pub text: String,
    /// The conversation before it in today's session (the greeting and the reply).
    pub recent: Vec<String>,
    /// Its language.
    pub lang: Lang,
    /// The language of the memory that answers it.
    pub fact_lang: Lang,
    /// The content of the memory that answers it.
    pub expected: String,
    /// For a changed fact: the content of the outdated version.
    pub stale: Option<String>,
    /// For a changed fact: whether the change was said in the other language than the old version.
    pub change_switched_language: bool,
    /// When the user has a decoy: the decoy's id and its memory stating the same kind of fact (what
    /// a leak across users would most likely return).
    pub decoy: Option<(String, String)>,
}

impl Question {
    /// Asked in the other language than its answer.
    pub fn cross_lingual(&self) -> bool {
        self.lang != self.fact_lang
    }
    /// About a fact that changed.
    pub fn changed(&self) -> bool {
        self.stale.is_some()
    }
}

/// The whole set.
#[derive(Debug, Clone)]
pub struct Dataset {
    /// Which history is stored and how questions are asked: [`AS_THE_MAIN_COMMAND`], or a
    /// variant made by [`Dataset::statements_only`] or [`Dataset::bare_questions`].
    pub variant: &'static str,
    /// Every exchange of every user (asking users and decoys), in time order per user.
    pub exchanges: Vec<Exchange>,
    /// Every question.
    pub questions: Vec<Question>,
    /// The asking users.
    pub users: Vec<String>,
    /// The decoy users (who are never asked anything).
    pub decoys: Vec<String>,
}

/// The main command's way: every exchange stored, the question enriched with the conversation.
pub const AS_THE_MAIN_COMMAND: &str = "every exchange, enriched query";

impl Dataset {
    /// The same set with the question exchanges left out of the history (only statements
    /// stored): what retrieval would do if asking were not remembered.
    pub fn statements_only(&self) -> Dataset {
        let exchanges = self.exchanges.iter().filter(|e| e.statement()).cloned().collect();
        let variant = match self.variant {
            AS_THE_MAIN_COMMAND => "statements only, enriched query",
            _ => "statements only, bare question",
        };
        Dataset { variant, exchanges, ..self.clone() }
    }

    /// The same set with each question asked alone, not enriched with the greeting before it.
    pub fn bare_questions(&self) -> Dataset {
        let questions = self.questions.iter().map(|q| Question { recent: Vec::new(), ..q.clone() }).collect();
        let variant = match self.variant {
            AS_THE_MAIN_COMMAND => "every exchange, bare question",
            _ => "statements only, bare question",
        };
        Dataset { variant, questions, ..self.clone() }
    }

    /// Every user, asking ones and decoys.
    pub fn all_users(&self) -> impl Iterator<Item = &String> {
        self.users.iter().chain(&self.decoys)
    }
    /// The exchanges of `user`, oldest first.
    pub fn exchanges_of<'a>(&'a self, user: &'a str) -> impl Iterator<Item = &'a Exchange> + 'a {
        self.exchanges.iter().filter(move |e| e.user == user)
    }
    /// How many questions are about a changed fact.
    pub fn changed(&self) -> usize {
        self.questions.iter().filter(|q| q.changed()).count()
    }
    /// A one-line description.
    pub fn describe(&self) -> String {
        let q = &self.questions;
        format!(
            "{}: {} users + {} decoys, {} memories, {} questions ({} Chinese, {} cross-lingual, {} about changed \
             facts of which {} changed language)",
            self.variant,
            self.users.len(),
            self.decoys.len(),
            self.exchanges.len(),
            q.len(),
            q.iter().filter(|q| q.lang == Lang::Zh).count(),
            q.iter().filter(|q| q.cross_lingual()).count(),
            self.changed(),
            q.iter().filter(|q| q.change_switched_language).count(),
        )
    }
}

/// The opening of today's session in `lang`, as the main command's enriched query sees it: the
/// greeting and the offline model's reply to it (a greeting is not a question).
fn greeting(lang: Lang) -> Vec<String> {
    let hello = match lang {
        Lang::Zh => "你好，我又来了。",
        Lang::En => "Hi, it's me again.",
    };
    vec![hello.to_owned(), STATEMENT_REPLY.to_owned()]
}

/// Creation time of the `slot`-th exchange of session `s`: sessions are days apart, exchanges
/// within a session three minutes apart.
fn at(s: usize, slot: usize) -> i64 {
    NOW - SESSION_AGES[s] * DAY + slot as i64 * 180
}

/// Asking user `u`'s id.
pub fn user_id(u: usize) -> String {
    format!("bq-user-{u:02}")
}

/// Builds the set for `n_users` asking users (40 in the benchmark).
pub fn build(n_users: usize) -> Dataset {
    let mut data = Dataset {
        variant: AS_THE_MAIN_COMMAND,
        exchanges: Vec::new(),
        questions: Vec::new(),
        users: Vec::new(),
        decoys: Vec::new(),
    };
    for u in 0..n_users {
        let user = user_id(u);
        let mut mine: Vec<Exchange> = Vec::new();
        for s in 0..SESSION_AGES.len() {
            for t in 0..FILLER_PER_SESSION {
                let said = FILLER[(u * 7 + s * 5 + t * 3) % FILLER.len()];
                mine.push(Exchange { user: user.clone(), session: s, said: said.to_owned(), at: at(s, t) });
            }
        }
        // Planted facts follow the small talk in their session, so no two share a time.
        let mut next = [FILLER_PER_SESSION; 4];
        let mut push = |mine: &mut Vec<Exchange>, s: usize, said: String| {
            mine.push(Exchange { user: user.clone(), session: s, said, at: at(s, next[s]) });
            next[s] += 1;
        };
        // The decoy's statements: the same kinds, other values, in the language the user asks.
        let twin = (u % 4 == 0).then(|| format!("{user}-twin"));
        let mut decoy: Vec<(usize, String)> = Vec::new();
        let changes = 1 + u % 2;
        for j in 0..FACTS_PER_USER {
            let lang = if (u + j) % 2 == 0 { Lang::Zh } else { Lang::En };
            let asked_lang = if (u + 2 * j) % 5 == 1 { lang.other() } else { lang };
            let question = Question {
                user: user.clone(),
                text: String::new(),
                recent: greeting(asked_lang),
                lang: asked_lang,
                fact_lang: lang,
                expected: String::new(),
                stale: None,
                change_switched_language: false,
                decoy: None,
            };
            let question = if j < changes {
                let kind = &CHANGING[(u + 3 * j) % CHANGING.len()];
                let old_value = (u + j) % 6;
                let new_value = (old_value + 3) % 6;
                let switched = (u + j) % 5 == 2;
                let new_lang = if switched { lang.other() } else { lang };
                let old = kind.said(lang, old_value);
                let new = kind.changed(new_lang, new_value);
                let (old_session, new_session) = (j % 2, 2 + (u + j) % 2);
                push(&mut mine, old_session, old.clone());
                push(&mut mine, new_session, new.clone());
                decoy.push((new_session, kind.said(asked_lang, (new_value + 1) % 6)));
                Question {
                    text: kind.asked(asked_lang),
                    fact_lang: new_lang,
                    expected: content(&new),
                    stale: Some(content(&old)),
                    change_switched_language: switched,
                    ..question
                }
            } else {
                let kind = &STABLE[(2 * u + j) % STABLE.len()];
                let value = (u + j) % 6;
                let said = kind.said(lang, value);
                let s = (u + j) % 4;
                push(&mut mine, s, said.clone());
                decoy.push((s, kind.said(asked_lang, (value + 1) % 6)));
                Question { text: kind.asked(asked_lang), expected: content(&said), ..question }
            };
            let said = &decoy.last().expect("one decoy statement per fact").1;
            let decoy_memory = twin.as_ref().map(|t| (t.clone(), content(said)));
            data.questions.push(Question { decoy: decoy_memory, ..question });
        }
        mine.sort_by_key(|e| e.at);
        data.exchanges.extend(mine);
        data.users.push(user.clone());
        if let Some(twin) = twin {
            let mut theirs: Vec<Exchange> = Vec::new();
            for (i, (s, said)) in decoy.into_iter().enumerate() {
                theirs.push(Exchange { user: twin.clone(), session: s, said, at: at(s, 2 * i) });
                let small_talk = FILLER[(u * 3 + i * 5) % FILLER.len()];
                theirs.push(Exchange {
                    user: twin.clone(),
                    session: s,
                    said: small_talk.into(),
                    at: at(s, 2 * i + 1),
                });
            }
            theirs.sort_by_key(|e| e.at);
            data.exchanges.extend(theirs);
            data.decoys.push(twin);
        }
    }
    data
}
