//! Server-Sent Events framing, written by hand so every byte is exactly what the MCP spec and
//! the reference server put on the wire (e.g. the priming event's empty `data:` line, which
//! generic SSE helpers drop), with keep-alive comments and an end on shutdown.

use crate::clock::Clock;
use axum::body::{Body, Bytes};
use bytes::BytesMut;
use futures::Stream;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One SSE event as bytes: optional `event:`, `id:`, `retry:` fields, then one `data:` line per
/// line of `data` (an empty `data:` line when `data` is empty), then a blank line.
pub fn event(kind: Option<&str>, id: Option<&str>, retry: Option<Duration>, data: &str) -> Bytes {
    let mut out = String::with_capacity(data.len() + 48);
    if let Some(kind) = kind {
        out.push_str("event: ");
        out.push_str(kind);
        out.push('\n');
    }
    if let Some(id) = id {
        out.push_str("id: ");
        out.push_str(id);
        out.push('\n');
    }
    if let Some(retry) = retry {
        out.push_str("retry: ");
        push_decimal(
            &mut out,
            u64::try_from(retry.as_millis()).unwrap_or(u64::MAX),
        );
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

/// Appends `n` in decimal. By hand, not with `format!`/`to_string`: event ids and the retry
/// field are written for every SSE answer, and the formatting machinery cost about 400-500
/// instructions per number (callgrind: a handshake-era POST went from 56.7k to 55.2k).
pub fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20]; // u64::MAX has 20 digits
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[start..] {
        out.push(char::from(d));
    }
}

/// A `message` event carrying one JSON-RPC frame.
pub fn message(id: Option<&str>, data: &str) -> Bytes {
    event(Some("message"), id, None, data)
}

/// The body of an SSE response: `events`, interleaved with `: keepalive` comments every
/// `keepalive` of silence, ending with `events` or when `stop` fires.
///
/// Events that are already waiting go out as one chunk, so a request answered at once costs
/// one write (headers, priming event, response and end together) instead of one per event, and
/// the keep-alive timer is armed only while the stream actually waits.
pub fn body<S>(events: S, keepalive: (Duration, &Clock), stop: CancellationToken) -> Body
where
    S: Stream<Item = Bytes> + Send + 'static,
{
    let mut events = Box::pin(events);
    let mut stopped = Box::pin(stop.cancelled_owned());
    let (keepalive, clock) = (keepalive.0, keepalive.1.clone());
    let mut idle: Option<crate::clock::Sleep> = None;
    let mut ended = false;
    let stream = futures::stream::poll_fn(move |cx| {
        if ended || stopped.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        let mut ready = Vec::new();
        loop {
            match events.as_mut().poll_next(cx) {
                Poll::Ready(Some(event)) => ready.push(event),
                Poll::Ready(None) => {
                    ended = true;
                    break;
                }
                Poll::Pending => break,
            }
        }
        if !ready.is_empty() {
            idle = None;
            return Poll::Ready(Some(Ok::<_, Infallible>(concat(ready))));
        }
        if ended {
            return Poll::Ready(None);
        }
        let timer = idle.get_or_insert_with(|| clock.timer().sleep(keepalive));
        if Pin::new(timer).poll(cx).is_ready() {
            idle = None;
            return Poll::Ready(Some(Ok(Bytes::from_static(b": keepalive\n\n"))));
        }
        Poll::Pending
    });
    Body::from_stream(stream)
}

/// Events end to end, as one chunk (the only one as it is, without a copy).
pub fn concat(mut parts: Vec<Bytes>) -> Bytes {
    if parts.len() == 1 {
        return parts.pop().unwrap_or_default();
    }
    let mut out = BytesMut::with_capacity(parts.iter().map(Bytes::len).sum());
    for part in &parts {
        out.extend_from_slice(part);
    }
    out.freeze()
}

/// An SSE response around `body`, with the headers streaming needs through proxies.
pub fn response(body: Body) -> axum::response::Response {
    use axum::http::{header, HeaderName, HeaderValue};
    let mut response = axum::response::Response::new(body);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, no-transform"),
    );
    h.insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimals_are_written_as_display_writes_them() {
        for n in [0, 7, 10, 99, 1_000_001, u64::MAX] {
            let mut out = String::from("x");
            super::push_decimal(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
    }

    use super::*;

    #[test]
    fn frames_events_exactly() {
        assert_eq!(
            &event(None, Some("1-1"), Some(Duration::from_millis(1000)), "")[..],
            b"id: 1-1\nretry: 1000\ndata: \n\n"
        );
        assert_eq!(
            &message(Some("1-2"), "{}")[..],
            b"event: message\nid: 1-2\ndata: {}\n\n"
        );
        assert_eq!(
            &event(Some("endpoint"), None, None, "/message?sessionId=x")[..],
            b"event: endpoint\ndata: /message?sessionId=x\n\n"
        );
        assert_eq!(
            &event(None, None, None, "a\nb")[..],
            b"data: a\ndata: b\n\n"
        );
    }
}
