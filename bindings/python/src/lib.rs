//! # mnemograph-python
//!
//! The native half of the Python package `mnemograph-checkpoint`: LangGraph
//! `BaseCheckpointSaver`s backed by this workspace's MySQL, Postgres, Redis, SQLite and in-memory
//! savers. Build and install the wheel with `maturin` (see the crate's README), then, in Python:
//!
//! ```python
//! from langgraph.graph import StateGraph
//! from mnemograph_checkpoint import MySQLSaver
//!
//! saver = MySQLSaver.connect("mysql://root@127.0.0.1:3306/app")
//! saver.setup()
//! graph = builder.compile(checkpointer=saver)
//! graph.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "1"}})
//! ```
//!
//! The Python classes serialize values with LangGraph's own serializer, so what a graph stores
//! reads back exactly, and rows are those of LangGraph's savers: a Rust service and a Python one
//! continue each other's threads. This crate holds the boundary only: [`NativeSaver`] runs each
//! operation on one shared tokio runtime, blocking with the interpreter released for the sync
//! methods or as an awaitable for the async ones; errors arrive as the package's exceptions
//! (`mnemograph_checkpoint.errors`) with the Rust error's message, and a panic as a
//! `RuntimeError`, never an abort.

mod bridge;
mod convert;
mod error;
mod saver;

pub use error::BindingError;
pub use saver::NativeSaver;

use pyo3::prelude::*;

/// The extension module, `mnemograph_checkpoint._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeSaver>()?;
    m.add_function(wrap_pyfunction!(saver::_panic_for_tests, m)?)?;
    // Before the interpreter finalizes, stop the runtime's threads from attaching to it.
    let close = wrap_pyfunction!(bridge::_close_at_exit, m)?;
    m.py().import("atexit")?.call_method1("register", (close,))?;
    Ok(())
}
