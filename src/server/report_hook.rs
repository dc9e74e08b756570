//! Where the report of the traffic comes from. The report (which features each client
//! exercised, `docs/report.md`) is computed by the Python package (`everything_mcp.report`),
//! not by the core: the core only serves what the package installs here, at
//! `GET /_control/report` and to the lab page (`/_lab/`). A server with no source installed
//! (a Rust embedder) answers that there is none.

use std::sync::{Arc, RwLock};

/// Computes the report of the traffic kept so far, as the JSON text of `report --json`, or
/// says why it could not. Called off the async runtime (it may take a while, and it may run
/// Python).
pub type ReportSource = Arc<dyn Fn() -> Result<String, String> + Send + Sync>;

/// The server's report source, installed after the server is built (the Python `Server` and
/// the CLI install theirs as they start).
#[derive(Default)]
pub struct ReportHook(RwLock<Option<ReportSource>>);

impl ReportHook {
    /// Installs `source` (replacing any earlier one).
    pub fn set(&self, source: ReportSource) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = Some(source);
    }

    /// The source installed, if any.
    pub fn get(&self) -> Option<ReportSource> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}
