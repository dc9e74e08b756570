//! The live lab page (`/_lab/`, `docs/report.md`): one self-contained HTML file (`page.html`,
//! inline script and style, nothing from the network) that shows, while a person drives a real
//! agent, which checks its client passes (from `GET /_control/report`), the traffic as a
//! sequence diagram (from `GET /_control/traffic/stream`) and buttons that call the control
//! API. The same file, with the records and the report written into it, is the HTML report
//! (`report --html`; the Python package reads it as `_core.LAB_PAGE`).

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;

/// The page, as served and as the HTML report's template.
pub const PAGE: &str = include_str!("page.html");

/// What the page may load: its own inline script and style, and the control API on its own
/// origin; nothing from anywhere else (`report --serve` sends it too, as `_core.LAB_POLICY`).
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'";

/// The lab's routes, to be merged at the root of the app (behind the same guard as `/mcp`).
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/_lab", get(|| async { Redirect::permanent("/_lab/") }))
        .route("/_lab/", get(page))
}

/// `GET /_lab/`: the page.
async fn page() -> Response {
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        ],
        PAGE,
    )
        .into_response()
}
