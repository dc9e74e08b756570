//! The report source every server made from Python gets ([`crate::server::report_hook`]):
//! `GET /_control/report` and the lab page ask `everything_mcp.report.LiveReport` for the report
//! of the records kept so far. The module is imported on the first call, so a stdio client's
//! spawn never pays for it. The live report keeps the records it has read, so each call hands it
//! only the records recorded since the last (parsing 100k records anew took longer than the
//! checks themselves), and says which ones memory no longer holds. The source holds the
//! recorder, not the Python `Server`, so no reference cycle runs through Python.

use crate::server::report_hook::ReportSource;
use crate::traffic::Recorder;
use pyo3::prelude::*;
use std::sync::{Arc, Mutex};

/// The module and class that compute the report from JSON-lines records.
const MODULE: &str = "everything_mcp.report";
const CLASS: &str = "LiveReport";

/// A source that reports on `recorder`'s records.
pub(super) fn source(recorder: Arc<Recorder>) -> ReportSource {
    // The live report (made on the first call) and the seq of the last record it was given.
    let live: Mutex<Option<(Py<PyAny>, u64)>> = Mutex::new(None);
    Arc::new(move || {
        let mut live = crate::lock::lock(&live);
        Python::attach(|py| {
            let (report, seen) = match live.take() {
                Some(state) => state,
                None => (py.import(MODULE)?.getattr(CLASS)?.call0()?.unbind(), 0),
            };
            // Read `dropped` first: a record evicted in between is then sent, and dropped by
            // the next call.
            let dropped = recorder.dropped();
            let fresh = recorder.since(seen.max(dropped));
            let last = fresh.last().map_or(seen.max(dropped), |r| r.seq);
            let lines: Vec<String> = fresh.iter().map(|r| r.to_json()).collect();
            let text = report
                .call_method1(py, "update", (lines, dropped))?
                .extract::<String>(py)?;
            *live = Some((report, last));
            Ok::<_, PyErr>(text)
        })
        .map_err(|e| format!("the report failed: {e}"))
    })
}
