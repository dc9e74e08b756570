//! A [`PyServer`]'s recorded traffic, as Python reads it.

use super::state::PyServer;
use crate::python::wait::{deadline_after, wait_interruptibly, Waited};
use pyo3::prelude::*;

/// The records with `seq > since`, each as its JSON text.
pub(super) fn since(server: &PyServer, py: Python<'_>, since: u64) -> Vec<String> {
    let core = &server.core;
    py.detach(|| {
        core.recorder
            .since(since)
            .iter()
            .map(|r| r.to_json())
            .collect()
    })
}

/// Waits (GIL released, interruptible) at most `timeout` seconds for a record with
/// `seq > since`; whether one exists.
pub(super) fn wait(server: &PyServer, py: Python<'_>, since: u64, timeout: f64) -> PyResult<bool> {
    let recorder = server.core.recorder.clone();
    let beyond = async move { recorder.wait_beyond(since).await };
    let deadline = Some(deadline_after(timeout));
    Ok(
        match wait_interruptibly(py, &server.handle, deadline, beyond)? {
            Waited::Done(()) => true,
            Waited::TimedOut | Waited::Stopped => server.core.recorder.len() > since,
        },
    )
}
