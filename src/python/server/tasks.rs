//! A [`PyServer`]'s tasks as a test sees them: its gates, the live tasks, waiting for one (the
//! handles themselves are `crate::python::tasks`).

use super::state::PyServer;
use crate::python::tasks::{info, reach, TaskGate};
use crate::python::wait::{deadline_after, run_interruptibly, Waited};
use pyo3::prelude::*;

pub(super) fn gate(server: &PyServer, tool: &str) -> PyResult<TaskGate> {
    server.ensure_running()?;
    Ok(TaskGate::open(
        server.core.clone(),
        tool,
        server.handle.clone(),
    ))
}

/// The live tasks, oldest first, as a JSON array.
pub(super) fn all(server: &PyServer) -> String {
    let all = server.core.tasks.all();
    serde_json::Value::Array(all.iter().map(|t| info(t)).collect()).to_string()
}

/// Whether the task `id` reached one of `statuses` within `timeout` seconds (an unknown task
/// never does).
pub(super) fn wait(
    server: &PyServer,
    py: Python<'_>,
    id: &str,
    statuses: Vec<String>,
    timeout: f64,
) -> PyResult<bool> {
    let Some(task) = server.core.tasks.all().into_iter().find(|t| &*t.id == id) else {
        return Ok(false);
    };
    let reached = reach(task, statuses);
    let deadline = Some(deadline_after(timeout));
    Ok(matches!(
        run_interruptibly(py, &server.handle, deadline, None, reached)?,
        Waited::Done(())
    ))
}
