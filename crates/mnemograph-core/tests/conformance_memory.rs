//! The checkpointer conformance suite, run against [`InMemoryCheckpointer`].

use mnemograph_core::checkpoint::InMemoryCheckpointer;

/// A fresh, empty saver per test.
async fn saver() -> InMemoryCheckpointer {
    InMemoryCheckpointer::new()
}

mnemograph_test::checkpointer_conformance!(saver);
