//! The stateless era's per-request envelope (2026-07-28): what a request's `params._meta` says
//! about its client instead of an `initialize` handshake, and what every result says back.
//!
//! A request whose `_meta` carries [`PROTOCOL_VERSION`] is a stateless request; the envelope is
//! read from it once, here, with the spec's errors for what is missing or malformed.

use super::logging::LogLevel;
use super::meta::RequestMeta;
pub use super::meta::{CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION};
use super::revision::Revision;
use crate::jsonrpc::{code, ErrorObject};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::Arc;

/// Result `_meta` key: who the server is (every stateless result carries it).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// Notification `_meta` key: the `subscriptions/listen` request a notification belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `-32020`: an HTTP header disagrees with the body (or a required one is missing).
pub const HEADER_MISMATCH: i64 = -32020;
/// `-32021`: the request needs a client capability its envelope does not declare.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// `-32022`: the envelope names a revision this server does not serve.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// What a stateless request's `_meta` declares about its client.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    /// The revision the request is sent under.
    pub revision: Revision,
    /// The client's capabilities for this request (an object).
    pub client_capabilities: Arc<Value>,
    /// The client's identity, if it sent one (shared with the request's `_meta`: few handlers
    /// read it).
    pub client_info: Option<Arc<Value>>,
    /// The least severe log message wanted; `None`: no log messages at all.
    pub log_level: Option<LogLevel>,
}

/// Whether a request's `_meta` (`None`: absent, or not an object) is a stateless envelope (it
/// has [`PROTOCOL_VERSION`]): the mark of a 2026-07-28 request.
pub fn is_stateless(meta: Option<&RequestMeta>) -> bool {
    meta.is_some_and(|m| m.contains(PROTOCOL_VERSION))
}

/// The revision a request's envelope names, as sent (`None` without an envelope or when it is
/// not a string): what the HTTP header check and the recorder compare and tag, before (or
/// without) the full [`read`].
pub fn requested_version(meta: Option<&RequestMeta>) -> Option<Cow<'_, str>> {
    meta?.str(PROTOCOL_VERSION)
}

/// The revision a request's envelope names, if it is a known one (served or not): what the
/// request's records are tagged with.
pub fn requested_revision(meta: Option<&RequestMeta>) -> Option<Revision> {
    requested_version(meta).and_then(|v| v.parse().ok())
}

/// Whether `revision` is a stateless one among `supported`: a request whose envelope names
/// it is served (and recorded) as of it.
pub fn is_served(revision: Revision, supported: &[Revision]) -> bool {
    !revision.has_handshake() && supported.contains(&revision)
}

/// Reads the envelope of a stateless request (its `_meta`; `None`: absent, or not an object)
/// whose revision must be one of `supported`: a missing or malformed `_meta` → `-32602`; a
/// revision not served → `-32022` with `data {supported, requested}`. Only the members it
/// returns are parsed, from the request's text.
pub fn read(meta: Option<&RequestMeta>, supported: &[Revision]) -> Result<Envelope, ErrorObject> {
    let Some(meta) = meta else {
        return Err(ErrorObject::invalid_params(format!(
            "params._meta must be an object carrying {PROTOCOL_VERSION:?} and {CLIENT_CAPABILITIES:?}"
        )));
    };
    // Each member is looked up once.
    let (version, capabilities) = (meta.get(PROTOCOL_VERSION), meta.get(CLIENT_CAPABILITIES));
    let missing: Vec<&str> = [
        (PROTOCOL_VERSION, version),
        (CLIENT_CAPABILITIES, capabilities),
    ]
    .into_iter()
    .filter_map(|(k, v)| v.is_none().then_some(k))
    .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "params._meta is missing the required key(s): {}",
            missing.join(", ")
        ))
        .with_data(json!({ "missing": missing })));
    }
    let Some(requested) = version.and_then(Value::as_str) else {
        return Err(ErrorObject::invalid_params(format!(
            "params._meta[{PROTOCOL_VERSION:?}] must be a string"
        )));
    };
    let Some(client_capabilities) = capabilities.and_then(Value::as_object) else {
        return Err(ErrorObject::invalid_params(format!(
            "params._meta[{CLIENT_CAPABILITIES:?}] must be an object"
        )));
    };
    let revision = requested
        .parse::<Revision>()
        .ok()
        .filter(|r| is_served(*r, supported))
        .ok_or_else(|| unsupported(requested, supported))?;
    let log_level = match meta.get(LOG_LEVEL) {
        None | Some(Value::Null) => None,
        Some(level) => Some(
            level
                .as_str()
                .and_then(|l| l.parse::<LogLevel>().ok())
                .ok_or_else(|| {
                    ErrorObject::invalid_params(format!(
                        "params._meta[{LOG_LEVEL:?}] must be a log level (debug … emergency)"
                    ))
                })?,
        ),
    };
    Ok(Envelope {
        revision,
        client_capabilities: parse_capabilities(client_capabilities),
        client_info: meta.shared(CLIENT_INFO).cloned(),
        log_level,
    })
}

/// The client capabilities of an envelope. A client that declares none sends `{}`: the shared
/// empty object, without a copy.
fn parse_capabilities(declared: &serde_json::Map<String, Value>) -> Arc<Value> {
    if declared.is_empty() {
        return super::capabilities::declared_none();
    }
    Arc::new(Value::Object(declared.clone()))
}

/// `-32022` for a revision this server does not serve statelessly.
pub fn unsupported(requested: &str, supported: &[Revision]) -> ErrorObject {
    ErrorObject::new(
        UNSUPPORTED_PROTOCOL_VERSION,
        format!("Unsupported protocol version: {requested}"),
    )
    .with_data(json!({ "supported": stateless_names(supported), "requested": requested }))
}

/// The stateless revisions among `supported`, newest first (`supportedVersions`).
pub fn stateless_names(supported: &[Revision]) -> Vec<&'static str> {
    supported
        .iter()
        .rev()
        .filter(|r| !r.has_handshake())
        .map(|r| r.as_str())
        .collect()
}

/// `-32021` naming the client capabilities a request needs (`required`: a capabilities object
/// such as `{"sampling": {}}`).
pub fn missing_capability_error(message: impl Into<String>, required: Value) -> ErrorObject {
    ErrorObject::new(MISSING_CLIENT_CAPABILITY, message)
        .with_data(json!({ "requiredCapabilities": required }))
}

/// `-32020` for a header that disagrees with the body.
pub fn header_mismatch(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(HEADER_MISMATCH, message)
}

/// Whether a JSON-RPC error code is one the spec maps to HTTP 400 in the stateless era
/// (parse, shape, params, header, capability and version errors); `-32601` is 404, everything
/// else rides a 200.
pub fn is_bad_request(error_code: i64) -> bool {
    matches!(
        error_code,
        code::PARSE_ERROR
            | code::INVALID_REQUEST
            | code::INVALID_PARAMS
            | HEADER_MISMATCH
            | MISSING_CLIENT_CAPABILITY
            | UNSUPPORTED_PROTOCOL_VERSION
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Option<RequestMeta> {
        RequestMeta::in_params(&json!({ "_meta": meta }))
    }

    #[test]
    fn reads_a_complete_envelope() {
        let p = params(json!({
            PROTOCOL_VERSION: "2026-07-28",
            CLIENT_CAPABILITIES: { "sampling": {} },
            CLIENT_INFO: { "name": "t", "version": "1" },
            LOG_LEVEL: "info"
        }));
        assert!(is_stateless(p.as_ref()));
        let e = read(p.as_ref(), &Revision::ALL).unwrap();
        assert_eq!(e.revision, Revision::V2026_07_28);
        assert_eq!(*e.client_capabilities, json!({ "sampling": {} }));
        assert_eq!(e.log_level, Some(LogLevel::Info));
        assert_eq!(
            e.client_info.map(|c| Value::clone(&c)),
            Some(json!({ "name": "t", "version": "1" }))
        );
        let quiet = params(json!({
            PROTOCOL_VERSION: "2026-07-28",
            CLIENT_CAPABILITIES: {},
            LOG_LEVEL: null
        }));
        let e = read(quiet.as_ref(), &Revision::ALL).unwrap();
        assert_eq!((e.log_level, e.client_info.is_none()), (None, true));
    }

    #[test]
    fn refuses_what_is_missing_or_unsupported() {
        assert!(!is_stateless(None));
        assert_eq!(
            read(None, &Revision::ALL).unwrap_err().code,
            code::INVALID_PARAMS
        );
        let no_caps = params(json!({ PROTOCOL_VERSION: "2026-07-28" }));
        assert_eq!(
            read(no_caps.as_ref(), &Revision::ALL).unwrap_err().code,
            code::INVALID_PARAMS
        );
        for (meta, message) in [
            (
                json!({ PROTOCOL_VERSION: 7, CLIENT_CAPABILITIES: {} }),
                "Invalid params: params._meta[\"io.modelcontextprotocol/protocolVersion\"] must be a string",
            ),
            (
                json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: [] }),
                "Invalid params: params._meta[\"io.modelcontextprotocol/clientCapabilities\"] must be an object",
            ),
            (
                json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}, LOG_LEVEL: "loud" }),
                "Invalid params: params._meta[\"io.modelcontextprotocol/logLevel\"] must be a log level (debug … emergency)",
            ),
        ] {
            let e = read(params(meta).as_ref(), &Revision::ALL).unwrap_err();
            assert_eq!(e.message, message);
        }
        let old = params(json!({ PROTOCOL_VERSION: "2025-11-25", CLIENT_CAPABILITIES: {} }));
        let e = read(old.as_ref(), &Revision::ALL).unwrap_err();
        assert_eq!(e.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            e.data,
            Some(json!({ "supported": ["2026-07-28"], "requested": "2025-11-25" }))
        );
        let handshake_only =
            params(json!({ PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {} }));
        let e = read(handshake_only.as_ref(), &Revision::HANDSHAKE).unwrap_err();
        assert_eq!(
            e.data,
            Some(json!({ "supported": [], "requested": "2026-07-28" }))
        );
    }
}
