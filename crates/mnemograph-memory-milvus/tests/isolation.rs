//! Isolation under hostile ids: whatever bytes a user id or session id holds (quotes,
//! backslashes, `" or user_id != "`, `or 1==1`, escape sequences, Unicode, very long or empty),
//! a user never sees, lists or deletes another user's memories.
//!
//! The same scenario runs against [`EmbeddedMemory`] and a live Milvus (`MILVUS_URL`, e.g. Milvus
//! Lite from `scripts/milvus-lite.sh`; a fresh collection per test, skipped without a server
//! unless `CI` is set). Against Milvus it also checks what the server returns for the escaped
//! filter alone, without the client-side re-check `retrieve` adds, so a filter that the server
//! reads differently from how [`Filter`] meant it would show. The filter builder itself is
//! checked by a proptest against a model of Milvus's string-literal lexer.

mod support;

use std::collections::BTreeSet;

use milvus::v2::prelude::*;
use mnemograph_checkpoint::store::HashingEmbeddings;
use mnemograph_memory::{
    EmbeddedMemory, Error, Memory, MemoryRecord, NewMemory, RetrieveQuery, SearchMode, SessionScope,
};
use mnemograph_memory_milvus::quote;
use mnemograph_memory_milvus::{fields, Filter, MilvusMemory};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use rand::{Rng, SeedableRng};

/// The user whose memories must never leak.
const VICTIM: &str = "victim";
/// A word only the victim's memories contain.
const SECRET: &str = "zebracorn";

/// Ids meant to widen a filter, confuse a lexer, or collide after normalisation.
fn hostile_ids() -> Vec<String> {
    let mut ids: Vec<String> = [
        "\" or user_id != \"",
        "x\" or user_id != \"",
        "victim\" or user_id == \"victim",
        "\" || true || \"",
        "or 1==1",
        "' or 1 == 1 or '",
        "\\",
        "\\\"",
        "\\\\\" or \"\" == \"",
        "\\x22 or 1==1",
        "\\u0022 or 1==1",
        "\\\" or user_id like \"%",
        "%",
        "_",
        "victim%",
        "Victim",
        "victim ",
        " victim",
        "vıctim",
        "victim\u{200b}",
        "\u{202e}mitciv",
        "用户-甲 🦀",
        "json_contains(metadata[\"tags\"], \"a\")",
        ") or (1 == 1",
        "$meta",
        "user_id",
        "`",
        "\u{85}next line",
        "\u{2028}",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    ids.push(format!("long-{}", "\"\\".repeat(120)));
    ids
}

/// Session ids tried as `Only` and `Exclude` scopes: the victim's, and hostile ones.
fn hostile_sessions() -> Vec<String> {
    let mut sessions = vec!["s1".to_owned(), "\" or session_id != \"".to_owned(), "' or '1'='1".to_owned()];
    sessions
        .extend(["\\", "\\\" or 1==1 or \\\"", "会话 ✓", "s1\" or user_id == \"victim"].map(str::to_owned));
    sessions
}

/// Stores the victim's memories and one per attacker; returns the victim's ids.
async fn populate<M: Memory>(m: &M, attackers: &[String]) -> Vec<i64> {
    let victim = vec![
        NewMemory::turn(VICTIM, "s1", &format!("the {SECRET} launch code is 0000"), "noted"),
        NewMemory::turn(VICTIM, "s2", &format!("my {SECRET} password is hunter2"), "ok"),
    ];
    let ids = m.save(victim).await.expect("save the victim");
    let mine: Vec<NewMemory> = attackers
        .iter()
        .map(|a| NewMemory::turn(a, "s1", &format!("{SECRET} launch code request"), "denied"))
        .collect();
    m.save(mine).await.expect("save the attackers");
    ids
}

/// Every way an attacker can ask: both modes, every session scope.
fn queries(attacker: &str) -> Vec<RetrieveQuery> {
    let mut scopes = vec![SessionScope::All];
    for s in hostile_sessions() {
        scopes.push(SessionScope::Only(s.clone()));
        scopes.push(SessionScope::Exclude(s));
    }
    let mut out = Vec::new();
    for scope in scopes {
        for mode in [SearchMode::Dense, SearchMode::Hybrid] {
            let q = format!("{SECRET} launch code password");
            out.push(RetrieveQuery::new(attacker, q).top_k(50).session(scope.clone()).mode(mode));
        }
    }
    out
}

fn assert_own(records: &[&MemoryRecord], attacker: &str, what: &str) {
    for r in records {
        assert_eq!(r.user_id, attacker, "{what}: {attacker:?} got {r:?}");
        assert!(!r.content.contains("0000") && !r.content.contains("hunter2"), "{what}: leaked {r:?}");
    }
}

/// The scenario, for any backend: retrieve, list and delete as every attacker; the victim's
/// memories never appear and stay intact.
async fn attackers_never_see_the_victim<M: Memory>(m: &M) -> usize {
    let attackers = hostile_ids();
    let victim_ids = populate(m, &attackers).await;
    let mut calls = 0;
    for attacker in &attackers {
        for query in queries(attacker) {
            let scope = format!("{:?} {:?}", query.session, query.mode);
            let hits =
                m.retrieve(query.clone()).await.unwrap_or_else(|e| panic!("{attacker:?} {scope}: {e}"));
            assert_own(&hits.iter().map(|h| &h.record).collect::<Vec<_>>(), attacker, &scope);
            // The attacker's own memory is found when its session is in scope: the filter is
            // not just rejecting everything.
            let own_in_scope = match &query.session {
                SessionScope::All => true,
                SessionScope::Only(s) => s == "s1",
                SessionScope::Exclude(s) => s != "s1",
            };
            assert_eq!(hits.len(), usize::from(own_in_scope), "{attacker:?} {scope}");
            calls += 1;
        }
        for session in hostile_sessions().into_iter().chain(["s2".to_owned()]) {
            let listed = m.session_records(attacker, &session).await.expect("session_records");
            assert_own(&listed.iter().collect::<Vec<_>>(), attacker, &format!("session {session:?}"));
            calls += 1;
        }
        // Deleting the victim's ids as the attacker is a no-op.
        m.delete(attacker, &victim_ids).await.expect("delete");
        calls += 1;
    }
    // The victim still has both memories, each in its session.
    for (session, secret) in [("s1", "0000"), ("s2", "hunter2")] {
        let own = m.session_records(VICTIM, session).await.expect("victim lists");
        assert_eq!(own.len(), 1, "the victim lost a memory in {session}");
        assert!(own[0].content.contains(secret));
    }
    calls
}

/// Empty ids and ids with ASCII control characters are refused, never used as a filter.
async fn invalid_ids_are_refused<M: Memory>(m: &M) {
    for bad in ["", "a\nb", "nul\0", "\"\r\" or 1==1", "\u{7f}"] {
        let err = m.retrieve(RetrieveQuery::new(bad, "x")).await.expect_err("invalid user id");
        assert!(matches!(err, Error::InvalidInput { .. }), "{bad:?}: {err:?}");
        // A bad session scope is refused or matches nothing (no stored session can hold it).
        let scoped =
            m.retrieve(RetrieveQuery::new(VICTIM, SECRET).session(SessionScope::Only(bad.to_owned()))).await;
        match scoped {
            Ok(hits) => assert!(hits.is_empty(), "session {bad:?}: {hits:?}"),
            Err(err) => assert!(matches!(err, Error::InvalidInput { .. }), "session {bad:?}: {err:?}"),
        }
        let err = m.session_records("u", bad).await.expect_err("invalid session id");
        assert!(matches!(err, Error::InvalidInput { .. }), "{bad:?}: {err:?}");
        let err = m.delete(bad, &[1]).await.expect_err("invalid user id");
        assert!(matches!(err, Error::InvalidInput { .. }), "{bad:?}: {err:?}");
    }
}

#[tokio::test]
async fn embedded_attackers_never_see_the_victim() {
    let m = EmbeddedMemory::new(HashingEmbeddings::new(support::DIMS));
    let started = std::time::Instant::now();
    let calls = attackers_never_see_the_victim(&m).await;
    eprintln!("embedded: {calls} hostile calls in {:?}", started.elapsed());
    invalid_ids_are_refused(&m).await;
}

#[tokio::test]
async fn milvus_attackers_never_see_the_victim() {
    support::with_milvus(
        "iso_attack",
        |c| c.partition_key(false),
        |m| async move {
            let started = std::time::Instant::now();
            let calls = attackers_never_see_the_victim(&m).await;
            eprintln!("milvus: {calls} hostile calls in {:?}", started.elapsed());
            invalid_ids_are_refused(&m).await;
            // Server-side counts use the escaped filter alone.
            assert_eq!(m.count(VICTIM).await.unwrap(), 2);
            for attacker in hostile_ids() {
                assert_eq!(m.count(&attacker).await.unwrap(), 1, "{attacker:?}");
            }
        },
    )
    .await;
}

/// `user_id` and `session_id` of every row the server returns for `filter`, with nothing
/// re-checked on the client.
async fn server_rows(m: &MilvusMemory, filter: &Filter) -> BTreeSet<(String, String)> {
    let req = QueryRequest::builder()
        .collection_name(&m.config().collection)
        .filter(filter.to_expr())
        .output_fields([fields::USER_ID, fields::SESSION_ID])
        .consistency_level(ConsistencyLevel::Strong)
        .limit(1000)
        .build()
        .expect("query request");
    let res =
        m.client().query(req).await.unwrap_or_else(|e| panic!("`{}` was refused: {e}", filter.to_expr()));
    let rows = res.results().rows().expect("rows");
    rows.map(|row| {
        let user = row.get_str(fields::USER_ID).expect("user_id").to_owned();
        (user, row.get_str(fields::SESSION_ID).expect("session_id").to_owned())
    })
    .collect()
}

/// Random ids: printable ASCII heavy in quotes and backslashes, plus multi-byte characters.
fn random_ids(n: usize) -> Vec<String> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x0150_1a7e);
    let alphabet: Vec<char> = (' '..='~').chain("\"\\\"\\'é中🦀\u{85}\u{2028}".chars()).collect();
    (0..n)
        .map(|_| {
            let len = rng.gen_range(1..40);
            (0..len).map(|_| alphabet[rng.gen_range(0..alphabet.len())]).collect()
        })
        .collect()
}

/// What Milvus's parser makes of each escaped id: `user_id == "<id>"` selects exactly the rows of
/// that id, `user_id != "<id>"` exactly the others, and a session clause narrows within the user.
#[tokio::test]
async fn milvus_reads_every_escaped_id_back_exactly() {
    support::with_milvus(
        "iso_roundtrip",
        |c| c.partition_key(false),
        |m| async move {
            let mut ids = hostile_ids();
            ids.extend(random_ids(120));
            ids.sort();
            ids.dedup();
            let rows: Vec<NewMemory> = ids
                .iter()
                .enumerate()
                .map(|(i, id)| NewMemory::turn(id, id, &format!("row {i}"), "a"))
                .collect();
            m.save(rows).await.expect("save");
            let everyone: BTreeSet<(String, String)> =
                ids.iter().map(|id| (id.clone(), id.clone())).collect();
            for id in &ids {
                let exact = BTreeSet::from([(id.clone(), id.clone())]);
                let eq = Filter::new().eq_str(fields::USER_ID, id).expect("printable ids quote");
                assert_eq!(server_rows(&m, &eq).await, exact, "`{}`", eq.to_expr());
                let both = eq.clone().eq_str(fields::SESSION_ID, id).expect("quote");
                assert_eq!(server_rows(&m, &both).await, exact, "`{}`", both.to_expr());
                let other_session = eq.ne_str(fields::SESSION_ID, id).expect("quote");
                assert!(server_rows(&m, &other_session).await.is_empty(), "`{}`", other_session.to_expr());
                let ne = Filter::new().ne_str(fields::USER_ID, id).expect("quote");
                let mut rest = everyone.clone();
                rest.remove(&(id.clone(), id.clone()));
                assert_eq!(server_rows(&m, &ne).await, rest, "`{}`", ne.to_expr());
            }
            eprintln!("milvus: {} escaped ids read back exactly, 4 filters each", ids.len());
        },
    )
    .await;
}

/// A model of how Milvus reads a filter: identifiers, operators, and double-quoted literals in
/// which a backslash escapes the next character (Go's `strconv.Unquote` also reads `\n`, `\x22`,
/// `\u0022`...; `quote` escapes every backslash, so those never appear as escapes). Returns the
/// tokens, literals unescaped, or `None` when the text does not lex.
fn lex(expr: &str) -> Option<Vec<String>> {
    let mut tokens = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' => {}
            '"' => {
                let mut lit = String::from("\"");
                loop {
                    match chars.next()? {
                        '\\' => lit.push(chars.next()?),
                        '"' => break,
                        c => lit.push(c),
                    }
                }
                tokens.push(lit);
            }
            c if c.is_ascii_alphanumeric() || c == '_' => {
                let mut word = c.to_string();
                while let Some(&n) = chars.peek().filter(|n| n.is_ascii_alphanumeric() || **n == '_') {
                    word.push(n);
                    chars.next();
                }
                tokens.push(word);
            }
            '=' | '!' | '<' | '>' => {
                let mut op = c.to_string();
                if chars.peek() == Some(&'=') {
                    op.push('=');
                    chars.next();
                }
                tokens.push(op);
            }
            _ => return None,
        }
    }
    Some(tokens)
}

/// `cases` cases from a fixed seed (unless `PROPTEST_RNG_SEED` sets one), so every run tests the
/// same inputs; no regression files are written into the source tree.
fn config(cases: u32) -> ProptestConfig {
    let base = ProptestConfig::default();
    let rng_seed = match base.rng_seed {
        RngSeed::Random => RngSeed::Fixed(0x00f0_22de_c0de),
        chosen @ RngSeed::Fixed(_) => chosen,
    };
    ProptestConfig { cases, rng_seed, failure_persistence: None, ..base }
}

proptest! {
    #![proptest_config(config(2048))]

    /// Any id without ASCII control characters becomes exactly one literal holding exactly the
    /// id, so a clause is always `field op literal` and clauses join only with `and`.
    #[test]
    fn filters_lex_as_the_clauses_they_were_built_from(user in "[^\\x00-\\x1f\\x7f]{0,40}",
                                                       session in "(\\PC|[\"\\\\' ]){0,40}") {
        let f = Filter::new().eq_str(fields::USER_ID, &user).expect("no control characters");
        let f = f.ne_str(fields::SESSION_ID, &session).expect("no control characters");
        let tokens = lex(&f.to_expr()).expect("the expression lexes");
        let expected = [
            fields::USER_ID.to_owned(), "==".to_owned(), format!("\"{user}"), "and".to_owned(),
            fields::SESSION_ID.to_owned(), "!=".to_owned(), format!("\"{session}"),
        ];
        prop_assert_eq!(tokens, expected);
    }

    /// Control characters are refused, not escaped in a way servers might read differently.
    #[test]
    fn control_characters_are_refused(prefix in "\\PC{0,8}", c in prop::sample::select(
        (0_u8..0x20).chain([0x7f]).map(char::from).collect::<Vec<_>>())) {
        let id = format!("{prefix}{c}");
        let refused = matches!(quote(&id), Err(Error::InvalidInput { .. }));
        prop_assert!(refused, "{:?} was accepted", id);
    }
}
