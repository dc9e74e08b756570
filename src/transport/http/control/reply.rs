//! How the control API answers: JSON bodies, and the `400` that names the field at fault.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

/// A JSON answer.
pub fn answer(status: StatusCode, body: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `400` naming the field at fault (empty: the body as a whole).
pub fn bad(field: &str, message: impl Into<String>) -> Response {
    let error = json!({ "field": field, "message": message.into() });
    answer(StatusCode::BAD_REQUEST, json!({ "error": error }))
}

/// `404` naming the field whose value names nothing that exists.
pub fn missing(field: &str, message: impl Into<String>) -> Response {
    let error = json!({ "field": field, "message": message.into() });
    answer(StatusCode::NOT_FOUND, json!({ "error": error }))
}

/// The `400` for a body that is not UTF-8 text.
pub fn not_utf8() -> Response {
    bad("", "the body is not UTF-8")
}

/// A JSON body read as `T`: invalid UTF-8 is refused ([`not_utf8`]) rather than read with
/// replacement characters, and a body `T` does not accept gets the `400` naming its member.
#[allow(clippy::result_large_err)]
pub fn parse_body<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Response> {
    let text = std::str::from_utf8(body).map_err(|_| not_utf8())?;
    crate::field_error::from_json::<T>(text).map_err(|e| bad(&e.field, e.message))
}
