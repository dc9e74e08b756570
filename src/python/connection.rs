//! `_core.Connection`: the client end of an in-process connection, for tests and relays.

use super::errors::ConnectionClosedError;
use super::wait::lock_attached;
use super::wait::{deadline_after, wait_detached, Waited, SIGNAL_POLL};
use crate::transport::memory::MemoryConnection;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One in-process client connection: `send` frames, `recv` what the server sends.
#[pyclass(frozen, module = "everything_mcp._core")]
pub struct Connection {
    /// The session id (the `conn` field of this connection's traffic records).
    #[pyo3(get)]
    id: String,
    /// Frames to the server; `None` once closed.
    to_server: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    /// Frames from the server.
    from_server: Mutex<mpsc::UnboundedReceiver<Arc<str>>>,
    /// Runs the waits of `recv`.
    handle: Handle,
    /// The server's stop signal: once stopped, its runtime can no longer run waits.
    server_stopped: CancellationToken,
}

impl Connection {
    /// Wraps a core memory connection.
    pub fn new(
        mut conn: MemoryConnection,
        handle: Handle,
        server_stopped: CancellationToken,
    ) -> Self {
        Self {
            id: conn.id.to_string(),
            to_server: Mutex::new(conn.to_server.take()),
            from_server: Mutex::new(conn.from_server),
            handle,
            server_stopped,
        }
    }
}

#[pymethods]
impl Connection {
    /// Sends one frame (a JSON-RPC message as text, or any bytes) to the server.
    fn send(&self, frame: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes: Vec<u8> = match frame.extract::<String>() {
            Ok(s) => s.into_bytes(),
            Err(_) => frame.extract::<Vec<u8>>()?,
        };
        let guard = crate::lock::lock(&self.to_server);
        match guard.as_ref() {
            Some(tx) if tx.send(bytes).is_ok() => Ok(()),
            _ => Err(ConnectionClosedError::new_err("the connection is closed")),
        }
    }

    /// The next frame from the server, waiting at most `timeout` seconds (`None`: forever).
    /// Returns `None` on timeout; raises `ConnectionClosedError` when the server side ended.
    #[pyo3(signature = (timeout=None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<String>> {
        let deadline = timeout.map(deadline_after);
        loop {
            if self.server_stopped.is_cancelled() {
                let mut rx = lock_attached(py, &self.from_server);
                return match rx.try_recv() {
                    Ok(frame) => Ok(Some(frame.to_string())),
                    Err(_) => Err(ConnectionClosedError::new_err("the server is stopped")),
                };
            }
            let slice = deadline.map_or(SIGNAL_POLL, |d| {
                d.saturating_duration_since(Instant::now()).min(SIGNAL_POLL)
            });
            // Detaches while waiting for the lock: another thread may hold it, detached, in a wait.
            let mut rx = lock_attached(py, &self.from_server);
            let got = wait_detached(py, &self.handle, slice, rx.recv());
            drop(rx);
            match got {
                Waited::Done(Some(frame)) => return Ok(Some(frame.to_string())),
                Waited::Done(None) => {
                    return Err(ConnectionClosedError::new_err(
                        "the server closed the connection",
                    ))
                }
                // The server was stopped meanwhile (its token is cancelled before its runtime
                // shuts down): the next turn hands out what is still buffered, then closes.
                Waited::Stopped => continue,
                Waited::TimedOut => {}
            }
            py.check_signals()?;
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(None);
            }
        }
    }

    /// Closes the client side: the server finishes in-flight work briefly, then ends the session.
    fn close(&self) {
        crate::lock::lock(&self.to_server).take();
    }
}
