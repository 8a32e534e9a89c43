//! The checkpointer conformance suite, run against [`InMemoryCheckpointer`].

use graph_core::checkpoint::InMemoryCheckpointer;

/// A fresh, empty saver per test.
async fn saver() -> InMemoryCheckpointer {
    InMemoryCheckpointer::new()
}

graph_test::checkpointer_conformance!(saver);
