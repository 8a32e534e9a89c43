//! The update path for superseded facts, as behaviour every `Memory + Retire` must show: the
//! embedded memory and Milvus run the same functions (tests/consolidate.rs).

use mnemograph_memory::{
    compact_and_consolidate, summarizer_fn, CompactOptions, Consolidator, Error, LlmDecider, Memory,
    MemoryHit, NewMemory, Retire, Retirement, RetrieveQuery, RuleDecider, ROLE_SUMMARY,
};

use super::scripted::Scripted;

/// Seconds in a day.
const DAY: i64 = 86_400;
/// The clock of these tests.
const NOW: i64 = 1_800_000_000;

/// A consolidator that retires restatements: the hashing embedder scores "my phone number is
/// X" against "my phone number is Y" well above 0.6 and small talk below.
fn rule() -> Consolidator<RuleDecider> {
    Consolidator::new(RuleDecider::default().min_similarity(0.6))
}

fn turn(user: &str, session: &str, q: &str, days_ago: i64) -> NewMemory {
    NewMemory::turn(user, session, q, "Noted.").created_at(NOW - days_ago * DAY)
}

async fn ask<M: Memory>(m: &M, user: &str, q: &str, include_retired: bool) -> Vec<MemoryHit> {
    let query = RetrieveQuery::new(user, q).top_k(5).now(NOW).include_retired(include_retired);
    m.retrieve(query).await.expect("retrieve")
}

fn contains(hits: &[MemoryHit], text: &str) -> bool {
    hits.iter().any(|h| h.record.content.contains(text))
}

/// Saving a changed fact through the hot path retires the old version: retrieval returns the new
/// number and never the old one, while unrelated memories stay.
pub async fn hot_path_retires_the_superseded_fact<M: Retire>(m: &M) {
    m.save_turn(turn("ann", "s1", "My phone number is 555-0101", 90)).await.unwrap();
    m.save_turn(turn("ann", "s1", "I like hiking in the mountains", 90)).await.unwrap();
    let (new_id, report) =
        rule().save_turn(m, turn("ann", "s2", "My phone number is 555-0199", 1)).await.unwrap();
    assert_eq!(report.retired.len(), 1, "{report:?}");
    assert_eq!(report.retired[0].superseded_by, new_id);
    let hits = ask(m, "ann", "what is my phone number", false).await;
    assert!(contains(&hits, "555-0199") && !contains(&hits, "555-0101"), "{hits:#?}");
    assert!(hits.iter().all(|h| !h.record.is_retired()));
    assert!(contains(&ask(m, "ann", "what do I like doing in the mountains", false).await, "hiking"));
}

/// A retirement is a mark, not a deletion: asked for, the old memory comes back with who replaced
/// it, when and why; restored, it is ordinary again.
pub async fn retirement_is_auditable_and_restorable<M: Retire>(m: &M) {
    let old = m.save_turn(turn("ann", "s1", "Our team standup is at 9:00", 60)).await.unwrap();
    let (new, _) = rule().save_turn(m, turn("ann", "s2", "Our team standup is at 10:15", 1)).await.unwrap();
    let audit = ask(m, "ann", "when is our team standup", true).await;
    let retired = audit.iter().find(|h| h.record.id == old).expect("retired memory is listed on request");
    assert_eq!(retired.record.superseded_by(), Some(new));
    assert!(retired.record.metadata["superseded_reason"].as_str().unwrap().starts_with("rule: similarity"));
    assert!(retired.record.metadata["superseded_at"].as_i64().unwrap() > 0);
    assert_eq!(retired.record.metadata["type"], "dialogue_turn", "own metadata kept");
    assert_eq!(m.restore("ann", &[old, new]).await.unwrap(), [old], "only retired ids are restored");
    let back = ask(m, "ann", "when is our team standup", false).await;
    assert!(back.iter().any(|h| h.record.id == old && !h.record.is_retired()));
    // Retiring twice keeps the first audit trail.
    let first = Retirement::new(old, new, 1, "first");
    assert_eq!(m.retire("ann", &[first.clone(), Retirement::new(old, 7, 2, "second")]).await.unwrap(), [old]);
    assert!(m.retire("ann", &[first]).await.unwrap().is_empty(), "already retired");
    let again = ask(m, "ann", "when is our team standup", true).await;
    assert_eq!(
        again.iter().find(|h| h.record.id == old).unwrap().record.metadata["superseded_reason"],
        "first"
    );
}

/// Consolidation is scoped to the user: bob holds the identical old fact, and neither ann's update
/// nor a direct retire with bob's id under ann's name touches it.
pub async fn consolidation_never_touches_another_user<M: Retire>(m: &M) {
    let bobs = m.save_turn(turn("bob", "s1", "I live in Berlin now", 90)).await.unwrap();
    m.save_turn(turn("ann", "s1", "I live in Berlin now", 90)).await.unwrap();
    let (_, report) = rule().save_turn(m, turn("ann", "s2", "I live in Lisbon now", 1)).await.unwrap();
    assert_eq!(report.retired.len(), 1);
    assert_ne!(report.retired[0].id, bobs);
    assert!(m.retire("ann", &[Retirement::new(bobs, 1, 1, "forged")]).await.unwrap().is_empty());
    assert!(m.restore("ann", &[bobs]).await.unwrap().is_empty());
    let hits = ask(m, "bob", "where do I live", false).await;
    assert!(hits.iter().any(|h| h.record.id == bobs && !h.record.is_retired()), "{hits:#?}");
    assert!(hits.iter().all(|h| h.record.user_id == "bob"));
    // Bob's own, later update retires his memory only.
    let (_, report) = rule().save_turn(m, turn("bob", "s2", "I live in Oslo now", 1)).await.unwrap();
    assert_eq!(report.retired_ids(), [bobs]);
}

/// The LLM decider: the model sees the new memory and numbered candidates of this user only, and
/// what it names is retired.
pub async fn llm_decider_retires_what_the_model_names<M: Retire>(m: &M) {
    let old = m.save_turn(turn("ann", "s1", "I work at Acme as a data engineer", 100)).await.unwrap();
    m.save_turn(turn("bob", "s1", "I work at Acme as a data engineer", 100)).await.unwrap();
    let model = Scripted::new([r#"{"superseded": [{"candidate": 1, "reason": "changed jobs"}]}"#]);
    let c = Consolidator::new(LlmDecider::new(model.clone()))
        .options(mnemograph_memory::ConsolidateOptions::default().min_similarity(0.3));
    let (_, report) = c
        .save_turn(m, turn("ann", "s2", "Today was my first day at Acme Globex as data engineer", 1))
        .await
        .unwrap();
    assert_eq!(report.retired_ids(), [old]);
    assert_eq!(report.retired[0].reason, "changed jobs");
    let calls = model.calls();
    assert_eq!(calls.len(), 1);
    let prompt = calls[0][1].text();
    assert!(
        prompt.contains("New memory:\n\"User: Today was my first day") && prompt.contains("[1] (99 days"),
        "{prompt}"
    );
    assert!(!prompt.contains("[2]"), "bob's identical memory is not a candidate: {prompt}");
    assert_eq!(prompt.lines().filter(|l| l.starts_with('[')).count(), 1, "one line per candidate: {prompt}");
}

/// A model answering out of format, or naming a candidate it was not shown, is a typed error and
/// nothing is retired; the new memory itself is kept.
pub async fn bad_model_output_is_a_typed_error_and_retires_nothing<M: Retire>(m: &M) {
    m.save_turn(turn("ann", "s1", "My favourite coffee order is a flat white", 50)).await.unwrap();
    let answers = ["Candidate 1 is outdated.", r#"{"superseded": [{"candidate": 4}]}"#, r#"{"retire": [1]}"#];
    let model = Scripted::new(answers);
    let c = Consolidator::new(LlmDecider::new(model.clone()))
        .options(mnemograph_memory::ConsolidateOptions::default().min_similarity(0.3));
    for (i, expected) in ["malformed", "unknown", "malformed"].into_iter().enumerate() {
        let new = turn("ann", "s2", &format!("My favourite coffee order is an oat cortado {i}"), 1);
        let err = c.save_turn(m, new).await.unwrap_err();
        let ok = match expected {
            "malformed" => matches!(err, Error::MalformedDecision { .. }),
            _ => matches!(err, Error::UnknownCandidate { candidate: 4 }),
        };
        assert!(ok, "answer {i}: {err:?}");
    }
    let all = ask(m, "ann", "what is my favourite coffee order", true).await;
    assert!(all.iter().all(|h| !h.record.is_retired()), "{all:#?}");
    assert!(contains(&all, "flat white") && contains(&all, "oat cortado 2"), "new memories are kept");
}

/// The background job: consolidating a session retires what its memories supersede in earlier
/// sessions, and a second run finds nothing more.
pub async fn consolidate_session_is_idempotent<M: Retire>(m: &M) {
    m.save(vec![
        turn("ann", "s1", "My phone number is 555-0142", 90),
        turn("ann", "s1", "I am training for a half marathon", 90),
        turn("ann", "s2", "My phone number is 555-0177", 2),
        turn("ann", "s2", "I am training for a full marathon", 2),
    ])
    .await
    .unwrap();
    let first = rule().consolidate_session(m, "ann", "s2").await.unwrap();
    assert_eq!(first.checked, 2);
    assert_eq!(first.retired.len(), 2, "{first:?}");
    let second = rule().consolidate_session(m, "ann", "s2").await.unwrap();
    assert!(second.retired.is_empty(), "{second:?}");
    let old = rule().consolidate_session(m, "ann", "s1").await.unwrap();
    assert!(old.retired.is_empty(), "old memories never retire newer ones");
    let hits = ask(m, "ann", "what is my phone number", false).await;
    assert!(contains(&hits, "555-0177") && !contains(&hits, "555-0142"));
}

/// Compaction with consolidation: the summary of a long session retires the older session's
/// outdated fact (its own sources are deleted, not retired).
pub async fn compaction_retires_what_summaries_supersede<M: Retire>(m: &M) {
    let old = m.save_turn(turn("ann", "old", "My phone number is 555-0163", 120)).await.unwrap();
    let mut session: Vec<NewMemory> =
        (0..6).map(|i| turn("ann", "long", &format!("small talk number {i}"), 10 - i)).collect();
    session.push(turn("ann", "long", "My phone number is 555-0120", 3));
    m.save(session).await.unwrap();
    let summarizer = summarizer_fn(|records: Vec<mnemograph_memory::MemoryRecord>| async move {
        // A summary that restates the one fact of the chunk worth keeping.
        let fact = records.iter().find(|r| r.content.contains("phone"));
        Ok(fact.map(|r| r.content.clone()).into_iter().collect())
    });
    let options = CompactOptions::default().min_records(4).keep_recent(0).chunk_size(10);
    // A summary and an exchange differ in role, so the rule must allow crossing roles here.
    let any_role = Consolidator::new(RuleDecider::default().min_similarity(0.6).same_role(false));
    let report = compact_and_consolidate(m, &summarizer, &any_role, "ann", "long", options).await.unwrap();
    assert_eq!(report.compacted, 7);
    assert_eq!(report.consolidation.retired_ids(), [old], "{report:?}");
    let hits = ask(m, "ann", "what is my phone number", false).await;
    assert_eq!(hits[0].record.role, ROLE_SUMMARY);
    assert!(contains(&hits, "555-0120") && !contains(&hits, "555-0163"), "{hits:#?}");
}
