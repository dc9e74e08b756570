//! The server's own diagnostics (`tracing`) on stderr ([`crate::logging`]), for Python.

use super::errors::to_py;
use pyo3::prelude::*;

/// Sends the core's diagnostics (`tracing`) to stderr at `level` (`error`, `warn`, `info`,
/// `debug`, `trace`, or a filter such as `everything_mcp=debug`). The first call wins.
#[pyfunction]
pub fn init_logging(level: &str) -> PyResult<()> {
    crate::logging::init(level).map_err(to_py)
}
