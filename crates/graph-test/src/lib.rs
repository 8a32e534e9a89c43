//! Test kit for graph-core and its backends.
//!
//! The main piece is the checkpointer conformance suite: [`checkpointer_conformance!`] turns an
//! async factory of savers into one `#[tokio::test]` per behaviour that LangGraph's savers share
//! (put/get round trips, incremental channel values, namespaces, pending writes, listing and
//! filtering, thread deletion, value and metadata round trips). A backend's whole conformance
//! test is then a few lines:
//!
//! ```ignore
//! // crates/checkpoint-foo/tests/conformance.rs
//! async fn saver() -> FooCheckpointer {
//!     FooCheckpointer::connect(&std::env::var("FOO_URL").unwrap()).await.unwrap()
//! }
//! graph_test::checkpointer_conformance!(saver);
//! ```
//!
//! The functions behind the macro live in [`conformance`] and can also be called one by one, for
//! instance with a saver behind an `Arc<dyn DynCheckpointer>` (`conformance::list_before(&*saver)`).
//! Each uses thread ids with a fresh random prefix, so the suite can run in parallel against one
//! shared database or server.

pub mod conformance;
