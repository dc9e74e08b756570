//! The control API's report: `GET /_control/report`, the twin of Python's `srv.report()`
//! (`docs/report.md`), which the lab page (`/_lab/`) polls for its checklist.

use super::reply::answer;
use crate::transport::http::state::HttpState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::sync::Arc;

/// `GET /_control/report`: the checks of every client in the traffic kept so far, as
/// `report --json` writes them. The Python package computes it (`501` from a server it did not
/// start; `500` with the reason when it failed).
pub async fn report(State(state): State<Arc<HttpState>>) -> Response {
    let Some(source) = state.server.report.get() else {
        return answer(
            StatusCode::NOT_IMPLEMENTED,
            json!({ "error": { "field": "", "message": "no report source: the report is computed by the everything_mcp Python package, which installs it when it starts the server" } }),
        );
    };
    match tokio::task::spawn_blocking(move || source()).await {
        Ok(Ok(text)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            text,
        )
            .into_response(),
        Ok(Err(message)) => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({ "error": { "field": "", "message": message } }),
        ),
        Err(_) => answer(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({ "error": { "field": "", "message": "the report source panicked" } }),
        ),
    }
}
