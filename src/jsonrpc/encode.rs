//! Writing messages: the one definition of a message's wire shape, and the text of a response
//! whose result is written rather than held as a value.

use super::id::RequestId;
use super::message::Message;
use serde::Serialize;

/// The wire text of an outgoing frame (compact JSON, no trailing newline).
pub fn to_json(frame: &impl Serialize) -> String {
    serde_json::to_string(frame).unwrap_or_default()
}

/// The wire text of a success response whose result `write_result` appends as JSON text: the
/// bytes [`Message::Response`] is written as, for a result that is written rather than held as a
/// value (a stateless result completed as it is written). `result_len` sizes the text, so it is
/// allocated once.
pub fn response_json(
    id: &RequestId,
    result_len: usize,
    write_result: impl FnOnce(&mut String),
) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(result_len + 48);
    out.push_str(r#"{"jsonrpc":"2.0","id":"#);
    match id {
        // A number's display is its JSON text.
        RequestId::Number(n) => {
            let _ = write!(out, "{n}");
        }
        RequestId::String(s) => out.push_str(&to_json(s)),
    }
    out.push_str(r#","result":"#);
    write_result(&mut out);
    out.push('}');
    out
}

/// The one definition of a message's wire shape: `jsonrpc`, then `id`, `method`, `params`,
/// `result` or `error`.
impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = out.serialize_map(None)?;
        m.serialize_entry("jsonrpc", "2.0")?;
        match self {
            // The id is written as it is held (`RequestId` serialises as the string or number
            // it was sent as), not copied into a `Value` first.
            Self::Request(r) => {
                m.serialize_entry("id", &r.id)?;
                m.serialize_entry("method", &r.method)?;
                // `meta` (what a reader kept apart of a received request's params) is not
                // written: the server sends only requests it builds, which have none.
                if let Some(p) = &r.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Self::Notification(n) => {
                m.serialize_entry("method", &n.method)?;
                if let Some(p) = &n.params {
                    m.serialize_entry("params", p)?;
                }
            }
            Self::Response { id, result } => {
                m.serialize_entry("id", id)?;
                m.serialize_entry("result", result)?;
            }
            Self::Error { id, error } => {
                // `None` is `null`.
                m.serialize_entry("id", id)?;
                m.serialize_entry("error", error)?;
            }
        }
        m.end()
    }
}

impl Message {
    /// The wire text (compact JSON, no trailing newline), written without building the value
    /// first (every outgoing frame comes here).
    pub fn to_json(&self) -> String {
        to_json(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::classify::parse_frame;
    use crate::jsonrpc::error::ErrorObject;
    use crate::jsonrpc::message::Frame;
    use serde_json::json;

    #[test]
    fn to_json_writes_the_bytes_to_value_would() {
        let frames = [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"h\u00e9 \"x\""}}}"#,
            r#"{"jsonrpc":"2.0","id":"a-1","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":0.5,"total":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo: hi"}],"n":1e300}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad","data":{"uri":"x"}}}"#,
        ];
        for frame in frames {
            let Ok(Frame::Single(message)) = parse_frame(frame.as_bytes()) else {
                panic!("{frame} did not parse");
            };
            assert_eq!(message.to_json(), message.to_value().to_string(), "{frame}");
        }
    }

    #[test]
    fn response_json_writes_the_bytes_a_response_is_written_as() {
        let ids = [
            RequestId::from(7),
            RequestId::from(-3),
            RequestId::Number(u64::MAX.into()),
            RequestId::String("a \"b\" \u{e9}\n".into()),
        ];
        for id in ids {
            let result = json!({ "content": [{ "type": "text", "text": "x" }] });
            let text = response_json(&id, 0, |out| out.push_str(&result.to_string()));
            assert_eq!(text, Message::response(id, result).to_json());
        }
    }

    #[test]
    fn serializes_in_conventional_order() {
        let m = Message::error(Some(3.into()), ErrorObject::method_not_found("x"));
        assert_eq!(
            m.to_json(),
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: x"}}"#
        );
    }

    #[test]
    fn large_integer_ids_round_trip_exactly() {
        let f =
            parse_frame(br#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#).unwrap();
        let Frame::Single(Message::Request(r)) = f else {
            panic!()
        };
        let out = Message::response(r.id, json!({})).to_json();
        assert_eq!(
            out,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#
        );
    }
}
