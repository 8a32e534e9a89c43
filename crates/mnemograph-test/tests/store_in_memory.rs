//! The store conformance suite on the in-memory store, the reference the other stores follow.

use mnemograph_core::store::{InMemoryStore, TtlConfig};
use mnemograph_test::store_conformance as suite;

#[tokio::test]
async fn store_conformance_crud() {
    suite::crud(&InMemoryStore::new()).await;
}

#[tokio::test]
async fn store_conformance_search_filters() {
    suite::search_filters(&InMemoryStore::new()).await;
}

#[tokio::test]
async fn store_conformance_newest_write_first() {
    suite::newest_write_first(&InMemoryStore::new()).await;
}

#[tokio::test]
async fn store_conformance_search_refreshes_what_it_returns() {
    let store = InMemoryStore::new().ttl(TtlConfig::new(None));
    suite::search_refreshes_what_it_returns(&store, suite::AGED, async |_: &[String], _: &str| {}).await;
}
