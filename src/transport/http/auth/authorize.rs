//! `GET /authorize`: the authorization code grant with PKCE (S256 only). The consent step is
//! headless by default — approved at once, as the conformance suite's mock has it — so a
//! client's redirect handler gets its code back in the `302`'s `Location`, with `state` and
//! `iss` (RFC 9207). A fault rule scripts the step per attempt (deny, pick scopes, a wrong code
//! or state, a replayed callback), and the consent page lets a person answer ([`super::consent`]).

use super::consent;
use super::exchange::{redact_form, Exchange};
use super::lab::Pending;
use super::redirect::{answered, Back};
use crate::lock::lock;
use crate::server::seams::{AuthStep, Consent};
use crate::transport::http::state::HttpState;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use std::sync::Arc;

/// `GET /authorize`.
///
/// - An unknown `client_id` (or a Client ID Metadata Document that cannot be had or does not
///   hold), or a `redirect_uri` the client did not register: `400` (never a redirect to an
///   address not known to be the client's).
/// - Otherwise a `302` to the redirect URI: with `code`, `state` and `iss`; or with `error`
///   (`invalid_request`: no PKCE, or a method other than S256; `unsupported_response_type`;
///   `invalid_scope`; `invalid_target`: a `resource` other than the MCP endpoint;
///   `access_denied`: consent denied), `state` and `iss`.
pub async fn authorize(
    State(state): State<Arc<HttpState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let query = uri.query().unwrap_or("");
    let at = lab.at(uri.path());
    let parts = (&method, uri.path(), &headers);
    let exchange =
        match Exchange::at(&state, parts, redact_form(query), AuthStep::Authorize, None).await {
            Ok(exchange) => exchange,
            Err(answer) => return *answer,
        };
    // A malformed request is never redirected: the redirect URI is not known to be good.
    let params = match super::params::parse(query) {
        Ok(params) => params,
        Err(why) => return exchange.error(StatusCode::BAD_REQUEST, "invalid_request", &why),
    };
    let param = |name: &str| params.get(name).map(String::as_str);
    // A client id that is a URL is checked against its document on every request (the
    // document may have changed, and the errors read the same each time).
    let client = match param("client_id") {
        Some(id) if super::cimd::is_url(id) => {
            match super::cimd::client(lab, id, param("redirect_uri")).await {
                Ok(client) => client,
                Err(why) => return exchange.error(StatusCode::BAD_REQUEST, "invalid_client", &why),
            }
        }
        Some(id) => match lab.client_at(id, at) {
            Some(client) => client,
            None => {
                return exchange.error(
                    StatusCode::BAD_REQUEST,
                    "invalid_client",
                    "unknown client_id: register the client first (POST /register)",
                )
            }
        },
        None => {
            return exchange.error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "client_id is required",
            )
        }
    };
    let redirect_uri = match param("redirect_uri") {
        Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => uri.to_string(),
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        _ => {
            return exchange.error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "redirect_uri is not one the client registered (they are matched exactly)",
            )
        }
    };
    let back = Back {
        lab,
        at,
        redirect_uri: redirect_uri.clone(),
        state: param("state").map(str::to_string),
    };
    if let Some(name) = super::params::not_utf8(query) {
        // The state could not go back exactly as received: the redirect carries none.
        let back = Back {
            state: None,
            ..back
        };
        let why = format!("{name} is not UTF-8 once percent-decoded");
        return back.error(exchange, "invalid_request", &why);
    }
    let refusal = if param("response_type") != Some("code") {
        Some(("unsupported_response_type", "response_type must be code"))
    } else if param("code_challenge").is_none_or(str::is_empty) {
        Some((
            "invalid_request",
            "PKCE is required: send code_challenge with code_challenge_method=S256",
        ))
    } else if param("code_challenge_method") != Some("S256") {
        Some((
            "invalid_request",
            "code_challenge_method must be S256 (plain is not accepted)",
        ))
    } else if param("resource").is_some_and(|r| r != lab.urls.resource) {
        Some((
            "invalid_target",
            "resource is not this server's MCP endpoint",
        ))
    } else {
        None
    };
    if let Some((error, description)) = refusal {
        return back.error(exchange, error, description);
    }
    let Some(scope) = lab.grant_scope(param("scope")) else {
        return back.error(
            exchange,
            "invalid_scope",
            "a requested scope is not one this server knows",
        );
    };
    if let Some((_, error, description)) = exchange.scripted_error() {
        return back.error(exchange, &error, &description);
    }
    let pending = Pending {
        client_id: client.id.clone(),
        client_name: client
            .metadata
            .get("client_name")
            .and_then(|v| v.as_str())
            .unwrap_or(&client.id)
            .to_string(),
        redirect_uri,
        state: param("state").map(str::to_string),
        challenge: param("code_challenge").unwrap_or_default().to_string(),
        resource: param("resource").map(str::to_string),
        scope,
        issuer: at,
    };
    let scripted = exchange.fault.as_ref().and_then(|f| f.consent.clone());
    let answer = scripted.unwrap_or(if lab.config.consent_page {
        Consent::Page
    } else {
        Consent::Approve(None)
    });
    match answer {
        Consent::Page => consent::page(lab, exchange, pending),
        Consent::Replay => match lock(&lab.last_redirect).clone() {
            Some((location, shown)) => exchange.redirect(&location, shown),
            None => exchange.error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "no earlier authorization to replay (a replay fault needs one before it)",
            ),
        },
        answer => answered(lab, exchange, pending, answer),
    }
}
