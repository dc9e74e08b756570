//! What a running `_core.Server` holds ([`PyServer`]): the core server, its runtime, the
//! shutdown token and the HTTP listener; its Python methods are in `mod.rs`, each delegating to
//! the module of its concern.

use crate::python::handlers::Dispatch;
use crate::server::Server;
use pyo3::prelude::*;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::runtime::{Handle, Runtime};
use tokio_util::sync::CancellationToken;

/// A running MCP server inside this process.
#[pyclass(frozen, name = "Server", module = "everything_mcp._core")]
pub struct PyServer {
    /// The protocol core, shared with every connection.
    pub(super) core: Arc<Server>,
    /// Runs the server's tasks; taken out (and shut down) by `stop()`.
    pub(super) runtime: Mutex<Option<Runtime>>,
    /// A handle kept outside the lock so connections can spawn without locking.
    pub(super) handle: Handle,
    /// Where its Python handlers run (runner threads, the event-loop thread).
    pub(super) dispatch: Arc<Dispatch>,
    /// Cancelled by `stop()`: every transport this server runs ends.
    pub(super) shutdown: CancellationToken,
    /// The HTTP listener, once `start_http` ran: its address and its serving task.
    pub(super) http: Mutex<Option<HttpRunning>>,
}
impl PyServer {
    /// Fails with `ConnectionClosedError` once `stop()` ran.
    pub(super) fn ensure_running(&self) -> PyResult<()> {
        if self.shutdown.is_cancelled() {
            return Err(crate::python::errors::to_py(crate::error::Error::Stopped));
        }
        Ok(())
    }
}
impl Drop for PyServer {
    fn drop(&mut self) {
        self.shutdown.cancel();
        // Only told to end, not waited for: dropped with the GIL held, and possibly while the
        // interpreter finalizes (the package stops its servers at exit, before that).
        self.dispatch.stop(std::time::Duration::ZERO);
        if let Some(rt) = self.runtime.get_mut().ok().and_then(Option::take) {
            rt.shutdown_background(); // never wait here: the caller may be attached to Python
        }
    }
}

/// A running HTTP listener.
pub struct HttpRunning {
    /// Where clients reach it (loopback for a wildcard bind).
    pub addr: SocketAddr,
    /// Ends when the listener has shut down gracefully.
    pub task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// What the listener shares with its handlers (its auth lab, for `srv.auth`).
    pub state: std::sync::Arc<crate::transport::http::HttpState>,
}
