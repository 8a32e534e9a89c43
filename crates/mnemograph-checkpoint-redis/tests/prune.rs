//! `RedisCheckpointer::prune` on a thread written by a real graph: a chat with more fields, a
//! subgraph (one namespace per turn) and an interrupt whose pending writes sit on the latest
//! checkpoint. Needs a Redis server (see `support`); skips without one outside CI.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{CheckpointConfig, CheckpointTuple, ListOptions};
use mnemograph_checkpoint_redis::{RedisCheckpointer, RedisCheckpointerBuilder, ThreadKeys};
use mnemograph_core::prelude::*;
use support::{deadlines, existing, raw, saver_with, thread};

/// A conversation plus plain fields written by a gate node and by a subgraph.
#[derive(State, Clone, Default, Debug, PartialEq)]
struct Chat {
    #[reducer(add_messages)]
    messages: Vec<Message>,
    /// How many turns the agent answered.
    turns: i64,
    /// The gate's answer: `auto`, or what the human said when asked.
    approved: String,
    /// Written by the subgraph.
    summary: String,
}

/// Runs as a node of [`graph`], so its checkpoints live in a namespace of their own per turn.
fn child() -> CompiledGraph<Chat> {
    StateGraph::<Chat>::new()
        .add_node("count", |s: Chat| async move {
            Ok::<_, Error>(ChatUpdate::summary(format!("{} messages", s.messages.len())))
        })
        .add_node("check", |s: Chat| async move {
            Ok::<_, Error>(ChatUpdate::summary(format!("{} checked", s.summary)))
        })
        .add_edge(START, "count")
        .add_edge("count", "check")
        .compile()
        .expect("child compiles")
}

/// START → agent → sub → END, and START → gate → END beside the agent. The gate asks a human
/// when the last message starts with `ask`: the agent's write then waits as a pending write on
/// the latest checkpoint.
fn graph(saver: RedisCheckpointer) -> CompiledGraph<Chat> {
    StateGraph::<Chat>::new()
        .add_node("agent", |s: Chat| async move {
            let last = s.messages.last().map(Message::text).unwrap_or_default();
            let reply = vec![Message::ai(format!("echo: {last}"))];
            Ok::<_, Error>(ChatUpdate::messages(reply).with_turns(s.turns + 1))
        })
        .add_node("gate", |s: Chat, rt: Runtime| async move {
            let last = s.messages.last().map(Message::text).unwrap_or_default();
            let approved =
                if last.starts_with("ask") { rt.interrupt::<String>("approve?")? } else { "auto".to_owned() };
            Ok::<_, Error>(ChatUpdate::approved(approved))
        })
        .add_node("sub", child())
        .add_edge(START, "agent")
        .add_edge(START, "gate")
        .add_edge("agent", "sub")
        .add_edge("sub", END)
        .add_edge("gate", END)
        .compile_with(saver)
        .expect("graph compiles")
}

fn human(text: &str) -> ChatUpdate {
    ChatUpdate::messages(vec![Message::human(text)])
}

fn texts(state: &Chat) -> Vec<String> {
    state.messages.iter().map(Message::text).collect()
}

/// Settings with a key prefix of their own per test.
fn builder(label: &str) -> RedisCheckpointerBuilder {
    RedisCheckpointer::builder()
        .key_prefix(format!("graph-test:prune:{}", thread(label)))
        .ttl(Duration::from_secs(600))
}

macro_rules! saver_or_skip {
    ($builder:expr) => {
        match saver_with($builder).await {
            Some(saver) => saver,
            None => return,
        }
    };
}

/// Three answered turns, then a fourth stopped at the gate's question.
async fn build_thread(g: &CompiledGraph<Chat>, cfg: &RunConfig) {
    for turn in ["hello", "how are you", "tell me more"] {
        let out = g.invoke(human(turn), cfg).await.expect("turn");
        assert!(!out.is_interrupted(), "{turn}");
    }
    let out = g.invoke(human("ask: may I delete it?"), cfg).await.expect("asking turn");
    assert_eq!(out.interrupts.len(), 1, "the gate asks");
}

/// The namespaces of a thread, read from its index key.
async fn namespaces(keys: &ThreadKeys) -> BTreeSet<String> {
    let members: Vec<String> =
        redis::cmd("ZRANGE").arg(&keys.index).arg(0).arg(-1).query_async(&mut raw().await).await.unwrap();
    let unhex = |h: &str| {
        let bytes = (0..h.len()).step_by(2).map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap());
        String::from_utf8(bytes.collect()).unwrap()
    };
    members.iter().map(|m| unhex(m.split(':').next().unwrap())).collect()
}

/// Everything a reader sees of one checkpoint, as text (the tuple types have no `PartialEq`).
fn fingerprint(t: &CheckpointTuple) -> String {
    let writes: Vec<_> = t.pending_writes.iter().map(|w| (&w.task_id, &w.channel, &w.value)).collect();
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {writes:?}",
        t.config,
        t.parent_config,
        t.checkpoint.channel_values,
        t.checkpoint.channel_versions,
        t.checkpoint.versions_seen,
        t.metadata
    )
}

/// Namespace → its checkpoints, newest first.
async fn tuples(saver: &RedisCheckpointer, thread_id: &str) -> BTreeMap<String, Vec<CheckpointTuple>> {
    let mut out = BTreeMap::new();
    for ns in namespaces(&saver.thread_keys(thread_id)).await {
        let cfg = CheckpointConfig::thread(thread_id).with_ns(ns.clone());
        out.insert(ns, saver.list(Some(&cfg), ListOptions::new()).await.unwrap());
    }
    out
}

/// Namespace → fingerprints of its checkpoints, newest first.
async fn history(saver: &RedisCheckpointer, thread_id: &str) -> BTreeMap<String, Vec<String>> {
    let all = tuples(saver, thread_id).await;
    all.into_iter().map(|(ns, cps)| (ns, cps.iter().map(fingerprint).collect())).collect()
}

async fn hlen(key: &str) -> usize {
    redis::cmd("HLEN").arg(key).query_async(&mut raw().await).await.unwrap()
}

/// The blob fields some checkpoint of the thread refers to.
async fn referenced_blobs(keys: &ThreadKeys) -> BTreeSet<String> {
    let refs: Vec<String> = redis::cmd("HVALS").arg(&keys.refs).query_async(&mut raw().await).await.unwrap();
    refs.iter().flat_map(|r| r.split_whitespace().map(str::to_owned)).collect()
}

async fn blob_fields(keys: &ThreadKeys) -> BTreeSet<String> {
    redis::cmd("HKEYS").arg(&keys.blobs).query_async(&mut raw().await).await.unwrap()
}

/// `DUMP` of every key of a thread (contents without expiry), to show it was not touched.
async fn dump(keys: &ThreadKeys) -> Vec<Option<Vec<u8>>> {
    let mut out = Vec::new();
    for key in keys.all() {
        out.push(redis::cmd("DUMP").arg(key).query_async(&mut raw().await).await.unwrap());
    }
    out
}

/// Each remaining key keeps its deadline. `PEXPIRETIME` is exact; the Redis 6 fallback (`PTTL`)
/// shrinks by the time between the two reads, hence the tolerance.
fn assert_same_deadlines(before: &[(String, i64)], after: &[(String, i64)]) {
    assert!(!after.is_empty());
    for (key, at) in after {
        let was = before.iter().find(|(k, _)| k == key).map(|(_, at)| *at).expect("key existed before");
        assert!((was - at).abs() < 2_000 && (was < 0) == (*at < 0), "{key}: {was} → {at}");
    }
}

#[tokio::test]
async fn prune_keeps_the_newest_per_namespace_and_the_thread_resumes() {
    let saver = saver_or_skip!(builder("full"));
    let g = graph(saver.clone());
    let id = thread("main");
    let cfg = RunConfig::thread(id.clone());
    build_thread(&g, &cfg).await;
    // Another thread of the same saver, which prune must not touch.
    let other_id = thread("other");
    g.invoke(human("bystander"), &RunConfig::thread(other_id.clone())).await.unwrap();
    let other_keys = saver.thread_keys(&other_id);
    let (other_dump, other_deadlines) = (dump(&other_keys).await, deadlines(&other_keys).await);

    let keys = saver.thread_keys(&id);
    let before = history(&saver, &id).await;
    assert!(before.len() >= 4, "root plus one subgraph namespace per answered turn: {:?}", before.keys());
    assert!(before.values().all(|cps| cps.len() > 2), "every namespace has something to prune");
    let latest = saver.get_tuple(&CheckpointConfig::thread(&id)).await.unwrap().unwrap();
    assert!(!latest.pending_writes.is_empty(), "the agent's write and the interrupt wait on the latest");
    let blobs_before = hlen(&keys.blobs).await;
    let deadlines_before = deadlines(&keys).await;
    assert!(deadlines_before.iter().all(|(_, at)| *at > 0), "the thread expires");

    let expected: usize = before.values().map(|cps| cps.len() - 2).sum();
    assert_eq!(saver.prune(&id, 2).await.unwrap(), u64::try_from(expected).unwrap());

    let after = history(&saver, &id).await;
    assert_eq!(after.keys().collect::<Vec<_>>(), before.keys().collect::<Vec<_>>(), "no namespace vanishes");
    for (ns, cps) in &after {
        assert_eq!(cps[..], before[ns][..2], "namespace {ns:?}: the two newest, read back whole");
    }
    let (blobs, referenced) = (blob_fields(&keys).await, referenced_blobs(&keys).await);
    assert!(blobs.len() < blobs_before, "{} of {blobs_before} values left", blobs.len());
    assert!(blobs.is_subset(&referenced), "unreferenced values left: {:?}", blobs.difference(&referenced));
    let kept = tuples(&saver, &id).await;
    let kept_writes: usize = kept.values().flatten().map(|t| t.pending_writes.len()).sum();
    assert_eq!(hlen(&keys.writes).await, kept_writes, "only the writes of kept checkpoints remain");
    assert_same_deadlines(&deadlines_before, &deadlines(&keys).await);
    assert_eq!(dump(&other_keys).await, other_dump, "another thread is untouched");
    assert_eq!(deadlines(&other_keys).await, other_deadlines);

    // The interrupted run resumes from what is left, and the thread goes on.
    let out = g.invoke_input(Input::resume("yes"), &cfg).await.expect("resume");
    assert!(!out.is_interrupted(), "{:?}", out.interrupts);
    assert_eq!((out.approved.as_str(), out.turns), ("yes", 4));
    assert_eq!(out.summary, "8 messages checked");
    let out = g.invoke(human("thanks"), &cfg).await.expect("next turn");
    assert_eq!(
        texts(&out)[6..],
        ["ask: may I delete it?", "echo: ask: may I delete it?", "thanks", "echo: thanks"]
    );
    assert_eq!((out.approved.as_str(), out.turns), ("auto", 5));

    // keep_last == 0 deletes the thread; a missing thread has nothing to prune.
    let total: usize = history(&saver, &id).await.values().map(Vec::len).sum();
    assert_eq!(saver.prune(&id, 0).await.unwrap(), u64::try_from(total).unwrap());
    assert_eq!(existing(&keys).await, 0);
    assert_eq!(saver.prune(&id, 2).await.unwrap(), 0);
    let ghost = thread("never-written");
    assert_eq!(saver.prune(&ghost, 1).await.unwrap(), 0);
    assert_eq!(existing(&saver.thread_keys(&ghost)).await, 0, "nothing is created");
    Checkpointer::delete_thread(&saver, &other_id).await.unwrap();
}

#[tokio::test]
async fn a_pinned_thread_stays_pinned() {
    let saver = saver_or_skip!(builder("pinned"));
    let g = graph(saver.clone());
    let id = thread("pinned");
    let cfg = RunConfig::thread(id.clone());
    build_thread(&g, &cfg).await;
    assert!(saver.pin(&id).await.unwrap());
    assert!(saver.prune(&id, 1).await.unwrap() > 0);
    let keys = saver.thread_keys(&id);
    let left = deadlines(&keys).await;
    assert!(!left.is_empty() && left.iter().all(|(_, at)| *at == -1), "{left:?}");
    let out = g.invoke_input(Input::resume("ok"), &cfg).await.expect("resume after prune");
    assert_eq!((out.approved.as_str(), out.turns), ("ok", 4));
    assert!(deadlines(&keys).await.iter().all(|(_, at)| *at == -1), "later writes keep it pinned");
    Checkpointer::delete_thread(&saver, &id).await.unwrap();
}

#[tokio::test]
async fn shallow_threads_have_nothing_older_to_prune() {
    let saver = saver_or_skip!(builder("shallow").shallow(true));
    let g = graph(saver.clone());
    let id = thread("shallow");
    let cfg = RunConfig::thread(id.clone());
    build_thread(&g, &cfg).await;
    let keys = saver.thread_keys(&id);
    let before = history(&saver, &id).await;
    assert!(before.len() >= 4 && before.values().all(|cps| cps.len() == 1), "{before:?}");
    let blobs = hlen(&keys.blobs).await;
    assert_eq!(saver.prune(&id, 1).await.unwrap(), 0);
    assert_eq!(history(&saver, &id).await, before);
    assert_eq!(hlen(&keys.blobs).await, blobs, "shallow mode stores only referenced values");
    let out = g.invoke_input(Input::resume("fine"), &cfg).await.expect("resume");
    assert_eq!((out.approved.as_str(), out.turns), ("fine", 4));
    let namespaces = history(&saver, &id).await.len();
    assert_eq!(saver.prune(&id, 0).await.unwrap(), u64::try_from(namespaces).unwrap());
    assert_eq!(existing(&keys).await, 0);
}
