//! Reading a request's headers: the MCP header names, content negotiation (`Accept`,
//! `Content-Type`), the revision a request's version header names.

use axum::http::{header, HeaderMap, HeaderName, HeaderValue};

/// The MCP headers, as names parsed once: looking a header up by a `&str` parses the name on
/// every call.
pub static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
/// `MCP-Protocol-Version`.
pub static VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Last-Event-ID` (SSE resumption).
pub static LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");
/// A header's value as text, if it has one that is.
pub fn header_str<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}
/// The revision a request's `MCP-Protocol-Version` header names, if it names a known one:
/// what the server decides a request's era by ([`Server::era_of_header`]).
pub fn version_header(headers: &HeaderMap) -> Option<crate::protocol::Revision> {
    header_str(headers, &VERSION_HEADER).and_then(|v| v.trim().parse().ok())
}
/// `Content-Type` is JSON (`application/json`, parameters allowed).
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            up_to(v, b';')
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}
/// Whether `Accept` admits every one of `mimes` (each exactly, by `type/*`, or by `*/*`), in
/// one pass over the header.
pub fn accepts(headers: &HeaderMap, mimes: &[&str]) -> bool {
    let mut admitted = 0u32; // bit i: mimes[i] is admitted
    let all = (1u32 << mimes.len()) - 1;
    let mut values = headers.get_all(header::ACCEPT).iter().peekable();
    // What the official SDKs send, byte for byte, admits both of the types the transport
    // asks for: compared whole, it is not split and matched range by range, which cost every
    // POST about 1,000 instructions (callgrind). Anything else takes the general path below.
    if values
        .peek()
        .is_some_and(|v| v.as_bytes() == SDK_ACCEPT.as_bytes())
        && mimes.iter().all(|m| SDK_ACCEPT_TYPES.contains(m))
    {
        return true;
    }
    for value in values {
        let Ok(value) = value.to_str() else { continue };
        for item in value.split(',') {
            let range = up_to(item, b';').trim();
            for (i, mime) in mimes.iter().enumerate() {
                let kind = up_to(mime, b'/');
                if range.eq_ignore_ascii_case(mime)
                    || range == "*/*"
                    || range
                        .strip_suffix("/*")
                        .is_some_and(|t| t.eq_ignore_ascii_case(kind))
                {
                    admitted |= 1 << i;
                }
            }
            if admitted == all {
                return true;
            }
        }
    }
    admitted == all
}
/// The `Accept` value the official SDKs send with every POST.
const SDK_ACCEPT: &str = "application/json, text/event-stream";
/// The media types [`SDK_ACCEPT`] admits by name.
const SDK_ACCEPT_TYPES: [&str; 2] = ["application/json", "text/event-stream"];
/// `s` up to the first `byte` (all of it without one). A byte loop rather than `split(char)`:
/// header values are a few dozen bytes, and the pattern searcher's setup is most of the work:
/// `accepts` took 1,700 instructions a POST with `split`, 1,300 with this (callgrind).
fn up_to(s: &str, byte: u8) -> &str {
    debug_assert!(byte.is_ascii());
    match s.bytes().position(|b| b == byte) {
        Some(i) => &s[..i],
        None => s,
    }
}
/// A header value from a string known to be valid (ids we minted, fixed texts).
pub fn header_value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or_else(|_| HeaderValue::from_static("invalid"))
}
