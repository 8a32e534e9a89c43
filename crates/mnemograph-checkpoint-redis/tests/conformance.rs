//! The shared checkpointer conformance suite against a real Redis (`REDIS_URL`, default
//! `redis://127.0.0.1:6379/`), in full-history mode under a test key prefix, with a one-hour TTL
//! so test threads do not pile up on a shared server.
//!
//! Every suite function uses fresh random thread ids, so the tests run in parallel on one
//! server and leave other data alone. Without a reachable server each test prints that it was
//! skipped and returns; with `CI` set a missing server fails them.

mod support;

use std::time::Duration;

use mnemograph_checkpoint_redis::RedisCheckpointer;
async fn saver() -> Option<RedisCheckpointer> {
    let builder = RedisCheckpointer::builder().key_prefix("graph-test:conf").ttl(Duration::from_secs(3600));
    support::saver_with(builder).await
}

mnemograph_test::checkpointer_conformance!(optional saver);
