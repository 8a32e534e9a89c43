//! One connection type over a single Redis server and a Redis Cluster.
//!
//! Both are multiplexed and cheap to clone, so the saver clones one per call instead of holding
//! a lock. The single-server side is a [`ConnectionManager`], which reconnects on its own after
//! the server restarts or the socket drops; the cluster client follows `MOVED`/`ASK` redirects
//! and reconnects to nodes itself.

use std::fmt;

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{RoutingInfo, SingleNodeRoutingInfo};
use redis::{Cmd, RedisFuture, RedisResult, Value};

/// A connection to a single server or to a cluster.
#[derive(Clone)]
pub(crate) enum Conn {
    /// One server (or a proxy in front of several).
    Single(ConnectionManager),
    /// A Redis Cluster.
    Cluster(ClusterConnection),
}

impl fmt::Debug for Conn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Single(_) => "Conn::Single",
            Self::Cluster(_) => "Conn::Cluster",
        })
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(c) => c.req_packed_command(cmd),
            Self::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(c) => c.req_packed_commands(cmd, offset, count),
            Self::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}

/// How many keys one `SCAN` call asks for: large enough that a big keyspace takes few round
/// trips, small enough that one call never blocks the server noticeably.
const SCAN_COUNT: usize = 1000;

impl Conn {
    /// Every key matching `pattern` of type `kind`, over the whole server or every cluster
    /// primary. `SCAN` may return a key twice; duplicates are removed.
    pub(crate) async fn scan(&self, pattern: &str, kind: &str) -> RedisResult<Vec<String>> {
        let mut keys = match self {
            Self::Single(c) => scan_node(&mut Conn::Single(c.clone()), None, pattern, kind).await?,
            Self::Cluster(c) => {
                let mut keys = Vec::new();
                for (host, port) in primaries(&mut c.clone()).await? {
                    let node = Some((host, port));
                    keys.extend(scan_node(&mut Conn::Cluster(c.clone()), node, pattern, kind).await?);
                }
                keys
            }
        };
        keys.sort_unstable();
        keys.dedup();
        Ok(keys)
    }
}

/// `SCAN` to completion on one node (`node` is the cluster primary to route to).
async fn scan_node(
    conn: &mut Conn,
    node: Option<(String, u16)>,
    pattern: &str,
    kind: &str,
) -> RedisResult<Vec<String>> {
    let mut keys = Vec::new();
    let mut cursor: u64 = 0;
    loop {
        let mut cmd = redis::cmd("SCAN");
        cmd.arg(cursor).arg("MATCH").arg(pattern).arg("COUNT").arg(SCAN_COUNT).arg("TYPE").arg(kind);
        let (next, batch): (u64, Vec<String>) = match (&mut *conn, &node) {
            (Conn::Cluster(c), Some((host, port))) => {
                let routing = SingleNodeRoutingInfo::ByAddress { host: host.clone(), port: *port };
                let value = c.route_command(cmd, RoutingInfo::SingleNode(routing)).await?;
                redis::from_redis_value(value)?
            }
            (conn, _) => cmd.query_async(conn).await?,
        };
        keys.extend(batch);
        if next == 0 {
            return Ok(keys);
        }
        cursor = next;
    }
}

/// The `(host, port)` of every primary, from `CLUSTER SLOTS` (available on Redis 6 and 7).
async fn primaries(conn: &mut ClusterConnection) -> RedisResult<Vec<(String, u16)>> {
    let slots: Vec<Value> = redis::cmd("CLUSTER").arg("SLOTS").query_async(conn).await?;
    let mut nodes = Vec::new();
    for range in slots {
        // Each range is `[start, end, [host, port, id, …], replica…]`.
        let Value::Array(items) = range else { continue };
        let Some(Value::Array(primary)) = items.get(2) else { continue };
        let (Some(host), Some(port)) = (primary.first(), primary.get(1)) else { continue };
        let host: String = redis::from_redis_value_ref(host)?;
        let port: u16 = redis::from_redis_value_ref(port)?;
        if !nodes.contains(&(host.clone(), port)) {
            nodes.push((host, port));
        }
    }
    Ok(nodes)
}
