//! `POST /register`: dynamic client registration (RFC 7591).

use super::exchange::Exchange;
use super::lab::registered;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use serde_json::Value;
use std::sync::Arc;

/// `POST /register`: `201` with the client's id (and secret, unless it registers as a public
/// client with `token_endpoint_auth_method: "none"`) and its metadata; `400`
/// `invalid_client_metadata` or `invalid_redirect_uri` naming what is wrong.
pub async fn register(
    State(state): State<Arc<HttpState>>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let exchange = Exchange {
        state: &state,
        method: &method,
        path: "/register",
        headers: &headers,
        sent: String::from_utf8_lossy(&body).into_owned(),
    };
    let metadata = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(map)) => map,
        _ => {
            return exchange.error(
                StatusCode::BAD_REQUEST,
                "invalid_client_metadata",
                "the body must be a JSON object of client metadata (RFC 7591)",
            )
        }
    };
    match registered(lab, metadata) {
        Ok(client) => exchange.answer(StatusCode::CREATED, Value::Object(client)),
        Err((error, description)) => exchange.error(StatusCode::BAD_REQUEST, error, &description),
    }
}
