//! What the traffic record says of an HTTP exchange: its `http` metadata, transport-level
//! refusals (status, JSON-RPC error body, both recorded), exchanges without a frame, and the
//! one way both eras answer with a JSON body.

use super::negotiation::LAST_EVENT_ID;
use super::negotiation::SESSION_HEADER;
use super::negotiation::VERSION_HEADER;
use super::state::HttpState;
use crate::jsonrpc::RequestId;
use crate::server::sink::{Outgoing, Sink};
use crate::traffic::{FrameMeta, FrameSummary, HttpMeta, RecordedHeaders, TransportKind};
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::borrow::Cow;
use std::sync::Arc;

/// The headers worth recording: the MCP ones and content negotiation.
static RECORDED_HEADERS: [(&str, &HeaderName); 6] = [
    ("mcp-session-id", &SESSION_HEADER),
    ("mcp-protocol-version", &VERSION_HEADER),
    ("last-event-id", &LAST_EVENT_ID),
    ("origin", &header::ORIGIN),
    ("accept", &header::ACCEPT),
    ("content-type", &header::CONTENT_TYPE),
];
/// The recorded headers `headers` has (the first value of each), in [`RECORDED_HEADERS`]
/// order. One pass over the request's few headers, comparing names, instead of six hashed
/// lookups: about 300 instructions less per recorded request (callgrind).
fn recorded_headers(headers: &HeaderMap) -> impl Iterator<Item = (&'static str, &str)> {
    // Per recorded name: its first value (`Some(None)` when that is not text: left out).
    let mut found: [Option<Option<&str>>; RECORDED_HEADERS.len()] = [None; RECORDED_HEADERS.len()];
    for (name, value) in headers {
        if let Some(i) = RECORDED_HEADERS.iter().position(|(_, key)| *key == name) {
            found[i].get_or_insert(value.to_str().ok());
        }
    }
    RECORDED_HEADERS
        .iter()
        .zip(found)
        .filter_map(|((name, _), value)| Some((*name, value.flatten()?)))
}
/// The `http` field of a traffic record for a request.
pub fn http_meta(
    method: &Method,
    path: &str,
    status: StatusCode,
    headers: &HeaderMap,
) -> Arc<HttpMeta> {
    let mut recorded = RecordedHeaders::with_capacity(128);
    for (name, value) in recorded_headers(headers) {
        recorded.push(name, value);
    }
    Arc::new(HttpMeta {
        method: Some(static_or_owned(method.as_str(), &KNOWN_METHODS)),
        path: Some(static_or_owned(path, &KNOWN_PATHS)),
        status: status.as_u16(),
        headers: Some(recorded),
    })
}
/// [`http_meta`], or the metadata in `last` when this request's is the same (a client's
/// requests on one session mostly are): then the record shares it instead of allocating its
/// own. `last` is kept up to date.
pub fn http_meta_reusing(
    last: &std::sync::Mutex<Option<Arc<HttpMeta>>>,
    method: &Method,
    path: &str,
    status: StatusCode,
    headers: &HeaderMap,
) -> Arc<HttpMeta> {
    let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
    let same = last.as_ref().filter(|m| {
        m.status == status.as_u16()
            && m.method.as_deref() == Some(method.as_str())
            && m.path.as_deref() == Some(path)
            && m.headers
                .as_ref()
                .is_some_and(|h| h.iter().eq(recorded_headers(headers)))
    });
    if let Some(meta) = same {
        return meta.clone();
    }
    let meta = http_meta(method, path, status, headers);
    *last = Some(meta.clone());
    meta
}
/// Methods and paths a record names without an allocation of its own.
const KNOWN_METHODS: [&str; 4] = ["POST", "GET", "DELETE", "OPTIONS"];
const KNOWN_PATHS: [&str; 4] = ["/mcp", "/sse", "/message", "/health"];
fn static_or_owned(s: &str, known: &[&'static str]) -> Cow<'static, str> {
    known
        .iter()
        .find(|k| **k == s)
        .map_or_else(|| Cow::Owned(s.to_string()), |k| Cow::Borrowed(*k))
}
/// The transport a request to `path` is for: `/mcp` is Streamable HTTP, the others (`/sse`,
/// `/message`, the rest) the legacy SSE transport, as refusals record them.
pub fn transport_of(path: &str) -> TransportKind {
    if path == "/mcp" {
        TransportKind::Http
    } else {
        TransportKind::Sse
    }
}
/// A transport-level refusal: the HTTP status, a JSON-RPC error body (code `code`, null id),
/// and both the request and the refusal in the traffic record.
pub struct Refusal {
    /// The status to answer with.
    pub status: StatusCode,
    /// The JSON-RPC error code of the body (`-32000` for transport errors, as the reference).
    pub code: i64,
    /// What is wrong, for a person.
    pub message: String,
    /// The refused request's id, when it was readable (else the answer's id is `null`).
    pub id: Option<RequestId>,
    /// The `WWW-Authenticate` challenge of an auth lab's `401`/`403`: sent, and recorded on the
    /// answer (its `http.headers`), so the report knows what the client was asked for.
    pub challenge: Option<String>,
    /// The fault rule that shaped the refusal, if one did (both records carry its mark).
    pub mark: Option<Arc<crate::traffic::FaultMark>>,
    /// The body as plain text instead of a JSON-RPC error (empty: no body), as a dialect's
    /// peer answers (the Python SDK's `Invalid Content-Type header`, its bare `405`).
    pub plain: Option<&'static str>,
}
impl Refusal {
    /// A refusal with the generic transport error code `-32000`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code: -32000,
            message: message.into(),
            id: None,
            challenge: None,
            mark: None,
            plain: None,
        }
    }

    /// The same refusal with `text` as its plain body (empty: none).
    pub fn plain(mut self, text: &'static str) -> Self {
        self.plain = Some(text);
        self
    }

    /// The same refusal with this authorization challenge, marked by the rule that shaped it.
    pub fn challenging(
        mut self,
        challenge: String,
        mark: Option<Arc<crate::traffic::FaultMark>>,
    ) -> Self {
        self.challenge = Some(challenge);
        self.mark = mark;
        self
    }

    /// Records the refused request (with its body, if any) and the answer, then builds it.
    pub fn respond(
        self,
        state: &HttpState,
        transport: TransportKind,
        conn: Option<&str>,
        request: (&Method, &str, &HeaderMap),
        body: &[u8],
    ) -> Response {
        let (method, path, headers) = request;
        let conn: Arc<str> = conn.unwrap_or("-").into();
        let mut meta_in = FrameMeta::inbound(transport, conn.clone()).with_http(Some(http_meta(
            method,
            path,
            self.status,
            headers,
        )));
        meta_in.fault = self.mark.clone();
        let text = String::from_utf8_lossy(body);
        let parsed = FrameSummary::http_exchange(Some(self.message.clone()))
            .text_exact(matches!(text, Cow::Borrowed(_)));
        state.server.recorder.record(&meta_in, &*text, parsed);
        let out = match self.plain {
            Some(text) => text.to_string(),
            None => json!({ "jsonrpc": "2.0", "id": self.id, "error": { "code": self.code, "message": self.message } }).to_string(),
        };
        let mut answered = HttpMeta::status(self.status.as_u16());
        if let Some(challenge) = &self.challenge {
            let mut recorded = RecordedHeaders::with_capacity(challenge.len());
            recorded.push("www-authenticate", challenge);
            answered.headers = Some(recorded);
        }
        let mut meta_out = FrameMeta::outbound(transport, conn).with_http(Some(Arc::new(answered)));
        meta_out.fault = self.mark;
        let parsed = match self.plain {
            Some(_) => FrameSummary::http_exchange(Some(self.message.clone())),
            None => FrameSummary::error_response(self.id),
        };
        state
            .server
            .recorder
            .record(&meta_out, out.as_str(), parsed);
        let mut response = match self.plain {
            Some("") => self.status.into_response(),
            Some(_) => (
                self.status,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                out,
            )
                .into_response(),
            None => (
                self.status,
                [(header::CONTENT_TYPE, "application/json")],
                out,
            )
                .into_response(),
        };
        if let Some(value) = self
            .challenge
            .and_then(|c| axum::http::HeaderValue::from_str(&c).ok())
        {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }
}
/// Records an HTTP exchange that carries no JSON-RPC frame (a GET stream, a DELETE).
pub fn record_exchange(
    state: &HttpState,
    transport: TransportKind,
    conn: &str,
    request: (&Method, &str, &HeaderMap),
    status: StatusCode,
) {
    let (method, path, headers) = request;
    let meta = FrameMeta::inbound(transport, conn.into())
        .with_http(Some(http_meta(method, path, status, headers)));
    let parsed = FrameSummary::http_exchange(None);
    state.server.recorder.record(&meta, "", parsed);
}
/// `out` as one `application/json` body with `status`, recorded on `sink`'s connection as an
/// HTTP response body: the one way both eras answer without a stream.
pub fn json_answer(sink: &Sink, status: StatusCode, out: &Outgoing) -> Response {
    let text = sink
        .clone()
        .with_http(Some(HttpMeta::status(status.as_u16())))
        .record_only(out);
    // The body is the recorded text itself, shared: copying it into a `String` (through
    // `Display`) cost every stateless answer about 400 instructions (callgrind). The header
    // value is static: from a `&str` it was checked and copied per answer (about 150 more).
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        Body::from(bytes::Bytes::from_owner(FrameText(text))),
    )
        .into_response()
}
/// A frame's text as the bytes of a response body.
struct FrameText(Arc<str>);

impl AsRef<[u8]> for FrameText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}
