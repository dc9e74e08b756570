//! `GET /authorize`: the authorization code grant with PKCE (S256 only), approved at once — the
//! consent step is headless, as the conformance suite's mock has it — so a client's redirect
//! handler gets its code back in the `302`'s `Location`, with `state` and `iss` (RFC 9207).

use super::exchange::{redact, redact_form, Exchange};
use super::lab::{random_token, AuthLab, Code};
use crate::lock::lock;
use crate::transport::http::state::HttpState;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How long a code may wait to be redeemed (on the server's clock).
const CODE_TTL: Duration = Duration::from_secs(60);

/// `GET /authorize`.
///
/// - An unknown `client_id`, or a `redirect_uri` the client did not register: `400` (never a
///   redirect to an address not known to be the client's).
/// - Otherwise a `302` to the redirect URI: with `code`, `state` and `iss`; or with `error`
///   (`invalid_request`: no PKCE, or a method other than S256; `unsupported_response_type`;
///   `invalid_scope`; `invalid_target`: a `resource` other than the MCP endpoint), `state`
///   and `iss`.
pub async fn authorize(State(state): State<Arc<HttpState>>, request: Request) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let query = request.uri().query().unwrap_or("");
    let exchange = Exchange {
        state: &state,
        method: request.method(),
        path: "/authorize",
        headers: request.headers(),
        sent: redact_form(query),
    };
    let params: HashMap<String, String> =
        serde_urlencoded::from_str::<Vec<(String, String)>>(query)
            .unwrap_or_default()
            .into_iter()
            .rev() // the first occurrence wins
            .collect();
    let param = |name: &str| params.get(name).map(String::as_str);
    let Some(client) = param("client_id").and_then(|id| lab.client(id)) else {
        return exchange.error(
            StatusCode::BAD_REQUEST,
            "invalid_client",
            "unknown client_id: register the client first (POST /register)",
        );
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
        redirect_uri: &redirect_uri,
        state: param("state"),
    };
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
    } else if param("resource").is_some_and(|r| r != lab.config.resource()) {
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
    let code = random_token();
    lock(&lab.codes).insert(
        code.clone(),
        Code {
            client_id: client.id,
            redirect_uri: redirect_uri.clone(),
            challenge: param("code_challenge").unwrap_or_default().to_string(),
            resource: param("resource").map(str::to_string),
            scope,
            expires: lab.clock.wall() + CODE_TTL,
        },
    );
    back.with(exchange, &[("code", &code)])
}

/// Where the answer goes back to: the client's redirect URI, with its `state` and our `iss`.
struct Back<'a> {
    lab: &'a AuthLab,
    redirect_uri: &'a str,
    state: Option<&'a str>,
}

impl Back<'_> {
    /// A redirect carrying `error`.
    fn error(&self, exchange: Exchange<'_>, error: &str, description: &str) -> Response {
        self.with(
            exchange,
            &[("error", error), ("error_description", description)],
        )
    }

    /// A redirect carrying `pairs`, then `state` and `iss`.
    fn with(&self, exchange: Exchange<'_>, pairs: &[(&str, &str)]) -> Response {
        let mut all: Vec<(&str, &str)> = pairs.to_vec();
        if let Some(state) = self.state {
            all.push(("state", state));
        }
        all.push(("iss", self.lab.config.issuer()));
        let query = serde_urlencoded::to_string(&all).unwrap_or_default();
        let joint = if self.redirect_uri.contains('?') {
            '&'
        } else {
            '?'
        };
        let location = format!("{}{joint}{query}", self.redirect_uri);
        let shown: Vec<(&str, String)> = all
            .iter()
            .map(|(k, v)| {
                (
                    *k,
                    if *k == "code" {
                        redact(v)
                    } else {
                        v.to_string()
                    },
                )
            })
            .collect();
        let shown = format!(
            "{}{joint}{}",
            self.redirect_uri,
            serde_urlencoded::to_string(&shown).unwrap_or_default()
        );
        exchange.redirect(&location, shown)
    }
}
