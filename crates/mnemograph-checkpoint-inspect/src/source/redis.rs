//! Connecting to a Redis server holding `mnemograph-checkpoint-redis` threads, through
//! [`RedisCheckpointer`].

use std::time::Duration;

use mnemograph_checkpoint_redis::{RedisCheckpointer, DEFAULT_PREFIX};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::error::{Error, Result};

/// The URL parameter naming the saver's key prefix; removed before the URL reaches the driver.
const PREFIX_PARAM: &str = "key-prefix";

/// A saver without `refresh_on_read`, so reads leave every thread's expiry alone;
/// `?key-prefix=P` selects a saver configured with another prefix. `shown` is the URL without
/// its password.
///
/// # Errors
/// [`Error::InvalidUrl`] or [`Error::Unreachable`].
pub(super) async fn connect(url: &str, shown: &str) -> Result<RedisCheckpointer> {
    let (url, prefix) = split_prefix(url);
    let client = redis::Client::open(url.as_str())
        .map_err(|e| Error::InvalidUrl { url: shown.to_owned(), source: e.into() })?;
    let config = ConnectionManagerConfig::new()
        .set_number_of_retries(1)
        .set_connection_timeout(Some(Duration::from_secs(5)))
        .set_response_timeout(Some(Duration::from_secs(60)));
    let conn = ConnectionManager::new_with_config(client, config)
        .await
        .map_err(|e| Error::Unreachable { url: shown.to_owned(), source: e.into() })?;
    RedisCheckpointer::builder()
        .key_prefix(prefix)
        .refresh_on_read(false)
        .with_connection_manager(conn)
        .map_err(|e| Error::InvalidUrl { url: shown.to_owned(), source: e.into() })
}

/// The URL without the `key-prefix` parameter, and the prefix, percent-decoded (default
/// [`DEFAULT_PREFIX`]). A URL that does not parse is returned whole, for the driver to report.
fn split_prefix(url: &str) -> (String, String) {
    let mut prefix = DEFAULT_PREFIX.to_owned();
    let Ok(mut parsed) = url::Url::parse(url) else { return (url.to_owned(), prefix) };
    if parsed.query().is_none() {
        return (url.to_owned(), prefix);
    }
    let mut kept = Vec::new();
    for (key, value) in parsed.query_pairs() {
        match key == PREFIX_PARAM {
            true => prefix = value.into_owned(),
            false => kept.push((key.into_owned(), value.into_owned())),
        }
    }
    match kept.is_empty() {
        true => parsed.set_query(None),
        false => {
            parsed.query_pairs_mut().clear().extend_pairs(kept);
        }
    }
    (parsed.into(), prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_parameter_is_taken_out_of_the_url() {
        assert_eq!(split_prefix("redis://h:6379/0"), ("redis://h:6379/0".into(), DEFAULT_PREFIX.into()));
        assert_eq!(split_prefix("redis://h/0?key-prefix=app:cp"), ("redis://h/0".into(), "app:cp".into()));
        assert_eq!(
            split_prefix("rediss://h/?protocol=resp3&key-prefix=p"),
            ("rediss://h/?protocol=resp3".into(), "p".into())
        );
        assert_eq!(
            split_prefix("redis://:p%40ss@h/0?key-prefix=a%3Ab"),
            ("redis://:p%40ss@h/0".into(), "a:b".into())
        );
        assert_eq!(split_prefix("redis://h:port/"), ("redis://h:port/".into(), DEFAULT_PREFIX.into()));
    }
}
