//! Classification: parsed JSON to a message, or precisely why it is not one.
//!
//! Nothing in here panics on input: every malformed frame becomes an [`Invalid`] that carries
//! the error object to send back and, when it could be read, the request id to echo.

use super::error::{ErrorObject, Invalid};
use super::id::RequestId;
use super::message::{Frame, Message, Notification, Request};
use super::object::Object;
use serde_json::Value;

/// Parses one frame's bytes as JSON; the only failure is `-32700`.
pub fn parse_json(bytes: &[u8]) -> Result<Value, Invalid> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Invalid::anonymous(ErrorObject::parse_error(format!("invalid UTF-8 ({e})")))
    })?;
    parse_json_str(text)
}

/// [`parse_json`] of text already known to be UTF-8.
pub fn parse_json_str(text: &str) -> Result<Value, Invalid> {
    if is_blank(text) {
        return Err(empty_message());
    }
    serde_json::from_str(text).map_err(|e| Invalid::anonymous(ErrorObject::parse_error(e)))
}

/// Whether a frame's text holds nothing but whitespace (an empty message).
pub fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// `-32700` for a frame with nothing in it.
pub fn empty_message() -> Invalid {
    Invalid::anonymous(ErrorObject::parse_error("empty message"))
}

/// Parses one frame. Errors are whole-frame failures (not JSON, empty batch, not an object).
pub fn parse_frame(bytes: &[u8]) -> Result<Frame, Invalid> {
    frame_from_value(parse_json(bytes)?)
}

/// Classifies parsed JSON as one message or a batch.
pub fn frame_from_value(value: Value) -> Result<Frame, Invalid> {
    frame_with(value, classify)
}

/// [`frame_from_value`], each message classified by `classify` (a reader that keeps a member
/// of `params` apart classifies with [`Fields::keep_apart`]).
pub fn frame_with(
    value: Value,
    classify: impl Fn(Value) -> Result<Message, Invalid>,
) -> Result<Frame, Invalid> {
    match value {
        Value::Array(items) if items.is_empty() => Err(Invalid::anonymous(
            ErrorObject::invalid_request("empty batch"),
        )),
        Value::Array(items) => Ok(Frame::Batch(items.into_iter().map(classify).collect())),
        other => classify(other).map(Frame::Single),
    }
}

/// Classifies one JSON value as a JSON-RPC message, or says precisely why it is not one.
pub fn classify(value: Value) -> Result<Message, Invalid> {
    Fields::of_value(value)?.classify()
}

/// The members of a JSON-RPC object that classification reads (any others are ignored): a
/// reader fills them as it parses, or [`Fields::of_value`] takes them out of a parsed object.
#[derive(Default)]
pub struct Fields {
    /// `id`, as sent.
    pub id: Option<Value>,
    /// `jsonrpc`, as sent.
    pub jsonrpc: Option<Value>,
    /// `method`, as sent.
    pub method: Option<Value>,
    /// `params`, as sent (without the member in `kept`).
    pub params: Option<Value>,
    /// The member of an object `params` its reader kept apart, if it had it.
    pub kept: Option<Kept>,
    /// `result`, as sent.
    pub result: Option<Value>,
    /// `error`, as sent.
    pub error: Option<Value>,
}

/// A member of `params` that a reader kept apart (MCP's `_meta`): a request's becomes its
/// [`Request::meta`] (when it is an object); a notification's goes back in its place.
pub struct Kept {
    /// Its name.
    pub name: &'static str,
    /// Its position among the members of `params`.
    pub at: usize,
    /// What it held.
    pub value: KeptValue,
}

/// What a kept member held: an object, read as one, or any other value (which no reader of a
/// request looks into, but a notification's hooks see).
pub enum KeptValue {
    /// A JSON object.
    Object(Object),
    /// Anything else (boxed: rare, and inline it would make every request's fields bigger).
    Other(Box<Value>),
}

impl KeptValue {
    /// The value a `serde_json::Value` parse would have given.
    pub fn into_value(self) -> Value {
        match self {
            KeptValue::Object(object) => Value::Object(object.to_map()),
            KeptValue::Other(value) => *value,
        }
    }
}

impl Fields {
    /// The member names read.
    pub const NAMES: [&'static str; 6] = ["id", "jsonrpc", "method", "params", "result", "error"];

    /// Where member `name` goes (`params` included); `None` for a member that is not read.
    pub fn slot(&mut self, name: &str) -> Option<&mut Option<Value>> {
        Some(match name {
            "id" => &mut self.id,
            "jsonrpc" => &mut self.jsonrpc,
            "method" => &mut self.method,
            "params" => &mut self.params,
            "result" => &mut self.result,
            "error" => &mut self.error,
            _ => return None,
        })
    }

    /// The members of a parsed value, which must be an object.
    pub fn of_value(value: Value) -> Result<Self, Invalid> {
        let Value::Object(obj) = value else {
            return Err(Invalid::anonymous(ErrorObject::invalid_request(format!(
                "expected a JSON object, got {}",
                json_type(&value)
            ))));
        };
        // Taken in one pass over the object rather than removed by key: each removal SipHashes
        // its key (`preserve_order`).
        let mut fields = Fields::default();
        for (key, value) in obj {
            if let Some(slot) = fields.slot(&key) {
                *slot = Some(value);
            }
        }
        Ok(fields)
    }

    /// Takes member `name` out of an object `params` and keeps it apart.
    pub fn keep_apart(mut self, name: &'static str) -> Self {
        if let Some(Value::Object(params)) = &mut self.params {
            let at = params.keys().position(|k| k == name);
            if let Some((at, value)) = at.zip(params.shift_remove(name)) {
                let value = match value {
                    Value::Object(o) => KeptValue::Object(Object::from_map(o)),
                    other => KeptValue::Other(Box::new(other)),
                };
                self.kept = Some(Kept { name, at, value });
            }
        }
        self
    }

    /// Classifies the message these members make, or says precisely why they make none.
    pub fn classify(self) -> Result<Message, Invalid> {
        let Fields {
            id: raw_id,
            jsonrpc,
            method,
            params,
            kept,
            result,
            error,
        } = self;
        // Read the id first so that every later error can echo it.
        let id = match &raw_id {
            None => None,
            Some(v) => match RequestId::from_value(v) {
                Some(id) => Some(id),
                None if v.is_null() && method.is_none() => None,
                // An integer past 64 bits arrives as a float: it is an integer, but the answer
                // could not carry it back exactly (RFC 8259 §6: such numbers do not interoperate).
                None if v.as_f64().is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18) => {
                    return Err(Invalid::anonymous(ErrorObject::invalid_request(format!(
                        "\"id\" is an integer beyond 64 bits ({}), which an answer could not carry back exactly: use a string or a 64-bit integer",
                        describe(v)
                    ))))
                }
                None => {
                    return Err(Invalid::anonymous(ErrorObject::invalid_request(format!(
                        "\"id\" must be a string or an integer, got {}",
                        describe(v)
                    ))))
                }
            },
        };
        let fail = |detail: String| Invalid {
            id: id.clone(),
            error: Box::new(ErrorObject::invalid_request(detail)),
        };
        match &jsonrpc {
            Some(Value::String(v)) if v == "2.0" => {}
            Some(other) => {
                return Err(fail(format!(
                    "\"jsonrpc\" must be \"2.0\", got {}",
                    describe(other)
                )))
            }
            None => return Err(fail("missing \"jsonrpc\": \"2.0\"".into())),
        }
        if let Some(method) = method {
            let Value::String(method) = method else {
                return Err(fail(format!(
                    "\"method\" must be a string, got {}",
                    describe(&method)
                )));
            };
            if let Some(p) = &params {
                if !(p.is_object() || p.is_array()) {
                    return Err(fail(format!(
                        "\"params\" must be an object (or a JSON-RPC array), got {}",
                        describe(p)
                    )));
                }
            }
            return Ok(match id {
                Some(id) => {
                    let (params, meta) = match kept {
                        Some(Kept {
                            value: KeptValue::Object(object),
                            ..
                        }) => (params, Some(object)),
                        // A `_meta` that is not an object stays in `params`, where the server's
                        // check of a request's params refuses it (-32602).
                        other => (params.map(|p| put_back(p, other)), None),
                    };
                    Message::Request(Request {
                        id,
                        method,
                        params,
                        meta,
                    })
                }
                None => Message::Notification(Notification {
                    method,
                    params: params.map(|p| put_back(p, kept)),
                }),
            });
        }
        // From here on the frame is shaped like a response: errors about it are sent with a null
        // id, because a reply carrying its id would look like the answer to a request of the
        // peer's own with that id.
        let fail = |detail: String| Invalid::anonymous(ErrorObject::invalid_request(detail));
        match (raw_id, result, error) {
            (None, _, _) => Err(fail(
                "a message needs a \"method\" (request or notification) or an \"id\" (response)"
                    .into(),
            )),
            (Some(_), Some(_), Some(_)) => Err(fail(
                "a response must not carry both \"result\" and \"error\"".into(),
            )),
            (Some(_), Some(result), None) => match id {
                Some(id) => Ok(Message::Response { id, result }),
                None => Err(fail("a result response needs a non-null \"id\"".into())),
            },
            (Some(_), None, Some(error)) => match serde_json::from_value::<ErrorObject>(error) {
                Ok(error) => Ok(Message::Error { id, error }),
                Err(e) => Err(fail(format!("malformed \"error\" object ({e})"))),
            },
            (Some(_), None, None) => Err(fail("a response needs \"result\" or \"error\"".into())),
        }
    }
}

/// A notification's `params` as sent: a kept member back in its place (a notification's hooks
/// see its params whole).
fn put_back(mut params: Value, kept: Option<Kept>) -> Value {
    if let (Value::Object(object), Some(kept)) = (&mut params, kept) {
        let at = kept.at.min(object.len());
        object.shift_insert(at, kept.name.to_owned(), kept.value.into_value());
    }
    params
}

/// The JSON type name of a value, for error messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A short description of a value for error messages: scalars are shown, containers named.
fn describe(v: &Value) -> String {
    match v {
        Value::Array(_) | Value::Object(_) => json_type(v).to_string(),
        Value::String(s) if s.len() > 40 => format!("a string of {} bytes", s.len()),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::error::code;
    use serde_json::json;

    fn err(bytes: &[u8]) -> Invalid {
        match parse_frame(bytes) {
            Err(e) => e,
            Ok(Frame::Single(m)) => panic!("expected an error, got {m:?}"),
            Ok(Frame::Batch(_)) => panic!("expected an error, got a batch"),
        }
    }

    #[test]
    fn classifies_the_four_kinds() {
        let f = parse_frame(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap();
        assert_eq!(f, Frame::Single(Message::request(1.into(), "ping", None)));
        let f = parse_frame(br#"{"jsonrpc":"2.0","method":"n","params":{}}"#).unwrap();
        assert_eq!(
            f,
            Frame::Single(Message::notification("n", Some(json!({}))))
        );
        let f = parse_frame(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap();
        assert_eq!(
            f,
            Frame::Single(Message::response(RequestId::String("a".into()), json!({})))
        );
        let f = parse_frame(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"m"}}"#)
            .unwrap();
        assert_eq!(
            f,
            Frame::Single(Message::error(None, ErrorObject::new(-1, "m")))
        );
    }

    #[test]
    fn not_json_is_parse_error() {
        for bad in [&b"{"[..], b"nope", b"", b"  ", b"\xff\xfe", b"{\"a\":1}{"] {
            let e = err(bad);
            assert_eq!(e.error.code, code::PARSE_ERROR, "{bad:?}");
            assert_eq!(e.id, None);
        }
    }

    #[test]
    fn not_jsonrpc_is_invalid_request() {
        let cases: [(&[u8], &str); 8] = [
            (
                b"5",
                "Invalid Request: expected a JSON object, got a number",
            ),
            (
                br#"{"id":1,"method":"ping"}"#,
                "Invalid Request: missing \"jsonrpc\": \"2.0\"",
            ),
            (
                br#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                "Invalid Request: \"jsonrpc\" must be \"2.0\", got \"1.0\"",
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":7}"#,
                "Invalid Request: \"method\" must be a string, got 7",
            ),
            (
                br#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
                "Invalid Request: \"id\" must be a string or an integer, got true",
            ),
            (
                br#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
                "Invalid Request: \"id\" must be a string or an integer, got 1.5",
            ),
            (
                br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
                "Invalid Request: \"id\" must be a string or an integer, got null",
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
                "Invalid Request: \"params\" must be an object (or a JSON-RPC array), got 3",
            ),
        ];
        for (bytes, message) in cases {
            let e = err(bytes);
            assert_eq!(
                *e.error,
                ErrorObject::invalid_request(&message["Invalid Request: ".len()..])
            );
        }
        assert_eq!(err(b"[]").error.code, code::INVALID_REQUEST);
        assert_eq!(
            err(br#"{"jsonrpc":"2.0"}"#).error.code,
            code::INVALID_REQUEST
        );
    }

    #[test]
    fn invalid_message_echoes_a_readable_id() {
        let e = err(br#"{"jsonrpc":"2.0","id":"x","method":5}"#);
        assert_eq!(e.id, Some(RequestId::String("x".into())));
        let e = err(br#"{"jsonrpc":"2.0","id":{},"method":"m"}"#);
        assert_eq!(e.id, None);
    }

    #[test]
    fn malformed_responses_are_answered_with_a_null_id() {
        for bad in [
            &br#"{"jsonrpc":"2.0","id":7,"result":1,"error":{"code":1,"message":"m"}}"#[..],
            br#"{"jsonrpc":"2.0","id":7,"error":{"code":"x"}}"#,
            br#"{"jsonrpc":"2.0","id":7}"#,
        ] {
            let e = err(bad);
            assert_eq!((e.id, e.error.code), (None, code::INVALID_REQUEST));
        }
    }

    #[test]
    fn batches_classify_each_element() {
        let f = parse_frame(br#"[{"jsonrpc":"2.0","id":1,"method":"a"},7]"#).unwrap();
        let Frame::Batch(items) = f else { panic!() };
        assert!(items[0].is_ok());
        assert_eq!(
            items[1].as_ref().unwrap_err().error.code,
            code::INVALID_REQUEST
        );
    }

    #[test]
    fn deeply_nested_input_does_not_crash() {
        let deep = "[".repeat(100_000);
        assert_eq!(err(deep.as_bytes()).error.code, code::PARSE_ERROR);
    }
}
