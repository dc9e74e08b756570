//! Client authentication with a signed assertion (`private_key_jwt`, RFC 7523 §2.2, as the
//! client credentials extension and the conformance suite's `auth/client-credentials-jwt` use
//! it): a JWT the client signs with its private key, checked with the public keys it registered
//! (`jwks`). Its `iss` and `sub` are the client's id, its `aud` the issuer (with or without one
//! trailing `/`, or the token endpoint's URL), it has not expired on the server's clock (30 s of
//! skew allowed) and it is used once (`jti`).

use super::clients::Client;
use super::jwt::seconds;
use super::lab::AuthLab;
use crate::lock::lock;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};
use serde::Deserialize;

/// The `client_assertion_type` of a JWT assertion.
pub const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// The skew allowed on `exp`, as the conformance suite allows it.
const LEEWAY_SECONDS: u64 = 30;

/// What an assertion says.
#[derive(Debug, Deserialize)]
struct AssertionClaims {
    iss: String,
    sub: String,
    exp: u64,
    #[serde(default)]
    jti: Option<String>,
}

/// The client `assertion` authenticates at the authorization server `at` (`claimed`: the `client_id` the form named, if it named
/// one), or why not (the `invalid_client` description).
pub fn client(
    lab: &AuthLab,
    at: usize,
    assertion: &str,
    claimed: Option<&str>,
) -> Result<Client, String> {
    let header =
        decode_header(assertion).map_err(|e| format!("client_assertion is not a JWT: {e}"))?;
    let unverified = unverified_claims(assertion)?;
    let id = claimed.unwrap_or(&unverified.iss);
    let client = lab
        .client_at(id, at)
        .ok_or_else(|| format!("unknown client {id:?}"))?;
    if unverified.iss != id || unverified.sub != id {
        return Err(format!(
            "the assertion's iss and sub must both be the client's id {id:?}"
        ));
    }
    if client.auth_method != "private_key_jwt" {
        return Err(format!(
            "client {id:?} registered token_endpoint_auth_method {}, not private_key_jwt",
            client.auth_method
        ));
    }
    let keys: Vec<Jwk> = client
        .jwks
        .as_ref()
        .and_then(|j| j.get("keys"))
        .and_then(|k| serde_json::from_value(k.clone()).ok())
        .unwrap_or_default();
    let issuer = lab.issuer(at).to_string();
    let mut validation = Validation::new(header.alg);
    validation.set_audience(&[
        issuer.clone(),
        format!("{issuer}/"),
        format!("{issuer}/token"),
    ]);
    // Expiry on the server's clock, below.
    validation.validate_exp = false;
    validation.required_spec_claims.clear();
    let verified = keys
        .iter()
        .filter(|k| header.kid.is_none() || k.common.key_id == header.kid)
        .filter_map(|k| DecodingKey::from_jwk(k).ok())
        .find_map(|key| decode::<AssertionClaims>(assertion, &key, &validation).ok())
        .ok_or_else(|| {
            "the assertion's signature or audience does not check with the client's registered keys (aud is the issuer or the token endpoint)".to_string()
        })?
        .claims;
    if verified.exp + LEEWAY_SECONDS <= seconds(lab.clock.wall()) {
        return Err("the assertion has expired".into());
    }
    if let Some(jti) = verified.jti {
        if !lock(&lab.assertions).insert(jti) {
            return Err("the assertion was used already (its jti)".into());
        }
    }
    Ok(client)
}

/// The claims of `assertion` before its signature is checked (to know whose keys check it).
fn unverified_claims(assertion: &str) -> Result<AssertionClaims, String> {
    jsonwebtoken::dangerous::insecure_decode::<AssertionClaims>(assertion)
        .map(|data| data.claims)
        .map_err(|e| format!("client_assertion is not a JWT with iss, sub and exp: {e}"))
}
