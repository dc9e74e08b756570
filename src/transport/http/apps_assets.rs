//! `/_apps/…`: the small assets an MCP Apps view of the `apps` catalog loads to test the CSP its
//! host built (docs/apps.md): a `fetch` target, a script, a frame and an image. A view declares
//! this listener's origin and loads the same asset from the listener's other loopback name (an
//! origin it did not declare): one must load and the other be blocked, offline.
//!
//! They are public and stateless, so they pass no guard: the view's requests come from the
//! host's sandbox, whose origin is anything (`null` for an opaque one) and is not this machine's
//! loopback. Every answer carries `Access-Control-Allow-Origin: *`.

use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};

/// The path prefix the front door hands to [`respond`].
pub const PREFIX: &str = "/_apps/";

/// A 1×1 transparent PNG (`img-src` probes).
const PIXEL: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// The asset at `path` (under [`PREFIX`]) for `query`'s `probe` name, or 404.
pub fn respond(method: &Method, path: &str, query: Option<&str>) -> Response {
    let probe = probe_name(query);
    let (content_type, body): (&str, Vec<u8>) = match (method, path.strip_prefix(PREFIX)) {
        (&Method::OPTIONS, Some(_)) => ("text/plain", Vec::new()),
        (&Method::GET, Some("ping")) => (
            "application/json",
            serde_json::json!({ "ok": true, "probe": probe })
                .to_string()
                .into_bytes(),
        ),
        (&Method::GET, Some("probe.js")) => (
            "text/javascript",
            format!(
                "(window.__everythingMcpProbes = window.__everythingMcpProbes || {{}})[{}] = true;\n",
                serde_json::Value::from(probe)
            )
            .into_bytes(),
        ),
        (&Method::GET, Some("frame.html")) => (
            "text/html; charset=utf-8",
            format!(
                "<!doctype html><title>probe</title><script>parent.postMessage({{everythingMcpFrame: {}}}, \"*\");</script>\n",
                serde_json::Value::from(probe)
            )
            .into_bytes(),
        ),
        (&Method::GET, Some("pixel.png")) => ("image/png", PIXEL.to_vec()),
        _ => return (StatusCode::NOT_FOUND, cors(), "no such asset\n").into_response(),
    };
    let mut response = (cors(), body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The `probe` query parameter, kept to letters, digits, `-` and `_` (it is echoed into
/// scripts); `"probe"` when absent.
fn probe_name(query: Option<&str>) -> String {
    let raw = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("probe="))
        .unwrap_or("probe");
    let name: String = raw
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect();
    if name.is_empty() {
        "probe".into()
    } else {
        name
    }
}

/// The CORS headers of every asset: any origin may read them.
fn cors() -> [(header::HeaderName, HeaderValue); 3] {
    [
        (
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        ),
        (
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, OPTIONS"),
        ),
        (
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("*"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_name_is_kept_to_safe_characters() {
        assert_eq!(probe_name(Some("probe=a-b_1")), "a-b_1");
        assert_eq!(probe_name(Some("x=1&probe=</script>")), "script");
        assert_eq!(probe_name(None), "probe");
    }

    #[test]
    fn an_unknown_asset_is_404_with_cors() {
        let r = respond(&Method::GET, "/_apps/nothing", None);
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        assert_eq!(r.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "*");
    }
}
