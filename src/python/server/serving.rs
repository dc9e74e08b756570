//! Running a [`PyServer`]: built from its options, serving stdio, HTTP, the relay socket and
//! in-process connections, waiting, stopping.

use super::state::{HttpRunning, PyServer};
use crate::options::{HttpOptions, ServerOptions};
use crate::python::connection::Connection;
use crate::python::errors::{to_py, ConfigError};
use crate::python::handlers::Dispatch;
use crate::python::wait::lock_attached;
use crate::python::wait::{run_interruptibly, wait_detached, wait_interruptibly, Waited};
use crate::transport::{http, memory, relay, stdio};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// How long `stop()` and a signal-interrupted `run_stdio()` wait for tasks to finish.
use crate::cli::launch::STOP_TIMEOUT;

/// A server with `options`, its catalogs loaded (GIL released), on a runtime of its own.
pub(super) fn new(py: Python<'_>, options: ServerOptions) -> PyResult<PyServer> {
    let core = py.detach(|| options.server()).map_err(to_py)?;
    core.report
        .set(super::report::source(core.recorder.clone()));
    let runtime = options.runtime()?;
    let handle = runtime.handle().clone();
    let dispatch = Dispatch::new(py, handle.clone(), options.worker_threads());
    Ok(PyServer {
        core,
        runtime: Mutex::new(Some(runtime)),
        handle,
        dispatch,
        shutdown: CancellationToken::new(),
        http: Mutex::new(None),
    })
}

pub(super) fn run_stdio(server: &PyServer, py: Python<'_>) -> PyResult<()> {
    server.ensure_running()?;
    let stop = server.shutdown.child_token();
    // This server owns the process's stdio: a fault rule's `exit` may end the process.
    server.core.faults.allow_exit();
    let serve = stdio::serve_stdio(server.core.clone(), stop.clone());
    let drain = Some((&stop, STOP_TIMEOUT));
    let served = run_interruptibly(py, &server.handle, None, drain, serve);
    server.core.recorder.flush();
    match served? {
        Waited::Done(result) => result.map_err(Into::into),
        Waited::TimedOut | Waited::Stopped => Ok(()),
    }
}

/// Binds (GIL released) and serves HTTP; one listener per server.
pub(super) fn start_http(
    server: &PyServer,
    py: Python<'_>,
    host: Option<&str>,
    port: u16,
    options: HttpOptions,
) -> PyResult<(String, u16)> {
    server.ensure_running()?;
    let mut running = lock_attached(py, &server.http);
    if running.is_some() {
        return Err(ConfigError::new_err(
            "HTTP is already being served; stop() first",
        ));
    }
    let handle = &server.handle;
    let listener = py
        .detach(|| handle.block_on(options.listen(host, port)))
        .map_err(to_py)?;
    let addr = listener.addr;
    let (state, serve) = listener.start(server.core.clone(), server.shutdown.child_token());
    let task = handle.spawn(serve);
    *running = Some(HttpRunning { addr, task, state });
    Ok((addr.ip().to_string(), addr.port()))
}

pub(super) fn start_relay(
    server: &PyServer,
    py: Python<'_>,
    directory: PathBuf,
) -> PyResult<String> {
    server.ensure_running()?;
    let core = server.core.clone();
    let stop = server.shutdown.child_token();
    let handle = &server.handle;
    let path = py.detach(|| {
        let _guard = handle.enter();
        relay::listen(core, &directory, stop)
    })?;
    Ok(path.to_string_lossy().into_owned())
}

pub(super) fn base_url(server: &PyServer, py: Python<'_>) -> Option<String> {
    let running = lock_attached(py, &server.http);
    running.as_ref().map(|r| http::base_url(r.addr))
}

pub(super) fn wait(server: &PyServer, py: Python<'_>) -> PyResult<()> {
    wait_interruptibly(py, &server.handle, None, server.shutdown.cancelled()).map(drop)
}

pub(super) fn connect(server: &PyServer) -> PyResult<Connection> {
    server.ensure_running()?;
    Ok(Connection::new(
        memory::connect(&server.core, &server.handle),
        server.handle.clone(),
        server.shutdown.clone(),
    ))
}

/// Ends every transport, waits (bounded, GIL released) for the HTTP listener to let go of its
/// port, then for the runtime.
pub(super) fn stop(server: &PyServer, py: Python<'_>) {
    server.shutdown.cancel();
    let http = lock_attached(py, &server.http).take();
    if let Some(running) = http {
        let _ = wait_detached(py, &server.handle, STOP_TIMEOUT, running.task);
    }
    let runtime = lock_attached(py, &server.runtime).take();
    if let Some(rt) = runtime {
        py.detach(|| rt.shutdown_timeout(STOP_TIMEOUT));
    }
    // Detached: the runners need the GIL to leave Python.
    py.detach(|| server.dispatch.stop(STOP_TIMEOUT));
    server.core.recorder.flush();
}
