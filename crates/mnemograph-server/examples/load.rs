//! Load on a LangGraph API server, whichever implements it: `RUNS` concurrent streaming runs, each
//! on its own thread, `ROUNDS` times. Prints one JSON line per round: runs per second, time to
//! the first graph event (`updates`) and to the end of the stream (p50, p99), and failures.
//!
//! `URL` may list several servers of one cluster, separated by commas: run `i` is sent to server
//! `i mod n`, as a load balancer would spread them.
//!
//! `cargo run --release -p mnemograph-server --example load -- URL[,URL...] GRAPH RUNS ROUNDS`

use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// What one run took.
struct Timing {
    first_event: Duration,
    total: Duration,
    ok: bool,
}

async fn one_run(client: &reqwest::Client, url: &str, thread: &str, graph: &str) -> Timing {
    let start = Instant::now();
    let body = json!({ "assistant_id": graph, "input": { "log": [] }, "stream_mode": ["updates"] });
    let sent = client.post(format!("{url}/threads/{thread}/runs/stream")).json(&body).send().await;
    let mut response = match sent {
        Ok(r) if r.status().is_success() => r,
        _ => return Timing { first_event: start.elapsed(), total: start.elapsed(), ok: false },
    };
    let (mut first_event, mut seen, mut failed) = (None, String::new(), false);
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => {
                seen.push_str(&String::from_utf8_lossy(&bytes));
                if first_event.is_none() && seen.contains("event: updates") {
                    first_event = Some(start.elapsed());
                }
                failed |= seen.contains("event: error");
            }
            Ok(None) => break,
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    let total = start.elapsed();
    Timing { first_event: first_event.unwrap_or(total), total, ok: !failed && first_event.is_some() }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, urls, graph, runs, rounds] = args.as_slice() else {
        return Err("usage: load URL[,URL...] GRAPH RUNS ROUNDS".into());
    };
    let urls: Vec<String> = urls.split(',').map(str::to_owned).collect();
    let (runs, rounds): (usize, usize) = (runs.parse()?, rounds.parse()?);
    // Plain HTTP; the TLS config names ring because reqwest's rustls may come without a provider.
    let tls = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(rustls::RootCertStore::empty())
    .with_no_client_auth();
    let client =
        reqwest::Client::builder().tls_backend_preconfigured(tls).pool_max_idle_per_host(runs).build()?;
    for round in 0..rounds {
        let mut threads = Vec::with_capacity(runs);
        for i in 0..runs {
            let url = &urls[i % urls.len()];
            let created: Value =
                client.post(format!("{url}/threads")).json(&json!({})).send().await?.json().await?;
            threads.push(created["thread_id"].as_str().ok_or("no thread_id")?.to_owned());
        }
        let start = Instant::now();
        let tasks: Vec<_> = threads
            .into_iter()
            .enumerate()
            .map(|(i, thread)| {
                let (client, url, graph) = (client.clone(), urls[i % urls.len()].clone(), graph.clone());
                tokio::spawn(async move { one_run(&client, &url, &thread, &graph).await })
            })
            .collect();
        let mut timings = Vec::with_capacity(runs);
        for t in tasks {
            timings.push(t.await?);
        }
        let wall = start.elapsed();
        let failures = timings.iter().filter(|t| !t.ok).count();
        let mut first: Vec<Duration> = timings.iter().map(|t| t.first_event).collect();
        let mut total: Vec<Duration> = timings.iter().map(|t| t.total).collect();
        first.sort();
        total.sort();
        println!(
            "{}",
            json!({
                "round": round,
                "runs": runs,
                "runs_per_s": (runs as f64 / wall.as_secs_f64() * 10.0).round() / 10.0,
                "first_event_ms": { "p50": percentile(&first, 0.5), "p99": percentile(&first, 0.99) },
                "total_ms": { "p50": percentile(&total, 0.5), "p99": percentile(&total, 0.99) },
                "failures": failures,
            })
        );
    }
    Ok(())
}
