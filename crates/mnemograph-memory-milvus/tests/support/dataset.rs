//! A generated multi-user, multi-session history with planted facts and paraphrased questions.
//!
//! Every user gets the same kinds of facts with different values (so another user's fact is a
//! near-perfect lexical match: the isolation trap), buried in small talk made of the same common
//! words as the questions (so a bag-of-words dense search is distracted and BM25's IDF helps).

use mnemograph_memory::{Memory, NewMemory, RetrieveQuery};

/// The reference time of the dataset; queries measure ages from it.
pub const NOW: i64 = 1_780_000_000;
const DAY: i64 = 86_400;

/// A fact to plant and the question that should recall it.
#[derive(Debug, Clone)]
pub struct Planted {
    pub user: String,
    pub session: String,
    pub question: String,
    pub answer: String,
    /// A string only the planted memory contains (how a hit is recognised).
    pub marker: String,
    pub created_at: i64,
}

/// (statement, answer, question, per-user values)
const FACTS: [(&str, &str, &str, [&str; 3]); 8] = [
    (
        "My cat is called {v}.",
        "What a lovely name for a cat!",
        "what name did I give my cat",
        ["Pixel", "Mochi", "Tofu"],
    ),
    (
        "We set the RAG chunk size to {v} tokens.",
        "Noted, I will use that chunk size.",
        "which chunk size did we choose for the RAG pipeline",
        ["512", "768", "1024"],
    ),
    (
        "My flight to {v} leaves on Friday morning.",
        "Have a safe trip!",
        "when does my flight to {v} leave",
        ["Lisbon", "Osaka", "Denver"],
    ),
    (
        "I am allergic to {v}.",
        "I will remember to avoid it in recipes.",
        "what food am I allergic to",
        ["peanuts", "shellfish", "sesame"],
    ),
    (
        "The FastAPI latency dropped after we enabled {v}.",
        "Great result for the service.",
        "how did we fix the FastAPI latency problem",
        ["uvloop", "orjson", "gzip"],
    ),
    (
        "My daughter's birthday is on {v}.",
        "I will remind you before then.",
        "when is my daughter's birthday",
        ["March 3", "July 19", "May 30"],
    ),
    (
        "I prefer {v} for backend services.",
        "Good choice for backends.",
        "which language do I like for backend work",
        ["Rust", "Go", "Kotlin"],
    ),
    (
        "Our Milvus index uses HNSW with M set to {v}.",
        "That is a reasonable M.",
        "what M value does our HNSW index use",
        ["16", "32", "48"],
    ),
];

/// Small talk built from the questions' common words.
const FILLER: [(&str, &str); 12] = [
    ("can you tell me what I should do today", "Sure, what is on your list?"),
    ("what did I say about my plans", "You mentioned a few things about your plans."),
    ("how do I make my day more productive", "Try blocking time for focused work."),
    ("which book should I read next", "Maybe something light for the weekend."),
    ("when should I take a break from work", "Every hour or so is a good rule."),
    ("I need help with my email", "Happy to help you draft it."),
    ("what is a good name for a project", "How about something short and memorable?"),
    ("did we talk about the weather", "Not really, but it looks sunny."),
    ("can you remind me to call my friend", "I will remind you this evening."),
    ("how is the service doing today", "Everything looks normal."),
    ("what do you think about my idea", "It sounds promising, tell me more."),
    ("I want to learn something new this week", "Pick one small topic and practise daily."),
];

/// The users of the dataset.
pub fn users(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("user-{i}")).collect()
}

/// Builds the history: per user, `sessions` sessions of `turns` small-talk turns each, with the
/// facts spread over the sessions at ages from 1 to ~90 days. Returns all memories and the facts.
pub fn build(n_users: usize, sessions: usize, turns: usize) -> (Vec<NewMemory>, Vec<Planted>) {
    let mut memories = Vec::new();
    let mut planted = Vec::new();
    for (u, user) in users(n_users).iter().enumerate() {
        for s in 0..sessions {
            let session = format!("s{s}");
            // Older sessions first: session s is (sessions - s) * 11 days old.
            let base = NOW - (sessions - s) as i64 * 11 * DAY;
            for t in 0..turns {
                let (q, a) = FILLER[(u * 7 + s * 5 + t) % FILLER.len()];
                memories.push(
                    NewMemory::turn(user, &session, q, a).created_at(base + t as i64 * 60).importance(0.4),
                );
            }
        }
        for (f, (statement, answer, question, values)) in FACTS.iter().enumerate() {
            let v = values[u % values.len()];
            let session = format!("s{}", f % sessions);
            let created_at = NOW - (1 + (f as i64 * 13) % 90) * DAY;
            let text = statement.replace("{v}", v);
            memories
                .push(NewMemory::turn(user, &session, &text, answer).created_at(created_at).importance(0.6));
            planted.push(Planted {
                user: user.clone(),
                session,
                question: question.replace("{v}", v),
                answer: (*answer).to_owned(),
                marker: text,
                created_at,
            });
        }
    }
    (memories, planted)
}

/// Outcome of asking every planted question.
#[derive(Debug, Clone, Copy, Default)]
pub struct Recall {
    /// Questions whose fact was in the top 3.
    pub hits: usize,
    /// Questions asked.
    pub total: usize,
    /// Returned memories belonging to another user (must be 0).
    pub cross_user: usize,
}

impl Recall {
    pub fn rate(&self) -> f64 {
        self.hits as f64 / self.total.max(1) as f64
    }
}

/// Recall@3 of `memory` over the planted questions, with `shape` choosing mode and reranking.
pub async fn recall_at_3<M: Memory>(
    memory: &M,
    planted: &[Planted],
    shape: impl Fn(RetrieveQuery) -> RetrieveQuery,
) -> Recall {
    let mut r = Recall::default();
    for p in planted {
        let q = shape(RetrieveQuery::new(&p.user, &p.question).top_k(3).now(NOW));
        let hits = memory.retrieve(q).await.expect("retrieve");
        r.total += 1;
        r.cross_user += hits.iter().filter(|h| h.record.user_id != p.user).count();
        if hits.iter().any(|h| h.record.content.contains(&p.marker)) {
            r.hits += 1;
        }
    }
    r
}
