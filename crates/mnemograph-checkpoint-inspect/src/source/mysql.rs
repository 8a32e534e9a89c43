//! Connecting to a MySQL/MariaDB database holding LangGraph's checkpoint tables, through
//! [`MySqlCheckpointer`].

use std::str::FromStr;

use mnemograph_checkpoint_mysql::{MySqlCheckpointer, MySqlConnectOptions};

use super::sql;
use crate::error::{Error, Result};

/// A saver on a small pool; `shown` is the URL without its password.
///
/// # Errors
/// [`Error::InvalidUrl`] or [`Error::Unreachable`].
pub(super) async fn connect(url: &str, shown: &str) -> Result<MySqlCheckpointer> {
    // `mariadb://` is accepted as a synonym; sqlx only knows `mysql://`.
    let normalised = match url.get(..10) {
        Some(scheme) if scheme.eq_ignore_ascii_case("mariadb://") => format!("mysql://{}", &url[10..]),
        _ => url.to_owned(),
    };
    let options = MySqlConnectOptions::from_str(&normalised)
        .map_err(|e| Error::InvalidUrl { url: shown.to_owned(), source: e.into() })?;
    Ok(MySqlCheckpointer::from_pool(sql::pool(options, shown).await?))
}
