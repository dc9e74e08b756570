//! Fetching the input of `gzip-file-as-resource` over HTTP or HTTPS (rustls: the system's roots,
//! `SSL_CERT_FILE`'s, else Mozilla's bundled ones), within the reference's limits:
//! a domain allowlist (`GZIP_ALLOWED_DOMAINS`), a size cap (`GZIP_MAX_FETCH_SIZE`, checked on
//! `Content-Length` and on the bytes streamed) and a time limit (`GZIP_MAX_FETCH_TIME_MILLIS`),
//! with the reference's error texts.

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;

/// The limits of one fetch.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most bytes accepted.
    pub max_bytes: u64,
    /// Longest the whole fetch may take.
    pub timeout: Duration,
    /// Lower-cased domains allowed (subdomains too); empty allows every domain.
    pub allowed_domains: Vec<String>,
}

impl Limits {
    /// The limits from the environment, with the reference's defaults (10 MiB, 30 s, any domain).
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Self {
            max_bytes: var("GZIP_MAX_FETCH_SIZE")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(10 * 1024 * 1024),
            timeout: Duration::from_millis(
                var("GZIP_MAX_FETCH_TIME_MILLIS")
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(30_000),
            ),
            allowed_domains: var("GZIP_ALLOWED_DOMAINS")
                .map(|v| {
                    v.split(',')
                        .map(|d| d.trim().to_ascii_lowercase())
                        .filter(|d| !d.is_empty())
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// Whether `host` is allowed (exactly, or as a subdomain of an allowed domain).
fn domain_allowed(host: &str, allowed: &[String]) -> bool {
    allowed.is_empty()
        || allowed
            .iter()
            .any(|d| host == d || host.ends_with(&format!(".{d}")))
}

/// A connector for `http:` and `https:` URLs: TLS by rustls, trusting the system's roots (and
/// those of `SSL_CERT_FILE`, as OpenSSL-based clients do), or Mozilla's bundled roots on a
/// system that has none.
fn https() -> hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector> {
    let builder = hyper_rustls::HttpsConnectorBuilder::new();
    let builder = match builder.with_native_roots() {
        Ok(native) => native,
        Err(_) => hyper_rustls::HttpsConnectorBuilder::new().with_webpki_roots(),
    };
    builder.https_or_http().enable_http1().build()
}

/// `error` and what caused it, outermost first: hyper's own text ("client error (Connect)")
/// alone does not say that a certificate was refused, or why.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        text.push_str(": ");
        text.push_str(&e.to_string());
        cause = e.source();
    }
    text
}

/// GETs `url` (http or https) within `limits`.
pub async fn fetch(url: &str, limits: &Limits) -> Result<Vec<u8>, String> {
    let uri: hyper::Uri = url.parse().map_err(|e| format!("invalid URL {url}: {e}"))?;
    let host = uri
        .host()
        .unwrap_or_default()
        .trim_matches(['[', ']'])
        .to_ascii_lowercase();
    if !domain_allowed(&host, &limits.allowed_domains) {
        return Err(format!("Domain {host} is not in the allowed domains list."));
    }
    let max = limits.max_bytes;
    let work = async {
        let client: Client<_, Empty<Bytes>> = Client::builder(TokioExecutor::new()).build(https());
        let response = client
            .get(uri)
            .await
            .map_err(|e| format!("fetch failed: {}", with_causes(&e)))?;
        if !response.status().is_success() {
            return Err(format!("HTTP {} from {url}", response.status()));
        }
        let declared = response
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if let Some(len) = declared.filter(|&len| len > max) {
            return Err(format!(
                "Content-Length for {url} exceeds max of {max}: {len}"
            ));
        }
        let mut body = response.into_body();
        let mut out = Vec::new();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("fetch failed: {e}"))?;
            if let Ok(data) = frame.into_data() {
                out.extend_from_slice(&data);
                if out.len() as u64 > max {
                    return Err(format!("Response from {url} exceeds {max} bytes"));
                }
            }
        }
        Ok(out)
    };
    tokio::time::timeout(limits.timeout, work)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "Fetching {url} took more than {} ms and was aborted.",
                limits.timeout.as_millis()
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::domain_allowed;

    #[test]
    fn subdomains_of_allowed_domains_pass() {
        let allowed = vec!["example.com".to_string()];
        assert!(
            domain_allowed("example.com", &allowed) && domain_allowed("raw.example.com", &allowed)
        );
        assert!(
            !domain_allowed("badexample.com", &allowed) && !domain_allowed("example.org", &allowed)
        );
        assert!(domain_allowed("anything", &[]));
    }
}
