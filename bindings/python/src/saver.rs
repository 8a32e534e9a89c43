//! `NativeSaver`: one Rust checkpointer, called from Python.

use std::sync::Arc;
use std::time::Duration;

use mnemograph_checkpoint::checkpoint::{DynCheckpointer, InMemoryCheckpointer, ListOptions, PruneStrategy};
use mnemograph_checkpoint_mysql::MySqlCheckpointer;
use mnemograph_checkpoint_postgres::PostgresCheckpointer;
use mnemograph_checkpoint_redis::RedisCheckpointer;
use mnemograph_checkpoint_sqlite::SqliteCheckpointer;
use pyo3::prelude::*;
use pyo3::types::PyList;

use crate::bridge::{run, IntoPy};
use crate::convert::{self, CheckpointIn};
use crate::error::BindingError;

/// The backend a [`NativeSaver`] stores in.
enum Backend {
    Memory(Arc<InMemoryCheckpointer>),
    MySql(Arc<MySqlCheckpointer>),
    Redis(Arc<RedisCheckpointer>),
    Sqlite(Arc<SqliteCheckpointer>),
    Postgres(Arc<PostgresCheckpointer>),
}

impl Backend {
    fn saver(&self) -> Arc<dyn DynCheckpointer> {
        match self {
            Self::Memory(s) => s.clone(),
            Self::MySql(s) => s.clone(),
            Self::Redis(s) => s.clone(),
            Self::Sqlite(s) => s.clone(),
            Self::Postgres(s) => s.clone(),
        }
    }
}

/// A Rust checkpointer behind the Python package's `BaseCheckpointSaver` classes.
///
/// Every operation takes `blocking`: `True` runs it to the end on the bindings' runtime with
/// the interpreter released, for LangGraph's sync methods; `False` returns an awaitable for
/// the async ones. Either way the Rust future runs on one shared multi-thread tokio runtime.
#[pyclass(frozen, module = "mnemograph_checkpoint._native")]
pub struct NativeSaver {
    backend: Backend,
}

impl std::fmt::Debug for NativeSaver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeSaver").field("backend", &self.backend()).finish_non_exhaustive()
    }
}

impl NativeSaver {
    fn new(backend: Backend) -> Self {
        Self { backend }
    }
}

impl IntoPy for () {
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(py.None())
    }
}

impl IntoPy for NativeSaver {
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(Py::new(py, self)?.into_any())
    }
}

impl IntoPy for mnemograph_checkpoint::checkpoint::CheckpointConfig {
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok((self.thread_id, self.checkpoint_ns, self.checkpoint_id).into_pyobject(py)?.into_any().unbind())
    }
}

impl IntoPy for Option<mnemograph_checkpoint::checkpoint::CheckpointTuple> {
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self {
            Some(tuple) => Ok(convert::tuple_to_py(py, tuple)?.into_any().unbind()),
            None => Ok(py.None()),
        }
    }
}

impl IntoPy for Vec<mnemograph_checkpoint::checkpoint::CheckpointTuple> {
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let list = PyList::empty(py);
        for tuple in self {
            list.append(convert::tuple_to_py(py, tuple)?)?;
        }
        Ok(list.into_any().unbind())
    }
}

impl IntoPy for usize {
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(self.into_pyobject(py)?.into_any().unbind())
    }
}

#[pymethods]
impl NativeSaver {
    /// A saver that keeps everything in this process.
    #[staticmethod]
    fn memory() -> Self {
        Self::new(Backend::Memory(Arc::new(InMemoryCheckpointer::new())))
    }

    /// Connects to MySQL or MariaDB (`mysql://user:password@host:port/database`).
    #[staticmethod]
    #[pyo3(signature = (url, blocking=false))]
    fn mysql<'py>(py: Python<'py>, url: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        run(py, blocking, async move {
            let saver = MySqlCheckpointer::connect(&url).await?;
            Ok(Self::new(Backend::MySql(Arc::new(saver))))
        })
    }

    /// Connects to PostgreSQL (`postgres://user:password@host:port/database`).
    #[staticmethod]
    #[pyo3(signature = (url, blocking=false))]
    fn postgres<'py>(py: Python<'py>, url: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        run(py, blocking, async move {
            let saver = PostgresCheckpointer::connect(&url).await?;
            Ok(Self::new(Backend::Postgres(Arc::new(saver))))
        })
    }

    /// Connects to Redis; threads expire `ttl_seconds` after their last write (never when
    /// `None`), under keys starting with `key_prefix`.
    #[staticmethod]
    #[pyo3(signature = (url, ttl_seconds=None, key_prefix=None, blocking=false))]
    fn redis<'py>(
        py: Python<'py>,
        url: String,
        ttl_seconds: Option<f64>,
        key_prefix: Option<String>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ttl = match ttl_seconds {
            Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
            Some(s) => {
                return Err(BindingError::Input(format!("ttl_seconds must be positive, not {s}")).into())
            }
            None => None,
        };
        run(py, blocking, async move {
            let mut builder = RedisCheckpointer::builder();
            builder = match ttl {
                Some(ttl) => builder.ttl(ttl),
                None => builder.no_ttl(),
            };
            if let Some(prefix) = key_prefix {
                builder = builder.key_prefix(prefix);
            }
            Ok(Self::new(Backend::Redis(Arc::new(builder.connect(&url).await?))))
        })
    }

    /// Opens (creating when missing) a SQLite database: a file path, a `sqlite://` URL or
    /// `:memory:`; its tables are created when missing.
    #[staticmethod]
    #[pyo3(signature = (target, blocking=false))]
    fn sqlite<'py>(py: Python<'py>, target: String, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        run(py, blocking, async move {
            let saver = SqliteCheckpointer::connect(&target).await?;
            Ok(Self::new(Backend::Sqlite(Arc::new(saver))))
        })
    }

    /// Creates or upgrades the MySQL or Postgres tables (LangGraph's migrations); returns how
    /// many ran. Nothing to do for the other backends.
    #[pyo3(signature = (blocking=false))]
    fn setup<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let mysql = match &self.backend {
            Backend::MySql(s) => Some(s.clone()),
            _ => None,
        };
        let postgres = match &self.backend {
            Backend::Postgres(s) => Some(s.clone()),
            _ => None,
        };
        let setup = async move {
            // sqlx's migration futures cannot be shown to be `Send` (a higher-ranked lifetime
            // in their executor bound), so they run to the end on a blocking thread of the runtime.
            let runtime = tokio::runtime::Handle::current();
            let migrate = move || -> Result<usize, BindingError> {
                if let Some(saver) = mysql {
                    return Ok(runtime.block_on(saver.setup())?);
                }
                if let Some(saver) = postgres {
                    return Ok(runtime.block_on(saver.setup())?);
                }
                Ok(0)
            };
            match tokio::task::spawn_blocking(migrate).await {
                Ok(migrations) => migrations,
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        };
        run(py, blocking, setup)
    }

    /// The checkpoint at an address (the latest when `checkpoint_id` is `None`), or `None`.
    #[pyo3(signature = (thread_id, checkpoint_ns, checkpoint_id, blocking=false))]
    fn get_tuple<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        checkpoint_ns: String,
        checkpoint_id: Option<String>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let saver = self.backend.saver();
        let config = convert::config(thread_id, checkpoint_ns, checkpoint_id);
        run(py, blocking, async move { Ok(saver.get_tuple(&config).await?) })
    }

    /// Checkpoints newest first: of one thread and namespace, or of all when `thread_id` is
    /// `None`. `filter` is a JSON object of metadata keys and values.
    #[pyo3(signature = (thread_id, checkpoint_ns, filter, before, limit, blocking=false))]
    #[allow(clippy::too_many_arguments)]
    fn list<'py>(
        &self,
        py: Python<'py>,
        thread_id: Option<String>,
        checkpoint_ns: String,
        filter: Option<String>,
        before: Option<String>,
        limit: Option<usize>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let saver = self.backend.saver();
        let config = thread_id.map(|t| convert::config(t, checkpoint_ns, None));
        let mut options = ListOptions::new();
        if let Some(filter) = filter {
            options = options.filter(convert::filter(&filter)?);
        }
        if let Some(before) = before {
            options = options.before(before);
        }
        if let Some(limit) = limit {
            options = options.limit(limit);
        }
        run(py, blocking, async move { Ok(saver.list(config.as_ref(), options).await?) })
    }

    /// Stores a checkpoint as the child of `parent_id`; returns its address.
    #[pyo3(signature = (thread_id, checkpoint_ns, parent_id, checkpoint, metadata, new_versions, blocking=false))]
    #[allow(clippy::too_many_arguments)]
    fn put<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        checkpoint_ns: String,
        parent_id: Option<String>,
        checkpoint: CheckpointIn<'py>,
        metadata: &str,
        new_versions: Vec<(String, String)>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let saver = self.backend.saver();
        let config = convert::config(thread_id, checkpoint_ns, parent_id);
        let checkpoint = convert::checkpoint(checkpoint)?;
        let metadata = convert::metadata(metadata)?;
        let new_versions = convert::versions_map(new_versions);
        run(py, blocking, async move { Ok(saver.put(&config, checkpoint, metadata, new_versions).await?) })
    }

    /// Stores a task's writes, each `(channel, type, bytes)`, against a checkpoint.
    #[pyo3(signature = (thread_id, checkpoint_ns, checkpoint_id, writes, task_id, task_path, blocking=false))]
    #[allow(clippy::too_many_arguments)]
    fn put_writes<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        checkpoint_ns: String,
        checkpoint_id: Option<String>,
        writes: Vec<(String, Option<String>, Bound<'py, PyAny>)>,
        task_id: String,
        task_path: String,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let saver = self.backend.saver();
        let config = convert::config(thread_id, checkpoint_ns, checkpoint_id);
        let writes = writes
            .into_iter()
            .map(|(channel, kind, payload)| {
                let value = convert::channel_value(kind, &payload)
                    .map_err(|e| BindingError::Input(format!("write to `{channel}`: {e}")))?;
                Ok((channel, value))
            })
            .collect::<Result<Vec<_>, BindingError>>()?;
        run(py, blocking, async move { Ok(saver.put_writes(&config, writes, &task_id, &task_path).await?) })
    }

    /// Deletes a thread in all namespaces.
    #[pyo3(signature = (thread_id, blocking=false))]
    fn delete_thread<'py>(
        &self,
        py: Python<'py>,
        thread_id: String,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let saver = self.backend.saver();
        run(py, blocking, async move { Ok(saver.delete_thread(&thread_id).await?) })
    }

    /// Deletes the checkpoints (and their writes) of the given runs.
    #[pyo3(signature = (run_ids, blocking=false))]
    fn delete_for_runs<'py>(
        &self,
        py: Python<'py>,
        run_ids: Vec<String>,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let saver = self.backend.saver();
        run(py, blocking, async move { Ok(saver.delete_for_runs(&run_ids).await?) })
    }

    /// Copies a thread, with every namespace and write, to a thread that has no checkpoint.
    #[pyo3(signature = (source_thread_id, target_thread_id, blocking=false))]
    fn copy_thread<'py>(
        &self,
        py: Python<'py>,
        source_thread_id: String,
        target_thread_id: String,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let saver = self.backend.saver();
        run(py, blocking, async move { Ok(saver.copy_thread(&source_thread_id, &target_thread_id).await?) })
    }

    /// Prunes threads: `"keep_latest"` keeps the latest checkpoint of each namespace, `"delete"`
    /// deletes the threads.
    #[pyo3(signature = (thread_ids, strategy, blocking=false))]
    fn prune<'py>(
        &self,
        py: Python<'py>,
        thread_ids: Vec<String>,
        strategy: &str,
        blocking: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let strategy = match strategy {
            "keep_latest" => PruneStrategy::KeepLatest,
            "delete" => PruneStrategy::Delete,
            other => {
                let msg = format!("unknown prune strategy `{other}`: expected \"keep_latest\" or \"delete\"");
                return Err(BindingError::Input(msg).into());
            }
        };
        let saver = self.backend.saver();
        run(py, blocking, async move { Ok(saver.prune(&thread_ids, strategy).await?) })
    }

    /// The version that follows `current`, as LangGraph's SQL savers write versions.
    #[pyo3(signature = (current))]
    fn next_version(&self, current: Option<&str>) -> String {
        self.backend.saver().get_next_version(current)
    }

    /// The backend's name: `"memory"`, `"mysql"`, `"postgres"`, `"redis"` or `"sqlite"`.
    #[getter]
    fn backend(&self) -> &'static str {
        match self.backend {
            Backend::Memory(_) => "memory",
            Backend::MySql(_) => "mysql",
            Backend::Redis(_) => "redis",
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }
}

/// Panics inside the bindings, blocking or in an awaitable, so that tests can check that a Rust
/// panic reaches Python as an exception and leaves the interpreter running.
#[pyfunction]
#[pyo3(signature = (blocking=false))]
pub(crate) fn _panic_for_tests(py: Python<'_>, blocking: bool) -> PyResult<Bound<'_, PyAny>> {
    run::<(), _>(py, blocking, async { panic!("deliberate panic for the boundary test") })
}
