//! The changing-facts benchmark: users whose facts change, worded differently and often in the
//! other language, among chit-chat that names the same things (`support/changing_facts`), run
//! end to end through [`Agent::chat`] with the main command's defaults, in process and on Milvus
//! (`MILVUS_URL`). After six sessions each user asks about each of their facts, one new session
//! per question, and the recalled memories are traced back to the turns that made them. Each
//! turn is dated a second after the one before it.
//!
//! Measured per question: whether a memory stating the current value is among the first three
//! recalled (recall@3) or first (top-1), whether one stating a replaced value comes before it,
//! and whether anything of another user came back. `CHANGING_FACTS_USERS` sets how many users
//! run (2 by default, which CI runs; the benchmark runs all 24 in a release build:
//! `docs/benchmarks/memory-quality.md` has the command and the figures);
//! `CHANGING_FACTS_MEMORY_ORDER` runs it without the agent's ordering of the user's statements.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use memory_agent::{Agent, Config, EmbedderChoice};
use support::changing_facts::{generate, How, Label, User, SESSIONS, SUBJECTS};

/// The seed of the published figures.
const SEED: u64 = 43;

/// The users of the published figures.
const ALL_USERS: usize = 24;

/// How one question went.
#[derive(Debug)]
struct Outcome {
    /// How the current value was stated.
    how: How,
    /// Whether it was stated inside a longer message.
    embedded: bool,
    /// Whether the question was Chinese.
    chinese: bool,
    /// Whether the fact changed at least once.
    updated: bool,
    /// The rank of the first memory stating the current value.
    current: Option<usize>,
    /// The rank of the first memory stating a replaced value.
    stale: Option<usize>,
    /// The rank of the first trap about the subject (it names values without stating the user's).
    trap: Option<usize>,
    /// Recalled memories of another user.
    cross_user: usize,
    /// Recalled memories of this user that no turn of theirs made.
    untraced: usize,
    /// Whether the statement of the current value was retired by a later turn.
    current_retired: bool,
}

impl Outcome {
    fn recall_at_3(&self) -> bool {
        self.current.is_some_and(|r| r < 3)
    }

    fn top_1(&self) -> bool {
        self.current == Some(0)
    }

    fn stale_first(&self) -> bool {
        self.stale.is_some_and(|s| self.current.is_none_or(|c| s < c))
    }

    fn trap_first(&self) -> bool {
        self.trap.is_some_and(|t| self.current.is_none_or(|c| t < c))
    }
}

/// Every turn of `users` through `agent`; the questions' outcomes, and the time the statements
/// and the questions took.
async fn run(agent: &Agent, users: &[User]) -> (Vec<Outcome>, Duration, Duration, usize) {
    let (mut outcomes, mut chatting, mut asking, mut said) = (Vec::new(), Duration::ZERO, Duration::ZERO, 0);
    let mut second = 0;
    for user in users {
        for turn in &user.turns {
            // Each turn a second after the one before: memories are dated to the second, and a
            // machine writes many turns a second, so which of two statements is newer would
            // otherwise depend on its speed.
            second += 1;
            agent.context().clock.set_offset(second);
            let started = Instant::now();
            let result = agent.chat(&user.id, &turn.session, &turn.text).await.expect("a turn");
            let Label::Question { subject } = turn.label else {
                chatting += started.elapsed();
                said += 1;
                continue;
            };
            asking += started.elapsed();
            let values = &user.history[&subject];
            let current = *values.last().expect("a value");
            let stated = user
                .turns
                .iter()
                .rev()
                .find(|t| matches!(t.label, Label::Fact { subject: s, value, .. } if s == subject && value == current))
                .expect("the current value was stated");
            let Label::Fact { how, .. } = stated.label else { unreachable!() };
            let mut outcome = Outcome {
                how,
                embedded: stated.embedded,
                chinese: turn.chinese,
                updated: values.len() > 1,
                current: None,
                stale: None,
                trap: None,
                cross_user: 0,
                untraced: 0,
                current_retired: retired(agent, &user.id, &stated.text).await,
            };
            for (rank, hit) in result.recalled.iter().enumerate() {
                if hit.record.user_id != user.id {
                    outcome.cross_user += 1;
                    continue;
                }
                let said = hit.record.content.lines().next().and_then(|l| l.strip_prefix("User: "));
                match said.and_then(|s| user.label_of(s)) {
                    Some(Label::Fact { subject: s, value, .. }) if *s == subject => {
                        if *value == current {
                            outcome.current.get_or_insert(rank);
                        } else {
                            outcome.stale.get_or_insert(rank);
                        }
                    }
                    Some(Label::Trap { subject: s }) if *s == subject => {
                        outcome.trap.get_or_insert(rank);
                    }
                    Some(_) => {}
                    None => outcome.untraced += 1,
                }
            }
            if std::env::var_os("CHANGING_FACTS_SHOW").is_some() && !outcome.top_1() {
                show(user, turn, current, &result.recalled);
            }
            outcomes.push(outcome);
        }
    }
    (outcomes, chatting, asking, said)
}

/// Whether the memory of what `user` said in `said` is retired.
async fn retired(agent: &Agent, user: &str, said: &str) -> bool {
    use mnemograph_memory::{Memory, RetrieveQuery, SearchMode};
    let query =
        RetrieveQuery::new(user, said).mode(SearchMode::Dense).rerank(false).include_retired(true).top_k(5);
    let hits = agent.context().memory.retrieve(query).await.expect("a search");
    hits.iter()
        .find(|h| h.record.content.lines().next().and_then(|l| l.strip_prefix("User: ")) == Some(said))
        .is_some_and(|h| h.record.is_retired())
}

/// Prints a question whose current value did not come first, and what did
/// (`CHANGING_FACTS_SHOW`).
fn show(
    user: &User,
    question: &support::changing_facts::Turn,
    current: usize,
    hits: &[mnemograph_memory::MemoryHit],
) {
    println!("{} asks {:?} (current value {current})", user.id, question.text);
    for hit in hits.iter().take(5) {
        let said = hit.record.content.lines().next().unwrap_or_default();
        let label = said.strip_prefix("User: ").and_then(|s| user.label_of(s));
        println!("    {:.3} {:.3} {label:?} {said}", hit.score, hit.relevance);
    }
}

/// The share of `outcomes` for which `test` holds, as `0.917 (11/12)`.
fn share(outcomes: &[&Outcome], test: impl Fn(&Outcome) -> bool) -> String {
    let n = outcomes.iter().filter(|o| test(o)).count();
    format!("{:.3} ({n}/{})", n as f64 / outcomes.len().max(1) as f64, outcomes.len())
}

/// Prints the figures of a run, overall and by how the current value was stated.
fn report(name: &str, outcomes: &[Outcome], chatting: Duration, asking: Duration, said: usize) {
    let all: Vec<&Outcome> = outcomes.iter().collect();
    let updated: Vec<&Outcome> = outcomes.iter().filter(|o| o.updated).collect();
    println!("changing facts, {name}: {} questions, {} about a changed fact", all.len(), updated.len());
    println!("  recall@3 {}", share(&all, Outcome::recall_at_3));
    println!("  top-1    {}", share(&all, Outcome::top_1));
    println!("  replaced value ranked above the current one: {}", share(&updated, Outcome::stale_first));
    println!("  a trap ranked above the current value: {}", share(&all, Outcome::trap_first));
    println!("  cross-user hits: {}", outcomes.iter().map(|o| o.cross_user).sum::<usize>());
    println!("  the current value's statement retired: {}", share(&all, |o| o.current_retired));
    let mut groups: BTreeMap<String, Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        groups.entry(format!("stated {:?}", o.how)).or_default().push(o);
        if o.embedded {
            groups.entry("stated inside a longer message".to_owned()).or_default().push(o);
        }
        let language = if o.chinese { "asked in Chinese" } else { "asked in English" };
        groups.entry(language.to_owned()).or_default().push(o);
    }
    for (group, members) in &groups {
        println!(
            "  {group:<32} recall@3 {}  top-1 {}  replaced first {}  trap first {}",
            share(members, Outcome::recall_at_3),
            share(members, Outcome::top_1),
            share(members, Outcome::stale_first),
            share(members, Outcome::trap_first)
        );
    }
    let per = |total: Duration, n: usize| total.as_secs_f64() * 1000.0 / n.max(1) as f64;
    println!("  {:.0} ms a statement, {:.0} ms a question", per(chatting, said), per(asking, all.len()));
}

/// How many users a run has.
fn users() -> usize {
    std::env::var("CHANGING_FACTS_USERS").ok().and_then(|n| n.parse().ok()).unwrap_or(2).min(ALL_USERS)
}

/// Runs the set on `config` and checks what must hold whatever the quality: every question was
/// answered from this user's memories only, each traced to a turn of theirs.
async fn benchmark(name: &str, config: Config) -> Agent {
    let mut agent = Agent::connect(&config).await.expect("connect");
    // `CHANGING_FACTS_MEMORY_ORDER` keeps the memory's own order for questions about the user
    // (no `Answers`): the cost and the figures of recall without the agent's ordering, under
    // the same load.
    if std::env::var_os("CHANGING_FACTS_MEMORY_ORDER").is_some() {
        let context = agent.context().clone().with_answers(None);
        let checkpointer = config.connect_checkpointer().await.expect("a checkpointer");
        agent = Agent::new(context, checkpointer).expect("the agent");
    }
    let users = generate(users(), SEED);
    let (outcomes, chatting, asking, said) = run(&agent, &users).await;
    report(name, &outcomes, chatting, asking, said);
    assert_eq!(outcomes.len(), users.iter().map(|u| u.questions().count()).sum::<usize>());
    assert!(outcomes.iter().all(|o| o.cross_user == 0), "another user's memory was recalled");
    assert!(outcomes.iter().all(|o| o.untraced == 0), "a recalled memory matches no turn: {outcomes:?}");
    assert!(outcomes.iter().any(|o| o.current.is_some()), "nothing current was ever recalled: {outcomes:?}");
    agent
}

/// The multilingual model the defaults use is there, or the test is skipped outside CI.
fn model_available() -> bool {
    if std::env::var_os("USE_MODEL_DIR").is_none() && std::env::var_os("CI").is_none() {
        eprintln!("SKIPPED: USE_MODEL_DIR is not set (bash scripts/models.sh use-multilingual)");
        return false;
    }
    true
}

#[test]
fn the_set_has_the_promised_shape() {
    let users = generate(ALL_USERS, SEED);
    let turns: usize = users.iter().map(|u| u.turns.len()).sum();
    let questions: Vec<_> = users.iter().flat_map(|u| u.questions().map(move |q| (u, q))).collect();
    let about_changed = questions.iter().filter(|(u, (_, s))| u.history[s].len() > 1).count();
    println!(
        "{} users, {turns} turns, {} questions, {about_changed} about a changed fact",
        users.len(),
        questions.len()
    );
    assert!(turns > 3_000, "{turns} turns");
    assert!(questions.len() > 100, "{} questions", questions.len());
    assert!(
        about_changed * 4 > questions.len() * 3,
        "{about_changed} of {} about a changed fact",
        questions.len()
    );
    assert!(questions.iter().any(|(_, (q, _))| q.chinese) && questions.iter().any(|(_, (q, _))| !q.chinese));
    let facts: Vec<_> =
        users.iter().flat_map(|u| &u.turns).filter(|t| matches!(t.label, Label::Fact { .. })).collect();
    for how in [How::First, How::SameLanguage, How::OtherLanguage, How::Implied] {
        let n = facts.iter().filter(|t| matches!(t.label, Label::Fact { how: h, .. } if h == how)).count();
        assert!(n >= 10, "{n} facts stated {how:?}");
    }
    assert!(facts.iter().filter(|t| t.embedded).count() >= 10, "facts inside longer messages");
    let traps: Vec<_> =
        users.iter().flat_map(|u| &u.turns).filter(|t| matches!(t.label, Label::Trap { .. })).collect();
    let asking = |t: &&&support::changing_facts::Turn| t.text.ends_with('?') || t.text.ends_with('？');
    assert!(traps.iter().filter(asking).count() >= 100, "traps asked");
    assert!(
        traps.len() - traps.iter().filter(asking).count() >= 100,
        "traps told, about someone or something else"
    );
    for user in &users {
        for (&subject, values) in &user.history {
            assert!(values.len() <= 4, "at most three updates");
            // A trap names the user's own values too: that is what makes it a trap.
            let traps = user.turns.iter().filter(|t| t.label == Label::Trap { subject }).count();
            assert!(traps > 0, "{} has no trap about {}", user.id, SUBJECTS[subject].name);
        }
        let sessions: std::collections::BTreeSet<_> = user.turns.iter().map(|t| t.session.as_str()).collect();
        assert!(sessions.len() > SESSIONS, "question sessions follow the chat sessions");
        for turn in &user.turns {
            assert_eq!(
                user.label_of(&turn.text).map(std::mem::discriminant),
                Some(std::mem::discriminant(&turn.label))
            );
        }
    }
    // Repeatable: the same seed makes the same set.
    let again = generate(ALL_USERS, SEED);
    assert!(users.iter().zip(&again).all(|(a, b)| a
        .turns
        .iter()
        .map(|t| &t.text)
        .eq(b.turns.iter().map(|t| &t.text))));
}

#[tokio::test]
async fn changing_facts_in_process() {
    if !model_available() {
        return;
    }
    let config = Config::embedded();
    assert!(matches!(config.embedder, EmbedderChoice::Multilingual { .. }), "{:?}", config.embedder);
    benchmark("in process", config).await;
}

#[tokio::test]
async fn changing_facts_on_milvus() {
    if !model_available() {
        return;
    }
    let Some(memory) = support::milvus_memory("changing_facts") else { return };
    let agent = benchmark("on Milvus", Config::embedded().with_memory(memory)).await;
    support::drop_milvus_collection(&agent).await;
}
