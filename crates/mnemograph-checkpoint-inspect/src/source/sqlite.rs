//! Opening a SQLite file holding the tables of LangGraph's SQLite saver, through
//! [`SqliteCheckpointer`], read-only: the file is never created, migrated or written.

use std::str::FromStr;

use mnemograph_checkpoint_sqlite::{SqliteCheckpointer, SqliteConnectOptions, SqlitePoolOptions};
use sqlx::{Connection, SqliteConnection};

use crate::error::{Error, Result};

/// SQLite's result code for a file that is not a database (`SQLITE_NOTADB`).
const NOT_A_DATABASE: &str = "26";

/// Whether the file has both tables, and `writes` the `task_path` column the saver orders
/// pending writes by (LangGraph's `setup` adds it to older files; a read-only reader cannot).
const HAS_TABLES: &str = "SELECT (SELECT COUNT(*) FROM sqlite_master \
        WHERE type = 'table' AND name IN ('checkpoints', 'writes')) = 2 \
    AND EXISTS (SELECT 1 FROM pragma_table_info('writes') WHERE name = 'task_path')";

/// A read-only saver on the file `url` names (`sqlite://PATH` or `sqlite:PATH`, with sqlx's
/// parameters); `shown` is the URL for messages.
///
/// # Errors
/// [`Error::InvalidUrl`] for a URL sqlx cannot parse or an in-memory database (which holds
/// nothing to inspect), [`Error::MissingFile`] when the file does not exist,
/// [`Error::NotSqlite`] when it is not a SQLite database, [`Error::NoCheckpointTables`] when it
/// lacks the saver's tables, [`Error::Unreachable`] when it cannot be opened otherwise.
pub(super) async fn connect(url: &str, shown: &str) -> Result<SqliteCheckpointer> {
    let invalid = |source: crate::BoxError| Error::InvalidUrl { url: shown.to_owned(), source };
    // sqlx knows the scheme in lowercase only.
    let rest = url.get(7..).unwrap_or_default();
    let rest = rest.strip_prefix("//").unwrap_or(rest);
    let (database, query) = rest.split_once('?').unwrap_or((rest, ""));
    if database == ":memory:" || query.split('&').any(|p| p == "mode=memory") {
        return Err(invalid("an in-memory database holds no checkpoints to inspect".into()));
    }
    let options =
        SqliteConnectOptions::from_str(&format!("sqlite://{rest}")).map_err(|e| invalid(e.into()))?;
    let path = options.get_filename().display().to_string();
    match std::fs::metadata(options.get_filename()) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Error::MissingFile { path }),
        Err(e) => return Err(Error::Unreachable { url: shown.to_owned(), source: e.into() }),
    }
    // Read-only whatever the URL's `mode` says, and no journal mode set: opening writes nothing.
    let options = options.read_only(true).create_if_missing(false);
    let sorted = |e: sqlx::Error| match &e {
        sqlx::Error::Database(db) if db.code().as_deref() == Some(NOT_A_DATABASE) => {
            Error::NotSqlite { path: path.clone(), source: e.into() }
        }
        _ => Error::Unreachable { url: shown.to_owned(), source: e.into() },
    };
    let mut probe = SqliteConnection::connect_with(&options).await.map_err(sorted)?;
    let has_tables: bool = sqlx::query_scalar(HAS_TABLES).fetch_one(&mut probe).await.map_err(sorted)?;
    drop(probe.close().await);
    if !has_tables {
        return Err(Error::NoCheckpointTables { path });
    }
    let pool = SqlitePoolOptions::new().max_connections(2).connect_lazy_with(options);
    Ok(SqliteCheckpointer::from_pool(pool))
}
