//! What a test makes a [`PyServer`] send or ask: notifications, log messages, and questions to
//! the clients.

use super::state::PyServer;
use crate::python::args;
use crate::python::callback::{call_back, Pending};
use crate::python::errors::{to_py, ClientError, ConfigError};
use crate::python::wait::{deadline_after, run_interruptibly, Waited};
use crate::server::registry::ListKind;
use pyo3::prelude::*;
use std::future::Future;

pub(super) fn notify_list_changed(server: &PyServer, kind: &str) -> PyResult<()> {
    let kind = match kind {
        "tools" => ListKind::Tools,
        "resources" => ListKind::Resources,
        "prompts" => ListKind::Prompts,
        other => {
            return Err(ConfigError::new_err(format!(
                "unknown list {other:?} (tools, resources, prompts)"
            )))
        }
    };
    server.core.notify_list_changed(kind);
    Ok(())
}

pub(super) fn notify(
    server: &PyServer,
    method: &str,
    params: Option<&str>,
    session: Option<&str>,
) -> PyResult<usize> {
    let params = params.map(args::json).transpose()?;
    Ok(server.core.notify(session, method, params))
}

pub(super) fn log(
    server: &PyServer,
    level: &str,
    data: &str,
    logger: Option<&str>,
) -> PyResult<usize> {
    let (level, data) = args::log(level, data)?;
    Ok(server.core.log(level, data, logger))
}

pub(super) fn ask(
    server: &PyServer,
    py: Python<'_>,
    method: &str,
    params: Option<&str>,
    session: Option<String>,
    timeout: f64,
) -> PyResult<Vec<(String, String)>> {
    let asking = asking(server, method, params, session, timeout)?;
    match run_interruptibly(py, &server.handle, None, None, asking)? {
        Waited::Done(answers) => answers,
        Waited::TimedOut | Waited::Stopped => Err(to_py(crate::error::Error::Stopped)),
    }
}

pub(super) fn ask_async(
    server: &PyServer,
    method: &str,
    params: Option<&str>,
    session: Option<String>,
    timeout: f64,
    callback: Py<PyAny>,
) -> PyResult<Pending> {
    server.ensure_running()?;
    let asking = asking(server, method, params, session, timeout)?;
    Ok(call_back(&server.handle, asking, callback))
}

/// Asking the clients, bounded by `timeout` seconds, with its outcome as Python sees it: shared
/// by `ask` and `ask_async`.
fn asking(
    server: &PyServer,
    method: &str,
    params: Option<&str>,
    session: Option<String>,
    timeout: f64,
) -> PyResult<impl Future<Output = PyResult<Vec<(String, String)>>> + Send + 'static> {
    let params = params.map(args::json).transpose()?;
    let core = server.core.clone();
    let method = method.to_string();
    let deadline = tokio::time::Instant::from_std(deadline_after(timeout));
    Ok(async move {
        let asked = core.ask_sessions(session.as_deref(), &method, params);
        let answers = tokio::time::timeout_at(deadline, asked)
            .await
            .map_err(|_| ClientError::new_err(format!("no answer within {timeout} s")))?;
        Ok(answers
            .into_iter()
            .map(|(id, answer)| {
                let answer = answer.unwrap_or_else(|e| serde_json::json!({ "error": e }));
                (id, answer.to_string())
            })
            .collect())
    })
}

/// Fires the catalogs' trigger `name`; how many things it set off. An unknown name is a
/// `ConfigError` naming the triggers there are.
pub(super) fn trigger(server: &PyServer, name: &str) -> PyResult<usize> {
    server.core.trigger(name).ok_or_else(|| {
        ConfigError::new_err(format!(
            "no trigger {name:?}; the loaded catalogs offer {:?}",
            server.core.trigger_names()
        ))
    })
}
