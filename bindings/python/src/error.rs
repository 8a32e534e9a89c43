//! The crate's error, and how it becomes a Python exception.

use mnemograph_checkpoint::checkpoint::CheckpointError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyModule, PyType};

/// What a call into the bindings can fail with.
#[derive(Debug, thiserror::Error)]
pub enum BindingError {
    /// The saver refused or failed the operation.
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    /// Connecting to or setting up MySQL failed.
    #[error(transparent)]
    MySql(#[from] mnemograph_checkpoint_mysql::Error),
    /// Connecting to or setting up Postgres failed.
    #[error(transparent)]
    Postgres(#[from] mnemograph_checkpoint_postgres::Error),
    /// Connecting to Redis failed.
    #[error(transparent)]
    Redis(#[from] mnemograph_checkpoint_redis::RedisSaverError),
    /// Opening the SQLite database failed.
    #[error(transparent)]
    Sqlite(#[from] mnemograph_checkpoint_sqlite::Error),
    /// A value handed over from Python has no form the savers can store.
    #[error("{0}")]
    Input(String),
}

impl BindingError {
    /// The exception class of `mnemograph_checkpoint.errors` this error is raised as.
    fn class_name(&self) -> &'static str {
        match self {
            Self::Checkpoint(e) => match e {
                CheckpointError::Conflict { .. } => "ConflictError",
                CheckpointError::Invalid(_) => "InvalidInputError",
                CheckpointError::Unsupported { .. } => "UnsupportedError",
                CheckpointError::Decode { .. } | CheckpointError::Corrupt(_) => "CorruptError",
                _ => "BackendError",
            },
            Self::MySql(_) | Self::Postgres(_) | Self::Redis(_) | Self::Sqlite(_) => "BackendError",
            Self::Input(_) => "InvalidInputError",
        }
    }
}

/// The Python package's `errors` module, imported once. Its classes are Python classes so that
/// they can also derive from `ValueError` and `NotImplementedError`, as callers expect.
static ERRORS: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

impl From<BindingError> for PyErr {
    fn from(err: BindingError) -> Self {
        let message = err.to_string();
        Python::attach(|py| {
            let class = ERRORS
                .get_or_try_init(py, || py.import("mnemograph_checkpoint.errors").map(Bound::unbind))
                .and_then(|module| module.bind(py).getattr(err.class_name()))
                .and_then(|class| class.cast_into::<PyType>().map_err(PyErr::from));
            match class {
                Ok(class) => PyErr::from_type(class, message),
                // Only when the native module is loaded without its package.
                Err(_) => PyRuntimeError::new_err(message),
            }
        })
    }
}
