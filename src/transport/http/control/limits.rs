//! `GET /_control/limits`: every bound on what clients can make the server hold, its value on
//! this listener, and how often it refused or dropped something (`docs/reliability.md`).

use super::reply::answer;
use crate::server::limits::Limit;
use crate::transport::http::state::HttpState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// `{"<option>": {"value": N, "hits": N}, …}`, in [`Limit::ALL`]'s order.
pub async fn limits(State(state): State<Arc<HttpState>>) -> Response {
    let server = &state.server.config;
    let http = &state.config;
    let mut out = Map::new();
    for limit in Limit::ALL {
        let value = match limit {
            Limit::MessageBytes => server.max_message_bytes,
            Limit::Sessions => http.max_sessions,
            Limit::PendingRequests => server.limits.max_pending_requests,
            Limit::Tasks => server.limits.max_tasks,
            Limit::ListenStreams => server.limits.max_listen_streams,
            Limit::StreamsPerSession => http.max_streams_per_session,
            Limit::Streams => http.max_streams,
            Limit::StreamBufferBytes => http.stream_buffer_bytes,
            Limit::EventStore => http.event_store_bytes,
        };
        let hits = state.server.limit_hits.get(limit);
        out.insert(
            limit.option().into(),
            json!({ "value": value, "hits": hits }),
        );
    }
    answer(StatusCode::OK, Value::Object(out))
}
