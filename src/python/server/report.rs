//! The report source every server made from Python gets ([`crate::server::report_hook`]):
//! `GET /_control/report` and the lab page call `everything_mcp.report.report_json` with the
//! records kept so far. The module is imported on the first call, so a stdio client's spawn
//! never pays for it, and the source holds the recorder, not the Python `Server`, so no
//! reference cycle runs through Python.

use crate::server::report_hook::ReportSource;
use crate::traffic::Recorder;
use pyo3::prelude::*;
use std::sync::Arc;

/// The module and function that compute the report from JSON-lines records.
const MODULE: &str = "everything_mcp.report";
const FUNCTION: &str = "report_json";

/// A source that reports on `recorder`'s records.
pub(super) fn source(recorder: Arc<Recorder>) -> ReportSource {
    Arc::new(move || {
        let lines: Vec<String> = recorder.since(0).iter().map(|r| r.to_json()).collect();
        Python::attach(|py| {
            py.import(MODULE)
                .and_then(|module| module.getattr(FUNCTION))
                .and_then(|function| function.call1((lines,)))
                .and_then(|text| text.extract::<String>())
                .map_err(|e| format!("the report failed: {e}"))
        })
    })
}
