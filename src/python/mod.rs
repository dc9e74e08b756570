//! The PyO3 binding: the only code that knows Python. It parses arguments, calls the core, and
//! maps core errors through one funnel ([`errors`]). The public API is the Python package
//! `everything_mcp`; this module is its private `_core`.

mod args;
mod callback;
mod cli;
mod connection;
mod errors;
mod handlers;
mod logging;
mod options;
mod runners;
mod server;
mod tasks;
mod wait;

use pyo3::prelude::*;

/// The `everything_mcp._core` extension module.
#[pymodule(gil_used = false)]
pub mod _core {
    #[pymodule_export]
    use super::callback::Pending;
    #[pymodule_export]
    use super::cli::cli_main;
    #[pymodule_export]
    use super::connection::Connection;
    #[pymodule_export]
    use super::errors::{
        ClientError, ConfigError, ConnectionClosedError, EverythingMcpError, InputRequired,
    };
    #[pymodule_export]
    use super::handlers::{Context, Invoker, LoopDrain, Reply};
    #[pymodule_export]
    use super::logging::init_logging;
    #[pymodule_export]
    use super::server::PyServer;
    #[pymodule_export]
    use super::tasks::{GatedTask, TaskGate};

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add(
            "SUPPORTED_REVISIONS",
            crate::protocol::Revision::ALL.map(|r| r.as_str()).to_vec(),
        )?;
        m.add("ERAS", crate::protocol::EraChoice::NAMES.to_vec())?;
        m.add("CATALOGS", crate::catalog::names().collect::<Vec<_>>())?;
        m.add("LAB_PAGE", crate::transport::http::lab::PAGE)?;
        m.add(
            "LAB_POLICY",
            crate::transport::http::lab::CONTENT_SECURITY_POLICY,
        )?;
        m.add("DEFAULTS", super::options::defaults(m.py())?)?;
        // PyO3's exception for a Rust panic, which PyO3 turns back into a panic when Rust reads
        // it: `tests/test_panics.py` raises it from every kind of handler to check that none
        // crosses back into Python or takes the server down (docs/reliability.md).
        m.add(
            "PanicException",
            m.py().get_type::<pyo3::panic::PanicException>(),
        )?;
        m.add(
            "SERVER_OPTIONS",
            super::options::names::<crate::options::ServerOptions>(m.py())?,
        )?;
        m.add(
            "HTTP_OPTIONS",
            super::options::names::<crate::options::HttpOptions>(m.py())?,
        )?;
        Ok(())
    }
}
