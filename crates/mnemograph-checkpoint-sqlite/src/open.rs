//! Opening a pool on a file that other connections may be opening at the same moment.

use std::time::{Duration, Instant};

use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};

use crate::error::{Error, Result};
use crate::options::DEFAULT_BUSY_TIMEOUT;

/// The pause between two attempts to open a file whose journal mode is being changed.
const RETRY_PAUSE: Duration = Duration::from_millis(20);

/// Opens the pool, retrying for up to [`DEFAULT_BUSY_TIMEOUT`] while the file is locked.
///
/// A new connection switches the file to WAL, which needs the file to itself. When two
/// connections make that switch on a new file at once, SQLite answers one of them
/// `SQLITE_BUSY` at once rather than through the busy handler, since each holds a lock the other
/// waits for. Nothing is written by a failed attempt, so opening again is safe; once any
/// connection has made the switch, the others find the file in WAL mode and open.
pub(crate) async fn open_pool(connect: SqliteConnectOptions, pool: SqlitePoolOptions) -> Result<SqlitePool> {
    let deadline = Instant::now() + DEFAULT_BUSY_TIMEOUT;
    loop {
        match pool.clone().connect_with(connect.clone()).await.map_err(|e| Error::driver("open", e)) {
            Err(e) if e.is_busy() && Instant::now() < deadline => tokio::time::sleep(RETRY_PAUSE).await,
            opened => return opened,
        }
    }
}
