//! `POST /token`: the authorization code (with its PKCE verifier), refresh token (rotated on
//! every use) and client credentials grants, answering signed access tokens bound to the MCP
//! endpoint.

use super::assertion::ASSERTION_TYPE;
use super::clients::Client;
use super::exchange::{redact_form, Exchange};
use super::jwt::{seconds, Claims};
use super::lab::{AuthLab, Grant, Issued};
use super::random::random_token;
use crate::lock::lock;
use crate::server::seams::AuthStep;
use crate::transport::http::state::HttpState;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;

/// An OAuth error: its status, code and description.
type Refusal = (StatusCode, &'static str, String);

/// `POST /token` (`application/x-www-form-urlencoded`): `200` with `access_token`,
/// `token_type: "Bearer"`, `expires_in`, `scope` and (for the code and refresh grants of a
/// client that registered `refresh_token`) a new `refresh_token`; or the grant's error:
/// `invalid_client` (`401`), `invalid_grant`, `invalid_request`, `invalid_scope`, `invalid_target`,
/// `unauthorized_client`, `unsupported_grant_type` (`400`).
pub async fn token(
    State(state): State<Arc<HttpState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    oversized: Option<axum::Extension<super::oversized::Oversized>>,
    body: Bytes,
) -> Response {
    let lab = state.auth.as_ref().expect("served only with the auth lab");
    let text = String::from_utf8_lossy(&body);
    let form = super::params::parse(&text);
    let parts = (&method, uri.path(), &headers);
    let grant_type = form
        .as_ref()
        .ok()
        .and_then(|f| f.get("grant_type"))
        .map(String::as_str);
    let exchange = match Exchange::at(
        &state,
        parts,
        redact_form(&text),
        AuthStep::Token,
        grant_type,
    )
    .await
    {
        Ok(exchange) => exchange,
        Err(answer) => return basic_challenge(&headers, *answer),
    };
    if let Some(axum::Extension(oversized)) = oversized {
        return oversized.answer(exchange);
    }
    let form = match form {
        Ok(form) => form,
        Err(why) => {
            let response = exchange.error(StatusCode::BAD_REQUEST, "invalid_request", &why);
            return basic_challenge(&headers, response);
        }
    };
    let expired = exchange.fault.as_ref().is_some_and(|f| f.expired_token);
    let at = lab.at(uri.path());
    let response = match grant((lab, at), &headers, &form, expired) {
        Ok(answer) => exchange.answer(StatusCode::OK, answer),
        Err((status, error, description)) => exchange.error(status, error, &description),
    };
    basic_challenge(&headers, response)
}

/// `response`, with `WWW-Authenticate: Basic` when it refuses (`401`) a client that
/// authenticated with HTTP Basic: RFC 6749 §5.2 has the answer name the scheme the client used.
fn basic_challenge(headers: &HeaderMap, mut response: Response) -> Response {
    let used_basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Basic "));
    if used_basic && response.status() == StatusCode::UNAUTHORIZED {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            axum::http::HeaderValue::from_static("Basic realm=\"everything-mcp\""),
        );
    }
    response
}

/// The answer to the grant `form` asks for.
fn grant(
    (lab, at): (&AuthLab, usize),
    headers: &HeaderMap,
    form: &HashMap<String, String>,
    expired: bool,
) -> Result<Value, Refusal> {
    let field = |name: &str| form.get(name).map(String::as_str);
    let client = authenticate((lab, at), headers, form)?;
    if let Some(resource) = field("resource") {
        if resource != lab.urls.resource {
            return Err(bad(
                "invalid_target",
                "resource is not this server's MCP endpoint",
            ));
        }
    }
    match field("grant_type") {
        Some("authorization_code") => {
            let code = field("code").ok_or_else(|| bad("invalid_request", "code is required"))?;
            // Taken out whatever happens next: a code is good for one try.
            let issued = lock(&lab.codes)
                .remove(code)
                .ok_or_else(|| bad("invalid_grant", "the code is unknown or was already used"))?;
            if issued.client_id != client.id {
                return Err(bad(
                    "invalid_grant",
                    "the code was issued to another client",
                ));
            }
            if issued.expires <= lab.clock.wall() {
                return Err(bad("invalid_grant", "the code has expired"));
            }
            if field("redirect_uri").is_some_and(|uri| uri != issued.redirect_uri) {
                return Err(bad(
                    "invalid_grant",
                    "redirect_uri differs from the authorization request's",
                ));
            }
            let verifier = field("code_verifier")
                .ok_or_else(|| bad("invalid_request", "code_verifier is required (PKCE)"))?;
            if s256(verifier) != issued.challenge {
                return Err(bad(
                    "invalid_grant",
                    "code_verifier does not match the code_challenge",
                ));
            }
            if issued.resource.is_some() && field("resource").is_none() {
                return Err(bad(
                    "invalid_target",
                    "the authorization request named a resource: send it again",
                ));
            }
            Ok(issue((lab, at), &client, &issued.scope, true, expired))
        }
        Some("refresh_token") => {
            let token = field("refresh_token")
                .ok_or_else(|| bad("invalid_request", "refresh_token is required"))?;
            let grant = lock(&lab.refresh).remove(token).ok_or_else(|| {
                bad(
                    "invalid_grant",
                    "the refresh token is unknown or was already used",
                )
            })?;
            if grant.client_id != client.id {
                return Err(bad(
                    "invalid_grant",
                    "the refresh token was issued to another client",
                ));
            }
            Ok(issue((lab, at), &client, &grant.scope, true, expired))
        }
        Some("client_credentials") => {
            if client.auth_method == "none"
                || !client.grant_types.iter().any(|g| g == "client_credentials")
            {
                return Err(bad(
                    "unauthorized_client",
                    "client_credentials needs a confidential client registered for that grant",
                ));
            }
            let scope = lab.grant_scope(field("scope")).ok_or_else(|| {
                bad(
                    "invalid_scope",
                    "a requested scope is not one this server knows",
                )
            })?;
            Ok(issue((lab, at), &client, &scope, false, expired))
        }
        Some(other) => Err(bad(
            "unsupported_grant_type",
            format!("grant_type {other:?} is not supported"),
        )),
        None => Err(bad("invalid_request", "grant_type is required")),
    }
}

/// A `400` refusal.
fn bad(error: &'static str, description: impl Into<String>) -> Refusal {
    (StatusCode::BAD_REQUEST, error, description.into())
}

/// The client the request authenticates as: HTTP Basic (`client_secret_basic`), the secret in
/// the form (`client_secret_post`), a signed assertion (`private_key_jwt`), or only its id (a
/// public client, `none`).
fn authenticate(
    (lab, at): (&AuthLab, usize),
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<Client, Refusal> {
    let refused = |why: &str| (StatusCode::UNAUTHORIZED, "invalid_client", why.to_string());
    if let Some(assertion) = form.get("client_assertion") {
        if form.get("client_assertion_type").map(String::as_str) != Some(ASSERTION_TYPE) {
            return Err(refused(&format!(
                "client_assertion_type must be {ASSERTION_TYPE}"
            )));
        }
        return super::assertion::client(
            lab,
            at,
            assertion,
            form.get("client_id").map(String::as_str),
        )
        .map_err(|why| refused(&why));
    }
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .map(|encoded| {
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| refused("the Basic credentials are not base64 of id:secret"))?;
            let (id, secret) = decoded
                .split_once(':')
                .ok_or_else(|| refused("the Basic credentials are not id:secret"))?;
            Ok::<_, Refusal>((form_decode(id), Some(form_decode(secret))))
        })
        .transpose()?;
    let by_basic = basic.is_some();
    let (id, secret) = match basic {
        Some(credentials) => credentials,
        None => (
            form.get("client_id")
                .cloned()
                .ok_or_else(|| refused("no client authentication"))?,
            form.get("client_secret").cloned(),
        ),
    };
    let client = lab
        .client_at(&id, at)
        .ok_or_else(|| refused("unknown client"))?;
    if client.auth_method == "private_key_jwt" {
        return Err(refused(
            "this client authenticates with a signed assertion (client_assertion, private_key_jwt)",
        ));
    }
    // A client authenticates as it registered (a client of `client_secret_basic` that sends its
    // secret in the form is refused: the mistake the conformance suite's
    // `auth/token-endpoint-auth-*` scenarios catch).
    let used = if by_basic {
        "client_secret_basic"
    } else {
        "client_secret_post"
    };
    if client.secret.is_some() && secret.is_some() && client.auth_method != used {
        return Err(refused(&format!(
            "this client registered token_endpoint_auth_method {}, not {used}",
            client.auth_method
        )));
    }
    match (&client.secret, secret) {
        (None, _) => Ok(client),
        (Some(expected), Some(given)) if *expected == given => Ok(client),
        (Some(_), Some(_)) => Err(refused("wrong client secret")),
        (Some(_), None) => Err(refused(
            "this client must authenticate (client_secret_basic or client_secret_post)",
        )),
    }
}

/// A component of Basic credentials, which RFC 6749 §2.3.1 form-encodes.
fn form_decode(text: &str) -> String {
    serde_urlencoded::from_str::<Vec<(String, String)>>(&format!("v={text}"))
        .ok()
        .and_then(|mut pairs| pairs.pop())
        .map_or_else(|| text.to_string(), |(_, v)| v)
}

/// The PKCE S256 challenge of `verifier` (RFC 7636 §4.2).
pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// A new access token for `client` (and a refresh token, when `refreshable` and the client
/// registered that grant), as `/token` answers.
fn issue(
    (lab, at): (&AuthLab, usize),
    client: &Client,
    scope: &str,
    refreshable: bool,
    expired: bool,
) -> Value {
    let now = lab.clock.wall();
    let ttl = lab.config.token_ttl;
    // A fault rule's `expired_token`: dead on arrival, whatever `expires_in` says.
    let exp = if expired {
        seconds(now).saturating_sub(1)
    } else {
        seconds(now + ttl)
    };
    let claims = Claims {
        iss: lab.issuer(at).to_string(),
        sub: client.id.clone(),
        aud: lab.urls.resource.clone(),
        exp,
        iat: seconds(now),
        jti: random_token(),
        scope: scope.to_string(),
        client_id: client.id.clone(),
    };
    lock(&lab.issued).push(Issued {
        jti: claims.jti.clone(),
        client_id: client.id.clone(),
        scope: scope.to_string(),
        expires_at: claims.exp,
        status: "active",
    });
    let mut answer = json!({
        "access_token": lab.keys.sign(&claims),
        "token_type": "Bearer",
        "expires_in": ttl.as_secs(),
        "scope": scope,
    });
    if refreshable && client.grant_types.iter().any(|g| g == "refresh_token") {
        let refresh = random_token();
        lock(&lab.refresh).insert(
            refresh.clone(),
            Grant {
                client_id: client.id.clone(),
                scope: scope.to_string(),
            },
        );
        answer["refresh_token"] = Value::String(refresh);
    }
    answer
}

#[cfg(test)]
mod tests {
    use super::s256;

    #[test]
    fn the_rfc_7636_example() {
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}
