//! Bodies within `max_message_bytes` for the authorization server's endpoints: read before an
//! endpoint runs, and past the limit refused as an OAuth error that the endpoint records like
//! any answer of the lab.

use super::exchange::Exchange;
use crate::transport::http::body::read_body;
use crate::transport::http::state::HttpState;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;
use std::sync::Arc;

/// A form or registration is read within `max_message_bytes` before its endpoint sees it. Past
/// the limit the endpoint gets the body's first bytes and this mark, and answers `413` as an
/// OAuth error (`invalid_request`, RFC 6749 §5.2's shape) through its exchange, so the refusal is
/// recorded like any answer of the lab.
pub async fn bounded_body(
    State(state): State<Arc<HttpState>>,
    request: Request,
    next: Next,
) -> Response {
    let limit = state.server.config.max_message_bytes;
    let (mut parts, body) = request.into_parts();
    let body = match read_body(body, limit).await {
        Ok(bytes) => bytes,
        Err(refused) => {
            let refusal = refused.into_refusal(limit, &state.server.limit_hits);
            parts.extensions.insert(Oversized(refusal.message));
            refused.prefix.into()
        }
    };
    next.run(Request::from_parts(parts, body.into())).await
}

/// The mark [`bounded_body`] leaves on a request whose body was over the limit: the refusal's
/// message (the endpoint answers `413` with it).
#[derive(Clone)]
pub struct Oversized(pub String);

impl Oversized {
    /// The answer to a request that carries the mark.
    pub fn answer(self, exchange: Exchange<'_>) -> Response {
        exchange.error(StatusCode::PAYLOAD_TOO_LARGE, "invalid_request", &self.0)
    }
}
