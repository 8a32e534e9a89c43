//! The memory suite against a live Milvus (`MILVUS_URL`, e.g. from `scripts/milvus-lite.sh`), each
//! test in its own collection, plus Milvus-only checks. Without `MILVUS_URL` the tests print why
//! they skip and pass, except under CI (`CI` set), where they fail.

mod support;

use mnemograph_checkpoint::store::HashingEmbeddings;
use mnemograph_memory::{Memory, MemoryHit, NewMemory, RetrieveQuery, SearchMode};
use mnemograph_memory_milvus::{fields, Analyzer, HybridFusion, MilvusConfig, MilvusMemory};
use support::grpc_proxy::{Calls, GrpcProxy};
use support::{bilingual, dataset, memory_suite, with_milvus, with_milvus_returning};

fn defaults(c: MilvusConfig) -> MilvusConfig {
    c
}

#[tokio::test]
async fn milvus_isolation_with_adversarial_ids() {
    with_milvus("isolation", defaults, |m| async move {
        memory_suite::isolation_with_adversarial_ids(&m).await;
        // The server-side count uses the escaped filter alone (no client-side re-check), so it
        // proves the filter itself selects exactly one user's rows.
        for (i, u) in memory_suite::adversarial_ids().iter().enumerate() {
            let expected = if i == 1 { 1 } else { 2 }; // user 1 deleted one of its rows
            assert_eq!(m.count(u).await.unwrap(), expected, "{u:?}");
        }
        assert_eq!(m.count("\" or user_id != \"x").await.unwrap(), 0);
    })
    .await;
}

#[tokio::test]
async fn milvus_isolation_without_partition_key() {
    // With the partition key off, the filter is the only thing separating users.
    with_milvus(
        "isolation_nopk",
        |c| c.partition_key(false),
        |m| async move {
            memory_suite::isolation_with_adversarial_ids(&m).await;
        },
    )
    .await;
}

#[tokio::test]
async fn milvus_ids_longer_than_the_schema_are_refused() {
    with_milvus("long_ids", defaults, |m| async move {
        let long = "u".repeat(257);
        let err = m.save_turn(mnemograph_memory::NewMemory::turn(&long, "s", "q", "a")).await.unwrap_err();
        assert!(matches!(err, mnemograph_memory::Error::InvalidInput { .. }), "{err:?}");
        memory_suite::invalid_ids_are_refused(&m).await;
    })
    .await;
}

#[tokio::test]
async fn milvus_chinese_round_trip() {
    with_milvus("chinese", defaults, |m| async move { memory_suite::chinese_round_trip(&m).await }).await;
}

#[tokio::test]
async fn milvus_chinese_round_trip_with_jieba() {
    let jieba = |c: MilvusConfig| c.analyzer(serde_json::json!({"tokenizer": "jieba"}));
    with_milvus("chinese_jieba", jieba, |m| async move { memory_suite::chinese_round_trip(&m).await }).await;
}

#[tokio::test]
async fn milvus_chinese_round_trip_with_standard() {
    let standard = |c: MilvusConfig| c.analyzer(Analyzer::Standard);
    with_milvus("chinese_standard", standard, |m| async move { memory_suite::chinese_round_trip(&m).await })
        .await;
}

/// Keyword-only (BM25 on `content`, the server's analyzer) recall@3 of the bilingual set.
async fn bilingual_keyword_recall(m: &MilvusMemory) -> bilingual::Recall {
    use milvus::v2::prelude::{ConsistencyLevel, SearchRequest, SearchVectors};
    let facts = bilingual::CASES.iter().map(|(fact, _)| NewMemory::new("bilingual", "s", "fact", *fact));
    m.save(facts.collect()).await.unwrap();
    let mut tops = Vec::new();
    for (_, question) in bilingual::CASES {
        let req = SearchRequest::builder()
            .collection_name(&m.config().collection)
            .vector_field(fields::SPARSE)
            .vectors(SearchVectors::EmbeddedText(vec![question.to_owned()]))
            .filter(r#"user_id == "bilingual""#)
            .limit(3)
            .output_fields([fields::CONTENT])
            .consistency_level(ConsistencyLevel::Strong)
            .build()
            .unwrap();
        let res = m.client().search(req).await.unwrap();
        let mut top = Vec::new();
        for result in res.results() {
            for row in result.rows().unwrap() {
                let content = row.get_str(fields::CONTENT).unwrap();
                top.extend(bilingual::CASES.iter().position(|(fact, _)| *fact == content));
            }
        }
        tops.push(top);
    }
    let mut tops = tops.into_iter();
    bilingual::recall_at_3(|_| tops.next().unwrap())
}

#[tokio::test]
async fn milvus_chinese_analyzer_finds_paraphrased_chinese_facts() {
    let standard = |c: MilvusConfig| c.analyzer(Analyzer::Standard);
    let old = with_milvus_returning("bilingual_standard", standard, |m| async move {
        assert_eq!(m.analyzer(), Analyzer::Standard.params().as_ref());
        bilingual_keyword_recall(&m).await
    })
    .await;
    // The default, `auto`, picks jieba on a server that has it, as Milvus Lite 3.2 and Milvus
    // 2.5+ do.
    let new = with_milvus_returning("bilingual_auto", defaults, |m| async move {
        assert_eq!(m.analyzer(), Analyzer::Chinese.params().as_ref());
        bilingual_keyword_recall(&m).await
    })
    .await;
    let (Some(old), Some(new)) = (old, new) else { return };
    println!("milvus keyword recall@3 (of 15 each): standard {old:?}, auto {new:?}");
    // A paraphrased question never repeats a whole Chinese clause, which is a single term to the
    // standard analyzer; jieba's words are shared.
    assert_eq!(old, bilingual::Recall { chinese: 0, english: 15 });
    assert_eq!(new, bilingual::Recall { chinese: 15, english: 15 });
}

#[tokio::test]
async fn milvus_existing_collection_keeps_its_analyzer() {
    let standard = |c: MilvusConfig| c.analyzer(Analyzer::Standard);
    with_milvus("keeps_analyzer", standard, |m| async move {
        // Reopened with another choice, the collection reports (and searches with) its own.
        let again = MilvusMemory::connect(
            m.config().clone().analyzer(Analyzer::Chinese),
            mnemograph_checkpoint::store::HashingEmbeddings::new(support::DIMS),
        )
        .await
        .unwrap();
        assert_eq!(again.analyzer(), Analyzer::Standard.params().as_ref());
    })
    .await;
    with_milvus("no_bm25", |c| c.bm25(false), |m| async move { assert_eq!(m.analyzer(), None) }).await;
}

#[tokio::test]
async fn milvus_newer_restatement_ranks_above_the_older() {
    let on = |c: MilvusConfig| defaults(c).rerank(memory_suite::newer_first_on());
    with_milvus("newer_first", on, |m| async move {
        memory_suite::newer_restatement_ranks_above_the_older(&m).await;
    })
    .await;
}

#[tokio::test]
async fn milvus_decay_and_importance_order() {
    with_milvus("decay", defaults, |m| async move { memory_suite::decay_and_importance_order(&m).await })
        .await;
}

#[tokio::test]
async fn milvus_min_importance_filters_candidates() {
    with_milvus(
        "minimp",
        defaults,
        |m| async move { memory_suite::min_importance_filters_candidates(&m).await },
    )
    .await;
}

#[tokio::test]
async fn milvus_recent_context_helps_but_the_question_decides() {
    with_milvus("context", defaults, |m| async move {
        memory_suite::recent_context_helps_but_the_question_decides(&m).await
    })
    .await;
}

#[tokio::test]
async fn milvus_time_window_and_session_scope() {
    with_milvus("window", defaults, |m| async move { memory_suite::time_window_and_session_scope(&m).await })
        .await;
}

#[tokio::test]
async fn milvus_compaction_summarizes_old_exchanges() {
    with_milvus("compaction", defaults, |m| async move {
        memory_suite::compaction_summarizes_old_exchanges(&m).await;
    })
    .await;
}

#[tokio::test]
async fn milvus_hybrid_vs_dense_on_planted_facts() {
    with_milvus("planted", defaults, |m| async move {
        let (memories, planted) = dataset::build(3, 4, 25);
        for chunk in memories.chunks(100) {
            m.save(chunk.to_vec()).await.unwrap();
        }
        let dense = dataset::recall_at_3(&m, &planted, |q| q.mode(SearchMode::Dense).rerank(false)).await;
        let hybrid = dataset::recall_at_3(&m, &planted, |q| q.mode(SearchMode::Hybrid).rerank(false)).await;
        let decay = dataset::recall_at_3(&m, &planted, |q| q.mode(SearchMode::Hybrid)).await;
        println!(
            "milvus recall@3 over {} questions ({} memories): dense {:.3}, hybrid {:.3}, hybrid+decay {:.3}",
            dense.total,
            memories.len(),
            dense.rate(),
            hybrid.rate(),
            decay.rate()
        );
        assert_eq!(dense.cross_user + hybrid.cross_user + decay.cross_user, 0, "cross-user hits");
        assert!(hybrid.rate() >= dense.rate(), "hybrid {hybrid:?} < dense {dense:?}");
        assert!(hybrid.rate() >= 0.75, "{hybrid:?}");
    })
    .await;
}

#[tokio::test]
async fn milvus_collection_is_reopened_not_recreated() {
    with_milvus("reopen", defaults, |m| async move {
        m.save_turn(mnemograph_memory::NewMemory::turn("u", "s", "persisted question", "answer"))
            .await
            .unwrap();
        // A second client on the same collection sees the row: connect does not drop or recreate.
        let again = mnemograph_memory_milvus::MilvusMemory::connect(
            m.config().clone(),
            mnemograph_checkpoint::store::HashingEmbeddings::new(support::DIMS),
        )
        .await
        .unwrap();
        assert_eq!(again.count("u").await.unwrap(), 1);
    })
    .await;
}

#[tokio::test]
async fn milvus_index_is_hnsw_with_the_configured_metric() {
    use milvus::v2::prelude::{DescribeIndexRequest, IndexType, MetricType};
    for (metric, expected) in [
        (mnemograph_memory_milvus::Metric::Cosine, MetricType::Cosine),
        (mnemograph_memory_milvus::Metric::Ip, MetricType::Ip),
    ] {
        with_milvus(
            "index",
            |c| c.metric(metric),
            |m| async move {
                let req = DescribeIndexRequest::builder()
                    .collection_name(&m.config().collection)
                    .field_name(mnemograph_memory_milvus::fields::EMBEDDING)
                    .build()
                    .unwrap();
                let res = m.client().describe_index(req).await.unwrap();
                let index = res
                    .indexes()
                    .iter()
                    .find(|i| i.get_field_name() == "embedding")
                    .expect("embedding index");
                assert_eq!(index.get_index_type(), IndexType::Hnsw);
                assert_eq!(index.get_metric_type(), expected);
                // Milvus Lite 3.2 reports type and metric but echoes no build params; a real
                // Milvus does, and then they must be the ones `MilvusConfig` asked for.
                let params = index.get_extra_params();
                if !params.is_empty() {
                    let text = format!("{params:?}");
                    assert!(text.contains("16") && text.contains("200"), "M=16, efConstruction=200: {text}");
                }
                // The memory works with the metric: a saved turn is its own best match.
                m.save_turn(mnemograph_memory::NewMemory::turn("u", "s", "index metric check", "ok"))
                    .await
                    .unwrap();
                let hits = m
                    .retrieve(mnemograph_memory::RetrieveQuery::new("u", "index metric check"))
                    .await
                    .unwrap();
                assert_eq!(hits.len(), 1);
            },
        )
        .await;
    }
}

/// The hard set with the hashing embedder on Milvus (server-side BM25 and RRF): no cross-user hit
/// in any mode, and decay puts the current version of a changed fact first at least as often as
/// plain hybrid does. No recall floor: the set is built to defeat bag-of-words matching.
#[tokio::test]
async fn milvus_hashing_hard_set_is_isolated_and_decay_prefers_newer_facts() {
    with_milvus("hard", defaults, |m| async move {
        let reports = support::hard_recall::run_all("milvus/hashing", &m, 3, 25).await;
        support::hard_recall::assert_isolated("milvus/hashing", &reports);
        support::hard_recall::assert_decay_prefers_newer("milvus/hashing", &reports);
    })
    .await;
}

/// The update path on the hard set with the hashing embedder on Milvus: as in the embedded test,
/// with retirement as a partial upsert and the retired filter applied by the server.
#[tokio::test]
async fn milvus_hashing_update_path_puts_newer_facts_first_and_never_returns_retired() {
    with_milvus("update_path", defaults, |m| async move {
        // One decider: the full comparison runs in process (tests/embedded.rs), where it takes
        // seconds rather than minutes, and measures the same.
        let plan = support::hard_supersede::Plan::one(true, &[]);
        support::hard_supersede::run_update_paths("milvus/hashing", &m, 3, 25, plan).await;
    })
    .await;
}

/// `method: count` pairs as [`Calls`].
fn calls(pairs: &[(&str, usize)]) -> Calls {
    pairs.iter().map(|&(m, n)| (m.to_owned(), n)).collect()
}

/// The search requests among `calls` (a client also sends heartbeats and the like).
fn searches(mut calls: Calls) -> Calls {
    calls.retain(|method, _| method.ends_with("Search"));
    calls
}

/// Every fusion finds the memories a hybrid retrieval should, through a proxy that counts the
/// requests: a server fusion is one `HybridSearch` per retrieval, the client fusion one `Search`
/// per list, and a server without `HybridSearch` (the proxy answers `Unimplemented`) gets the
/// client fusion, asked once and then no more.
#[tokio::test]
async fn milvus_hybrid_retrieval_is_one_request_with_a_client_fallback() {
    with_milvus("fusion", defaults, |m| async move {
        let theirs = ["My locker code at the gym is 4471.", "I go hiking in the Alps every summer."];
        for user in ["alice", "bob"] {
            let mut memories: Vec<NewMemory> =
                theirs.iter().map(|t| NewMemory::turn(user, "s1", t, "Noted.")).collect();
            memories.push(NewMemory::turn(user, "s1", &format!("My name is {user}."), "Nice to meet you."));
            m.save(memories).await.unwrap();
        }
        m.save(vec![NewMemory::turn("alice", "s2", "The deploy key ZX-Q9 rotates on Fridays.", "Noted.")])
            .await
            .unwrap();
        let proxy = GrpcProxy::start(&m.config().url).await;
        let through = |fusion: HybridFusion| {
            let mut config = m.config().clone().fusion(fusion);
            config.url.clone_from(&proxy.url);
            config
        };
        // The question's words, the greeting's, and an identifier only keyword search matches
        // exactly: three lists.
        let ask = |view: MilvusMemory, question: &'static str| async move {
            let query = RetrieveQuery::new("alice", question)
                .recent(["Hi there!", "Hello, how can I help?"])
                .top_k(2)
                .mode(SearchMode::Hybrid);
            let hits: Vec<MemoryHit> = view.retrieve(query).await.unwrap();
            assert!(hits.iter().all(|h| h.record.user_id == "alice"), "{hits:?}");
            assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.relevance)), "{hits:?}");
            hits.into_iter().map(|h| h.record.content).collect::<Vec<_>>()
        };
        let locker = "User: My locker code at the gym is 4471.\nAssistant: Noted.";
        let key = "User: The deploy key ZX-Q9 rotates on Fridays.\nAssistant: Noted.";
        for (fusion, per_retrieval) in [
            (HybridFusion::ServerWeighted, calls(&[("HybridSearch", 1)])),
            (HybridFusion::ServerRrf, calls(&[("HybridSearch", 1)])),
            (HybridFusion::Client, calls(&[("Search", 3)])),
        ] {
            let view =
                MilvusMemory::connect(through(fusion), HashingEmbeddings::new(support::DIMS)).await.unwrap();
            proxy.take_calls();
            let found = ask(view.clone(), "what is my locker code at the gym?").await;
            assert_eq!(found.first().map(String::as_str), Some(locker), "{fusion:?}: {found:?}");
            assert_eq!(searches(proxy.take_calls()), per_retrieval, "{fusion:?}");
            let found = ask(view.clone(), "ZX-Q9").await;
            assert_eq!(found.first().map(String::as_str), Some(key), "{fusion:?}: {found:?}");
            assert_eq!(searches(proxy.take_calls()), per_retrieval, "{fusion:?}");
            assert_eq!(view.fusion(), fusion, "no fallback while the server fuses");
        }
        proxy.refuse("HybridSearch");
        let view = MilvusMemory::connect(
            through(HybridFusion::ServerWeighted),
            HashingEmbeddings::new(support::DIMS),
        )
        .await
        .unwrap();
        proxy.take_calls();
        let found = ask(view.clone(), "what is my locker code at the gym?").await;
        assert_eq!(found.first().map(String::as_str), Some(locker), "fallback: {found:?}");
        assert_eq!(searches(proxy.take_calls()), calls(&[("HybridSearch", 1), ("Search", 3)]));
        assert_eq!(view.fusion(), HybridFusion::Client, "the refusal is remembered");
        let found = ask(view.clone(), "ZX-Q9").await;
        assert_eq!(found.first().map(String::as_str), Some(key), "fallback: {found:?}");
        assert_eq!(searches(proxy.take_calls()), calls(&[("Search", 3)]), "not asked again");
    })
    .await;
}
