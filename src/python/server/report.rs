//! The report source every server made from Python gets ([`crate::server::report_hook`]):
//! `GET /_control/report` and the lab page ask `everything_mcp.report.LiveReport` for the report
//! of the records kept so far. The module is imported on the first call, so a stdio client's
//! spawn never pays for it. The live report folds records into its checks' state, so each call
//! hands it only the records recorded since the last (refolding 100k records took 1 s), says
//! how many the memory bound dropped before it read them, and starts it over after a reset. The source holds the
//! recorder, not the Python `Server`, so no reference cycle runs through Python.

use crate::server::report_hook::ReportSource;
use crate::traffic::Recorder;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex};

/// The module and class that compute the report from JSON-lines records.
const MODULE: &str = "everything_mcp.report";
const CLASS: &str = "LiveReport";

/// A fresh `LiveReport`.
fn new_report(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(py.import(MODULE)?.getattr(CLASS)?.call0()?.unbind())
}

/// A source that reports on `recorder`'s records.
pub(crate) fn source(recorder: Arc<Recorder>) -> ReportSource {
    // The live report (made on the first call), the seq it read through, and the recorder's
    // `clears` when it started.
    let live: Mutex<Option<(Py<PyAny>, u64, u64)>> = Mutex::new(None);
    Arc::new(move || {
        let mut live = crate::lock::lock(&live);
        Python::attach(|py| {
            let (mut report, seen, clears) = match live.take() {
                Some(state) => state,
                None => (new_report(py)?, 0, 0),
            };
            let read = recorder.read_since(seen);
            if read.clears != clears {
                // A reset forgot records this report folded: it starts over from what is kept.
                report = new_report(py)?;
            }
            let lines: Vec<String> = read.records.iter().map(|r| r.to_json()).collect();
            let text = report
                .call_method1(py, "update", (lines, read.missed))?
                .extract::<String>(py)?;
            *live = Some((report, read.through, read.clears));
            Ok::<_, PyErr>(text)
        })
        .map_err(|e| format!("the report failed: {e}"))
    })
}
