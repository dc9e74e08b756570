//! Reading an incoming frame: one `serde_json` pass from its text to the [`Fields`] of a message,
//! with `params._meta` kept apart as an [`Object`] ([`super::meta`]); the JSON-RPC layer
//! classifies them.
//!
//! Every value is built by the same deserializer a `serde_json::Value` parse of the frame uses,
//! in the same order, so what is accepted, and the error of what is not, is exactly what that
//! parse gives (the test below holds it to that); only where the values go differs. A message
//! object is not built as a map only to be taken apart (SipHash, `preserve_order`, and a
//! `String` per member name): decoding an echo `tools/call` took 8.7k instructions that way and
//! 6.5k this way (callgrind).

use super::meta::{self, META};
use crate::jsonrpc::{self, ErrorObject, Fields, Frame, Invalid, Kept, KeptValue, Message, Object};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt;

/// One frame's JSON as [`parse_raw_str`] reads it: a message object's members, taken out as
/// it is parsed (no map is built for the object), or any other value.
// Large (seven values) but short-lived: it only carries a frame from the parser to `classify`,
// and boxing it would add an allocation to every frame.
#[allow(clippy::large_enum_variant)]
pub enum RawFrame {
    /// A JSON object: the members a message may have.
    Object(Fields),
    /// A JSON array (a batch, or an empty one).
    Array(Vec<Value>),
    /// Anything else (not a message).
    Other(Value),
}

impl RawFrame {
    /// Whether the frame is a non-empty array: a batch, which a session may refuse.
    pub fn is_batch(&self) -> bool {
        matches!(self, RawFrame::Array(items) if !items.is_empty())
    }

    /// Classifies the frame as one message or a batch (each element as [`classify`] does).
    pub fn classify(self) -> Result<Frame, Invalid> {
        match self {
            RawFrame::Object(fields) => fields.classify().map(Frame::Single),
            RawFrame::Array(items) => jsonrpc::frame_with(Value::Array(items), classify),
            RawFrame::Other(value) => classify(value).map(Frame::Single),
        }
    }
}

impl From<Value> for RawFrame {
    fn from(value: Value) -> Self {
        match value {
            Value::Array(items) => RawFrame::Array(items),
            other => RawFrame::Other(other),
        }
    }
}

/// Classifies a parsed value (a batch's element) as a message, its `params._meta` kept apart
/// as a frame read by [`parse_raw_str`] keeps it.
pub fn classify(value: Value) -> Result<Message, Invalid> {
    Fields::of_value(value)?.keep_apart(META).classify()
}

/// Parses one frame's text: the JSON a `serde_json::Value` parse accepts, with its errors
/// (`-32700`), but a message object read straight into its [`Fields`].
pub fn parse_raw_str(text: &str) -> Result<RawFrame, Invalid> {
    if jsonrpc::classify::is_blank(text) {
        return Err(jsonrpc::classify::empty_message());
    }
    let mut de = serde_json::Deserializer::from_str(text);
    FrameSeed
        .deserialize(&mut de)
        .and_then(|frame| de.end().map(|()| frame))
        .map_err(|e| Invalid::anonymous(ErrorObject::parse_error(e)))
}

/// Builds `$wrap(value)` for every JSON value but objects, exactly as `serde_json::Value`
/// builds them.
macro_rules! visit_non_objects {
    ($de:lifetime, $out:ty, $wrap:expr) => {
        fn visit_bool<E>(self, v: bool) -> Result<$out, E> {
            Ok($wrap(Value::Bool(v)))
        }
        fn visit_i64<E>(self, v: i64) -> Result<$out, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_u64<E>(self, v: u64) -> Result<$out, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_f64<E>(self, v: f64) -> Result<$out, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_str<E>(self, v: &str) -> Result<$out, E> {
            Ok($wrap(Value::String(v.to_owned())))
        }
        fn visit_string<E>(self, v: String) -> Result<$out, E> {
            Ok($wrap(Value::String(v)))
        }
        fn visit_unit<E>(self) -> Result<$out, E> {
            Ok($wrap(Value::Null))
        }
        fn visit_seq<A: SeqAccess<$de>>(self, mut seq: A) -> Result<$out, A::Error> {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(item) = seq.next_element::<Value>()? {
                items.push(item);
            }
            Ok($wrap(Value::Array(items)))
        }
    };
}

/// Reads a whole frame as a [`RawFrame`].
struct FrameSeed;

impl<'de> DeserializeSeed<'de> for FrameSeed {
    type Value = RawFrame;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawFrame, D::Error> {
        d.deserialize_any(self)
    }
}

/// A non-object frame, as a [`RawFrame`].
fn other_frame(value: Value) -> RawFrame {
    RawFrame::from(value)
}

impl<'de> Visitor<'de> for FrameSeed {
    type Value = RawFrame;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    visit_non_objects!('de, RawFrame, other_frame);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawFrame, A::Error> {
        let mut fields = Fields::default();
        while let Some(MessageName(name)) = map.next_key()? {
            // Other members are still parsed as values (and dropped), so that what is
            // accepted is exactly what `Value` accepts. A repeated member: the last one wins.
            match name {
                Some("params") => {
                    let (params, kept) = map.next_value_seed(ParamsSeed)?;
                    fields.params = Some(params);
                    fields.kept = kept;
                }
                Some(name) => {
                    let value = map.next_value()?;
                    if let Some(slot) = fields.slot(name) {
                        *slot = Some(value);
                    }
                }
                None => drop(map.next_value::<Value>()?),
            }
        }
        Ok(RawFrame::Object(fields))
    }
}

/// `params` as read: the value (an object without `_meta`), and `_meta`, kept apart.
type Params = (Value, Option<Kept>);

/// Reads `params`: an object member by member, its `_meta` with [`MetaSeed`]; any other value
/// as `Value` reads it.
struct ParamsSeed;

impl<'de> DeserializeSeed<'de> for ParamsSeed {
    type Value = Params;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Params, D::Error> {
        d.deserialize_any(self)
    }
}

/// `params` that is not an object.
fn other_params(value: Value) -> Params {
    (value, None)
}

impl<'de> Visitor<'de> for ParamsSeed {
    type Value = Params;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    visit_non_objects!('de, Params, other_params);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
        let mut object = Map::new();
        let mut kept: Option<Kept> = None;
        while let Some(name) = map.next_key::<ParamName>()? {
            match name {
                ParamName::Meta => {
                    let value = map.next_value_seed(MetaSeed)?;
                    // A repeated `_meta` keeps the first one's place, as in a map.
                    let at = kept.map_or(object.len(), |k| k.at);
                    kept = Some(Kept {
                        name: META,
                        at,
                        value,
                    });
                }
                ParamName::Other(name) => {
                    let value = map.next_value::<Value>()?;
                    object.insert(name, value);
                }
            }
        }
        Ok((Value::Object(object), kept))
    }
}

/// Reads a `_meta` value: an object as an [`Object`] (names a reader expects not allocated),
/// any other value as a `Value`.
struct MetaSeed;

impl<'de> DeserializeSeed<'de> for MetaSeed {
    type Value = KeptValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<KeptValue, D::Error> {
        d.deserialize_any(self)
    }
}

/// A `_meta` that is not an object.
fn other_meta(value: Value) -> KeptValue {
    KeptValue::Other(Box::new(value))
}

impl<'de> Visitor<'de> for MetaSeed {
    type Value = KeptValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    visit_non_objects!('de, KeptValue, other_meta);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<KeptValue, A::Error> {
        let mut object = Object::with_capacity(map.size_hint().unwrap_or(4));
        while let Some(name) = map.next_key::<meta::MemberName>()? {
            object.insert(name.0, map.next_value()?);
        }
        Ok(KeptValue::Object(object))
    }
}

/// A member name of a message object: one [`Fields`] reads (`Some`), or another (`None`).
struct MessageName(Option<&'static str>);

impl<'de> Deserialize<'de> for MessageName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(MessageNameVisitor)
    }
}

/// Reads a member name without allocating it.
struct MessageNameVisitor;

impl Visitor<'_> for MessageNameVisitor {
    type Value = MessageName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, v: &str) -> Result<MessageName, E> {
        Ok(MessageName(Fields::NAMES.iter().copied().find(|n| *n == v)))
    }
}

/// A member name of `params`: `_meta` (not allocated), or another.
enum ParamName {
    /// `_meta`.
    Meta,
    /// Any other name.
    Other(String),
}

impl<'de> Deserialize<'de> for ParamName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_string(ParamNameVisitor)
    }
}

/// Reads a [`ParamName`].
struct ParamNameVisitor;

impl Visitor<'_> for ParamNameVisitor {
    type Value = ParamName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, v: &str) -> Result<ParamName, E> {
        Ok(if v == META {
            ParamName::Meta
        } else {
            ParamName::Other(v.to_owned())
        })
    }

    fn visit_string<E>(self, v: String) -> Result<ParamName, E> {
        Ok(if v == META {
            ParamName::Meta
        } else {
            ParamName::Other(v)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{parse_json_str, Request};

    /// What a `Value` parse of `text` classifies as, `_meta` kept apart as the reader keeps it.
    fn via_value(text: &str) -> Result<Frame, Invalid> {
        parse_json_str(text).and_then(|v| RawFrame::from(v).classify())
    }

    #[test]
    fn a_frame_reads_as_its_value_parse_does() {
        let nest = |n: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{{"a":{}{}}}}}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        // Accepted by a Value parse, and refused by it (its depth limit).
        let (deep, too_deep) = (nest(120), nest(130));
        let frames = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","method":"n","params":{},"extra":[1,{"a":null}]}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":{},"id":7}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}"#,
            r#"{"j\u0073onrpc":"2.0","\u0069d":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","x":"\ud800"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","x":1e400}"#,
            r#"{"id":1,"id":}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},3]"#,
            "[]",
            "3",
            "-1.5",
            "18446744073709551615",
            "\"text\"",
            "true",
            "null",
            "{}",
            "{\"a\":1} x",
            "  ",
            // `_meta`: first, between, last, repeated, not an object, escaped, in a batch, of
            // a notification, and what a Value parse refuses inside it.
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1},"b":2,"c":3,"d":4}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":2,"_meta":{"a":[1,{}]},"c":3}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":2,"c":3,"_meta":{ "a" : "x" }}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1},"b":2,"_meta":{"z":2}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":2,"_meta":5,"c":3,"d":4}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":2,"_m\u0065ta":{"k\/":"\u00e9"},"c":3}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1},"b":2,"c":3}}]"#,
            r#"{"jsonrpc":"2.0","method":"n","params":{"b":2,"_meta":{"a":1},"c":3,"d":4}}"#,
            r#"{"jsonrpc":"2.0","method":"n","params":{"b":2,"_meta":[5],"c":3}}"#,
            r#"{"jsonrpc":"2.0","method":"n","params":{"_meta":{"a":1},"b":2,"_meta":{"z":2}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":"\ud800"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":[1e400]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":[1,]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":7e400}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1,"a":2,"b":3}}}"#,
            &deep,
            &too_deep,
        ];
        for text in frames {
            let expected = via_value(text);
            let got = parse_raw_str(text).and_then(RawFrame::classify);
            assert_eq!(got, expected, "{text}");
            // The same order too (map equality ignores it).
            assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{text}");
        }
    }

    #[test]
    fn a_request_s_params_keep_their_order_without_meta() {
        for params in [
            r#"{"_meta":{"a":1},"b":2,"c":3,"d":4}"#,
            r#"{"b":2,"_meta":{"a":1},"c":3,"d":4}"#,
            r#"{"b":2,"c":3,"_meta":{"a":1},"d":4}"#,
            r#"{"b":2,"c":3,"d":4,"_meta":{"a":1}}"#,
            r#"{"_meta":{"a":1},"b":2}"#,
            r#"{"_meta":5,"b":2,"c":3}"#,
            r#"{"_meta":{"a":1}}"#,
        ] {
            let mut expected: Map<String, Value> = serde_json::from_str(params).unwrap();
            // An object `_meta` is kept apart; another value stays in params (the server's
            // check of a request's params refuses it).
            let meta = expected.get("_meta").filter(|m| m.is_object()).cloned();
            if meta.is_some() {
                expected.shift_remove("_meta");
            }
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#);
            let Ok(Frame::Single(Message::Request(r))) =
                parse_raw_str(&text).and_then(RawFrame::classify)
            else {
                panic!("{params}")
            };
            let Request {
                params: got,
                meta: got_meta,
                ..
            } = r;
            assert_eq!(
                got.map(|p| p.to_string()),
                Some(Value::Object(expected).to_string()),
                "{params}"
            );
            assert_eq!(
                got_meta.map(|m| Value::Object(m.to_map())),
                meta,
                "{params}"
            );
        }
    }
}
