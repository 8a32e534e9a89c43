//! Behaviours every [`Memory`] backend must have; each function is one test.

use mnemograph_checkpoint::BoxError;
use mnemograph_memory::{
    compact_session, summarizer_fn, CompactOptions, Error, Memory, MemoryRecord, NewMemory, RetrieveQuery,
    SearchMode, SessionScope, ROLE_SUMMARY,
};
use serde_json::json;

use super::dataset::NOW;

const DAY: i64 = 86_400;

/// Ids chosen to break naive filter interpolation.
pub fn adversarial_ids() -> Vec<String> {
    vec![
        "alice".into(),
        "alice\"".into(),
        "alice\\".into(),
        "\\\"".into(),
        "\" or user_id != \"".into(),
        "x\" || user_id like \"%".into(),
        "' or 1 == 1 or '".into(),
        "用户-甲 🦀".into(),
        "a.b.c".into(),
        format!("long-{}", "\"\\".repeat(100)),
    ]
}

fn both_modes() -> [SearchMode; 2] {
    [SearchMode::Dense, SearchMode::Hybrid]
}

/// Users with hostile ids share identical text; nobody sees, lists or deletes anyone else's rows.
pub async fn isolation_with_adversarial_ids<M: Memory>(m: &M) {
    let users = adversarial_ids();
    let mut ids = Vec::new();
    for (i, u) in users.iter().enumerate() {
        let saved = m
            .save(vec![
                NewMemory::turn(u, "shared", "the secret launch code is kept here", &format!("owner {i}")),
                NewMemory::turn(u, "shared", "unrelated note about gardening", "ok"),
            ])
            .await
            .expect("save");
        ids.push(saved);
    }
    for (i, u) in users.iter().enumerate() {
        for mode in both_modes() {
            let hits =
                m.retrieve(RetrieveQuery::new(u, "secret launch code").top_k(50).mode(mode)).await.unwrap();
            assert_eq!(hits.len(), 2, "{u:?} {mode:?}: exactly the user's own two memories");
            assert!(hits.iter().all(|h| &h.record.user_id == u), "{u:?} {mode:?}: cross-user hit");
            assert!(hits[0].record.content.contains(&format!("owner {i}")), "{u:?} {mode:?}: {hits:?}");
        }
        let listed = m.session_records(u, "shared").await.unwrap();
        assert_eq!(listed.len(), 2, "{u:?}");
        assert!(listed.iter().all(|r| &r.user_id == u));
    }
    // Deleting with another user's ids does nothing; with one's own ids it works.
    m.delete(&users[0], &ids[1]).await.unwrap();
    assert_eq!(m.session_records(&users[1], "shared").await.unwrap().len(), 2);
    m.delete(&users[1], &ids[1][..1]).await.unwrap();
    assert_eq!(m.session_records(&users[1], "shared").await.unwrap().len(), 1);
    assert_eq!(m.session_records(&users[0], "shared").await.unwrap().len(), 2);
    // A user that does not exist, however long or odd its id, gets nothing.
    let ghost = format!("ghost\" or \"\"==\"{}", "z".repeat(5000));
    assert!(m.retrieve(RetrieveQuery::new(ghost, "secret launch code")).await.unwrap().is_empty());
}

/// Empty ids and ids with control characters are refused everywhere.
pub async fn invalid_ids_are_refused<M: Memory>(m: &M) {
    for bad in ["", "a\nb", "nul\0"] {
        let err = m.save_turn(NewMemory::turn(bad, "s", "q", "a")).await.unwrap_err();
        assert!(matches!(err, Error::InvalidInput { .. }), "{bad:?}: {err:?}");
        let err = m.save_turn(NewMemory::turn("u", bad, "q", "a")).await.unwrap_err();
        assert!(matches!(err, Error::InvalidInput { .. }), "{bad:?}: {err:?}");
        assert!(m.retrieve(RetrieveQuery::new(bad, "q")).await.is_err());
        assert!(m.session_records(bad, "s").await.is_err());
        assert!(m.delete(bad, &[1]).await.is_err());
    }
}

/// Chinese text, metadata and importance come back byte for byte, and Chinese queries find it.
pub async fn chinese_round_trip<M: Memory>(m: &M) {
    let q = "我们之前讨论过的那个 RAG 优化方案，具体改了哪些参数？";
    let a = "把 chunk_size 从 256 调到 512，并把 top_k 改成 5。";
    let turn = NewMemory::turn("user-123", "session-001", q, a).importance(0.9).meta("lang", "zh");
    let id = m.save_turn(turn.clone()).await.unwrap();
    m.save_turn(NewMemory::turn("user-123", "session-002", "今天天气怎么样", "晴天，适合散步。"))
        .await
        .unwrap();
    let listed = m.session_records("user-123", "session-001").await.unwrap();
    assert_eq!(listed.len(), 1);
    let r = &listed[0];
    assert_eq!((r.id, r.content.as_str()), (id, turn.content.as_str()));
    assert_eq!(r.role, "exchange");
    assert!((r.importance - 0.9).abs() < 1e-6);
    assert_eq!(r.metadata.get("lang"), Some(&json!("zh")));
    assert_eq!(r.metadata.get("type"), Some(&json!("dialogue_turn")));
    for mode in both_modes() {
        let hits =
            m.retrieve(RetrieveQuery::new("user-123", "RAG 优化方案改了哪些参数").mode(mode)).await.unwrap();
        assert_eq!(hits[0].record.content, turn.content, "{mode:?}");
    }
}

/// Identical memories rank newest first; at equal age, the more important first; without
/// reranking, ages do not matter.
pub async fn decay_and_importance_order<M: Memory>(m: &M) {
    let text = ("which vector index did we pick", "HNSW with M 16");
    for (age, imp) in [(100, 0.5), (1, 0.5), (30, 0.5)] {
        let t = NewMemory::turn("decay", "s", text.0, text.1).created_at(NOW - age * DAY).importance(imp);
        m.save_turn(t.meta("age", age)).await.unwrap();
    }
    for mode in both_modes() {
        let hits = m.retrieve(RetrieveQuery::new("decay", "vector index").mode(mode).now(NOW)).await.unwrap();
        let ages: Vec<i64> = hits.iter().map(|h| h.record.metadata["age"].as_i64().unwrap()).collect();
        assert_eq!(ages, [1, 30, 100], "{mode:?}");
        assert!(hits[0].score > hits[1].score && hits[1].score > hits[2].score);
    }
    for (imp, tag) in [(0.1, "low"), (0.95, "high"), (0.5, "mid")] {
        let t = NewMemory::turn("imp", "s", text.0, text.1).created_at(NOW).importance(imp);
        m.save_turn(t.meta("tag", tag)).await.unwrap();
    }
    let hits = m.retrieve(RetrieveQuery::new("imp", "vector index").now(NOW)).await.unwrap();
    let tags: Vec<&str> = hits.iter().map(|h| h.record.metadata["tag"].as_str().unwrap()).collect();
    assert_eq!(tags, ["high", "mid", "low"]);
}

/// Reranking with the newer-first step on, at a threshold the suite's word-hashing vectors clear
/// for a restatement.
pub fn newer_first_on() -> mnemograph_memory::RerankConfig {
    mnemograph_memory::RerankConfig::default().newer_first(Some(0.2))
}

/// Memories of the user's move, for [`newer_restatement_ranks_above_the_older`]: the older
/// version outscores the newer one (more important), among four unrelated memories.
pub fn moved_memories(user: &str) -> Vec<NewMemory> {
    let turn = |said: &str, days: i64, importance: f32| {
        NewMemory::turn(user, "s", said, "noted").created_at(NOW - days * DAY).importance(importance)
    };
    vec![
        turn("I live in Beijing near the metro station", 12, 0.9).meta("version", "old"),
        turn("we moved and I live in Shanghai near the river now", 10, 0.2).meta("version", "new"),
        turn("my favourite food is dumplings with vinegar", 20, 0.5),
        turn("I play tennis with my brother on sundays", 20, 0.5),
        turn("the project deadline is friday afternoon", 20, 0.5),
        turn("my sister studies chemistry at university", 20, 0.5),
    ]
}

/// The versions of the move among `hits`, in order.
pub fn versions(hits: &[mnemograph_memory::MemoryHit]) -> Vec<&str> {
    hits.iter().filter_map(|h| h.record.metadata.get("version")?.as_str()).collect()
}

/// When a retrieval finds a fact and a newer restatement of it, the newer one ranks directly
/// above the older, which stays in the list; scores stay in order. Without the step the older
/// version comes first (its importance outweighs the newer one's).
pub async fn newer_restatement_ranks_above_the_older<M: Memory>(m: &M) {
    m.save(moved_memories("mover")).await.unwrap();
    for mode in both_modes() {
        let hits =
            m.retrieve(RetrieveQuery::new("mover", "where do I live").mode(mode).now(NOW)).await.unwrap();
        assert_eq!(versions(&hits), ["new", "old"], "{mode:?}: {hits:#?}");
        assert_eq!(versions(&hits[..2]), ["new", "old"], "{mode:?}: adjacent, at the top");
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{mode:?}: {hits:#?}");
    }
}

/// `min_importance` keeps low-importance memories out of the candidates, in both search modes,
/// however relevant they are; the boundary value itself is kept.
pub async fn min_importance_filters_candidates<M: Memory>(m: &M) {
    for (imp, tag) in [(0.2, "chatter"), (0.3, "edge"), (0.7, "fact")] {
        let t = NewMemory::turn("minimp", "s", "which vector index did we pick", tag)
            .created_at(NOW)
            .importance(imp);
        m.save_turn(t.meta("tag", tag)).await.unwrap();
    }
    let tags = |hits: Vec<mnemograph_memory::MemoryHit>| {
        let mut t: Vec<String> =
            hits.iter().map(|h| h.record.metadata["tag"].as_str().unwrap().to_owned()).collect();
        t.sort();
        t
    };
    for mode in both_modes() {
        let q = || RetrieveQuery::new("minimp", "vector index").mode(mode).top_k(10).now(NOW);
        assert_eq!(tags(m.retrieve(q()).await.unwrap()), ["chatter", "edge", "fact"], "{mode:?}");
        assert_eq!(tags(m.retrieve(q().min_importance(0.3)).await.unwrap()), ["edge", "fact"], "{mode:?}");
        assert_eq!(tags(m.retrieve(q().min_importance(0.5)).await.unwrap()), ["fact"], "{mode:?}");
    }
}

/// The recent context is searched beside the question, not instead of it: a follow-up's context
/// decides between memories the question alone cannot tell apart, and small talk before a
/// question does not pull the answer down.
pub async fn recent_context_helps_but_the_question_decides<M: Memory>(m: &M) {
    let user = "context";
    for (said, reply) in [
        ("My sister Anna lives in Berlin.", "Noted."),
        ("My brother Tom lives in Paris.", "Noted."),
        ("Hi, it's me again, hello there.", "Hello again! Nice to see you."),
        ("I play tennis every Saturday.", "Noted."),
    ] {
        m.save_turn(NewMemory::turn(user, "earlier", said, reply).created_at(NOW - DAY)).await.unwrap();
    }
    let first = |hits: Vec<mnemograph_memory::MemoryHit>| hits.first().map(|h| h.record.content.clone());
    for mode in both_modes() {
        let q = |text: &str| RetrieveQuery::new(user, text).mode(mode).top_k(2).now(NOW);
        let follow_up = q("which city?").recent(["Tell me about my sister Anna.", "Sure."]);
        let got = first(m.retrieve(follow_up).await.unwrap());
        assert!(got.as_deref().is_some_and(|c| c.contains("Berlin")), "{mode:?}: follow-up got {got:?}");
        let after_greeting =
            q("what do I play every Saturday?").recent(["Hi, it's me again, hello there.", "Hello again!"]);
        let got = first(m.retrieve(after_greeting).await.unwrap());
        assert!(
            got.as_deref().is_some_and(|c| c.contains("tennis")),
            "{mode:?}: after a greeting got {got:?}"
        );
    }
}

/// `since`/`until` and session scopes restrict candidates.
pub async fn time_window_and_session_scope<M: Memory>(m: &M) {
    for (s, age) in [("old", 60), ("mid", 20), ("new", 2)] {
        let t = NewMemory::turn("win", s, "notes about the deployment plan", s).created_at(NOW - age * DAY);
        m.save_turn(t).await.unwrap();
    }
    let sessions = |hits: Vec<mnemograph_memory::MemoryHit>| {
        let mut s: Vec<String> = hits.into_iter().map(|h| h.record.session_id).collect();
        s.sort();
        s
    };
    let q = || RetrieveQuery::new("win", "deployment plan").top_k(10).now(NOW);
    assert_eq!(sessions(m.retrieve(q().since(NOW - 30 * DAY)).await.unwrap()), ["mid", "new"]);
    assert_eq!(sessions(m.retrieve(q().until(NOW - 30 * DAY)).await.unwrap()), ["old"]);
    assert_eq!(sessions(m.retrieve(q().since(NOW - 30 * DAY).until(NOW - 10 * DAY)).await.unwrap()), ["mid"]);
    assert_eq!(sessions(m.retrieve(q().session(SessionScope::Only("old".into()))).await.unwrap()), ["old"]);
    assert_eq!(
        sessions(m.retrieve(q().session(SessionScope::Exclude("old".into()))).await.unwrap()),
        ["mid", "new"]
    );
}

/// A long session is compacted into summaries; recent exchanges stay; summaries are found.
pub async fn compaction_summarizes_old_exchanges<M: Memory>(m: &M) {
    for i in 0..12 {
        let t = NewMemory::turn("cmp", "long", &format!("step {i} of the migration to Milvus"), "done");
        m.save_turn(t.created_at(NOW - (100 - i) * 60)).await.unwrap();
    }
    m.save_turn(NewMemory::turn("cmp", "other", "unrelated", "x")).await.unwrap();
    let summarizer = summarizer_fn(|records: Vec<MemoryRecord>| async move {
        let first = records.first().map(|r| r.content.clone()).unwrap_or_default();
        Ok::<_, BoxError>(vec![format!(
            "summary of {} steps of the Milvus migration, from: {first}",
            records.len()
        )])
    });
    let opts = CompactOptions::default().min_records(10).keep_recent(2).chunk_size(5);
    let report = compact_session(m, &summarizer, "cmp", "long", opts).await.unwrap();
    assert_eq!(report.compacted, 10);
    assert_eq!(report.summary_ids.len(), 2);
    let after = m.session_records("cmp", "long").await.unwrap();
    let roles: Vec<&str> = after.iter().map(|r| r.role.as_str()).collect();
    assert_eq!(roles.iter().filter(|r| **r == ROLE_SUMMARY).count(), 2);
    assert_eq!(roles.iter().filter(|r| **r == "exchange").count(), 2);
    let summary = after.iter().find(|r| r.role == ROLE_SUMMARY).unwrap();
    assert_eq!(summary.metadata["source_ids"].as_array().unwrap().len(), 5);
    assert!(summary.importance >= 0.7 - 1e-6);
    // Running again only sees the 2 remaining exchanges: below the threshold, nothing to do.
    assert_eq!(compact_session(m, &summarizer, "cmp", "long", opts).await.unwrap().compacted, 0);
    let hits = m.retrieve(RetrieveQuery::new("cmp", "Milvus migration summary").top_k(1)).await.unwrap();
    assert_eq!(hits[0].record.role, ROLE_SUMMARY);
    assert_eq!(m.session_records("cmp", "other").await.unwrap().len(), 1, "other sessions untouched");
}
