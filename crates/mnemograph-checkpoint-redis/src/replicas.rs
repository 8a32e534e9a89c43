//! Waiting for replicas after a write (`WAIT`): Redis replicates asynchronously, so a write the
//! primary acknowledged is lost if the primary fails before a replica has it. Waiting makes the
//! acknowledgement mean "on `replicas` replicas too", or an error that says it is not.

use std::time::Duration;

use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};

use crate::conn::Conn;
use crate::error::RedisSaverError;

/// How many replicas must acknowledge each write, and how long to wait for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReplicaWait {
    /// At least one.
    pub(crate) replicas: usize,
    /// At least a millisecond (`WAIT` with 0 would block for ever).
    pub(crate) timeout: Duration,
}

impl ReplicaWait {
    /// Waits until the replicas have every write this connection made so far, on the server that
    /// holds `key` (the cluster node of its slot).
    ///
    /// `WAIT` counts the writes of the connection it is sent on, so it goes on the saver's own
    /// (multiplexed) connection: it then also covers the other tasks' writes sent before it, and
    /// the commands sent after it queue until it returns.
    pub(crate) async fn after_write(&self, conn: &Conn, key: &str) -> Result<(), RedisSaverError> {
        let timeout_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
        let mut cmd = redis::cmd("WAIT");
        cmd.arg(self.replicas).arg(timeout_ms);
        let acknowledged: usize = match conn {
            Conn::Single(c) => cmd.query_async(&mut c.clone()).await?,
            Conn::Cluster(c) => {
                let route = SingleNodeRoutingInfo::SpecificNode(Route::with_key(key, SlotAddr::Master));
                let reply = c.clone().route_command(cmd, RoutingInfo::SingleNode(route)).await?;
                redis::from_redis_value(reply).map_err(redis::RedisError::from)?
            }
        };
        if acknowledged < self.replicas {
            return Err(RedisSaverError::NotReplicated {
                wanted: self.replicas,
                acknowledged,
                timeout: self.timeout,
            });
        }
        Ok(())
    }
}
