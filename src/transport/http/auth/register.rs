//! `POST /register`: dynamic client registration (RFC 7591).

use super::exchange::Exchange;
use crate::server::seams::AuthStep;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;
use std::sync::Arc;

/// `POST /register`: `201` with the client's id (and secret, unless it registers as a public
/// client with `token_endpoint_auth_method: "none"`) and its metadata; `400`
/// `invalid_client_metadata` or `invalid_redirect_uri` naming what is wrong.
pub async fn register(
    State(state): State<Arc<HttpState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    oversized: Option<axum::Extension<super::oversized::Oversized>>,
    body: Bytes,
) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let sent = String::from_utf8_lossy(&body).into_owned();
    let parts = (&method, uri.path(), &headers);
    let exchange = match Exchange::at(&state, parts, sent, AuthStep::Register, None).await {
        Ok(exchange) => exchange,
        Err(answer) => return *answer,
    };
    if let Some(axum::Extension(oversized)) = oversized {
        return oversized.answer(exchange);
    }
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
    match lab.registered(metadata, false, lab.at(uri.path())) {
        Ok(client) => exchange.answer(StatusCode::CREATED, Value::Object(client)),
        Err((error, description)) => exchange.error(StatusCode::BAD_REQUEST, error, &description),
    }
}
