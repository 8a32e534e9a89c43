//! The bilingual quality set of mnemograph-memory-milvus (`tests/support/bilingual_quality.rs`,
//! shared from there) run end to end through [`Agent::chat`] with the main command's defaults,
//! so that the agent's own recall (its ordering of the user's statements included) is measured
//! on it, not only the memory's. Every exchange is said in its session at its age (the agent's
//! clock set back to it); each question is asked in a new session after a greeting.
//!
//! Measured: recall@3 (the statement that answers the question among the first three recalled,
//! told by the user's words), top-1, how often a replaced statement comes before its newer
//! version, and memories of another user (the set's twins state the same kinds of facts).

#![allow(dead_code, missing_debug_implementations)]

mod support;

#[path = "../../../crates/mnemograph-memory-milvus/tests/support/bilingual_corpus.rs"]
pub mod bilingual_corpus;
#[path = "../../../crates/mnemograph-memory-milvus/tests/support/bilingual_quality.rs"]
pub mod bilingual_quality;

use std::time::{Duration, Instant};

use bilingual_quality::{build, Dataset, NOW, TODAY};
use memory_agent::{Agent, Config, EmbedderChoice};

/// The users the memory's own benchmark asks (`quality.rs`'s `USERS`).
const USERS: usize = 40;

/// The users CI runs on Milvus.
const MILVUS_USERS: usize = 4;

/// The user's words in a stored exchange `User: …\nAssistant: …`.
fn said(content: &str) -> &str {
    content.lines().next().and_then(|l| l.strip_prefix("User: ")).unwrap_or_default()
}

/// Every exchange of `data` through `agent` in time order, then every question.
async fn run(agent: &Agent, data: &Dataset) -> (usize, usize, usize, usize, usize, Duration) {
    let mut exchanges: Vec<_> = data.exchanges.iter().collect();
    exchanges.sort_by_key(|e| e.at);
    for e in exchanges {
        agent.context().clock.set_offset(e.at - NOW);
        agent.chat(&e.user, &e.session_id(), &e.said).await.expect("a turn");
    }
    agent.context().clock.set_offset(0);
    let (mut found, mut first, mut stale_first, mut cross_user, mut asked) = (0, 0, 0, 0, Duration::ZERO);
    for (i, q) in data.questions.iter().enumerate() {
        let session = format!("{TODAY}-{i}");
        for line in q.recent.iter().step_by(2) {
            agent.chat(&q.user, &session, line).await.expect("the greeting");
        }
        let started = Instant::now();
        let turn = agent.chat(&q.user, &session, &q.text).await.expect("a question");
        asked += started.elapsed();
        let rank = |wanted: &str| turn.recalled.iter().position(|h| said(&h.record.content) == said(wanted));
        let current = rank(&q.expected);
        found += usize::from(current.is_some_and(|r| r < 3));
        first += usize::from(current == Some(0));
        if let Some(old) = q.stale.as_deref().and_then(rank) {
            stale_first += usize::from(current.is_none_or(|c| old < c));
        }
        cross_user += turn.recalled.iter().filter(|h| h.record.user_id != q.user).count();
        if std::env::var_os("BILINGUAL_SHOW").is_some() && current != Some(0) {
            println!("{} asks {:?}, wanted {:?}", q.user, q.text, said(&q.expected));
            for h in &turn.recalled {
                println!("    {:.3} {}", h.score, said(&h.record.content));
            }
        }
    }
    (found, first, stale_first, cross_user, data.questions.len(), asked)
}

/// Whether the multilingual model is there; without it the benchmark is skipped, except under CI.
fn model_available() -> bool {
    if std::env::var_os("USE_MODEL_DIR").is_none() && std::env::var_os("CI").is_none() {
        eprintln!("SKIPPED: USE_MODEL_DIR is not set (bash scripts/models.sh use-multilingual)");
        return false;
    }
    true
}

/// Runs the set's first `users` (`BILINGUAL_USERS` when set) through an agent on `config`, and
/// reports its figures under `name`.
async fn benchmark(name: &str, config: Config, users: usize) -> Agent {
    assert!(matches!(config.embedder, EmbedderChoice::Multilingual { .. }), "{:?}", config.embedder);
    let mut agent = Agent::connect(&config).await.expect("connect");
    // `BILINGUAL_MEMORY_ORDER` keeps the memory's own order for questions about the user (no
    // `Answers`), to compare with.
    if std::env::var_os("BILINGUAL_MEMORY_ORDER").is_some() {
        let context = agent.context().clone().with_answers(None);
        let checkpointer = config.connect_checkpointer().await.expect("a checkpointer");
        agent = Agent::new(context, checkpointer).expect("the agent");
    }
    let users = std::env::var("BILINGUAL_USERS").ok().and_then(|n| n.parse().ok()).unwrap_or(users);
    let data = build(users);
    let (found, first, stale_first, cross_user, n, asked) = run(&agent, &data).await;
    let rate = |k: usize| k as f64 / n.max(1) as f64;
    println!("bilingual set through the agent, {name}: {}", data.describe());
    println!("  recall@3 {:.3} ({found}/{n})", rate(found));
    println!("  top-1    {:.3} ({first}/{n})", rate(first));
    println!("  replaced above its newer version: {stale_first} of {}", data.changed());
    println!("  cross-user hits: {cross_user}");
    println!("  {:.0} ms a question", asked.as_secs_f64() * 1000.0 / n.max(1) as f64);
    assert_eq!(cross_user, 0, "another user's memory was recalled");
    assert!(found > 0, "nothing was ever recalled");
    agent
}

#[tokio::test]
async fn the_bilingual_set_through_the_agent() {
    if model_available() {
        benchmark("in process", Config::embedded(), USERS).await;
    }
}

/// The same on Milvus. A Milvus Lite write takes far longer than one in process, so CI runs the
/// first few users; `BILINGUAL_USERS=40` runs the published set.
#[tokio::test]
async fn the_bilingual_set_through_the_agent_on_milvus() {
    if !model_available() {
        return;
    }
    let Some(memory) = support::milvus_memory("bilingual") else { return };
    let agent = benchmark("on Milvus", Config::embedded().with_memory(memory), MILVUS_USERS).await;
    support::drop_milvus_collection(&agent).await;
}
