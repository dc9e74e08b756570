//! Access tokens: JWTs (RFC 9068's shape) signed with a key of this listener's own, bound to
//! the MCP endpoint (`aud`), with a lifetime on the server's clock.

use crate::server::seams::{TOKEN_EXPIRED, TOKEN_REVOKED};
use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What an access token says.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Claims {
    /// The issuer (the listener's base URL).
    pub iss: String,
    /// The client it was issued to.
    pub sub: String,
    /// The resource it is for: the MCP endpoint's URL.
    pub aud: String,
    /// When it expires, in seconds since the epoch of the server's clock.
    pub exp: u64,
    /// When it was issued.
    pub iat: u64,
    /// Its id, which revocation names.
    pub jti: String,
    /// The scopes granted, space-separated.
    pub scope: String,
    /// The client it was issued to (RFC 9068).
    pub client_id: String,
}

/// Why a token was refused (the `error_description` of the `401`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Not a token this server signed (or not a JWT at all).
    Invalid,
    /// Its lifetime is over.
    Expired,
    /// It was issued for another resource.
    Audience,
    /// It was revoked.
    Revoked,
    /// It was issued by an authorization server the resource no longer uses (it migrated).
    Issuer,
}

impl Refused {
    /// What the challenge's `error_description` says.
    pub fn description(self) -> &'static str {
        match self {
            Self::Invalid => "the access token is not one this server issued",
            Self::Expired => TOKEN_EXPIRED,
            Self::Audience => "the access token was issued for another resource",
            Self::Revoked => TOKEN_REVOKED,
            Self::Issuer => {
                "the access token was issued by an authorization server this resource no longer uses"
            }
        }
    }
}

/// The listener's signing key (HS256, random per listener: no other server, and no earlier
/// run, can mint a token this one accepts).
pub struct Keys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    /// What [`Keys::check`] has the JWT library check (the signature; expiry and audience are
    /// judged here): made once, not per request.
    validation: Validation,
}

impl Keys {
    /// A fresh random key.
    pub fn random() -> Self {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).expect("the OS random source");
        let mut validation = Validation::new(Algorithm::HS256);
        // Expiry is judged on the server's clock (a test may have moved it), the audience here.
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        Self {
            encoding: EncodingKey::from_secret(&secret),
            decoding: DecodingKey::from_secret(&secret),
            validation,
        }
    }

    /// A signed token of `claims`.
    pub fn sign(&self, claims: &Claims) -> String {
        encode(&Header::new(Algorithm::HS256), claims, &self.encoding)
            .expect("HS256 signs any claims")
    }

    /// The claims of `token` if this key signed it, it is for `audience` and not expired at
    /// `now` (revocation is the caller's to check).
    pub fn check(&self, token: &str, audience: &str, now: SystemTime) -> Result<Claims, Refused> {
        let claims = decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|_| Refused::Invalid)?
            .claims;
        if claims.aud != audience {
            return Err(Refused::Audience);
        }
        if claims.exp <= seconds(now) {
            return Err(Refused::Expired);
        }
        Ok(claims)
    }
}

/// `at` as whole seconds since the epoch.
pub fn seconds(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(aud: &str, exp: u64) -> Claims {
        Claims {
            iss: "http://127.0.0.1:1".into(),
            sub: "c".into(),
            aud: aud.into(),
            exp,
            iat: 0,
            jti: "j".into(),
            scope: "mcp:basic".into(),
            client_id: "c".into(),
        }
    }

    #[test]
    fn a_token_is_checked_for_key_audience_and_expiry() {
        let keys = Keys::random();
        let now = UNIX_EPOCH + Duration::from_secs(1000);
        let good = keys.sign(&claims("http://h/mcp", 1001));
        assert_eq!(keys.check(&good, "http://h/mcp", now).unwrap().sub, "c");
        assert_eq!(
            keys.check(&good, "http://h/other", now),
            Err(Refused::Audience)
        );
        let later = UNIX_EPOCH + Duration::from_secs(1001);
        assert_eq!(
            keys.check(&good, "http://h/mcp", later),
            Err(Refused::Expired)
        );
        let foreign = Keys::random().sign(&claims("http://h/mcp", 1001));
        assert_eq!(
            keys.check(&foreign, "http://h/mcp", now),
            Err(Refused::Invalid)
        );
        assert_eq!(
            keys.check("not-a-jwt", "http://h/mcp", now),
            Err(Refused::Invalid)
        );
    }
}
