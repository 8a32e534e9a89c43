//! Shared by the integration tests: finding the Redis server and skipping without one.

#![allow(dead_code, unreachable_pub, reason = "each test file uses a different subset")]

use std::io::Write as _;
use std::sync::OnceLock;
use std::time::Duration;

use mnemograph_checkpoint::checkpoint::backend::uuid6;
use mnemograph_checkpoint_redis::{RedisCheckpointer, RedisCheckpointerBuilder, ThreadKeys};

/// `REDIS_URL`, or the local default.
pub fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379/".to_owned())
}

/// Whether the server answers `PING` (checked once per test binary, synchronously and with a
/// short timeout, so an absent server costs one second, not one per test).
///
/// Without a server the tests skip with a printed reason, except under CI (`CI` set), where
/// the server is part of the job and its absence is a failure.
pub fn redis_available() -> bool {
    static AVAILABLE: OnceLock<Result<(), String>> = OnceLock::new();
    let status = AVAILABLE.get_or_init(|| {
        let url = redis_url();
        let ping = || -> redis::RedisResult<String> {
            let mut conn =
                redis::Client::open(url.as_str())?.get_connection_with_timeout(Duration::from_secs(1))?;
            redis::cmd("PING").query(&mut conn)
        };
        ping().map(drop).map_err(|e| format!("Redis at {url} is unreachable: {e}"))
    });
    match status {
        Ok(()) => true,
        Err(reason) if std::env::var_os("CI").is_some() => panic!("{reason} (CI is set, so this fails)"),
        Err(reason) => {
            // Straight to stderr: the test harness captures `eprintln!`, and a skip must be seen.
            let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}; set REDIS_URL or start redis-server");
            false
        }
    }
}

/// A saver on the test server with `builder`'s settings; `None` (after printing why) when there
/// is no server outside CI.
pub async fn saver_with(builder: RedisCheckpointerBuilder) -> Option<RedisCheckpointer> {
    if !redis_available() {
        return None;
    }
    Some(builder.connect(&redis_url()).await.expect("connect to Redis"))
}

/// A thread id no other test (or test run) uses.
pub fn thread(label: &str) -> String {
    format!("redis-test-{}-{label}", uuid6(0))
}

/// A plain connection for inspecting keys behind the saver's back.
pub async fn raw() -> redis::aio::MultiplexedConnection {
    let client = redis::Client::open(redis_url()).expect("REDIS_URL");
    client.get_multiplexed_async_connection().await.expect("connect to Redis")
}

/// `(key, PEXPIRETIME)` of every existing key of a thread (-1: no expiry).
pub async fn deadlines(keys: &ThreadKeys) -> Vec<(String, i64)> {
    let mut conn = raw().await;
    let mut out = Vec::new();
    for key in keys.all() {
        // PEXPIRETIME is Redis 7; on 6 fall back to PTTL, which is enough for the sign checks.
        let at: redis::RedisResult<i64> = redis::cmd("PEXPIRETIME").arg(key).query_async(&mut conn).await;
        let at = match at {
            Ok(at) => at,
            Err(_) => redis::cmd("PTTL").arg(key).query_async(&mut conn).await.expect("PTTL"),
        };
        if at != -2 {
            out.push((key.to_owned(), at));
        }
    }
    out
}

/// How many keys of the thread exist.
pub async fn existing(keys: &ThreadKeys) -> usize {
    let mut conn = raw().await;
    let n: usize = redis::cmd("EXISTS").arg(&keys.all()[..]).query_async(&mut conn).await.expect("EXISTS");
    n
}
