//! Test kit for mnemograph-core and its backends.
//!
//! The main piece is the checkpointer conformance suite. [`checkpointer_conformance!`] turns an
//! async factory of savers into one `#[tokio::test]` per behaviour that LangGraph's savers share:
//! put/get round trips, incremental channel values, namespace isolation, pending writes
//! (idempotency, special channels, ordering), listing with `before`/`limit`/metadata filters,
//! thread deletion, and value and metadata round trips. A backend's conformance test is a few
//! lines:
//!
//! ```
//! // tests/conformance.rs of a backend crate
//! use mnemograph_core::checkpoint::InMemoryCheckpointer;
//!
//! async fn saver() -> InMemoryCheckpointer {
//!     InMemoryCheckpointer::new() // e.g. `MySqlCheckpointer::connect(&url).await.unwrap()`
//! }
//!
//! mnemograph_test::checkpointer_conformance!(saver);
//! # fn main() {}
//! ```
//!
//! The functions behind the macro live in [`conformance`] and can also be called one by one,
//! e.g. with a saver behind an `Arc<dyn DynCheckpointer>`: `conformance::list_before(&*saver)`.
//! Each uses thread ids with a fresh random prefix, so the suite can run in parallel against one
//! shared database or server.
//!
//! With the `otlp` feature, the `otlp` module is an OTLP receiver on loopback and a reader of the span
//! trees it got, for tests of what a program exports.
//!
//! [`store_conformance`] is the same for long-term memory [`Store`](mnemograph_core::store::Store)s.
//!
//! [`echo`] holds an echo chat graph and [`echo::tuple_view`], a full view of a checkpoint tuple,
//! for tests that compare two reads of one checkpoint (a cached read against the full one).

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "browser")]
#[cfg_attr(docsrs, doc(cfg(feature = "browser")))]
pub mod browser;
pub mod conformance;
pub mod echo;
mod fake_model;
#[cfg(feature = "otlp")]
#[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
pub mod otlp;
mod span_log;
pub mod store_conformance;
pub mod stored_view;

pub use fake_model::FakeChatModel;
pub use span_log::SpanLog;
