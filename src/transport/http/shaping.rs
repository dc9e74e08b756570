//! An HTTP answer changed on its way out because a fault rule hit the exchange's frame
//! ([`HttpShape`]): another `Content-Type`, a JSON body sent as SSE (or the reverse), an SSE
//! stream closed after its priming event, a body sent slowly, a connection dropped before or
//! in the middle of the body.

use super::sse;
use crate::clock::Clock;
use crate::server::seams::HttpShape;
use axum::body::{Body, Bytes};
use axum::http::{header, HeaderValue};
use axum::response::Response;
use futures::StreamExt;

/// The most of a body a swap reads (an SSE stream of one POST ends after its answer).
const SWAP_LIMIT: usize = 64 * 1024 * 1024;

/// `response` as `shape` says.
pub async fn apply(shape: &HttpShape, response: Response, clock: &Clock) -> Response {
    let (mut parts, mut body) = response.into_parts();
    let was_sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if shape.swap_body {
        let bytes = axum::body::to_bytes(body, SWAP_LIMIT)
            .await
            .unwrap_or_default();
        let (swapped, kind) = if was_sse {
            (answer_of(&bytes), "application/json")
        } else {
            let text = String::from_utf8_lossy(&bytes);
            (sse::message(None, &text), "text/event-stream")
        };
        parts
            .headers
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
        parts.headers.remove(header::CONTENT_LENGTH);
        body = Body::from(swapped);
    }
    if shape.close_stream && was_sse {
        // The stream as written had a length (its events were all there at once): no more.
        parts.headers.remove(header::CONTENT_LENGTH);
        body = first_event(body);
    }
    if let Some(content_type) = &shape.content_type {
        if let Ok(value) = HeaderValue::try_from(content_type.as_str()) {
            parts.headers.insert(header::CONTENT_TYPE, value);
        }
    }
    if let Some(mid_body) = shape.disconnect {
        parts.headers.remove(header::CONTENT_LENGTH);
        body = broken(body, mid_body).await;
    }
    if let Some((bytes, every)) = shape.drip {
        parts.headers.remove(header::CONTENT_LENGTH);
        body = drip(body, bytes, every, clock.clone());
    }
    Response::from_parts(parts, body)
}

/// The last JSON-RPC answer (a frame with an `id` and no `method`) of an SSE body, as JSON.
fn answer_of(sse_body: &[u8]) -> Bytes {
    let text = String::from_utf8_lossy(sse_body);
    let answer = text
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            (!data.is_empty()).then(|| data.join("\n"))
        })
        .filter(|data| {
            serde_json::from_str::<serde_json::Value>(data)
                .is_ok_and(|v| v.get("id").is_some() && v.get("method").is_none())
        })
        .last()
        .unwrap_or_default();
    Bytes::from(answer)
}

/// The body up to the end of its first SSE event; the stream then ends.
fn first_event(body: Body) -> Body {
    let stream = futures::stream::unfold(
        (body.into_data_stream(), Vec::new(), false),
        |(mut data, mut seen, done)| async move {
            if done {
                return None;
            }
            loop {
                let chunk = data.next().await?.ok()?;
                seen.extend_from_slice(&chunk);
                if let Some(end) = seen.windows(2).position(|w| w == b"\n\n") {
                    let first = Bytes::copy_from_slice(&seen[..end + 2]);
                    return Some((Ok::<_, std::io::Error>(first), (data, Vec::new(), true)));
                }
            }
        },
    );
    Body::from_stream(stream)
}

/// A body that fails: at once (`mid_body` false), or after half of what the body holds.
async fn broken(body: Body, mid_body: bool) -> Body {
    let half = if mid_body {
        let first = body
            .into_data_stream()
            .next()
            .await
            .and_then(Result::ok)
            .unwrap_or_default();
        first.slice(..first.len() / 2)
    } else {
        Bytes::new()
    };
    // What was sent goes out first (hyper writes when the body waits), then the body fails.
    let sent = futures::stream::iter((!half.is_empty()).then_some(Ok(half)));
    let failed = futures::stream::once(async {
        tokio::task::yield_now().await;
        Err(std::io::Error::other("dropped by a fault rule"))
    });
    Body::from_stream(sent.chain(failed))
}

/// The body in pieces of `bytes`, each after a pause of `every` on `clock`.
fn drip(body: Body, bytes: usize, every: std::time::Duration, clock: Clock) -> Body {
    let pieces = body.into_data_stream().flat_map(move |chunk| {
        let chunk = chunk.unwrap_or_default();
        let parts: Vec<Bytes> = (0..chunk.len())
            .step_by(bytes)
            .map(|at| chunk.slice(at..(at + bytes).min(chunk.len())))
            .collect();
        futures::stream::iter(parts)
    });
    let paced = pieces.then(move |piece| {
        let clock = clock.clone();
        async move {
            clock.sleep(every).await;
            Ok::<_, std::io::Error>(piece)
        }
    });
    Body::from_stream(paced)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse_response(text: &'static str) -> Response {
        let mut response = Response::new(Body::from(text));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        response
    }

    async fn body_of(response: Response) -> Result<Bytes, axum::Error> {
        axum::body::to_bytes(response.into_body(), 1 << 20).await
    }

    const STREAM: &str = "id: 1\nretry: 1000\ndata: \n\nevent: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";

    #[tokio::test]
    async fn a_closed_stream_ends_after_its_first_event() {
        let shape = HttpShape {
            close_stream: true,
            ..HttpShape::default()
        };
        let out = apply(&shape, sse_response(STREAM), &Clock::Real).await;
        assert_eq!(
            body_of(out).await.unwrap(),
            "id: 1\nretry: 1000\ndata: \n\n"
        );
    }

    #[tokio::test]
    async fn a_swap_answers_the_stream_s_response_as_json() {
        let shape = HttpShape {
            swap_body: true,
            ..HttpShape::default()
        };
        let out = apply(&shape, sse_response(STREAM), &Clock::Real).await;
        assert_eq!(out.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(
            body_of(out).await.unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"
        );
    }

    #[tokio::test]
    async fn a_disconnect_mid_body_sends_half_then_fails() {
        let shape = HttpShape {
            disconnect: Some(true),
            ..HttpShape::default()
        };
        let out = apply(&shape, sse_response(STREAM), &Clock::Real).await;
        let mut data = out.into_body().into_data_stream();
        let half = data.next().await.unwrap().unwrap();
        assert_eq!(half.len(), STREAM.len() / 2);
        assert!(data.next().await.unwrap().is_err());
    }
}
