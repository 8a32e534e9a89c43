//! A conversation set where users' facts change: each user states facts of several kinds, later
//! updates them up to three times, worded differently, often in the other language, sometimes
//! only implied or inside a longer message, among long sessions of chit-chat that names the same
//! things; then asks about each fact, in either language.
//!
//! Made by [`generate`] from a seed, so a run is repeatable and the set can grow without a file
//! to keep in step. Every turn carries a [`Label`], so a recalled memory can be traced to what
//! it says.

mod phrases;

use std::collections::HashMap;

pub use phrases::{Phrases, Subject, SUBJECTS};
use phrases::{AROUND, CHAT};

/// Sessions of chat each user has before the questions.
pub const SESSIONS: usize = 6;

/// Turns of chit-chat and traps in a session, before the facts it carries are added.
const CHAT_TURNS: usize = 19;

/// Subjects each user states facts about.
const SUBJECTS_PER_USER: usize = 4;

/// What a turn is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Label {
    /// States that `subject`'s value is `value`; `step` counts the statements before it.
    Fact { subject: usize, value: usize, step: usize, how: How },
    /// Names values of `subject` without stating the user's.
    Trap { subject: usize },
    /// Names no subject.
    Chat,
    /// Asks for `subject`'s current value.
    Question { subject: usize },
}

/// How a fact is worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum How {
    /// The first statement.
    First,
    /// An update in the language of the statement it replaces.
    SameLanguage,
    /// An update in the other language.
    OtherLanguage,
    /// An update that only implies the change.
    Implied,
}

/// One thing a user says.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The session it is said in.
    pub session: String,
    /// The words.
    pub text: String,
    /// Whether the words are Chinese.
    pub chinese: bool,
    /// Whether a fact sits inside a longer message.
    pub embedded: bool,
    /// What it is.
    pub label: Label,
}

/// One user's conversation: the chat sessions, then one session per question.
#[derive(Debug, Clone)]
pub struct User {
    /// The user id.
    pub id: String,
    /// Every turn, in order.
    pub turns: Vec<Turn>,
    /// For each subject the user has, its values in the order stated (the last is current).
    pub history: HashMap<usize, Vec<usize>>,
}

impl User {
    /// What `text`, said by this user, is, if the user said it.
    pub fn label_of(&self, text: &str) -> Option<&Label> {
        self.turns.iter().find(|t| t.text == text).map(|t| &t.label)
    }

    /// The questions, with the subject each asks about.
    pub fn questions(&self) -> impl Iterator<Item = (&Turn, usize)> {
        self.turns.iter().filter_map(|t| match t.label {
            Label::Question { subject } => Some((t, subject)),
            _ => None,
        })
    }
}

/// A small deterministic generator (SplitMix64): the set must not change with a dependency's
/// version.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// `users` users, made from `seed`.
pub fn generate(users: usize, seed: u64) -> Vec<User> {
    (0..users).map(|i| user(i, &mut Rng(seed ^ (i as u64).wrapping_mul(0x5851_f42d_4c95_7f2d)))).collect()
}

/// English's article before `word`.
fn article(word: &str) -> String {
    let vowel = word.chars().next().is_some_and(|c| "aeiouAEIOU".contains(c));
    format!("{} {word}", if vowel { "an" } else { "a" })
}

/// `template` with its placeholders filled, in the language chosen.
fn fill(
    template: &str,
    subject: &Subject,
    chinese: bool,
    v: usize,
    old: Option<usize>,
    trap: [usize; 2],
) -> String {
    let word = |i: usize| if chinese { subject.values[i].1 } else { subject.values[i].0 };
    let with_article = |i: usize| if chinese { word(i).to_owned() } else { article(word(i)) };
    let old = old.unwrap_or(v);
    template
        .replace("{av}", &with_article(v))
        .replace("{aold}", &with_article(old))
        .replace("{aa}", &with_article(trap[0]))
        .replace("{ab}", &with_article(trap[1]))
        .replace("{v}", word(v))
        .replace("{old}", word(old))
        .replace("{a}", word(trap[0]))
        .replace("{b}", word(trap[1]))
}

fn phrases(p: &Phrases, chinese: bool) -> &'static [&'static str] {
    if chinese {
        p.zh
    } else {
        p.en
    }
}

/// A planned statement: in which session, about what.
struct Planned {
    session: usize,
    subject: usize,
    value: usize,
    step: usize,
}

fn user(index: usize, rng: &mut Rng) -> User {
    let id = format!("user{index:02}");
    // How often this user speaks Chinese: mostly English, mixed, or mostly Chinese.
    let chinese_percent = [20, 50, 80][index % 3];
    let mut subjects: Vec<usize> = (0..SUBJECTS.len()).collect();
    for i in (1..subjects.len()).rev() {
        subjects.swap(i, rng.below(i + 1));
    }
    subjects.truncate(SUBJECTS_PER_USER);

    let mut plan = Vec::new();
    let mut history = HashMap::new();
    for &subject in &subjects {
        // Updates: none for one subject in five, up to three for the others.
        let updates = match rng.below(20) {
            0..=3 => 0,
            4..=10 => 1,
            11..=16 => 2,
            _ => 3,
        };
        // The first statement in one of the first two sessions, each update in a later one.
        let mut sessions = vec![rng.below(2)];
        let mut later: Vec<usize> = (sessions[0] + 1..SESSIONS).collect();
        for i in (1..later.len()).rev() {
            later.swap(i, rng.below(i + 1));
        }
        later.truncate(updates);
        later.sort_unstable();
        sessions.extend(later);
        let mut values: Vec<usize> = (0..SUBJECTS[subject].values.len()).collect();
        for i in (1..values.len()).rev() {
            values.swap(i, rng.below(i + 1));
        }
        values.truncate(sessions.len());
        for (step, (&session, &value)) in sessions.iter().zip(&values).enumerate() {
            plan.push(Planned { session, subject, value, step });
        }
        history.insert(subject, values);
    }

    let mut turns = Vec::new();
    let mut last_language: HashMap<usize, bool> = HashMap::new();
    for session in 0..SESSIONS {
        let name = format!("s{}", session + 1);
        let mut said: Vec<Turn> = Vec::new();
        for _ in 0..CHAT_TURNS {
            let chinese = rng.chance(chinese_percent);
            let (text, label) = if rng.chance(30) {
                let subject = *rng.pick(&subjects);
                let s = &SUBJECTS[subject];
                let trap = [rng.below(s.values.len()), rng.below(s.values.len())];
                let trap = if trap[0] == trap[1] { [trap[0], (trap[1] + 1) % s.values.len()] } else { trap };
                let template = rng.pick(phrases(&s.trap, chinese));
                (fill(template, s, chinese, trap[0], None, trap), Label::Trap { subject })
            } else {
                ((*rng.pick(phrases(&CHAT, chinese))).to_owned(), Label::Chat)
            };
            said.push(Turn { session: name.clone(), text, chinese, embedded: false, label });
        }
        for planned in plan.iter().filter(|p| p.session == session) {
            let s = &SUBJECTS[planned.subject];
            let before = last_language.get(&planned.subject).copied();
            let (how, chinese) = match before {
                None => (How::First, rng.chance(chinese_percent)),
                Some(before) => match rng.below(10) {
                    0..=3 => (How::OtherLanguage, !before),
                    4..=7 => (How::SameLanguage, before),
                    _ => (How::Implied, rng.chance(chinese_percent)),
                },
            };
            let templates = match how {
                How::First => &s.state,
                How::SameLanguage | How::OtherLanguage => &s.update,
                How::Implied => &s.implied,
            };
            let old = history[&planned.subject].get(planned.step.wrapping_sub(1)).copied();
            let template = rng.pick(phrases(templates, chinese));
            let mut text = fill(template, s, chinese, planned.value, old, [planned.value; 2]);
            let embedded = rng.chance(25);
            if embedded {
                let join = if chinese { "" } else { " " };
                let before = rng.pick(phrases(&AROUND[0], chinese));
                let after = rng.pick(phrases(&AROUND[1], chinese));
                text = [*before, text.as_str(), *after].join(join);
            }
            last_language.insert(planned.subject, chinese);
            let label =
                Label::Fact { subject: planned.subject, value: planned.value, step: planned.step, how };
            let at = rng.below(said.len() + 1);
            said.insert(at, Turn { session: name.clone(), text, chinese, embedded, label });
        }
        turns.extend(said);
    }

    // One question per subject, and a second, in the other language, for some changed facts.
    let mut asked = 0;
    for &subject in &subjects {
        let s = &SUBJECTS[subject];
        let mut languages = vec![rng.chance(50)];
        if history[&subject].len() > 2 && rng.chance(50) {
            languages.push(!languages[0]);
        }
        for chinese in languages {
            asked += 1;
            let text = (*rng.pick(phrases(&s.question, chinese))).to_owned();
            let session = format!("q{asked}");
            turns.push(Turn { session, text, chinese, embedded: false, label: Label::Question { subject } });
        }
    }
    User { id, turns, history }
}
