//! `/mcp`, the endpoint both eras share: the checks every POST passes, then the one choice of
//! which era's transport serves a request. The choice is the server's ([`Server::decode`]
//! decides a frame's era; [`Server::era_of_header`] a header's): this module only hands the
//! request to [`streamable`] (the handshake era's sessions) or [`stateless`] (2026-07-28), and
//! neither of those imports the other.
//!
//! [`Server::decode`]: crate::server::Server::decode
//! [`Server::era_of_header`]: crate::server::Server::era_of_header

use super::body::{read_body, read_refused};
use super::negotiation::{accepts, header_str, is_json, version_header, SESSION_HEADER};
use super::peer::Peer;
use super::recording::Refusal;
use super::state::HttpState;
use super::{stateless, streamable};
use crate::protocol::Era;
use crate::server::exchange::{Alone, Origin};
use crate::traffic::TransportKind;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// `POST /mcp`.
pub async fn post(
    State(state): State<Arc<HttpState>>,
    request: axum::extract::Request,
) -> Response {
    // Taken apart rather than extracted as `HeaderMap`, which would copy every header.
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let m = &Method::POST;
    let dialect = state.server.config.dialect;
    if !accepts(&headers, &["application/json", "text/event-stream"]) {
        let r = Refusal {
            code: dialect.map_or(-32000, |d| d.not_acceptable_code()),
            ..Refusal::new(
                StatusCode::NOT_ACCEPTABLE,
                "Not Acceptable: Client must accept both application/json and text/event-stream",
            )
        };
        let limit = state.server.config.max_message_bytes;
        return streamable::refuse(&state, m, &headers, r, &read_refused(body, limit).await);
    }
    if !is_json(&headers) {
        let r = match dialect.and_then(|d| d.wrong_content_type()) {
            Some((status, text)) => {
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
                Refusal::new(status, text).plain(text)
            }
            None => Refusal::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Unsupported Media Type: Content-Type must be application/json",
            ),
        };
        let limit = state.server.config.max_message_bytes;
        return streamable::refuse(&state, m, &headers, r, &read_refused(body, limit).await);
    }
    let limit = state.server.config.max_message_bytes;
    let body = match read_body(body, limit).await {
        Ok(b) => b,
        Err(refusal) => {
            return streamable::refuse(
                &state,
                m,
                &headers,
                refusal.into_refusal(limit, &state.server.limit_hits),
                &refusal.prefix,
            )
        }
    };
    // Every 2026 POST names its revision in its version header; only a POST without a
    // session is decoded before the choice (it may carry the envelope alone).
    let version = version_header(&headers);
    let stateless_header = state.server.era_of_header(version) == Some(Era::Stateless);
    // A server of the stateless era alone has no sessions: a session id is ignored there.
    let sessions = state.server.serves_handshake();
    if !stateless_header && sessions && header_str(&headers, &SESSION_HEADER).is_some() {
        return streamable::post_in_session(&state, &headers, &body).await;
    }
    let peer = parts
        .extensions
        .get::<axum::extract::ConnectInfo<Peer>>()
        .map(|info| &info.0);
    let alone = Alone {
        conn: peer.map_or_else(
            || state.server.connection_id(TransportKind::Http),
            |p| p.conn.clone(),
        ),
        transport: TransportKind::Http,
        version_header: version,
        ended: CancellationToken::new(),
    };
    let decoded = state.server.decode(Origin::Alone(&alone), &body);
    let by_header = state
        .server
        .config
        .dialect
        .is_some_and(|d| d.era_by_header());
    if by_header && version.is_none() && decoded.era() == Era::Stateless {
        // The Python SDK reads the era from the header alone: an envelope without it is a
        // handshake-era request without a session, refused with a session id minted for it.
        let refusal = Refusal {
            code: crate::jsonrpc::code::INVALID_REQUEST,
            ..Refusal::new(StatusCode::BAD_REQUEST, "Bad Request: Missing session ID")
        };
        let mut response = streamable::refuse(&state, m, &headers, refusal, &body);
        let minted = uuid::Uuid::new_v4().simple().to_string();
        if let Ok(value) = axum::http::HeaderValue::from_str(&minted) {
            response.headers_mut().insert(SESSION_HEADER.clone(), value);
        }
        return response;
    }
    match decoded.era() {
        Era::Stateless => stateless::post(&state, &headers, peer, alone, decoded).await,
        Era::Handshake => streamable::initialize(&state, &headers, &body, decoded).await,
    }
}

/// `GET /mcp`: the handshake era's standalone stream (or a resumed one); a GET that names the
/// stateless revision has no meaning (405).
pub async fn get(State(state): State<Arc<HttpState>>, headers: HeaderMap) -> Response {
    if let Some(refused) = stateless::refuse_non_post(&state, &Method::GET, &headers) {
        return refused;
    }
    streamable::get(&state, &headers).await
}

/// `DELETE /mcp`: ends a handshake-era session; a DELETE that names the stateless revision has
/// no meaning (405).
pub async fn delete(State(state): State<Arc<HttpState>>, headers: HeaderMap) -> Response {
    if let Some(refused) = stateless::refuse_non_post(&state, &Method::DELETE, &headers) {
        return refused;
    }
    streamable::delete(&state, &headers).await
}
