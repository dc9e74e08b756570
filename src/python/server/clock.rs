//! A [`PyServer`]'s manual clock, as a test advances it (`python/everything_mcp/server.py`'s
//! `Clock` is the Pythonic face).

use super::state::PyServer;
use crate::python::callback::{call_back, Pending};
use crate::python::errors::to_py;
use crate::python::wait::{run_interruptibly, Waited};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::future::Future;
use std::time::Duration;

/// `seconds` as a duration to advance by: a negative, NaN or infinite one is a `ValueError`.
fn by(seconds: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        PyValueError::new_err(format!(
            "a clock advances by a finite number of seconds >= 0, not {seconds}"
        ))
    })
}

/// Advancing the clock, with its outcome as Python sees it: shared by `advance` and
/// `advance_async`.
fn advancing(
    server: &PyServer,
    seconds: f64,
) -> PyResult<impl Future<Output = PyResult<f64>> + Send + 'static> {
    let (core, by) = (server.core.clone(), by(seconds)?);
    Ok(async move {
        core.advance_clock(by)
            .await
            .map(|at| at.as_secs_f64())
            .map_err(to_py)
    })
}

/// Advances the clock `seconds`, GIL released; how far it has moved since it started.
pub(super) fn advance(server: &PyServer, py: Python<'_>, seconds: f64) -> PyResult<f64> {
    server.ensure_running()?;
    let advancing = advancing(server, seconds)?;
    match run_interruptibly(py, &server.handle, None, None, advancing)? {
        Waited::Done(at) => at,
        Waited::TimedOut | Waited::Stopped => Err(to_py(crate::error::Error::Stopped)),
    }
}

/// `advance` for async tests: the callback gets how far the clock has moved.
pub(super) fn advance_async(
    server: &PyServer,
    seconds: f64,
    callback: Py<PyAny>,
) -> PyResult<Pending> {
    server.ensure_running()?;
    let advancing = advancing(server, seconds)?;
    Ok(call_back(&server.handle, advancing, callback))
}

/// How far a manual clock has moved since it started (`None` on the real clock).
pub(super) fn elapsed(server: &PyServer) -> Option<f64> {
    server.core.clock.elapsed().map(|d| d.as_secs_f64())
}

/// `"real"` or `"manual"`.
pub(super) fn kind(server: &PyServer) -> &'static str {
    server.core.clock.kind().as_str()
}
