//! Universal Sentence Encoder multilingual v3 (feature `multilingual`): the Rust encoder
//! against the reference the Python package produces, and the model's behaviour on Chinese and
//! English. Needs `USE_MODEL_DIR` (from `scripts/models.sh use-multilingual`); skips with a message
//! when unset, fails under CI.
#![cfg(feature = "multilingual")]

use mnemograph_checkpoint::store::{cosine_similarity, Embeddings};
use mnemograph_memory::{Error, MultilingualUseEmbeddings};
use serde_json::Value;

fn load(test: &str) -> Option<MultilingualUseEmbeddings> {
    let Ok(dir) = std::env::var("USE_MODEL_DIR") else {
        assert!(std::env::var_os("CI").is_none(), "{test}: USE_MODEL_DIR is not set under CI");
        eprintln!("skipping {test}: USE_MODEL_DIR is not set (bash scripts/models.sh use-multilingual)");
        return None;
    };
    let started = std::time::Instant::now();
    let m = MultilingualUseEmbeddings::load(dir).expect("load the multilingual encoder");
    println!("model loaded in {:?}", started.elapsed());
    Some(m)
}

/// The cases of `tests/fixtures/use_multilingual_reference.json` (written by
/// `tests/python/use_reference.py`): text, piece ids, vector.
fn reference() -> Vec<(String, Vec<u32>, Vec<f32>)> {
    let raw = include_str!("fixtures/use_multilingual_reference.json");
    let doc: Value = serde_json::from_str(raw).unwrap();
    doc["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ids = c["ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
            let vector = c["vector"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
            (c["text"].as_str().unwrap().to_owned(), ids, vector)
        })
        .collect()
}

#[tokio::test]
async fn multilingual_vectors_match_the_python_package() {
    let Some(m) = load("multilingual_vectors_match_the_python_package") else { return };
    let cases = reference();
    let texts: Vec<String> = cases.iter().map(|c| c.0.clone()).collect();
    let batch = m.embed_documents(&texts).await.unwrap();
    assert_eq!(batch.len(), cases.len());
    for ((text, _, expected), got) in cases.iter().zip(&batch) {
        assert_eq!(got.len(), 512);
        let cos = cosine_similarity(got, expected);
        assert!(cos > 0.99999, "{text:?}: cosine to the reference {cos}");
        let worst = got.iter().zip(expected).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
        assert!(worst < 1e-4, "{text:?}: largest difference {worst}");
        // Alone or in a batch, a text gets the same vector: windows never cross sentences.
        let alone = m.embed_query(text).await.unwrap();
        let cos = cosine_similarity(&alone, got);
        assert!(cos > 0.999999, "{text:?}: alone vs batched {cos}");
    }
}

#[tokio::test]
async fn multilingual_tokenizer_matches_sentencepiece() {
    // The ids decide the vector, so compare them exactly (the vectors' tolerance could hide a
    // single differing piece in a long text).
    let Some(m) = load("multilingual_tokenizer_matches_sentencepiece") else { return };
    for (text, ids, _) in reference() {
        assert_eq!(m.token_ids(&text), ids, "{text:?}");
    }
}

#[tokio::test]
async fn questions_find_facts_across_languages() {
    let Some(m) = load("questions_find_facts_across_languages") else { return };
    let facts: Vec<String> = [
        "I live in Shanghai now.",
        "我养了一只猫，叫咪咪。",
        "My favourite food is dumplings.",
        "我在一家银行当程序员。",
        "我对花生过敏。",
    ]
    .map(String::from)
    .to_vec();
    // Each question is in the other language than its fact, or a paraphrase in the same one.
    let questions = [
        ("我住在哪个城市？", 0),
        ("What pet do I have?", 1),
        ("我喜欢吃什么？", 2),
        ("What is my job?", 3),
        ("What am I allergic to?", 4),
        ("你知道我做什么工作吗？", 3),
    ];
    let docs = m.embed_documents(&facts).await.unwrap();
    for (question, want) in questions {
        let q = m.embed_query(question).await.unwrap();
        let scores: Vec<f64> = docs.iter().map(|d| cosine_similarity(&q, d)).collect();
        let best = (0..scores.len()).max_by(|&a, &b| scores[a].total_cmp(&scores[b])).unwrap();
        println!("{question} -> {:?} {scores:.3?}", facts[best]);
        assert_eq!(best, want, "{question}: {scores:?}");
    }
}

#[test]
fn missing_or_broken_model_files_are_typed_errors() {
    let dir = std::env::temp_dir().join(format!("use-model-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("weights")).unwrap();
    let err = MultilingualUseEmbeddings::load(&dir).unwrap_err();
    assert!(matches!(&err, Error::Embedding(e) if e.to_string().contains("sp.model")), "{err}");
    std::fs::write(dir.join("sp.model"), [0x0A, 0x05, 0x0A]).unwrap();
    let err = MultilingualUseEmbeddings::load(&dir).unwrap_err();
    assert!(matches!(&err, Error::Embedding(e) if e.to_string().contains("truncated")), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
