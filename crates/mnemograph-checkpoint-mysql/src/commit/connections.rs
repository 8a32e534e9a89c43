//! Connections kept open for put transactions, between one put and the next.
//!
//! sqlx pings every connection handed back to its pool, in a task of its own: a round trip per
//! put, on the server and on the client, which on a chat turn (two puts) costs as much as the
//! turn's own statements of a kind. And the next put gets whichever connection is free, not the
//! one that was warm. So the savers keep a few connections of their own for their put
//! transactions ([`Writers`]): a put takes an idle one (pinged first only when it sat idle for
//! `ping-after-idle`, like the pool's), and gives it back when its transaction is over, with no
//! ping.
//!
//! When all of them are busy, a put waits for one rather than taking a pooled connection: on a
//! pooled connection (autocommit on) a put costs a `BEGIN` statement, its parent check in a
//! round trip of its own, and sqlx's ping on release, and every put running at once is one more
//! session the server's cores switch between. The kept connections bound how many puts run at
//! once; the server's group commit already writes the log once for the commits that arrive
//! together. With none kept (`write-connections=0`), every put uses the pool.
//!
//! A kept connection is taken out of the pool ([`PoolConnection::detach`]) and so no longer
//! counts against its size: it was opened the pool's way (options, `after_connect`), and is
//! closed when the saver and its clones are dropped. It runs with autocommit off, so a put
//! transaction begins with its first statement: no `BEGIN` is sent, and a large statement can
//! run before the parent check, which then travels with the `COMMIT` (see
//! [`super::check_with_commit`]). One whose transaction may still be open (a failed `ROLLBACK`,
//! a cancelled put) is never given back: it is closed, and the server rolls back with the
//! session.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use sqlx::pool::PoolConnection;
use sqlx::{Connection as _, MySql, MySqlConnection, MySqlPool};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::script::script;

/// How many connections a saver keeps for its put transactions unless told otherwise: as many as
/// the pool holds by default, so that puts running at once still reach the server together and
/// share its log writes (group commit).
pub(crate) const DEFAULT_WRITE_CONNECTIONS: usize = 10;

/// The connections a saver keeps for put transactions (see the module documentation).
pub(crate) struct Writers {
    /// Where new connections come from, and what puts use when none may be kept.
    pool: MySqlPool,
    /// Idle kept connections, the most recently used last.
    idle: Mutex<Vec<Idle>>,
    /// One permit per connection that may be kept.
    permits: Arc<Semaphore>,
    /// How many connections may be kept (0: every put uses the pool).
    count: usize,
    /// A kept connection idle at least this long is pinged before it is used.
    ping_after_idle: Duration,
}

/// A kept connection and when it was given back.
struct Idle {
    /// The connection.
    conn: MySqlConnection,
    /// When it was given back.
    since: Instant,
}

impl Writers {
    /// Keeps up to `count` connections out of `pool` (0: none, every put uses the pool).
    pub(crate) fn new(pool: MySqlPool, count: usize, ping_after_idle: Duration) -> Arc<Self> {
        Arc::new(Self {
            pool,
            idle: Mutex::new(Vec::with_capacity(count)),
            permits: Arc::new(Semaphore::new(count)),
            count,
            ping_after_idle,
        })
    }

    /// The pool the connections come from.
    pub(crate) fn pool(&self) -> &MySqlPool {
        &self.pool
    }

    /// A connection for one put transaction: a kept one (idle, or opened now within the bound),
    /// waiting for one when all are busy; a pooled one when none may be kept.
    pub(crate) async fn acquire(&self) -> Result<Lease, sqlx::Error> {
        if self.count == 0 {
            return Ok(Lease::Pooled(self.pool.acquire().await?));
        }
        // As long as the pool would wait for one of its own connections.
        let wait = self.pool.options().get_acquire_timeout();
        let permit = match tokio::time::timeout(wait, Arc::clone(&self.permits).acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            // Not expected: the semaphore is never closed. The pool still serves.
            Ok(Err(_)) => return Ok(Lease::Pooled(self.pool.acquire().await?)),
            Err(_) => return Err(sqlx::Error::PoolTimedOut),
        };
        loop {
            let idle = self.idle.lock().pop();
            let Some(Idle { mut conn, since }) = idle else { break };
            if since.elapsed() < self.ping_after_idle || conn.ping().await.is_ok() {
                return Ok(Lease::Kept(conn, permit));
            }
            // Dead (the server ended the session while it sat idle): try the next one.
            tracing::debug!("a kept write connection failed its ping; closing it");
            drop(conn);
        }
        let mut conn = self.pool.acquire().await?.detach();
        // A put transaction on it then begins with its first statement (see `super::tx`).
        script(&mut conn, "SET autocommit = 0", 1).await?;
        Ok(Lease::Kept(conn, permit))
    }

    /// Takes back a connection whose transaction is over; a pooled one goes back to the pool.
    pub(crate) fn release(&self, lease: Lease) {
        if let Lease::Kept(conn, permit) = lease {
            self.idle.lock().push(Idle { conn, since: Instant::now() });
            // The permit goes after the connection is idle, so a put that gets it finds it.
            drop(permit);
        }
    }
}

impl Drop for Writers {
    fn drop(&mut self) {
        let idle = std::mem::take(&mut *self.idle.lock());
        if idle.is_empty() {
            return;
        }
        // Closed politely (COM_QUIT) when a runtime is at hand, so the server does not log
        // aborted connections; otherwise the sockets just close.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                for Idle { conn, .. } in idle {
                    let _ = tokio::time::timeout(Duration::from_secs(5), conn.close()).await;
                }
            });
        }
    }
}

impl std::fmt::Debug for Writers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writers")
            .field("idle", &self.idle.lock().len())
            .field("free", &self.permits.available_permits())
            .finish()
    }
}

/// A connection lent to one put transaction.
pub(crate) enum Lease {
    /// One of the saver's kept connections, with the permit that counts it.
    Kept(MySqlConnection, OwnedSemaphorePermit),
    /// A pooled connection (none may be kept, or the put needed the pool's).
    Pooled(PoolConnection<MySql>),
}

impl Lease {
    /// Marks the connection to be closed instead of reused: its transaction may still be open.
    /// A kept one is closed by being dropped.
    pub(crate) fn close_on_drop(&mut self) {
        if let Lease::Pooled(conn) = self {
            conn.close_on_drop();
        }
    }
}

impl Deref for Lease {
    type Target = MySqlConnection;
    fn deref(&self) -> &MySqlConnection {
        match self {
            Lease::Kept(conn, _) => conn,
            Lease::Pooled(conn) => conn,
        }
    }
}

impl DerefMut for Lease {
    fn deref_mut(&mut self) -> &mut MySqlConnection {
        match self {
            Lease::Kept(conn, _) => conn,
            Lease::Pooled(conn) => conn,
        }
    }
}
