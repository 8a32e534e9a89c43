//! A harder planted-fact dataset than [`super::dataset`], built so that the retrieval modes score
//! differently instead of all finding every fact with a real model.
//!
//! Each user has the same kinds of facts (with different values, so every other user holds a
//! near-duplicate: the isolation trap) in four categories:
//! - [`Category::LexicalTrap`]: the same user also said things that share the question's words
//!   but not its answer, so a keyword match alone picks the wrong memory;
//! - [`Category::Superseded`]: an old fact was replaced by a newer one months later; the question
//!   asks for the current state, so only the newer memory is a correct answer (time decay's job);
//! - [`Category::LowOverlap`]: the question paraphrases the fact with almost no shared words, so
//!   only a semantic embedding can connect them (dense's job);
//! - [`Category::ExactIdentifier`]: the fact hinges on a rare literal token (a ticket number, an
//!   error code, a part number, a licence plate, a version, a made-up name) that the question
//!   repeats, and the same user also stated two near-identical facts about another identifier, so
//!   a sentence embedding, which represents such tokens poorly, confuses them while a keyword
//!   match on the identifier finds the right one (BM25's job).
//!
//! Memories carry realistic ages (four sessions from ~140 days to ~4 days old) and importances (an
//! LLM scorer would rate a personal fact above small talk), because decay and importance reranking
//! only have something to work with when those fields vary.

use mnemograph_memory::NewMemory;

pub use super::dataset::NOW;

/// Seconds in a day.
const DAY: i64 = 86_400;

/// Age in days of each session (oldest first): the spread decay is measured over.
pub const SESSION_AGES: [i64; 4] = [140, 95, 40, 4];

/// Importance of small talk: what an importance scorer gives chit-chat.
pub const FILLER_IMPORTANCE: f32 = 0.3;
/// Importance of a lexical trap: on topic, but not a fact worth keeping.
pub const TRAP_IMPORTANCE: f32 = 0.45;
/// Importance of a personal fact. Old and new versions of a superseded fact share it, so only
/// time can tell them apart.
pub const FACT_IMPORTANCE: f32 = 0.7;

/// Which difficulty a question exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Same-user distractors share the question's words, not its answer.
    LexicalTrap,
    /// An older contradicting fact exists; the newer one is the answer.
    Superseded,
    /// The question shares almost no words with the fact.
    LowOverlap,
    /// The question names the fact's rare identifier; same-user distractors say the same thing
    /// about another identifier.
    ExactIdentifier,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: [Category; 4] =
        [Category::LexicalTrap, Category::Superseded, Category::LowOverlap, Category::ExactIdentifier];

    /// Short label for reports.
    pub fn label(self) -> &'static str {
        match self {
            Category::LexicalTrap => "lexical-trap",
            Category::Superseded => "superseded",
            Category::LowOverlap => "low-overlap",
            Category::ExactIdentifier => "exact-identifier",
        }
    }
}

/// A question of the hard set and how its answer is recognised.
#[derive(Debug, Clone)]
pub struct HardQuestion {
    /// Who asks; only this user's memories may come back.
    pub user: String,
    /// Which difficulty it exercises.
    pub category: Category,
    /// The question as the user would phrase it.
    pub question: String,
    /// Text only the correct memory contains.
    pub marker: String,
    /// For [`Category::Superseded`]: text only the outdated memory contains.
    pub stale_marker: Option<String>,
    /// The same-user distractor memories (their user lines), for checks: the traps of
    /// [`Category::LexicalTrap`], the other-identifier facts of [`Category::ExactIdentifier`].
    pub traps: Vec<String>,
    /// For [`Category::ExactIdentifier`]: the fact's identifier (which the question repeats).
    pub identifier: Option<String>,
    /// For [`Category::ExactIdentifier`]: the distractors' identifiers, one per trap.
    pub other_identifiers: Vec<String>,
}

/// A fact hidden among same-user distractors that share the question's words:
/// (fact statement with `{v}`, question, two trap exchanges, per-user values, fact session,
/// trap sessions). Traps sit in other sessions, some newer than the fact, so decay cannot simply
/// favour the fact.
type Trap =
    (&'static str, &'static str, [(&'static str, &'static str); 2], [&'static str; 3], usize, [usize; 2]);

/// The lexical-trap facts.
const TRAPS: [Trap; 6] = [
    (
        "The router in our flat uses the passphrase {v}.",
        "what is the wifi password at home",
        [
            ("what is a good password manager to use at home", "Bitwarden is a solid choice."),
            ("the wifi at home is slow again, what is the password reset trick", "Restart the box first."),
        ],
        ["tulip-42-river", "amber-77-stone", "maple-19-cloud"],
        0,
        [2, 3],
    ),
    (
        "I got a slot with Dr. {v} for a cleaning of my teeth on Tuesday at nine.",
        "which dentist appointment did I book",
        [
            ("which dentist would you book for an appointment with kids", "Look for a paediatric one."),
            ("I did not book the appointment for the car service yet", "Shall I remind you tomorrow?"),
        ],
        ["Okafor", "Brandt", "Silva"],
        1,
        [3, 0],
    ),
    (
        "{v} told me I will move up to senior engineer in June.",
        "what did my manager say about my promotion",
        [
            ("what should I say to my manager about a promotion", "Lead with the impact you had."),
            ("my manager did say the promotion budget talk is a mess", "That sounds frustrating."),
        ],
        ["Priya", "Marco", "Helen"],
        0,
        [1, 3],
    ),
    (
        "The guy who owns our apartment, {v}, finally fixed the heating.",
        "what is the name of my landlord",
        [
            ("what is the name of that landlord rights website", "Try the tenants' union page."),
            ("give me a name for my landlord group chat", "How about Rent Rebels?"),
        ],
        ["Mr. Novak", "Mrs. Duarte", "Mr. Tanaka"],
        1,
        [2, 3],
    ),
    (
        "We picked up the new {v} from the dealership yesterday.",
        "which car did I buy",
        [
            ("which car insurance should I buy", "Compare a few quotes first."),
            ("did I tell you I want to buy a car seat for the baby", "Not yet, but good idea."),
        ],
        ["Skoda Octavia", "Honda Civic", "Volvo XC40"],
        2,
        [0, 3],
    ),
    (
        "Vinyasa with {v} is every Thursday evening at half past seven.",
        "what time does my yoga class start",
        [
            ("what time does the gym class start on Sundays", "Usually at ten."),
            ("my yoga history class starts soon, what time should I leave", "Leave twenty minutes early."),
        ],
        ["Lena", "Ravi", "Sofia"],
        0,
        [2, 3],
    ),
];

/// A fact that changed: (old statement, new statement, question, per-user (old, new) values,
/// old session, new session). The old wording is often the closer match to the question, so
/// relevance alone tends to pick it.
type Change = (&'static str, &'static str, &'static str, [(&'static str, &'static str); 3], usize, usize);

/// The superseded facts.
const CHANGES: [Change; 6] = [
    (
        "I live in {v} now, in a flat near the river.",
        "We relocated to {v} last week.",
        "which city do I live in now",
        [("Berlin", "Lisbon"), ("Madrid", "Oslo"), ("Boston", "Denver")],
        0,
        3,
    ),
    (
        "My phone number is {v}.",
        "I changed my number, the new one is {v}.",
        "what is my phone number",
        [("555-0101", "555-0199"), ("555-0142", "555-0177"), ("555-0163", "555-0120")],
        0,
        3,
    ),
    (
        "I work at {v} as a data engineer.",
        "Today was my first day at {v}!",
        "where do I work",
        [("Acme", "Globex"), ("Initech", "Umbrella"), ("Hooli", "Pied Piper")],
        1,
        3,
    ),
    (
        "My favourite coffee order is a {v}.",
        "I have switched to {v} lately.",
        "what is my favourite coffee order",
        [("flat white", "oat cortado"), ("cappuccino", "cold brew"), ("latte", "double espresso")],
        0,
        2,
    ),
    (
        "Our team standup is at {v} every morning.",
        "Standup got moved to {v}.",
        "what time is our team standup",
        [("9:00", "10:15"), ("9:30", "8:45"), ("10:00", "11:30")],
        1,
        3,
    ),
    (
        "I am training for a {v}.",
        "I changed my goal, I am preparing for a {v} instead.",
        "what race am I training for",
        [("half marathon", "triathlon"), ("10k race", "full marathon"), ("cycling sportive", "trail ultra")],
        0,
        3,
    ),
];

/// A fact asked about in other words: (statement, question, per-user values, session).
type Paraphrase = (&'static str, &'static str, [&'static str; 3], usize);

/// The low-overlap facts.
const PARAPHRASES: [Paraphrase; 6] = [
    (
        "I can't have {v}, doctor's orders since last year.",
        "which ingredients should be left out of meals you suggest",
        ["gluten", "dairy", "eggs"],
        1,
    ),
    (
        "Our son {v} started kindergarten this autumn.",
        "has our little boy begun going to school",
        ["Leo", "Max", "Sam"],
        2,
    ),
    (
        "We adopted a {v} from the shelter.",
        "what kind of pet joined the family",
        ["greyhound", "beagle", "tabby kitten"],
        0,
    ),
    (
        "I play {v} in a community orchestra.",
        "which musical instrument is my hobby",
        ["cello", "oboe", "trumpet"],
        1,
    ),
    (
        "My blood pressure meds are {v}, one pill at breakfast.",
        "what medication do I take each morning for hypertension",
        ["lisinopril", "amlodipine", "losartan"],
        2,
    ),
    (
        "Our wedding anniversary is {v}.",
        "when did my spouse and I get married",
        ["June 14", "October 2", "April 21"],
        0,
    ),
];

/// A fact that hinges on an identifier: (statement with `{v}`, question with `{v}`, two
/// distractor statements with `{v}`, per-user (fact identifier, distractor identifiers), fact
/// session, distractor sessions). A distractor differs from the fact in a few words and its
/// identifier only, and sits in another session (some newer), so neither meaning nor age nor
/// importance singles the fact out: only the identifier does.
type Ident = (
    &'static str,
    &'static str,
    [&'static str; 2],
    [(&'static str, [&'static str; 2]); 3],
    usize,
    [usize; 2],
);

/// The exact-identifier facts: tickets, error codes, part numbers, licence plates, versions and
/// made-up names. A distractor's identifier is a near miss of the fact's, as real ones are
/// (consecutive ticket numbers, swapped digits, one letter off): a subword embedding sees almost
/// the same pieces, while to keyword search they are different words. No identifier is in two
/// memories of the whole set.
const IDENTS: [Ident; 6] = [
    (
        "The warehouse ticket for the broken forklift is {v}.",
        "what was ticket {v} about",
        [
            "The warehouse ticket for the broken pallet jack is {v}.",
            "The warehouse ticket for the jammed conveyor belt is {v}.",
        ],
        [
            ("WX-48213-K", ["WX-48214-K", "WX-48231-K"]),
            ("WX-26054-K", ["WX-26055-K", "WX-26045-K"]),
            ("WX-67129-K", ["WX-67130-K", "WX-67192-K"]),
        ],
        1,
        [2, 3],
    ),
    (
        "The nightly backup job failed with error {v} because the disk was full.",
        "why did I get error {v}",
        [
            "The nightly sync job failed with error {v} because the token had expired.",
            "The nightly export job failed with error {v} because the database timed out.",
        ],
        [
            ("ERR-7731", ["ERR-7713", "ERR-7732"]),
            ("ERR-2958", ["ERR-2985", "ERR-2959"]),
            ("ERR-6604", ["ERR-6640", "ERR-6605"]),
        ],
        0,
        [2, 3],
    ),
    (
        "The spare part for the dishwasher drain pump is {v}.",
        "which appliance is part {v} for",
        [
            "The spare part for the washing machine drain pump is {v}.",
            "The spare part for the tumble dryer drive belt is {v}.",
        ],
        [
            ("PN-3318-B", ["PN-3381-B", "PN-3319-B"]),
            ("PN-9926-B", ["PN-9962-B", "PN-9927-B"]),
            ("PN-4773-B", ["PN-4737-B", "PN-4774-B"]),
        ],
        2,
        [0, 3],
    ),
    (
        "The car with the plate {v} belongs to my sister.",
        "whose car has the plate {v}",
        [
            "The car with the plate {v} belongs to my neighbour.",
            "The car with the plate {v} belongs to my colleague.",
        ],
        [
            ("LK19 XRV", ["LK19 XVR", "LK19 XRW"]),
            ("BD22 QWN", ["BD22 QNW", "BD22 QWM"]),
            ("NV63 CJS", ["NV63 CSJ", "NV63 CJT"]),
        ],
        0,
        [1, 3],
    ),
    (
        "The checkout page crash was fixed in release {v}.",
        "what did release {v} fix",
        [
            "The login page crash was fixed in release {v}.",
            "The search page slowdown was fixed in release {v}.",
        ],
        [
            ("4.17.26", ["4.17.62", "4.17.27"]),
            ("7.43.18", ["7.43.81", "7.43.19"]),
            ("9.81.14", ["9.81.41", "9.81.15"]),
        ],
        1,
        [0, 2],
    ),
    (
        "The contractor {v} quoted us for retiling the bathroom.",
        "what did {v} quote us for",
        [
            "The contractor {v} quoted us for repainting the kitchen.",
            "The contractor {v} quoted us for fixing the roof gutters.",
        ],
        [
            ("Zorvik", ["Zorvic", "Zarvik"]),
            ("Tamsel", ["Tamsal", "Tamzel"]),
            ("Quillon", ["Quillan", "Quilon"]),
        ],
        2,
        [1, 3],
    ),
];

/// Small talk that shares the questions' common words ("what", "my", "time", "now", "home"...).
const FILLER: [(&str, &str); 14] = [
    ("what should I cook tonight", "Something quick, maybe a stir fry."),
    ("what time is it in Tokyo now", "It is early morning there."),
    ("I need to call my mother later", "I can remind you at six."),
    ("which movie should we watch at home", "A comedy would be nice."),
    ("where did I put my notes from the meeting", "Check the shared folder."),
    ("can you help me plan the week", "Sure, start with the deadlines."),
    ("what do you think about my new idea for the team", "It sounds promising."),
    ("the weather is nice today", "A good day for a walk."),
    ("remind me to water the plants", "Done, every two days."),
    ("how do I write a polite email", "Keep it short and clear."),
    ("I feel tired this morning", "Maybe get some fresh air."),
    ("did you see the news about the election", "I only know what you tell me."),
    ("what is a good book for the train", "Try a short story collection."),
    ("my laptop is slow again", "Close a few browser tabs."),
];

/// Users of the hard set (distinct from [`super::dataset::users`]).
pub fn users(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("hard-user-{i}")).collect()
}

/// Creation time of the `slot`-th memory of a session: sessions are days apart, exchanges within a
/// session a few minutes apart.
fn at(session: usize, slot: usize) -> i64 {
    NOW - SESSION_AGES[session] * DAY + slot as i64 * 180
}

/// Builds the hard history for `n_users` users (at most 3 distinct value sets; more users reuse
/// them, which makes cross-user duplicates exact), with `turns` small-talk exchanges per session.
/// Returns the memories (in time order per user) and the questions.
pub fn build(n_users: usize, turns: usize) -> (Vec<NewMemory>, Vec<HardQuestion>) {
    let mut memories = Vec::new();
    let mut questions = Vec::new();
    for (u, user) in users(n_users).iter().enumerate() {
        let v = u % 3;
        let mut mine: Vec<NewMemory> = Vec::new();
        // Slot counters per session, after the small talk, so planted memories never share a time.
        let mut next = [turns; 4];
        let mut push = |mine: &mut Vec<NewMemory>, session: usize, q: &str, a: &str, importance: f32| {
            let t = NewMemory::turn(user, format!("s{session}"), q, a)
                .created_at(at(session, next[session]))
                .importance(importance);
            next[session] += 1;
            mine.push(t);
        };
        for s in 0..SESSION_AGES.len() {
            for t in 0..turns {
                let (q, a) = FILLER[(u * 5 + s * 3 + t) % FILLER.len()];
                let m = NewMemory::turn(user, format!("s{s}"), q, a)
                    .created_at(at(s, t))
                    .importance(FILLER_IMPORTANCE);
                mine.push(m);
            }
        }
        for (statement, question, traps, values, session, trap_sessions) in TRAPS {
            let fact = statement.replace("{v}", values[v]);
            push(&mut mine, session, &fact, "Got it, I will remember that.", FACT_IMPORTANCE);
            for ((tq, ta), ts) in traps.iter().zip(trap_sessions) {
                push(&mut mine, ts, tq, ta, TRAP_IMPORTANCE);
            }
            questions.push(HardQuestion {
                user: user.clone(),
                category: Category::LexicalTrap,
                question: question.to_owned(),
                marker: fact,
                stale_marker: None,
                traps: traps.iter().map(|t| t.0.to_owned()).collect(),
                identifier: None,
                other_identifiers: Vec::new(),
            });
        }
        for (old, new, question, values, old_session, new_session) in CHANGES {
            let (old_v, new_v) = values[v];
            let old_text = old.replace("{v}", old_v);
            let new_text = new.replace("{v}", new_v);
            push(&mut mine, old_session, &old_text, "Noted.", FACT_IMPORTANCE);
            push(&mut mine, new_session, &new_text, "Noted, I will update that.", FACT_IMPORTANCE);
            questions.push(HardQuestion {
                user: user.clone(),
                category: Category::Superseded,
                question: question.to_owned(),
                marker: new_text,
                stale_marker: Some(old_text),
                traps: Vec::new(),
                identifier: None,
                other_identifiers: Vec::new(),
            });
        }
        for (statement, question, values, session) in PARAPHRASES {
            let fact = statement.replace("{v}", values[v]);
            push(&mut mine, session, &fact, "Thanks for telling me.", FACT_IMPORTANCE);
            questions.push(HardQuestion {
                user: user.clone(),
                category: Category::LowOverlap,
                question: question.to_owned(),
                marker: fact,
                stale_marker: None,
                traps: Vec::new(),
                identifier: None,
                other_identifiers: Vec::new(),
            });
        }
        // Appended after the other categories, so their memories keep their times.
        for (statement, question, distractors, values, session, distractor_sessions) in IDENTS {
            let (id, others) = values[v];
            let fact = statement.replace("{v}", id);
            push(&mut mine, session, &fact, "Got it, I will remember that.", FACT_IMPORTANCE);
            let mut traps = Vec::new();
            for ((d, other), ds) in distractors.iter().zip(others).zip(distractor_sessions) {
                let text = d.replace("{v}", other);
                push(&mut mine, ds, &text, "Got it, I will remember that.", FACT_IMPORTANCE);
                traps.push(text);
            }
            questions.push(HardQuestion {
                user: user.clone(),
                category: Category::ExactIdentifier,
                question: question.replace("{v}", id),
                marker: fact,
                stale_marker: None,
                traps,
                identifier: Some(id.to_owned()),
                other_identifiers: others.iter().map(|o| (*o).to_owned()).collect(),
            });
        }
        mine.sort_by_key(|m| m.created_at);
        memories.extend(mine);
    }
    (memories, questions)
}
