//! The control API's view of the traffic: the records kept, what the memory bound dropped,
//! and a live stream of them.

use super::reply::{answer, bad};
use crate::transport::http::sse;
use crate::transport::http::state::HttpState;
use axum::extract::{Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

/// The header of `GET /_control/traffic` that says how many records after `since` the memory
/// bound dropped before this read (since the last reset or clear): a client that polls knows
/// what it lost.
const MISSED_HEADER: &str = "everything-mcp-missed";

/// The header of `GET /_control/traffic` with the seq this read accounts through (its last
/// record's, or the last one missed): the `since` of a poller's next read, so nothing is read or
/// counted as missed twice.
const THROUGH_HEADER: &str = "everything-mcp-through";

/// `GET /_control/traffic`'s query.
#[derive(Deserialize)]
pub struct Since {
    /// Only records with a greater `seq` (default 0: all that are kept).
    #[serde(default)]
    since: u64,
}

/// `GET /_control/traffic?since=SEQ`: the records after `SEQ` as JSON lines
/// (`application/x-ndjson`, `docs/traffic-format.md`), with [`MISSED_HEADER`] and
/// [`THROUGH_HEADER`].
pub async fn traffic(
    State(state): State<Arc<HttpState>>,
    query: Result<Query<Since>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(Since { since })) = query else {
        return bad("since", "must be a record's seq (a whole number)");
    };
    let read = state.server.recorder.read_since(since);
    let (lines, through) = bounded_lines(&read, state.config.control_read_bytes, |r| {
        let mut line = r.to_json();
        line.push('\n');
        line
    });
    let lines: String = lines.concat();
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "application/x-ndjson".to_owned()),
            (
                header::HeaderName::from_static(MISSED_HEADER),
                read.missed.to_string(),
            ),
            (
                header::HeaderName::from_static(THROUGH_HEADER),
                through.to_string(),
            ),
        ],
        lines,
    )
        .into_response()
}

/// The records of `read` written by `write`, as many as fit in `max_bytes` (at least one), and
/// the seq they account through: the last one written, so a reader's next `since` (or the
/// stream's next read) takes the rest. Bounds what one answer holds in memory whatever the
/// records kept (`control_read_bytes`).
fn bounded_lines<T: AsRef<[u8]>>(
    read: &crate::traffic::Since,
    max_bytes: usize,
    write: impl Fn(&crate::traffic::Record) -> T,
) -> (Vec<T>, u64) {
    let mut out = Vec::new();
    let mut bytes = 0;
    let mut last = None;
    for record in &read.records {
        let line = write(record);
        bytes += line.as_ref().len();
        if let Some(last) = last.filter(|_| bytes > max_bytes) {
            return (out, last);
        }
        out.push(line);
        last = Some(record.seq);
    }
    (out, read.through)
}

/// `GET /_control/traffic/stats`: what the memory holds and what its bound dropped
/// (`docs/control-api.md`).
pub async fn stats(State(state): State<Arc<HttpState>>) -> Response {
    let stats = state.server.recorder.stats();
    answer(
        StatusCode::OK,
        json!({
            "kept": stats.kept,
            "kept_bytes": stats.kept_bytes,
            "dropped": stats.dropped,
            "dropped_total": stats.dropped_total,
            "keep_traffic": stats.bound.records,
            "keep_traffic_bytes": stats.bound.bytes,
        }),
    )
}

/// `GET /_control/traffic/stream?since=SEQ`: the records after `SEQ` (or after the
/// `Last-Event-ID` a reconnecting client sends), then each one as it is recorded, as a live
/// SSE stream: one event per record, its `id` the record's `seq` and its `data` the record's
/// JSON line; records the memory bound dropped before the stream could send them are announced
/// by a `dropped` event (`data: {"missed": N}`) in their place. It ends when the listener shuts
/// down.
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
    let read_bytes = state.config.control_read_bytes;
    let events = futures::stream::unfold(resumed.unwrap_or(since), move |after| {
        let server = server.clone();
        async move {
            loop {
                let read = server.recorder.read_since(after);
                if !read.records.is_empty() || read.missed > 0 {
                    let mut events = Vec::with_capacity(read.records.len() + 1);
                    if read.missed > 0 {
                        // Its id is the seq it accounts through, so a resume with Last-Event-ID
                        // does not announce the same records again.
                        let missed = json!({ "missed": read.missed }).to_string();
                        let through = read.records.first().map_or(read.through, |r| r.seq - 1);
                        let id = through.to_string();
                        events.push(sse::event(Some("dropped"), Some(&id), None, &missed));
                    }
                    let (records, through) = bounded_lines(&read, read_bytes, |r| {
                        sse::message(Some(&r.seq.to_string()), &r.to_json())
                    });
                    events.extend(records);
                    return Some((sse::concat(events), through));
                }
                // `through` is at least the newest seq when nothing was read: one read of the
                // recorder, so a record committed since is waited for by nobody twice.
                server.recorder.wait_beyond(read.through).await;
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
