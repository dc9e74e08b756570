//! Clients as the authorization server knows them (RFC 7591): what registration accepts —
//! grants, redirect URIs, how the client authenticates at the token endpoint — and the record
//! it keeps, apart from HTTP and from where clients are kept (the lab).

use super::random::random_token;
use serde_json::{Map, Value};

/// A registered client (RFC 7591).
#[derive(Debug, Clone)]
pub struct Client {
    /// Its `client_id`.
    pub id: String,
    /// Its secret (`None` for a public client: `token_endpoint_auth_method` `none`).
    pub secret: Option<String>,
    /// How it authenticates at the token endpoint.
    pub auth_method: String,
    /// The redirect URIs an authorization request may name (matched exactly).
    pub redirect_uris: Vec<String>,
    /// The grants it may use.
    pub grant_types: Vec<String>,
    /// Its public keys (a JWK Set), which check its assertions (`private_key_jwt`).
    pub jwks: Option<Value>,
    /// The authorization server it registered with (an index of the lab's issuers); `None`:
    /// every one (a Client ID Metadata Document's client, whose id is portable).
    pub issuer: Option<usize>,
    /// The metadata as registered (what `/register` answered).
    pub metadata: Map<String, Value>,
}

/// The token endpoint authentication methods a client may register.
pub const AUTH_METHODS: [&str; 4] = [
    "none",
    "client_secret_basic",
    "client_secret_post",
    "private_key_jwt",
];

/// Why registration refused a client: the OAuth error and its description.
pub type Refusal = (&'static str, String);

/// The client `metadata` describes, registered at `issued_at` (seconds since the epoch), and
/// what `/register` answers for it; or why not. A client registered by the test (`pre`) keeps
/// the `client_id` and `client_secret` it names.
pub fn client_of(
    mut metadata: Map<String, Value>,
    issued_at: u64,
    pre: bool,
) -> Result<(Client, Map<String, Value>), Refusal> {
    let strings = |name: &str, default: &[&str]| -> Result<Vec<String>, (&'static str, String)> {
        match metadata.get(name) {
            None => Ok(default.iter().map(|s| s.to_string()).collect()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or((
                    "invalid_client_metadata",
                    format!("{name} must be an array of strings"),
                )),
            Some(_) => Err((
                "invalid_client_metadata",
                format!("{name} must be an array of strings"),
            )),
        }
    };
    let grant_types = strings("grant_types", &["authorization_code"])?;
    let redirect_uris = strings("redirect_uris", &[])?;
    if let Some(unknown) = grant_types.iter().find(|g| {
        !["authorization_code", "refresh_token", "client_credentials"].contains(&g.as_str())
    }) {
        return Err((
            "invalid_client_metadata",
            format!("unsupported grant type {unknown:?}"),
        ));
    }
    if grant_types.iter().any(|g| g == "authorization_code") && redirect_uris.is_empty() {
        return Err((
            "invalid_redirect_uri",
            "the authorization code grant needs redirect_uris".into(),
        ));
    }
    if let Some(bad) = redirect_uris.iter().find(|u| !acceptable_redirect(u)) {
        return Err((
            "invalid_redirect_uri",
            format!("{bad:?} is neither https nor http on a loopback host"),
        ));
    }
    let auth_method = match metadata.get("token_endpoint_auth_method") {
        None => "client_secret_basic".to_string(),
        Some(Value::String(m)) if AUTH_METHODS.contains(&m.as_str()) => m.clone(),
        Some(other) => {
            return Err((
                "invalid_client_metadata",
                format!("token_endpoint_auth_method {other} is not one of {AUTH_METHODS:?}"),
            ))
        }
    };
    if auth_method == "none" && grant_types.iter().any(|g| g == "client_credentials") {
        return Err((
            "invalid_client_metadata",
            "client_credentials needs a confidential client (a token_endpoint_auth_method other than none)".into(),
        ));
    }
    let jwks = metadata.get("jwks").cloned();
    if auth_method == "private_key_jwt"
        && !jwks
            .as_ref()
            .and_then(|j| j.get("keys"))
            .is_some_and(Value::is_array)
    {
        return Err((
            "invalid_client_metadata",
            "private_key_jwt needs the client's public keys: a jwks member ({\"keys\": [...]})"
                .into(),
        ));
    }
    let given = |name: &str| {
        pre.then(|| metadata.get(name).and_then(Value::as_str))
            .flatten()
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    let id = given("client_id").unwrap_or_else(|| format!("client-{}", &random_token()[..16]));
    let secret = matches!(
        auth_method.as_str(),
        "client_secret_basic" | "client_secret_post"
    )
    .then(|| given("client_secret").unwrap_or_else(random_token));
    metadata.insert("client_id".into(), Value::String(id.clone()));
    metadata.insert("client_id_issued_at".into(), issued_at.into());
    if let Some(secret) = &secret {
        metadata.insert("client_secret".into(), Value::String(secret.clone()));
        metadata.insert("client_secret_expires_at".into(), 0.into());
    }
    metadata.insert(
        "token_endpoint_auth_method".into(),
        Value::String(auth_method.clone()),
    );
    metadata.insert("grant_types".into(), grant_types.clone().into());
    metadata.insert("redirect_uris".into(), redirect_uris.clone().into());
    if grant_types.iter().any(|g| g == "authorization_code") {
        metadata
            .entry("response_types")
            .or_insert_with(|| vec!["code"].into());
    }
    let client = Client {
        id: id.clone(),
        secret,
        auth_method,
        redirect_uris,
        grant_types,
        jwks,
        issuer: Some(0),
        metadata: metadata.clone(),
    };
    Ok((client, metadata))
}

/// Whether `uri` may be a redirect URI: `https`, or `http` on a loopback host (RFC 8252), with
/// no fragment.
fn acceptable_redirect(uri: &str) -> bool {
    !uri.contains('#') && (uri.starts_with("https://") || loopback_http(uri))
}

/// Whether `url` is plain HTTP on a loopback host (`localhost`, `127.0.0.1`, `[::1]`): what a
/// redirect URI may be without TLS, and what the lab may fetch a client's document from.
pub fn loopback_http(url: &str) -> bool {
    let Ok(uri) = url.parse::<hyper::Uri>() else {
        return false;
    };
    let host = uri.host().unwrap_or("").trim_matches(['[', ']']);
    uri.scheme_str() == Some("http")
        && (host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback()))
}

#[cfg(test)]
mod tests {
    use super::acceptable_redirect;

    #[test]
    fn redirects_are_https_or_loopback_http() {
        assert!(acceptable_redirect("http://127.0.0.1:4000/callback"));
        assert!(acceptable_redirect("http://localhost/cb?x=1"));
        assert!(acceptable_redirect("http://[::1]:5/cb"));
        assert!(acceptable_redirect("https://app.example/cb"));
        assert!(!acceptable_redirect("http://app.example/cb"));
        assert!(!acceptable_redirect("http://127.0.0.1.evil/cb"));
        assert!(!acceptable_redirect("https://app.example/cb#frag"));
        assert!(!acceptable_redirect("myapp:/cb"));
    }
}
