//! The defaults of every setting the Python API and the CLI take, read from the Rust types that
//! own them (`ServerConfig`, `catalog::Options`, `HttpConfig`, ...) and exported as
//! `_core.DEFAULTS`. The binding's parameters are optional and fall back to the same values, so
//! each default is written once, in Rust; the CLI's help prints them from here.

use crate::catalog;
use crate::server::ServerConfig;
use crate::transport::http::{HttpConfig, DEFAULT_HOST};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Threads of each `Server`'s tokio runtime: two serve a test's traffic without contention on
/// the two-core machines CI runs on; more only add start-up time.
pub const WORKER_THREADS: usize = 2;

/// The catalogs served when none are named: the reference server's current surface.
pub const CATALOGS: &[&str] = &["everything"];

/// `_core.DEFAULTS`: setting name → default, durations in seconds (as the API takes them),
/// `None` where the default is "unset" (no tick, one page, keep every record).
pub fn dict(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let server = ServerConfig::default();
    let options = catalog::Options::default();
    let http = HttpConfig::default();
    let d = PyDict::new(py);
    d.set_item("catalogs", CATALOGS.to_vec())?;
    d.set_item("worker_threads", WORKER_THREADS)?;
    d.set_item("era", server.era.as_str())?;
    d.set_item("page_size", server.page_size)?;
    d.set_item("max_message_bytes", server.max_message_bytes)?;
    d.set_item("keep_traffic", server.keep_traffic)?;
    d.set_item("task_ttl", server.task_ttl.as_secs_f64())?;
    d.set_item(
        "task_poll_interval",
        server.task_poll_interval.as_secs_f64(),
    )?;
    d.set_item("tick", options.tick.map(|t| t.as_secs_f64()))?;
    d.set_item("update_delay", options.update_delay.as_secs_f64())?;
    d.set_item("send_list_changed", options.send_list_changed)?;
    d.set_item("expose_env", options.expose_env)?;
    d.set_item("host", DEFAULT_HOST)?;
    d.set_item("json_response", http.json_response)?;
    d.set_item("max_sessions", http.max_sessions)?;
    // 0 means never, as the API and the CLI take it.
    let idle = http.session_idle_timeout.map_or(0.0, |t| t.as_secs_f64());
    d.set_item("session_idle_timeout", idle)?;
    d.set_item("event_store_capacity", http.event_store_capacity)?;
    d.set_item("sse_retry", http.sse_retry.as_secs_f64())?;
    d.set_item("keepalive", http.keepalive.as_secs_f64())?;
    d.set_item("standalone_stream", http.standalone_stream)?;
    Ok(d)
}
