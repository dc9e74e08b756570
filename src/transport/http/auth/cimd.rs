//! Client ID Metadata Documents (MCP 2025-11-25, "Client ID Metadata Documents"): a `client_id`
//! that is an HTTPS URL names a JSON document, hosted by the client, that describes it. The lab
//! reads a document the test seeded for that URL (`client_documents`, `srv.auth.add_client_document`),
//! or fetches it when the URL is on a loopback host (a test's own server), and checks it as an
//! authorization server must: the document's `client_id` is its URL exactly, it names the
//! client and its redirect URIs, and the request's `redirect_uri` is one of them. It fetches
//! nothing else: a test server reaches no network.

use super::clients::{loopback_http, Client};
use super::lab::AuthLab;
use crate::catalog::everything::fetch::{fetch, Limits};
use crate::lock::lock;
use serde_json::Value;
use std::time::Duration;

/// The largest document fetched.
const MAX_BYTES: u64 = 64 * 1024;

/// Whether `client_id` is a URL (a Client ID Metadata Document's) rather than an id the lab
/// gave out.
pub fn is_url(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

/// The client the document at `url` describes, checked (with the request's `redirect_uri`),
/// and from now on known to the token endpoint; or why not, as the `400` says it.
pub async fn client(
    lab: &AuthLab,
    url: &str,
    redirect_uri: Option<&str>,
) -> Result<Client, String> {
    let seeded = lock(&lab.documents).get(url).cloned();
    let document = match seeded {
        Some(document) => document,
        None if loopback_http(url) && usable_url(url).is_ok() => {
            let limits = Limits {
                max_bytes: MAX_BYTES,
                timeout: Duration::from_secs(5),
                allowed_domains: Vec::new(),
            };
            let bytes = fetch(url, &limits)
                .await
                .map_err(|e| format!("the Client ID Metadata Document at {url} could not be fetched: {e}"))?;
            let document = serde_json::from_slice::<Value>(&bytes).map_err(|e| {
                format!("the Client ID Metadata Document at {url} is not JSON: {e}")
            })?;
            // Fetched once: the next authorization reads this copy.
            lab.add_client_document(url.to_string(), document.clone());
            document
        }
        None => {
            return Err(format!(
                "client_id {url} names a Client ID Metadata Document the lab has no copy of: it fetches only loopback http URLs (a test's own server); seed the others (client_documents, srv.auth.add_client_document)"
            ))
        }
    };
    let client = checked(url, &document, redirect_uri)?;
    lock(&lab.clients).insert(client.id.clone(), client.clone());
    Ok(client)
}

/// Whether `url` may be a client id: `https` (or plain HTTP on loopback, which the lab
/// fetches), with a path other than `/`, and without a fragment, a user or password, or a `.`
/// or `..` segment (the Client ID Metadata Document draft, §3); else what is wrong.
fn usable_url(url: &str) -> Result<(), &'static str> {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| loopback_http(url).then(|| &url[7..]))
    else {
        return Err("a client_id URL is https");
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = path.split('?').next().unwrap_or("");
    if url.contains('#') {
        return Err("a client_id URL has no fragment");
    }
    if authority.contains('@') {
        return Err("a client_id URL has no user or password");
    }
    if path.is_empty() || path == "/" {
        return Err("a client_id URL has a path");
    }
    if path
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return Err("a client_id URL has no . or .. segment");
    }
    Ok(())
}

/// The client `document` (found at `url`) describes, if it holds as the spec wants.
fn checked(url: &str, document: &Value, redirect_uri: Option<&str>) -> Result<Client, String> {
    let bad = |why: String| Err(format!("the Client ID Metadata Document at {url}: {why}"));
    if let Err(why) = usable_url(url) {
        return bad(why.into());
    }
    let Some(object) = document.as_object() else {
        return bad("is not a JSON object".into());
    };
    if object.get("client_id").and_then(Value::as_str) != Some(url) {
        return bad(format!(
            "its client_id is {}, not its own URL",
            object.get("client_id").unwrap_or(&Value::Null)
        ));
    }
    if object.get("client_name").and_then(Value::as_str).is_none() {
        return bad("client_name is required".into());
    }
    let redirect_uris: Vec<String> = match object.get("redirect_uris").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => return bad("redirect_uris (a non-empty array) is required".into()),
    };
    if let Some(uri) = redirect_uri {
        if !redirect_uris.iter().any(|r| r == uri) {
            return bad(format!(
                "redirect_uri {uri} is not one of its redirect_uris"
            ));
        }
    }
    let auth_method = object
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("none")
        .to_string();
    if !matches!(auth_method.as_str(), "none" | "private_key_jwt") {
        return bad(format!(
            "token_endpoint_auth_method {auth_method} needs a shared secret, which a metadata document cannot hold (none or private_key_jwt)"
        ));
    }
    let jwks = object.get("jwks").cloned();
    if auth_method == "private_key_jwt" && jwks.is_none() {
        return bad("private_key_jwt needs jwks (jwks_uri is not fetched)".into());
    }
    let grant_types = match object.get("grant_types").and_then(Value::as_array) {
        Some(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        None => vec!["authorization_code".to_string()],
    };
    Ok(Client {
        id: url.to_string(),
        secret: None,
        auth_method,
        redirect_uris,
        grant_types,
        jwks,
        issuer: None,
        metadata: object.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_document_must_name_itself_and_the_redirect() {
        let url = "https://app.example/client.json";
        let doc = json!({"client_id": url, "client_name": "App", "redirect_uris": ["http://127.0.0.1:9/cb"]});
        assert!(checked(url, &doc, Some("http://127.0.0.1:9/cb")).is_ok());
        let e = checked(url, &doc, Some("http://127.0.0.1:9/other")).unwrap_err();
        assert!(e.contains("is not one of its redirect_uris"), "{e}");
        let other = json!({"client_id": "https://app.example/other.json", "client_name": "App", "redirect_uris": ["x"]});
        assert!(checked(url, &other, None)
            .unwrap_err()
            .contains("not its own URL"));
        assert!(checked("https://app.example/", &doc, None)
            .unwrap_err()
            .contains("has a path"));
        for (url, why) in [
            ("https://app.example/c.json#frag", "has no fragment"),
            ("https://app.example/a/../c.json", "has no . or .. segment"),
            ("https://u:p@app.example/c.json", "has no user or password"),
            ("http://app.example/c.json", "is https"),
        ] {
            assert_eq!(
                usable_url(url).unwrap_err(),
                format!("a client_id URL {why}")
            );
        }
        assert!(loopback_http("http://127.0.0.1:8/x") && loopback_http("http://[::1]:8/x"));
        assert!(!loopback_http("http://127.0.0.1.evil/x") && !loopback_http("https://127.0.0.1/x"));
    }
}
