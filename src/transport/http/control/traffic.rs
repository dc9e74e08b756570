//! The control API's view of the traffic: the records kept, and a live stream of them.

use super::reply::bad;
use crate::transport::http::sse;
use crate::transport::http::state::HttpState;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use std::sync::Arc;

/// `GET /_control/traffic`'s query.
#[derive(Deserialize)]
pub struct Since {
    /// Only records with a greater `seq` (default 0: all that are kept).
    #[serde(default)]
    since: u64,
}

/// `GET /_control/traffic?since=SEQ`: the records after `SEQ` as JSON lines
/// (`application/x-ndjson`, `docs/traffic-format.md`).
pub async fn traffic(
    State(state): State<Arc<HttpState>>,
    query: Result<Query<Since>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(Since { since })) = query else {
        return bad("since", "must be a record's seq (a whole number)");
    };
    let mut lines = String::new();
    for record in state.server.recorder.since(since) {
        lines.push_str(&record.to_json());
        lines.push('\n');
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        lines,
    )
        .into_response()
}

/// `GET /_control/traffic/stream?since=SEQ`: the records after `SEQ` (or after the
/// `Last-Event-ID` a reconnecting client sends), then each one as it is recorded, as a live
/// SSE stream: one event per record, its `id` the record's `seq` and its `data` the record's
/// JSON line. It ends when the listener shuts down.
pub async fn stream(
    State(state): State<Arc<HttpState>>,
    headers: axum::http::HeaderMap,
    query: Result<Query<Since>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(Since { since })) = query else {
        return bad("since", "must be a record's seq (a whole number)");
    };
    let resumed = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let server = state.server.clone();
    let events = futures::stream::unfold(resumed.unwrap_or(since), move |after| {
        let server = server.clone();
        async move {
            loop {
                let records = server.recorder.since(after);
                if let Some(last) = records.last().map(|r| r.seq) {
                    let events = records
                        .iter()
                        .map(|r| sse::message(Some(&r.seq.to_string()), &r.to_json()))
                        .collect();
                    return Some((sse::concat(events), last));
                }
                server
                    .recorder
                    .wait_beyond(after.max(server.recorder.len()))
                    .await;
            }
        }
    });
    let body = sse::body(
        events,
        (state.config.keepalive, &state.server.clock),
        state.shutdown.clone(),
    );
    sse::response(body)
}
