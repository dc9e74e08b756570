//! Reading a request body up to the size limit, and the refusal when it is too large or
//! broken off.

use super::recording::Refusal;
use crate::server::limits::{Limit, LimitHits};
use axum::body::Body;
use axum::http::StatusCode;

/// Why a request body was not taken.
pub struct BodyRefusal {
    /// The first bytes of the body (for the record).
    pub prefix: Vec<u8>,
    /// Over the size limit (413), or broken off by the client (400).
    pub too_large: bool,
}
impl BodyRefusal {
    /// The refusal to answer with (one too large is counted in `hits`).
    pub fn into_refusal(&self, limit: usize, hits: &LimitHits) -> Refusal {
        if self.too_large {
            hits.hit(Limit::MessageBytes);
            Refusal::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Payload Too Large: request body exceeds the {limit}-byte limit"),
            )
        } else {
            Refusal::new(
                StatusCode::BAD_REQUEST,
                "Bad Request: the request body could not be read",
            )
        }
    }
}
/// Reads a request body of at most `limit` bytes; past the limit it stops reading.
pub async fn read_body(body: Body, limit: usize) -> Result<axum::body::Bytes, BodyRefusal> {
    use http_body_util::BodyExt;
    let keep = crate::traffic::OVERSIZED_PREFIX;
    let mut body = body;
    let mut buf = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            buf.truncate(keep);
            return Err(BodyRefusal {
                prefix: buf,
                too_large: false,
            });
        };
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                buf.truncate(keep);
                let room = keep - buf.len();
                buf.extend_from_slice(&data[..data.len().min(room)]);
                return Err(BodyRefusal {
                    prefix: buf,
                    too_large: true,
                });
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.into())
}

/// Reads a body that is refused anyway (up to `limit` bytes; its first bytes past it), so the
/// refusal is answered once the body is read: answered with the body unread, the connection
/// closes after the answer, and a client that sent its next request on it first sees it
/// dropped ("server disconnected without sending a response", now and then under load).
pub async fn read_refused(body: Body, limit: usize) -> Vec<u8> {
    match read_body(body, limit).await {
        Ok(bytes) => bytes.to_vec(),
        Err(refusal) => refusal.prefix,
    }
}

/// Reads `request`'s body whole before its handler runs, at most `limit` bytes: the request
/// with its body in memory, or the refusal (`413`, counted in `hits`; `400` for a body the client
/// broke off). The control API and the OAuth endpoints take their bodies through this, so
/// `max_message_bytes` bounds them as it bounds `/mcp` (axum's own default would be 2 MB).
pub async fn buffered(
    request: axum::extract::Request,
    limit: usize,
    hits: &LimitHits,
) -> Result<axum::extract::Request, Refusal> {
    let (parts, body) = request.into_parts();
    match read_body(body, limit).await {
        Ok(bytes) => Ok(axum::extract::Request::from_parts(parts, Body::from(bytes))),
        Err(refused) => Err(refused.into_refusal(limit, hits)),
    }
}
