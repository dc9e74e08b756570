//! How a dialect changes an HTTP answer on its way out (`--dialect`, docs/dialects.md): the
//! SDKs' SSE streams (with no event store, their default) carry no event ids and no priming
//! event; the Python SDK's end their lines with CRLF and keep alive with `: ping`; the
//! reference's priming event has no `retry:`.

use crate::protocol::Dialect;
use axum::body::{Body, Bytes};
use axum::http::header::CONTENT_TYPE;
use axum::response::Response;
use http_body_util::BodyExt;

/// `response` as `dialect` writes it: an SSE body rewritten event by event; anything else as
/// it is.
pub fn spoken(dialect: Dialect, response: Response) -> Response {
    let sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    if !sse || !rewrites(dialect) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    // The rewritten body has another length.
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    let body = body.map_frame(move |frame| frame.map_data(|data| rewrite(&data, dialect)));
    Response::from_parts(parts, Body::new(body))
}

/// Whether `dialect` writes SSE bodies otherwise than this server.
pub fn rewrites(dialect: Dialect) -> bool {
    dialect.sse_crlf() || !dialect.sse_event_ids() || !dialect.sse_retry()
}

/// One chunk of an SSE body (whole events and comments, as this server writes them) in the
/// dialect's words: no `id:` or `retry:` fields, no priming event (an event whose only data is
/// empty), the keep-alive comment the dialect's, CRLF line ends.
fn rewrite(chunk: &Bytes, dialect: Dialect) -> Bytes {
    let end = if dialect.sse_crlf() { "\r\n" } else { "\n" };
    let (ids, retry) = (dialect.sse_event_ids(), dialect.sse_retry());
    let text = String::from_utf8_lossy(chunk);
    let mut out = String::with_capacity(text.len() + 16);
    for block in text.split_terminator("\n\n") {
        if block.starts_with(':') {
            out.push_str(dialect.sse_keepalive());
            out.push_str(end);
            out.push_str(end);
            continue;
        }
        let lines: Vec<&str> = block
            .lines()
            .filter(|l| {
                (ids || !l.starts_with("id:")) && ((ids && retry) || !l.starts_with("retry:"))
            })
            .collect();
        if !ids && lines.iter().all(|l| *l == "data: " || *l == "data:") {
            continue;
        }
        for line in lines {
            out.push_str(line);
            out.push_str(end);
        }
        out.push_str(end);
    }
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_sdk_sse() {
        let chunk = Bytes::from_static(
            b"id: 1-1\nretry: 1000\ndata: \n\nevent: message\nid: 1-2\ndata: {}\n\n: keepalive\n\n",
        );
        assert_eq!(
            &rewrite(&chunk, Dialect::PythonSdk)[..],
            b"event: message\r\ndata: {}\r\n\r\n: ping\r\n\r\n"
        );
        assert_eq!(
            &rewrite(&chunk, Dialect::TypescriptSdk)[..],
            b"event: message\ndata: {}\n\n: keepalive\n\n"
        );
        assert_eq!(
            &rewrite(&chunk, Dialect::Reference)[..],
            b"id: 1-1\ndata: \n\nevent: message\nid: 1-2\ndata: {}\n\n: keepalive\n\n"
        );
    }
}
