//! The official Python SDK's flows that the server's own tests run on one process
//! (`crons.rs`, `auth.rs`, their scripts in the server's `tests/python`), on a cluster of two
//! processes.
//!
//! Needs `LANGGRAPH_PYTHON` (see the server's tests), `MYSQL_URL` and `REDIS_URL`; without them
//! the tests print why and pass, unless `CI` is set.

mod support;

use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::{DynStore, InMemoryStore};
use mnemograph_server::auth::BearerTokens;
use mnemograph_server::Server;
use mnemograph_server_cluster::Cluster;

/// How often the servers look for due crons: the flows' crons fire every second.
const POLL: Duration = Duration::from_millis(100);

const TOKENS: &str = "alice:token-a,bob:token-b";

fn tokens() -> BearerTokens {
    BearerTokens::parse(TOKENS).expect("a valid token table")
}

async fn serve(server: Server) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

/// The cron flows (`cron_flows.py`) on a cluster of two processes: the client talks to one that
/// runs no runs, and both look for due crons.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_cron_flows_pass_against_a_cluster() {
    let Some(python) = support::python::python() else { return };
    let Some(redis) = support::mysql::redis_url().await else { return };
    let Some(db) = support::mysql::fresh_database("cluster_cron_flows").await else { return };
    let saver = MySqlCheckpointer::connect(&db).await.expect("connect the saver");
    saver.setup().await.expect("saver tables");
    let saver: Arc<dyn DynCheckpointer> = Arc::new(saver);
    let store: Arc<dyn DynStore> = Arc::new(InMemoryStore::new());
    let mut urls = Vec::new();
    for workers in [0, 4] {
        let cluster = Cluster::connect(&db, &redis)
            .await
            .expect("cluster")
            .with_workers(workers)
            .with_key_prefix(format!("{db}:"));
        let server = support::graphs::server_on(saver.clone(), store.clone())
            .with_cron_poll_interval(POLL)
            .with_backend(cluster);
        urls.push(serve(server).await);
    }
    let url = urls[0].clone();
    tokio::task::spawn_blocking(move || support::python::run_script(&python, "cron_flows.py", &url))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    support::mysql::drop_database(&db).await;
}

/// The two users' flows (`auth_flows.py`) on a cluster of two processes: the client talks to one
/// that runs no runs, so every grant is checked in the database and every run is run by the
/// other process, as its caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_users_of_the_python_sdk_see_only_their_own_in_a_cluster() {
    let Some(python) = support::python::python() else { return };
    let Some(redis) = support::mysql::redis_url().await else { return };
    let Some(db) = support::mysql::fresh_database("cluster_auth").await else { return };
    let saver = MySqlCheckpointer::connect(&db).await.expect("connect the saver");
    saver.setup().await.expect("saver tables");
    let saver: Arc<dyn DynCheckpointer> = Arc::new(saver);
    let store: Arc<dyn DynStore> = Arc::new(InMemoryStore::new());
    let prefix = format!("{db}:");
    let front =
        Cluster::connect(&db, &redis).await.expect("cluster").with_workers(0).with_key_prefix(&prefix);
    let back = Cluster::connect(&db, &redis).await.expect("cluster").with_workers(8).with_key_prefix(prefix);
    let front = support::graphs::server_on(saver.clone(), store.clone())
        .with_auth(tokens())
        .with_cron_poll_interval(POLL)
        .with_backend(front);
    let back = support::graphs::server_on(saver, store)
        .with_auth(tokens())
        .with_cron_poll_interval(POLL)
        .with_backend(back);
    let url = serve(front).await;
    serve(back).await;
    tokio::task::spawn_blocking(move || support::python::run_script(&python, "auth_flows.py", &url))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
    support::mysql::drop_database(&db).await;
}
