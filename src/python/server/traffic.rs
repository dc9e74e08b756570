//! A [`PyServer`]'s recorded traffic, as Python reads it.

use super::state::PyServer;
use crate::python::wait::{deadline_after, wait_interruptibly, Waited};
use pyo3::prelude::*;
use pyo3::types::PyDict;

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

/// The records with `seq > since` and how many after `since` the memory bound dropped (since
/// the last clear), read under one lock: a report of the records says exactly what it missed.
pub(super) fn read(server: &PyServer, py: Python<'_>, since: u64) -> (Vec<String>, u64) {
    let core = &server.core;
    py.detach(|| {
        let read = core.recorder.read_since(since);
        let lines = read.records.iter().map(|r| r.to_json()).collect();
        (lines, read.missed)
    })
}

/// What the memory holds and what its bound dropped, as `srv.traffic.stats` reads it.
pub(super) fn stats<'py>(server: &PyServer, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let stats = server.core.recorder.stats();
    let dict = PyDict::new(py);
    dict.set_item("kept", stats.kept)?;
    dict.set_item("kept_bytes", stats.kept_bytes)?;
    dict.set_item("dropped", stats.dropped)?;
    dict.set_item("dropped_total", stats.dropped_total)?;
    dict.set_item("keep_traffic", stats.bound.records)?;
    dict.set_item("keep_traffic_bytes", stats.bound.bytes)?;
    Ok(dict)
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
