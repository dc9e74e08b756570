//! The control API's clock: `GET /_control/clock` and `POST /_control/clock/advance`.

use super::reply::{answer, bad, parse_body};
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// `GET /_control/clock`: `{"kind": "real" | "manual", "elapsed": seconds | null}`.
pub async fn get_clock(State(state): State<Arc<HttpState>>) -> Response {
    let clock = &state.server.clock;
    answer(
        StatusCode::OK,
        json!({
            "kind": clock.kind().as_str(),
            "elapsed": clock.elapsed().map(|d| d.as_secs_f64()),
        }),
    )
}

/// `POST /_control/clock/advance`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Advance {
    /// How far to move the clock.
    seconds: f64,
}

/// `POST /_control/clock/advance` `{"seconds": n}`: moves a manual clock (every timer due by
/// then fires, in order, its work done before this answers); `{"elapsed": seconds}`. On the
/// real clock: `409`.
pub async fn advance(State(state): State<Arc<HttpState>>, body: Bytes) -> Response {
    let seconds = match parse_body::<Advance>(&body) {
        Ok(Advance { seconds }) => seconds,
        Err(refused) => return refused,
    };
    let Ok(by) = Duration::try_from_secs_f64(seconds) else {
        return bad("seconds", "must be a finite number of seconds >= 0");
    };
    match state.server.advance_clock(by).await {
        Ok(at) => answer(StatusCode::OK, json!({ "elapsed": at.as_secs_f64() })),
        Err(e) => answer(
            StatusCode::CONFLICT,
            json!({ "error": { "field": "", "message": e.to_string() } }),
        ),
    }
}
