//! Running Rust futures for Python: to the end with the interpreter released, or as an asyncio
//! awaitable, on one shared tokio runtime, and never touching the interpreter once it exits.
//!
//! A runtime thread that attaches to a finalizing interpreter is stopped inside the attach and
//! aborts the process, so an operation that ends while Python shuts down (an awaitable nobody
//! awaits any more, say) must not attach. Every attach from a runtime thread goes through a gate
//! that an `atexit` hook closes, waiting for the attaches under way; after it, a late result is
//! dropped.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Condvar, Mutex, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::FutureExt;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyCFunction, PyDict, PyTuple};

use crate::error::BindingError;

/// The Python value a finished operation returns.
pub(crate) trait IntoPy: Send + 'static {
    /// Converts it, attached to the interpreter.
    fn into_py(self, py: Python<'_>) -> PyResult<Py<PyAny>>;
}

/// An operation's outcome: its result, or the payload of its panic.
type Caught<T> = Result<Result<T, BindingError>, Box<dyn Any + Send>>;

/// The runtime every operation runs on: a worker per core, I/O and timers on.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("mnemograph-checkpoint")
            .build()
            .expect("the bindings' tokio runtime")
    })
}

/// Whether runtime threads may still attach, and how many are attached now.
struct Gate {
    open: bool,
    inside: usize,
}

static GATE: Mutex<Gate> = Mutex::new(Gate { open: true, inside: 0 });
static LEFT: Condvar = Condvar::new();

/// Runs `f` attached to the interpreter, unless the interpreter is exiting: then `None`.
fn attach_unless_exiting<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    {
        let mut gate = GATE.lock().unwrap_or_else(|e| e.into_inner());
        if !gate.open {
            return None;
        }
        gate.inside += 1;
    }
    // Decrements even if `f` panics, so that the exit hook never waits for a thread gone.
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            let mut gate = GATE.lock().unwrap_or_else(|e| e.into_inner());
            gate.inside -= 1;
            if gate.inside == 0 {
                LEFT.notify_all();
            }
        }
    }
    let _leave = Leave;
    Some(Python::attach(f))
}

/// Closes the gate, then waits (the interpreter released, so that they can finish) for the
/// runtime threads attached, at most a few seconds. Registered with `atexit` by the module.
#[pyfunction]
pub(crate) fn _close_at_exit(py: Python<'_>) {
    py.detach(|| {
        let mut gate = GATE.lock().unwrap_or_else(|e| e.into_inner());
        gate.open = false;
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while gate.inside > 0 {
            let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) else { break };
            gate = LEFT.wait_timeout(gate, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    });
}

/// Runs `fut` on the bindings' runtime: to the end (interpreter released) when `blocking`,
/// otherwise as an asyncio awaitable of the running loop. A panic inside becomes a Python
/// exception either way.
pub(crate) fn run<'py, T, F>(py: Python<'py>, blocking: bool, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    T: IntoPy,
    F: Future<Output = Result<T, BindingError>> + Send + 'static,
{
    let runtime = runtime();
    let fut = AssertUnwindSafe(fut).catch_unwind();
    if blocking {
        // Driven on this thread (the runtime's workers only wake it), with the interpreter
        // released; a panic is caught here and raised, the thread lives on.
        let caught = py.detach(|| runtime.block_on(fut));
        return settle(py, caught).map(|value| value.into_bound(py));
    }
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let future = event_loop.call_method0("create_future")?;
    // One poll here first: what needs no I/O (the in-memory saver, a cache hit) is done then, and
    // an already completed future spares the round trip through the runtime's threads and the
    // event loop. Otherwise the first poll has sent the request, and the rest runs on the
    // runtime, whose first poll of the task registers its real waker.
    let mut fut = Box::pin(fut);
    let first = {
        let _context = runtime.enter();
        fut.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    };
    if let Poll::Ready(caught) = first {
        complete(py, &future, caught)?;
        return Ok(future);
    }
    let (loop_ref, future_ref) = (event_loop.unbind(), future.clone().unbind());
    let task = runtime.spawn(async move {
        let caught = fut.await;
        attach_unless_exiting(|py| {
            // Only the loop's own thread may complete its futures.
            let caught = Mutex::new(Some(caught));
            let done = move |args: &Bound<'_, PyTuple>, _: Option<&Bound<'_, PyDict>>| -> PyResult<()> {
                let taken = caught.lock().unwrap_or_else(|e| e.into_inner()).take();
                match taken {
                    Some(caught) => complete(args.py(), &args.get_item(0)?, caught),
                    None => Ok(()),
                }
            };
            let result = PyCFunction::new_closure(py, None, None, done).and_then(|done| {
                loop_ref.bind(py).call_method1("call_soon_threadsafe", (done, future_ref.bind(py)))
            });
            // The loop is closed: nobody awaits the result any more.
            drop(result);
        });
    });
    // Cancelling the awaitable stops the operation.
    let abort = task.abort_handle();
    let on_done = move |args: &Bound<'_, PyTuple>, _: Option<&Bound<'_, PyDict>>| -> PyResult<()> {
        if args.get_item(0)?.call_method0("cancelled")?.is_truthy()? {
            abort.abort();
        }
        Ok(())
    };
    future.call_method1("add_done_callback", (PyCFunction::new_closure(py, None, None, on_done)?,))?;
    Ok(future)
}

/// Sets `future`'s result or exception from `caught`, unless it is already done (cancelled).
fn complete<T: IntoPy>(py: Python<'_>, future: &Bound<'_, PyAny>, caught: Caught<T>) -> PyResult<()> {
    if future.call_method0("done")?.is_truthy()? {
        return Ok(());
    }
    match settle(py, caught) {
        Ok(value) => future.call_method1("set_result", (value,))?,
        Err(err) => future.call_method1("set_exception", (err.into_value(py),))?,
    };
    Ok(())
}

/// The Python value of a finished operation, or the exception of its error or panic.
fn settle<T: IntoPy>(py: Python<'_>, caught: Caught<T>) -> PyResult<Py<PyAny>> {
    match caught {
        Ok(result) => result?.into_py(py),
        Err(payload) => Err(panic_error(&*payload)),
    }
}

/// A panic as a `RuntimeError` carrying its message.
fn panic_error(payload: &(dyn Any + Send)) -> PyErr {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    PyRuntimeError::new_err(format!("rust panicked: {text}"))
}
