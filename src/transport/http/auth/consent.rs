//! The consent page: an authorization request a person answers (`consent_page`, or a fault
//! rule's `"consent": "page"` for one attempt). `/authorize` shows the client, where the answer
//! goes and the scopes asked for (each a box to untick); the form posts to `/authorize/decide`,
//! which redirects back to the client as the headless step would have.

use super::exchange::{redact_form, Exchange};
use super::lab::{AuthLab, Pending};
use super::random::random_token;
use super::redirect::answered;
use crate::lock::lock;
use crate::server::seams::Consent;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use std::sync::Arc;

/// The page's policy: its own inline style, nothing else loaded, framed by nobody.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

/// The page asking a person about `pending`.
pub fn page(lab: &AuthLab, exchange: Exchange<'_>, pending: Pending) -> Response {
    let id = random_token();
    let host = pending
        .redirect_uri
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split(['/', '?']).next())
        .unwrap_or(&pending.redirect_uri)
        .to_string();
    let boxes: String = pending
        .scope
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let s = escape(s);
            format!(
                "<li><label><input type=\"checkbox\" name=\"scope\" value=\"{s}\" checked> <code>{s}</code></label></li>"
            )
        })
        .collect();
    let html = format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorize {name}</title>
<style>body{{font:16px system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}}
ul{{list-style:none;padding:0}}button{{font-size:1rem;padding:.4rem 1.2rem;margin-right:.6rem}}</style></head>
<body><h1>Authorize <span id="client">{name}</span>?</h1>
<p>It asks to use the MCP server at <code>{resource}</code>. The answer goes to <strong id="redirect-host">{host}</strong>.</p>
<form method="post" action="{issuer}/authorize/decide">
<input type="hidden" name="request" value="{id}">
<ul id="scopes">{boxes}</ul>
<button type="submit" name="decision" value="approve" id="approve">Approve</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button>
</form></body></html>"#,
        name = escape(&pending.client_name),
        resource = escape(&lab.urls.resource),
        host = escape(&host),
        issuer = escape(lab.issuer(pending.issuer)),
    );
    lock(&lab.pending).insert(id, pending);
    exchange.page(html, POLICY)
}

/// `POST /authorize/decide` (the page's form): `request`, `decision` (`approve` or `deny`) and
/// the `scope`s left ticked; the redirect back to the client.
pub async fn decide(
    State(state): State<Arc<HttpState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    oversized: Option<axum::Extension<super::oversized::Oversized>>,
    body: Bytes,
) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let text = String::from_utf8_lossy(&body);
    let parts = (&method, uri.path(), &headers);
    // Not through the auth seam: the authorization request was counted when it came.
    let exchange = Exchange::new(&state, parts, redact_form(&text));
    if let Some(axum::Extension(oversized)) = oversized {
        return oversized.answer(exchange);
    }
    let form: Vec<(String, String)> = serde_urlencoded::from_str(&text).unwrap_or_default();
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let Some(pending) = field("request").and_then(|id| lock(&lab.pending).remove(id)) else {
        return exchange.error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "no authorization request is waiting under that id (answered already?)",
        );
    };
    let picked: Vec<&str> = form
        .iter()
        .filter(|(k, _)| k == "scope")
        .map(|(_, v)| v.as_str())
        .collect();
    let answer = match field("decision") {
        Some("approve") if picked.is_empty() => Consent::Deny,
        Some("approve") => Consent::Approve(Some(picked.join(" "))),
        _ => Consent::Deny,
    };
    answered(lab, exchange, pending, answer)
}

/// `text` safe inside HTML text and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
