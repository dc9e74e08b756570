//! The server's own diagnostics (`tracing`) on stderr, at the level the CLI or Python asks.

use super::errors;
use pyo3::prelude::*;

/// Sends the core's diagnostics (`tracing`) to stderr at `level` (`error`, `warn`, `info`,
/// `debug`, `trace`, or a filter such as `everything_mcp=debug`). The first call wins.
#[pyfunction]
pub fn init_logging(level: &str) -> PyResult<()> {
    let filter = tracing_subscriber::EnvFilter::try_new(level)
        .map_err(|e| errors::ConfigError::new_err(format!("invalid log level {level:?}: {e}")))?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
    Ok(())
}
