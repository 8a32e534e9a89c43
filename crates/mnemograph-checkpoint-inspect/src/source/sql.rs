//! A pool for the SQL savers, on any sqlx driver.

use std::time::Duration;

use crate::error::{Error, Result};

/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A small pool (the tool runs a few queries, one at a time) on `options`, after one plain
/// connection: a pool retries until its timeout and then reports only "pool timed out", while
/// this fails at once with the driver's reason (refused, access denied, unknown database).
/// `shown` is the URL without its password.
pub(super) async fn pool<DB: sqlx::Database>(
    options: <DB::Connection as sqlx::Connection>::Options,
    shown: &str,
) -> Result<sqlx::Pool<DB>> {
    let unreachable = |source: crate::error::BoxError| Error::Unreachable { url: shown.to_owned(), source };
    let probe = <DB::Connection as sqlx::Connection>::connect_with(&options);
    match tokio::time::timeout(CONNECT_TIMEOUT, probe).await {
        Ok(Ok(conn)) => drop(sqlx::Connection::close(conn).await),
        Ok(Err(e)) => return Err(unreachable(e.into())),
        Err(elapsed) => return Err(unreachable(elapsed.into())),
    }
    let pool = sqlx::pool::PoolOptions::<DB>::new().max_connections(2).acquire_timeout(CONNECT_TIMEOUT);
    Ok(pool.connect_lazy_with(options))
}
