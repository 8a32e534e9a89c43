//! Retrieve latency against a live Milvus. Needs `MILVUS_URL` (e.g. from
//! `scripts/milvus-lite.sh`).
//!
//! `cargo run --release -p mnemograph-memory-milvus --example latency -- [ROWS] [QUERIES]` fills a fresh
//! collection with ROWS memories (default 100000) of 1,000 users, then times QUERIES (default 200)
//! retrievals of random users per mode and prints p50/p99: dense, hybrid fused by the server (one
//! `HybridSearch`, the default) and hybrid fused in the client (a dense and a BM25 search). The
//! collection is kept (its name is printed) so `examples/latency_pymilvus.py` can time the same
//! searches from Python; drop it with `-- drop NAME`.
//!
//! `-- query NAME [QUERIES] [user|scope]` only times retrievals on an existing collection (with
//! `user`, only the searches with the user filter alone; with `scope`, only the default scope). Use it for
//! comparisons: after a bulk load, Milvus Lite keeps compacting and building HNSW indexes in the
//! background for a while, and searches timed meanwhile are slower, so the figures printed right
//! after loading are not comparable with a later pymilvus run (docs/benchmarks/milvus.md, "speed").
//! `scripts/bench-milvus.sh` runs the whole comparison.

use std::time::Instant;

use mnemograph_checkpoint::store::HashingEmbeddings;
use mnemograph_memory::{Memory, NewMemory, RetrieveQuery, SearchMode};
use mnemograph_memory_milvus::{HybridFusion, MilvusConfig, MilvusMemory};
use rand::{Rng, SeedableRng};

const WORDS: [&str; 24] = [
    "milvus", "index", "latency", "rust", "python", "deploy", "budget", "flight", "cat", "garden", "tokens",
    "chunk", "vector", "recipe", "doctor", "meeting", "invoice", "travel", "music", "backup", "server",
    "query", "birthday", "project",
];

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("MILVUS_URL")?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let embed = HashingEmbeddings::new(384);
    if args.first().map(String::as_str) == Some("drop") {
        let m = MilvusMemory::connect(MilvusConfig::new(url).collection(&args[1]), embed).await?;
        m.drop_collection().await?;
        return Ok(());
    }
    if args.first().map(String::as_str) == Some("query") {
        let queries: usize = args.get(2).map_or(Ok(200), |a| a.parse())?;
        let m = MilvusMemory::connect(MilvusConfig::new(url).collection(&args[1]), embed).await?;
        if args.get(3).map(String::as_str) != Some("user") {
            println!("rust scope: retired field {}", m.retired_field());
        }
        // A different seed from the loading run's, so the queries do not repeat its users.
        let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
        return time_retrieves(&m, queries, args.get(3).map_or("", String::as_str), &mut rng).await;
    }
    let rows: usize = args.first().map_or(Ok(100_000), |a| a.parse())?;
    let queries: usize = args.get(1).map_or(Ok(200), |a| a.parse())?;
    let collection = format!("bench_{rows}_{:08x}", rand::random::<u32>());
    let m = MilvusMemory::connect(MilvusConfig::new(url).collection(&collection), embed).await?;
    // The bench script tells pymilvus to filter as the crate does from this line.
    println!("retired field: {}", m.retired_field());
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let now = mnemograph_memory::now_secs();
    let started = Instant::now();
    for batch in 0..rows.div_ceil(1000) {
        let n = 1000.min(rows - batch * 1000);
        let memories = (0..n)
            .map(|i| {
                let words: Vec<&str> = (0..12).map(|_| WORDS[rng.gen_range(0..WORDS.len())]).collect();
                let user = format!("bench-u{}", (batch * 1000 + i) % 1000);
                NewMemory::turn(user, format!("s{}", i % 7), &words[..6].join(" "), &words[6..].join(" "))
                    .created_at(now - rng.gen_range(0..180 * 86_400))
                    .importance(rng.gen_range(0.0..1.0))
            })
            .collect();
        m.save(memories).await?;
    }
    println!("collection {collection}: inserted {rows} rows in {:.1?}", started.elapsed());
    let flushed = Instant::now();
    m.flush().await?;
    println!("flushed in {:.1?}", flushed.elapsed());
    if queries == 0 {
        return Ok(());
    }
    println!(
        "(index builds may still be running: time with `-- query {collection}` once the server is idle)"
    );
    time_retrieves(&m, queries, "", &mut rng).await
}

/// Times `queries` retrievals of random users per mode (dense, hybrid fused by the server,
/// hybrid fused here; each with the default scope and with the user filter alone) and prints
/// p50/p99; `only` = `user` times the user filter alone, `scope` the default scope.
async fn time_retrieves(
    m: &MilvusMemory,
    queries: usize,
    only: &str,
    rng: &mut rand::rngs::StdRng,
) -> Result<(), Box<dyn std::error::Error>> {
    let server = m.config().clone().fusion(HybridFusion::ServerWeighted);
    let client = m.config().clone().fusion(HybridFusion::Client);
    let embed = || HashingEmbeddings::new(384);
    let server = MilvusMemory::connect(server, embed()).await?;
    let client = MilvusMemory::connect(client, embed()).await?;
    // The default scope leaves retired memories out (`retired == false`, or the JSON clause on a
    // collection without the flag); `include_retired` times the same searches with the user
    // filter alone.
    let modes = [
        ("dense", &server, SearchMode::Dense, false),
        ("hybrid, server-fused", &server, SearchMode::Hybrid, false),
        ("hybrid, client-fused", &client, SearchMode::Hybrid, false),
        ("dense (user filter only)", &server, SearchMode::Dense, true),
        ("hybrid, server-fused (user filter only)", &server, SearchMode::Hybrid, true),
        ("hybrid, client-fused (user filter only)", &client, SearchMode::Hybrid, true),
    ];
    let wanted = |include_retired: bool| match only {
        "user" => include_retired,
        "scope" => !include_retired,
        _ => true,
    };
    for (label, memory, mode, include_retired) in modes.into_iter().filter(|m| wanted(m.3)) {
        let mut times = Vec::with_capacity(queries);
        for _ in 0..queries {
            let user = format!("bench-u{}", rng.gen_range(0..1000));
            let q =
                format!("{} {}", WORDS[rng.gen_range(0..WORDS.len())], WORDS[rng.gen_range(0..WORDS.len())]);
            let t = Instant::now();
            let query = RetrieveQuery::new(user, q).top_k(3).mode(mode).include_retired(include_retired);
            let hits = memory.retrieve(query).await?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            assert!(hits.len() <= 3);
        }
        // A server without `HybridSearch` would have turned the server-fused row into a
        // client-fused one.
        assert_eq!(server.fusion(), HybridFusion::ServerWeighted, "the server fused every retrieval");
        times.sort_by(f64::total_cmp);
        println!(
            "rust {label}: {queries} retrieves (top 3 of 20 candidates), p50 {:.1} ms, p99 {:.1} ms",
            percentile(&times, 0.5),
            percentile(&times, 0.99)
        );
    }
    Ok(())
}
