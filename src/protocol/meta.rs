//! MCP's `_meta`: a received request's `params._meta`, which the frame reader
//! ([`super::frame`]) keeps apart from its params as a [`RequestMeta`], so that it is read in
//! one form only: by the stateless era's gate ([`super::envelope`]), for `progressToken`, or
//! whole when a handler asks for it (`RequestContext::meta_map`).
//!
//! A stateless request's `_meta` is its whole envelope (protocol version, client capabilities,
//! client identity under 40-byte names). Its members are values like any other, parsed once with
//! the frame; what is saved is the map around them: no SipHash per name, and no allocation for
//! the names a reader expects ([`MemberName`]).

use crate::jsonrpc::object::Name;
use crate::jsonrpc::Object;
use serde::de::{Deserialize, Deserializer, Visitor};
use serde_json::Value;
use std::fmt;

/// A received request's `params._meta` (when it is an object): its members in the order sent.
pub type RequestMeta = Object;

/// `_meta` key: the revision the request is sent under (required).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: what the client can do (required, an object).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: who the client is (optional).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the least severe `notifications/message` the client wants for this request
/// (optional; without it no log message is sent).
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// The name of the member of `params` that holds a request's metadata.
pub const META: &str = "_meta";

/// `_meta` key: the request's progress token (the client asked for progress).
pub const PROGRESS_TOKEN: &str = "progressToken";

/// The `_meta` names a reader of a request looks up: read without an allocation.
const EXPECTED: [&str; 5] = [
    PROTOCOL_VERSION,
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    PROGRESS_TOKEN,
];

impl Object {
    /// The `_meta` object of a message's `params` value, if it has one.
    pub fn in_params(params: &Value) -> Option<Self> {
        crate::field::member(params, META)
            .and_then(Value::as_object)
            .map(Self::from_object)
    }
}

/// A member name of a `_meta` object: a `'static` one for the names in [`EXPECTED`].
pub struct MemberName(pub Name);

impl<'de> Deserialize<'de> for MemberName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_string(MemberNameVisitor)
    }
}

/// Reads a [`MemberName`].
struct MemberNameVisitor;

impl MemberNameVisitor {
    /// The expected name `v` is, if it is one.
    fn expected(v: &str) -> Option<&'static str> {
        EXPECTED.iter().copied().find(|n| *n == v)
    }
}

impl Visitor<'_> for MemberNameVisitor {
    type Value = MemberName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, v: &str) -> Result<MemberName, E> {
        Ok(MemberName(match Self::expected(v) {
            Some(name) => Name::Borrowed(name),
            None => Name::Owned(v.to_owned()),
        }))
    }

    fn visit_string<E>(self, v: String) -> Result<MemberName, E> {
        Ok(MemberName(match Self::expected(&v) {
            Some(name) => Name::Borrowed(name),
            None => Name::Owned(v),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_s_meta_reads_as_a_frame_s_does() {
        let value = json!({ "b": [1, "\u{1F600}"], "a\"": { "x": null }, PROGRESS_TOKEN: 3 });
        let meta = RequestMeta::from_object(value.as_object().unwrap());
        assert_eq!(Value::Object(meta.to_map()), value);
        assert_eq!(meta.value("a\""), Some(json!({ "x": null })));
        assert_eq!(meta.value(PROGRESS_TOKEN), Some(json!(3)));
        assert_eq!(
            RequestMeta::in_params(&json!({ "_meta": value })),
            Some(meta)
        );
        assert_eq!(RequestMeta::in_params(&json!({ "_meta": 5 })), None);
    }

    #[test]
    fn without_a_member_keeps_the_others_in_order() {
        let meta = RequestMeta::in_params(
            &json!({ "_meta": { "a": 2, PROGRESS_TOKEN: 1, "b": 3, "c": 4 } }),
        )
        .unwrap();
        assert_eq!(
            Value::Object(meta.without(PROGRESS_TOKEN).to_map()).to_string(),
            r#"{"a":2,"b":3,"c":4}"#
        );
    }

    #[test]
    fn expected_names_are_not_allocated() {
        let name = |text: &str| serde_json::from_str::<MemberName>(text).unwrap().0;
        assert!(matches!(name(r#""progressToken""#), Name::Borrowed(_)));
        assert!(matches!(
            name(r#""io.modelcontextprotocol/protocolVersion""#),
            Name::Borrowed(_)
        ));
        assert!(matches!(name(r#""other""#), Name::Owned(_)));
        assert_eq!(name(r#""progress\u0054oken""#), PROGRESS_TOKEN);
    }
}
