//! Awaiting the runtime from Python's event loop without blocking it: an `async` Python caller
//! hands over a callback, a tokio task does the work, and the callback receives the outcome. The
//! Python side turns that into an awaitable (`everything_mcp.awaiting.await_core`), so no thread
//! waits while the client thinks.

use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use std::future::Future;
use tokio::runtime::Handle;
use tokio::task::AbortHandle;

/// Work started for an `async` caller; `cancel()` abandons it (the caller was cancelled).
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct Pending {
    /// The task doing the work: aborted by `cancel()`, so a server → client request the caller
    /// no longer waits for stops waiting too.
    task: AbortHandle,
}

#[pymethods]
impl Pending {
    /// Abandons the work; the callback is not called. Does nothing once it finished.
    fn cancel(&self) {
        self.task.abort();
    }
}

/// Runs `work` on `handle` and calls `callback(value, None)` with its result or
/// `callback(None, exception)` with its error.
///
/// The callback runs on the blocking pool, not on the worker thread that finished the work:
/// attaching to Python there could wait for the GIL and stall every connection that worker
/// serves. It is expected to be quick (`loop.call_soon_threadsafe`); what it raises is reported
/// as unraisable.
pub fn call_back<T, F>(handle: &Handle, work: F, callback: Py<PyAny>) -> Pending
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'py> IntoPyObject<'py> + Send + 'static,
{
    let runtime = handle.clone();
    let task = handle.spawn(async move {
        let outcome = work.await;
        // A runtime shutting down refuses the job: nobody is left to tell.
        drop(runtime.spawn_blocking(move || {
            Python::attach(|py| {
                let called = match outcome {
                    Ok(value) => value
                        .into_bound_py_any(py)
                        .and_then(|v| callback.call1(py, (v, py.None()))),
                    Err(e) => callback.call1(py, (py.None(), e.into_value(py))),
                };
                if let Err(e) = called {
                    e.write_unraisable(py, None);
                }
            });
        }));
    });
    Pending {
        task: task.abort_handle(),
    }
}
