//! The stateless era's request headers on Streamable HTTP (2026-07-28, SEP-2243): every POST
//! mirrors parts of its body into headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
//! and `Mcp-Param-{Name}` for tool arguments whose schema says `x-mcp-header`), so proxies and
//! load balancers can route without parsing JSON. The server must refuse a request whose
//! headers are missing or disagree with its body (`-32020`, HTTP 400): otherwise a component
//! routing on the header and the server acting on the body could be told two different things.
//!
//! Header names are matched case-insensitively (the `HeaderMap` does that), values
//! case-sensitively after trimming the surrounding whitespace HTTP allows. `Mcp-Name` and
//! `Mcp-Param-*` values may be sent as `=?base64?…?=` (for text a header cannot carry); they
//! are decoded before comparing, and a sentinel that is not valid Base64 is refused.

use crate::field;
use crate::jsonrpc::{ErrorObject, Request};
use crate::protocol::envelope;
use crate::protocol::header_params::HeaderParam;
use crate::protocol::method_names::ClientRequest;
use crate::server::registry::Registry;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use base64::Engine;
use serde_json::{Map, Value};
use std::borrow::Cow;

/// `Mcp-Method`: the request's `method`.
pub static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name`: `params.name` (tools/call, prompts/get), `params.uri` (resources/read) or
/// `params.taskId` (tasks/get, tasks/update, tasks/cancel).
pub static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

/// Checks a stateless POST's headers against its body `request`, in the spec's order
/// (protocol version, `Mcp-Method`, `Mcp-Name`, then the tool's `Mcp-Param-*`); the first
/// disagreement is the `-32020` answer.
///
/// A request without an envelope version is left alone: the core answers it `-32602` (the
/// envelope comes first in the order of checks), as it answers an unsupported version
/// `-32022` after these checks passed.
pub fn check(
    headers: &HeaderMap,
    request: &Request,
    registry: &Registry,
) -> Result<(), ErrorObject> {
    let Some(version) = envelope::requested_version(request.meta.as_ref()) else {
        return Ok(());
    };
    // A request with a `_meta` has object params.
    let Some(params) = request.params.as_ref().and_then(Value::as_object) else {
        return Ok(());
    };
    let routing = Routing::of(headers);
    let header_version = routing
        .version
        .single(&super::negotiation::VERSION_HEADER)?
        .ok_or_else(|| mismatch("the required MCP-Protocol-Version header is absent".into()))?;
    if header_version != version {
        return Err(mismatch(format!(
            "the MCP-Protocol-Version header names {header_version:?} but the body's envelope names {version:?}"
        )));
    }
    let method = routing
        .method
        .single(&METHOD_HEADER)?
        .ok_or_else(|| mismatch("the required Mcp-Method header is absent".into()))?;
    if method != request.method {
        return Err(mismatch(format!(
            "the Mcp-Method header names {method:?} but the body's method is {:?}",
            request.method
        )));
    }
    let named = match ClientRequest::parse(&request.method) {
        Some(ClientRequest::CallTool | ClientRequest::GetPrompt) => Some("name"),
        Some(ClientRequest::ReadResource) => Some("uri"),
        // SEP-2663: the tasks extension's methods route by task id.
        Some(ClientRequest::GetTask | ClientRequest::UpdateTask | ClientRequest::CancelTask) => {
            Some("taskId")
        }
        _ => None,
    };
    if let Some(field) = named {
        let body = field::get(params, field).and_then(Value::as_str);
        match (routing.name.single(&NAME_HEADER)?, body) {
            (None, Some(_)) => {
                return Err(mismatch("the required Mcp-Name header is absent".into()))
            }
            (Some(raw), body) => {
                let name = decode(raw, "Mcp-Name")?;
                if Some(&*name) != body {
                    return Err(mismatch(format!(
                        "the Mcp-Name header names {name:?} but the body's params.{field} is {}",
                        body.map_or_else(|| "absent".into(), |b| format!("{b:?}"))
                    )));
                }
            }
            // Neither: the handler answers the missing name itself (-32602).
            (None, None) => {}
        }
    }
    if request.method == ClientRequest::CallTool.as_str() {
        let tool = field::get(params, "name").and_then(Value::as_str);
        if let Some(tool) = tool.and_then(|t| registry.tools.get(t)) {
            let arguments = field::get(params, "arguments").and_then(Value::as_object);
            check_params(headers, &tool.header_params, arguments)?;
        }
    }
    Ok(())
}

/// The value of a routing header sent at most once, trimmed; sent twice → `-32020` (which of
/// the two would a proxy have routed on?); not visible ASCII → `-32020`.
fn single<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Result<Option<&'a str>, ErrorObject> {
    let mut values = headers.get_all(name).iter();
    let seen = match (values.next(), values.next()) {
        (None, _) => Seen::Absent,
        (Some(value), None) => Seen::Once(value),
        (Some(_), Some(_)) => Seen::Twice,
    };
    seen.single(name)
}

/// How often a routing header was sent, and its value if once.
#[derive(Clone, Copy)]
enum Seen<'a> {
    /// Not at all.
    Absent,
    /// Once, with this value.
    Once(&'a HeaderValue),
    /// More than once.
    Twice,
}

impl<'a> Seen<'a> {
    /// [`single`]'s answer for header `name` seen so.
    fn single(self, name: &HeaderName) -> Result<Option<&'a str>, ErrorObject> {
        let value = match self {
            Seen::Absent => return Ok(None),
            Seen::Twice => {
                return Err(mismatch(format!(
                    "the {name} header is sent more than once"
                )))
            }
            Seen::Once(value) => value,
        };
        let text = value.to_str().map_err(|_| {
            mismatch(format!(
                "the {name} header carries characters a header value may not (Base64-encode them)"
            ))
        })?;
        Ok(Some(text.trim_matches([' ', '\t'])))
    }
}

/// The three routing headers every stateless request is checked by, found in one pass over
/// the request's few headers instead of three hashed lookups (about 300 instructions a
/// request, callgrind).
struct Routing<'a> {
    /// `MCP-Protocol-Version`.
    version: Seen<'a>,
    /// `Mcp-Method`.
    method: Seen<'a>,
    /// `Mcp-Name`.
    name: Seen<'a>,
}

impl<'a> Routing<'a> {
    /// The routing headers of `headers`.
    fn of(headers: &'a HeaderMap) -> Self {
        let mut routing = Routing {
            version: Seen::Absent,
            method: Seen::Absent,
            name: Seen::Absent,
        };
        for (name, value) in headers {
            let slot = if name == super::negotiation::VERSION_HEADER {
                &mut routing.version
            } else if name == METHOD_HEADER {
                &mut routing.method
            } else if name == NAME_HEADER {
                &mut routing.name
            } else {
                continue;
            };
            *slot = match *slot {
                Seen::Absent => Seen::Once(value),
                Seen::Once(_) | Seen::Twice => Seen::Twice,
            };
        }
        routing
    }
}

/// A header value as meant: `=?base64?…?=` decoded (strict, padded standard alphabet, UTF-8),
/// anything else literally (borrowed: most values are plain).
fn decode<'a>(value: &'a str, header: &str) -> Result<Cow<'a, str>, ErrorObject> {
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Ok(Cow::Borrowed(value));
    };
    base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .map(Cow::Owned)
        .ok_or_else(|| {
            mismatch(format!(
                "the {header} header's =?base64?…?= value is not valid Base64 of UTF-8 text"
            ))
        })
}

/// Checks the `Mcp-Param-*` headers of a `tools/call` against its arguments: an argument the
/// schema mirrors must come with its header when it has a (non-null) value, the header must
/// equal it (integers compared as numbers, booleans as `true`/`false`), and a header without
/// a value in the body is a disagreement too.
fn check_params(
    headers: &HeaderMap,
    mirrored: &[HeaderParam],
    arguments: Option<&Map<String, Value>>,
) -> Result<(), ErrorObject> {
    for HeaderParam { path, header } in mirrored {
        let Ok(name) = HeaderName::try_from(format!("mcp-param-{header}")) else {
            continue; // not a valid header name: no client can send it
        };
        let body = lookup(arguments, path).filter(|v| !v.is_null());
        let sent = single(headers, &name)?;
        let what = format!("Mcp-Param-{header}");
        match (sent, body) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "the {what} header is absent but the argument {} has a value",
                    path.join(".")
                )))
            }
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "the {what} header is sent but the argument {} has no value",
                    path.join(".")
                )))
            }
            (Some(raw), Some(body)) => {
                let sent = decode(raw, &what)?;
                if !same(&sent, body) {
                    return Err(mismatch(format!(
                        "the {what} header value {sent:?} does not match the argument {} ({body})",
                        path.join(".")
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The value at `path` in `arguments`.
fn lookup<'a>(arguments: Option<&'a Map<String, Value>>, path: &[String]) -> Option<&'a Value> {
    let (last, parents) = path.split_last()?;
    let mut object = arguments?;
    for key in parents {
        object = object.get(key)?.as_object()?;
    }
    object.get(last)
}

/// Whether a decoded header value stands for the body value `body`.
fn same(header: &str, body: &Value) -> bool {
    match body {
        Value::String(s) => header == s,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        // Numerically (`42` and `42.0` are the same integer), as the spec advises.
        Value::Number(n) => match (header.parse::<f64>(), n.as_f64()) {
            (Ok(h), Some(b)) => h == b,
            _ => false,
        },
        _ => false,
    }
}

/// A `-32020` error.
fn mismatch(detail: String) -> ErrorObject {
    envelope::header_mismatch(format!("Header mismatch: {detail}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_the_base64_sentinel_strictly() {
        assert_eq!(decode("=?base64?SGVsbG8=?=", "h").unwrap(), "Hello");
        assert_eq!(decode("SGVsbG8=", "h").unwrap(), "SGVsbG8=");
        assert_eq!(
            decode("=?base64?SGVsbG8=", "h").unwrap(),
            "=?base64?SGVsbG8="
        );
        for bad in [
            "=?base64?SGVsbG8?=",
            "=?base64?SGVs!!!bG8=?=",
            "=?base64?/w==?=",
        ] {
            assert_eq!(
                decode(bad, "h").unwrap_err().code,
                envelope::HEADER_MISMATCH,
                "{bad}"
            );
        }
    }

    #[test]
    fn compares_values_by_type() {
        assert!(same("us-west1", &json!("us-west1")));
        assert!(!same("US-WEST1", &json!("us-west1")));
        assert!(same("42", &json!(42)));
        assert!(same("42.0", &json!(42)));
        assert!(!same("43", &json!(42)));
        assert!(same("true", &json!(true)));
        assert!(!same("True", &json!(true)));
        assert!(!same("{}", &json!({})));
    }
}
