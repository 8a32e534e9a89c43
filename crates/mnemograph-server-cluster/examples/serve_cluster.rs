//! Serves the server's `serve` example graphs (`chain`, `pause`, `talk`) as one process of a
//! cluster, for the cluster benchmarks (`scripts/bench-server.sh`): start several on the same
//! `MYSQL_URL`, on different ports, and any of them serves any thread. Checkpoints go to the
//! cluster's database, their writes fenced in the run's transaction; run events go through
//! `REDIS_URL` (`redis://127.0.0.1:6379/` by default); `CLUSTER_WORKERS` runs run at once per
//! process (64 by default).
//!
//! The other settings are the `serve` example's (`AUTH_TOKENS`, `ALLOWED_HOSTS`,
//! `CORS_ORIGINS`, retention, `TALK_TOKENS`); see its `--help`.
//!
//! `cargo run -p mnemograph-server-cluster --example serve_cluster -- [--no-auth] [ADDRESS (127.0.0.1:2024)]`

#[path = "../../mnemograph-server/examples/serve/graphs.rs"]
mod graphs;
#[path = "../../mnemograph-server/examples/serve/settings.rs"]
mod settings;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_server::Server;
use mnemograph_server_cluster::{Cluster, WORKERS};

#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main]
async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let no_auth = args.iter().any(|a| a == "--no-auth");
    let bind =
        args.iter().find(|a| !a.starts_with("--")).cloned().unwrap_or_else(|| "127.0.0.1:2024".to_owned());
    let url = std::env::var("MYSQL_URL").map_err(|_| "MYSQL_URL names the cluster's database")?;
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned());
    let workers = match std::env::var("CLUSTER_WORKERS") {
        Ok(w) => w.parse().map_err(|e| format!("CLUSTER_WORKERS={w}: {e}"))?,
        Err(_) => WORKERS,
    };
    let saver = MySqlCheckpointer::connect(&url).await?;
    saver.setup().await?;
    let cluster = Cluster::connect(&url, &redis).await?.with_saver(saver.clone()).with_workers(workers);
    let server = Server::new(saver).with_backend(cluster);
    let server = settings::configured(graphs::served(server)?, no_auth)?;
    let listener = tokio::net::TcpListener::bind(&bind).await?;
    println!("serving chain, pause and talk on http://{} in a cluster", listener.local_addr()?);
    server.serve(listener).await?;
    Ok(())
}
