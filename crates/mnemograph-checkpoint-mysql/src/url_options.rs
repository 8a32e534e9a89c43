//! What a connection URL configures beyond sqlx's own options: the pool's size and timeouts and
//! the kept write connections, read from this crate's URL parameters.

use std::sync::Arc;
use std::time::Duration;

use sqlx::mysql::MySqlPoolOptions;
use sqlx::MySqlPool;

use crate::commit::connections::{Writers, DEFAULT_WRITE_CONNECTIONS};
use crate::error::Result;
use crate::params::url_params;

/// What this crate reads from a URL's parameters: the pool's options and the kept write
/// connections'.
#[derive(Debug)]
pub(crate) struct UrlOptions {
    /// The pool.
    pub(crate) pool: MySqlPoolOptions,
    /// The kept write connections.
    pub(crate) writers: WriterOptions,
}

/// How many connections to keep for put transactions, and when to ping them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WriterOptions {
    /// How many.
    pub(crate) count: usize,
    /// One idle at least this long is pinged before use.
    pub(crate) ping_after_idle: Duration,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self { count: DEFAULT_WRITE_CONNECTIONS, ping_after_idle: DEFAULT_PING_AFTER_IDLE }
    }
}

impl WriterOptions {
    /// Kept connections out of `pool`, as these options say.
    pub(crate) fn writers(&self, pool: &MySqlPool) -> Arc<Writers> {
        Writers::new(pool.clone(), self.count, self.ping_after_idle)
    }
}

/// Pool and write-connection options from this crate's URL parameters, percent-decoded (see
/// [`MySqlCheckpointer::connect`](crate::MySqlCheckpointer::connect)).
pub(crate) fn url_options(url: &str) -> Result<UrlOptions> {
    let mut options = MySqlPoolOptions::new().max_connections(10).acquire_timeout(Duration::from_secs(30));
    let mut ping_after_idle = DEFAULT_PING_AFTER_IDLE;
    let mut write_connections = DEFAULT_WRITE_CONNECTIONS;
    for (key, value) in url_params(url)? {
        let number = || {
            value
                .parse::<u32>()
                .map_err(|e| sqlx::Error::Configuration(format!("URL parameter `{key}={value}`: {e}").into()))
        };
        options = match key.as_str() {
            "max-connections" | "max_connections" => options.max_connections(number()?),
            "min-connections" | "min_connections" => options.min_connections(number()?),
            "acquire-timeout" | "acquire_timeout" => {
                options.acquire_timeout(Duration::from_secs(number()?.into()))
            }
            "ping-after-idle" | "ping_after_idle" => {
                ping_after_idle = Duration::from_secs(number()?.into());
                options
            }
            "write-connections" | "write_connections" => {
                write_connections = number()? as usize;
                options
            }
            // Everything else is sqlx's (or unknown, which sqlx ignores too).
            _ => options,
        };
    }
    Ok(UrlOptions {
        pool: ping_when_idle(options, ping_after_idle),
        writers: WriterOptions { count: write_connections, ping_after_idle },
    })
}

/// How long a pooled connection may sit idle before it is pinged again on its way out.
pub(crate) const DEFAULT_PING_AFTER_IDLE: Duration = Duration::from_secs(1);

/// `options` pinging a connection before handing it out only when it has been idle for at least
/// `after`.
///
/// sqlx pings every connection it hands out, by default: a round trip before every statement or
/// transaction, one in five of a chat turn's. A connection used a moment ago is as alive as a
/// ping would show (one can die just after its ping either way, and the statement then fails
/// with the driver's error, as it would have). So, like the validation window of JDBC pools,
/// only a connection idle for longer is pinged; one whose ping fails is closed and another is
/// taken.
pub(crate) fn ping_when_idle(options: MySqlPoolOptions, after: Duration) -> MySqlPoolOptions {
    options.test_before_acquire(false).before_acquire(move |conn, meta| {
        Box::pin(async move {
            if meta.idle_for >= after {
                sqlx::Connection::ping(conn).await?;
            }
            Ok(true)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_parameters_come_from_the_url() {
        let options =
            url_options("mysql://u:p@h/db?ssl-mode=required&max-connections=3&acquire-timeout=5").unwrap();
        assert_eq!(options.pool.get_max_connections(), 3);
        assert_eq!(options.pool.get_acquire_timeout(), Duration::from_secs(5));
        let defaults = url_options("mysql://h/db").unwrap();
        assert_eq!(defaults.pool.get_max_connections(), 10);
        assert_eq!(defaults.writers.count, DEFAULT_WRITE_CONNECTIONS);
        assert_eq!(defaults.writers.ping_after_idle, DEFAULT_PING_AFTER_IDLE);
        let err = url_options("mysql://h/db?max-connections=many").unwrap_err();
        assert!(format!("{:?}", err).contains("max-connections=many"), "{err:?}");
        // The pool tests a connection itself, and only after it sat idle (see `ping_when_idle`).
        assert!(!defaults.pool.get_test_before_acquire());
        let eager = url_options("mysql://h/db?ping-after-idle=0&write-connections=0").unwrap();
        assert_eq!(eager.writers.ping_after_idle, Duration::ZERO);
        assert_eq!(eager.writers.count, 0);
        let err = url_options("mysql://h/db?ping-after-idle=-1").unwrap_err();
        assert!(format!("{:?}", err).contains("ping-after-idle=-1"), "{err:?}");
        let err = url_options("mysql://h/db?write-connections=x").unwrap_err();
        assert!(format!("{:?}", err).contains("write-connections=x"), "{err:?}");
        let encoded = url_options("mysql://h/db?max-connections=%33&write%2Dconnections=%32").unwrap();
        assert_eq!((encoded.pool.get_max_connections(), encoded.writers.count), (3, 2));
    }
}
