//! Connecting to a PostgreSQL database holding LangGraph's checkpoint tables, through
//! [`PostgresCheckpointer`].

use std::str::FromStr;

use mnemograph_checkpoint_postgres::{PgConnectOptions, PostgresCheckpointer};

use super::sql;
use crate::error::{Error, Result};

/// A saver on a small pool; `shown` is the URL without its password.
///
/// # Errors
/// [`Error::InvalidUrl`] or [`Error::Unreachable`].
pub(super) async fn connect(url: &str, shown: &str) -> Result<PostgresCheckpointer> {
    let options = PgConnectOptions::from_str(url)
        .map_err(|e| Error::InvalidUrl { url: shown.to_owned(), source: e.into() })?;
    Ok(PostgresCheckpointer::from_pool(sql::pool(options, shown).await?))
}
