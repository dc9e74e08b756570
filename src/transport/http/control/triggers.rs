//! The control API's triggers: what the loaded catalogs offer a test to set off now (the
//! review lab's `review-lab.update`), the twin of Python's `srv.trigger(name)`.

use super::reply::{answer, missing};
use crate::transport::http::state::HttpState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;
use std::sync::Arc;

/// `GET /_control/triggers`: `{"triggers": [names]}`.
pub async fn list(State(state): State<Arc<HttpState>>) -> Response {
    answer(
        StatusCode::OK,
        json!({ "triggers": state.server.trigger_names() }),
    )
}

/// `POST /_control/triggers/{name}`: fires it; `{"fired": n}`, how many things it set off
/// (`404` naming the triggers there are when no loaded catalog offers `name`).
pub async fn fire(State(state): State<Arc<HttpState>>, Path(name): Path<String>) -> Response {
    match state.server.trigger(&name) {
        Some(fired) => answer(StatusCode::OK, json!({ "fired": fired })),
        None => missing(
            "name",
            format!(
                "no trigger {name:?}; the loaded catalogs offer {:?}",
                state.server.trigger_names()
            ),
        ),
    }
}
