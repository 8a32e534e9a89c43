//! A cluster of two servers on one fresh MySQL database and one Redis: a front that runs no runs,
//! where the client talks, and a back with 8 workers, so every run is queued, run by the other
//! process and streamed back through Redis.

use std::sync::Arc;

use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_core::checkpoint::DynCheckpointer;
use mnemograph_core::store::{DynStore, InMemoryStore};
use mnemograph_server_cluster::queue::Lease;
use mnemograph_server_cluster::Cluster;
use tokio::task::AbortHandle;

/// Two servers of [`super::graphs::server_on`] serving the same threads.
pub(crate) struct Pair {
    /// The front server's base URL.
    pub(crate) url: String,
    servers: [AbortHandle; 2],
    db: String,
}

impl Pair {
    /// Starts the pair on a fresh database named after `label`; `None` (after saying why) when
    /// MySQL or Redis is unreachable and `CI` is not set. Both send webhooks to loopback, where the flows' receiver listens.
    pub(crate) async fn start(label: &str) -> Option<Self> {
        let redis = super::mysql::redis_url().await?;
        let db = super::mysql::fresh_database(label).await?;
        let saver = MySqlCheckpointer::connect(&db).await.expect("connect the saver");
        saver.setup().await.expect("saver tables");
        let saver: Arc<dyn DynCheckpointer> = Arc::new(saver);
        // The store is one both processes reach, as a cluster's store must be.
        let store: Arc<dyn DynStore> = Arc::new(InMemoryStore::new());
        let lease = Lease { ttl: std::time::Duration::from_secs(5) };
        let prefix = format!("{db}:");
        let front_cluster =
            Cluster::connect(&db, &redis).await.expect("cluster").with_workers(0).with_key_prefix(&prefix);
        let back_cluster =
            Cluster::connect(&db, &redis).await.expect("cluster").with_workers(8).with_lease(lease);
        let back_cluster = back_cluster.with_key_prefix(prefix);
        let front = super::graphs::server_on(saver.clone(), store.clone());
        let back = super::graphs::server_on(saver, store);
        let (front, back) = {
            let loopback = || mnemograph_server::WebhookPolicy::new().allow_host("127.0.0.1");
            (front.with_webhooks(loopback()).unwrap(), back.with_webhooks(loopback()).unwrap())
        };
        let (front, back) = (front.with_backend(front_cluster), back.with_backend(back_cluster));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let back_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let servers =
            [front.serve(listener), back.serve(back_listener)].map(|s| tokio::spawn(s).abort_handle());
        Some(Self { url, servers, db })
    }

    /// Stops both servers and drops their database, at the end of a test that passed.
    pub(crate) async fn stop(self) {
        for server in self.servers {
            server.abort();
        }
        super::mysql::drop_database(&self.db).await;
    }
}
