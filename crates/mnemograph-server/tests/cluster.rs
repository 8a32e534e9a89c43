//! The Python SDK flows against a cluster of two servers on one MySQL database and one Redis: the
//! client talks to a server that runs no runs, so every run is queued, run by the other server,
//! and streamed back through Redis.

mod support;

use std::sync::Arc;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::{DynStore, InMemoryStore};
use mnemograph_server::cluster::Cluster;
use mnemograph_server::queue::Lease;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_flows_pass_against_a_cluster_of_two_servers() {
    let Some(python) = support::python::python() else { return };
    let Some(redis) = support::mysql::redis_url().await else { return };
    let Some(db) = support::mysql::fresh_database("cluster_sdk").await else { return };
    let saver = MySqlCheckpointer::connect(&db).await.expect("connect the saver");
    saver.setup().await.expect("saver tables");
    let saver: Arc<dyn DynCheckpointer> = Arc::new(saver);
    // The store is one both processes reach, as a cluster's store must be.
    let store: Arc<dyn DynStore> = Arc::new(InMemoryStore::new());
    let lease = Lease { ttl: std::time::Duration::from_secs(5) };
    let front = Cluster::connect(&db, &redis).await.expect("cluster").with_workers(0);
    let back = Cluster::connect(&db, &redis).await.expect("cluster").with_workers(8).with_lease(lease);
    let front = support::graphs::server_on(saver.clone(), store.clone()).with_cluster(front);
    let back = support::graphs::server_on(saver, store).with_cluster(back);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let back_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let servers = [tokio::spawn(front.serve(listener)), tokio::spawn(back.serve(back_listener))];
    let flows = tokio::task::spawn_blocking(move || support::python::run_flows(&python, &url)).await;
    for server in servers {
        server.abort();
    }
    if let Err(e) = flows {
        std::panic::resume_unwind(e.into_panic());
    }
    support::mysql::drop_database(&db).await;
}
