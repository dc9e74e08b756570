//! JSON-RPC 2.0 envelope: ids, messages, error objects, and a parser that turns any bytes into
//! either a classified message or a precise, spec-conformant error.
//!
//! Nothing in here panics on input: every malformed frame becomes an [`Invalid`] that carries
//! the error object to send back and, when it could be read, the request id to echo.

use crate::meta::{self, MetaSeed, RequestMeta};
use serde::de::DeserializeSeed;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// The standard JSON-RPC error codes (and the MCP ones the server uses).
pub mod code {
    /// The frame is not JSON at all.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON, but not a valid JSON-RPC message (or not allowed here).
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist (or is not available in this revision).
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method exists but its params are wrong.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed while handling a valid request.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// A request id: JSON-RPC allows strings and numbers; MCP narrows numbers to integers and
/// forbids `null`. The number is kept as written so it is echoed back byte for byte.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id, kept as the JSON number that was sent.
    Number(serde_json::Number),
    /// A string id.
    String(String),
}

impl RequestId {
    /// Reads an id from JSON; `None` when the value is not a string or an integer.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::String(s.clone())),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(Self::Number(n.clone())),
            _ => None,
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n.into())
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// One of [`code`] or an application code.
    pub code: i64,
    /// One sentence a person can act on.
    pub message: String,
    /// Machine-readable detail, when there is any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with no `data`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }
    /// `-32700`, with the parser's reason.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(code::PARSE_ERROR, format!("Parse error: {detail}"))
    }
    /// `-32600`, with what exactly is wrong.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(code::INVALID_REQUEST, format!("Invalid Request: {detail}"))
    }
    /// `-32601` for `method`.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            code::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }
    /// `-32602`, with what exactly is wrong.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(code::INVALID_PARAMS, format!("Invalid params: {detail}"))
    }
    /// `-32603`, with the failure.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(code::INTERNAL_ERROR, format!("Internal error: {detail}"))
    }
    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// A request: it has an id and expects exactly one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Echoed in the response.
    pub id: RequestId,
    /// The MCP method, e.g. `tools/call`.
    pub method: String,
    /// `params` as sent (an object or an array), if any; of a received request, without its
    /// `_meta` (which is `meta`), ordered as removing `_meta` from the parsed object
    /// (`Map::remove`) leaves it.
    pub params: Option<Value>,
    /// `params._meta` of a received request when it is an object (the stateless era's
    /// envelope, `progressToken`), kept as text: taken out of `params` as the frame is parsed,
    /// so that it is read in one form only (a request the server builds to send has none; any
    /// `_meta` it carries is in its `params`).
    pub meta: Option<RequestMeta>,
}

/// A notification: no id, no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The MCP method, e.g. `notifications/cancelled`.
    pub method: String,
    /// `params` as sent, if any.
    pub params: Option<Value>,
}

/// One classified JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Expects a response.
    Request(Request),
    /// Fire and forget.
    Notification(Notification),
    /// A successful answer to a request.
    Response {
        /// The id of the request it answers.
        id: RequestId,
        /// The result value.
        result: Value,
    },
    /// A failed answer; `id` is `None` when the peer could not read the request's id.
    Error {
        /// The id of the request it answers, or `None` (`null` on the wire).
        id: Option<RequestId>,
        /// What went wrong.
        error: ErrorObject,
    },
}

/// A message that could not be accepted, with the error response to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    /// The id to echo, when one could be read (`null` otherwise).
    pub id: Option<RequestId>,
    /// The error to send (boxed: invalid input is the cold path, keep `Result`s small).
    pub error: Box<ErrorObject>,
}

impl Invalid {
    /// An invalid message whose id is unknown.
    pub fn anonymous(error: ErrorObject) -> Self {
        Self {
            id: None,
            error: Box::new(error),
        }
    }
    /// The error response for this invalid message.
    pub fn into_message(self) -> Message {
        Message::Error {
            id: self.id,
            error: *self.error,
        }
    }
}

/// What one frame (one stdio line, one HTTP body) held.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A single message (the normal case).
    Single(Message),
    /// A non-empty JSON array: each element classified on its own.
    Batch(Vec<Result<Message, Invalid>>),
}

/// Parses one frame's bytes as JSON; the only failure is `-32700`.
pub fn parse_json(bytes: &[u8]) -> Result<Value, Invalid> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        Invalid::anonymous(ErrorObject::parse_error(format!("invalid UTF-8 ({e})")))
    })?;
    parse_json_str(text)
}

/// [`parse_json`] of text already known to be UTF-8.
pub fn parse_json_str(text: &str) -> Result<Value, Invalid> {
    if text.trim().is_empty() {
        return Err(Invalid::anonymous(ErrorObject::parse_error(
            "empty message",
        )));
    }
    serde_json::from_str(text).map_err(|e| Invalid::anonymous(ErrorObject::parse_error(e)))
}

/// One frame's JSON as [`parse_raw_str`] reads it: a message object's members, taken out as
/// it is parsed (no map is built for the object), or any other value.
// Large (six values) but short-lived: it only carries a frame from the parser to `classify`,
// and boxing it would add an allocation to every frame.
#[allow(clippy::large_enum_variant)]
pub enum RawFrame {
    /// A JSON object: the members a message may have.
    Object(Members),
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

    /// Classifies the frame as one message or a batch ([`frame_from_value`]).
    pub fn classify(self) -> Result<Frame, Invalid> {
        match self {
            RawFrame::Object(members) => classify_members(members).map(Frame::Single),
            RawFrame::Array(items) => frame_from_value(Value::Array(items)),
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

/// [`parse_json_str`] for a frame: the same JSON accepted and the same errors, but a message
/// object is read straight into its [`Members`]. Building the object as a map only to take it
/// apart hashed (SipHash, `preserve_order`) and allocated each member name: decoding an echo
/// `tools/call` took 8.7k instructions that way and 6.5k this way (callgrind).
///
/// `params._meta` is not built as values either: a request keeps it as `text`'s members
/// ([`RequestMeta`]). A frame this reading refuses is parsed again as a `Value`, which decides
/// (its error is the answer, or it is classified as parsed): the `_meta` check is stricter
/// than a `Value` parse only at the edges (very deep nesting), never laxer.
pub fn parse_raw_str(text: &Arc<str>) -> Result<RawFrame, Invalid> {
    if text.trim().is_empty() {
        return Err(Invalid::anonymous(ErrorObject::parse_error(
            "empty message",
        )));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let frame = RawFrameVisitor { text }
        .deserialize(&mut de)
        .and_then(|frame| de.end().map(|()| frame));
    match frame {
        Ok(frame) => Ok(frame),
        Err(_) => parse_json_str(text).map(RawFrame::from),
    }
}

/// Reads any JSON value of `text` as [`RawFrame`], building values exactly as `Value` would
/// (but a request's `_meta`).
struct RawFrameVisitor<'a> {
    /// The text being parsed, which a `_meta` keeps.
    text: &'a Arc<str>,
}

impl<'de> DeserializeSeed<'de> for RawFrameVisitor<'_> {
    type Value = RawFrame;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<RawFrame, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for RawFrameVisitor<'_> {
    type Value = RawFrame;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<RawFrame, E> {
        Ok(RawFrame::Other(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<RawFrame, E> {
        Ok(RawFrame::Other(Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<RawFrame, E> {
        Ok(RawFrame::Other(Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<RawFrame, E> {
        Ok(RawFrame::Other(Value::from(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<RawFrame, E> {
        Ok(RawFrame::Other(Value::String(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<RawFrame, E> {
        Ok(RawFrame::Other(Value::String(v)))
    }

    fn visit_unit<E>(self) -> Result<RawFrame, E> {
        Ok(RawFrame::Other(Value::Null))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawFrame, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(RawFrame::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<RawFrame, A::Error> {
        let mut members = Members::default();
        while let Some(key) = map.next_key::<MemberName>()? {
            // Other members are still parsed as values (and dropped), so that what is
            // accepted is exactly what `Value` accepts. A repeated member: the last one wins.
            if key.0 == Some("params") {
                members.params = Some(map.next_value_seed(ParamsSeed { text: self.text })?);
                continue;
            }
            match members.slot(key.0) {
                Some(slot) => *slot = Some(map.next_value()?),
                None => drop(map.next_value::<Value>()?),
            }
        }
        Ok(RawFrame::Object(members))
    }
}

/// A member name of a message object: one [`Members`] reads (`Some`), or another (`None`).
struct MemberName(Option<&'static str>);

impl<'de> Deserialize<'de> for MemberName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(MemberNameVisitor)
    }
}

/// Reads a member name without allocating it.
struct MemberNameVisitor;

impl serde::de::Visitor<'_> for MemberNameVisitor {
    type Value = MemberName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, v: &str) -> Result<MemberName, E> {
        Ok(MemberName(Members::NAMES.iter().copied().find(|n| *n == v)))
    }
}

/// `params` as read: its value, with an object's `_meta` member taken out.
pub struct Params {
    /// `params` (an object without `_meta`, or any other value).
    value: Value,
    /// The `_meta` member, and the position it had among the object's members.
    meta: Option<(usize, meta::Parsed)>,
}

impl Params {
    /// `params` already parsed as a value (a batch's element): `_meta` taken out of it.
    fn of_value(value: Value) -> Self {
        let Value::Object(mut object) = value else {
            return Self { value, meta: None };
        };
        let at = object.keys().position(|k| k == "_meta");
        let meta = at.and_then(|at| {
            let parsed = match object.shift_remove("_meta")? {
                Value::Object(o) => meta::Parsed::Object(RequestMeta::from_object(&o)),
                other => meta::Parsed::Other(Box::new(other)),
            };
            Some((at, parsed))
        });
        Self {
            value: Value::Object(object),
            meta,
        }
    }

    /// A request's `params` and `_meta`: the object ordered as removing `_meta` from it
    /// (`Map::remove`: the last member takes its place) leaves it, which is what handlers saw
    /// when `_meta` was removed from their params; a `_meta` that is not an object is no
    /// envelope and nothing reads it.
    fn of_request(self) -> (Value, Option<RequestMeta>) {
        let Self { mut value, meta } = self;
        let Some((at, parsed)) = meta else {
            return (value, None);
        };
        if let Value::Object(object) = &mut value {
            // Only a `_meta` before the last two members moves one (clients put it last).
            if at + 1 < object.len() {
                if let Some(last) = object.keys().next_back().cloned() {
                    if let Some(v) = object.shift_remove(&last) {
                        object.shift_insert(at, last, v);
                    }
                }
            }
        }
        let meta = match parsed {
            meta::Parsed::Object(m) => Some(m),
            meta::Parsed::Other(_) => None,
        };
        (value, meta)
    }

    /// A notification's `params` as sent: `_meta` back in its place (a notification's hooks
    /// see its params whole).
    fn of_notification(self) -> Value {
        let Self { mut value, meta } = self;
        if let (Value::Object(object), Some((at, parsed))) = (&mut value, meta) {
            object.shift_insert(at, "_meta".to_owned(), parsed.into_value());
        }
        value
    }
}

/// Reads `params`: an object member by member, its `_meta` with [`MetaSeed`]; any other value
/// as `Value` reads it.
struct ParamsSeed<'a> {
    /// The text being parsed.
    text: &'a Arc<str>,
}

impl<'de> DeserializeSeed<'de> for ParamsSeed<'_> {
    type Value = Params;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Params, D::Error> {
        d.deserialize_any(self)
    }
}

/// `params` that is not an object, as a [`Params`].
fn other_params(value: Value) -> Params {
    Params { value, meta: None }
}

impl<'de> serde::de::Visitor<'de> for ParamsSeed<'_> {
    type Value = Params;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    meta::visit_non_objects!('de, Params, other_params);

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
        let mut object = Map::new();
        let mut meta: Option<(usize, meta::Parsed)> = None;
        while let Some(name) = map.next_key::<ParamName>()? {
            match name {
                ParamName::Meta => {
                    let parsed = map.next_value_seed(MetaSeed { text: self.text })?;
                    // A repeated `_meta` keeps the first one's place, as in a map.
                    let at = meta.map_or(object.len(), |(at, _)| at);
                    meta = Some((at, parsed));
                }
                ParamName::Other(name) => {
                    let value = map.next_value::<Value>()?;
                    object.insert(name, value);
                }
            }
        }
        Ok(Params {
            value: Value::Object(object),
            meta,
        })
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
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(ParamNameVisitor)
    }
}

/// Reads a [`ParamName`].
struct ParamNameVisitor;

impl serde::de::Visitor<'_> for ParamNameVisitor {
    type Value = ParamName;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, v: &str) -> Result<ParamName, E> {
        Ok(if v == "_meta" {
            ParamName::Meta
        } else {
            ParamName::Other(v.to_owned())
        })
    }

    fn visit_string<E>(self, v: String) -> Result<ParamName, E> {
        Ok(if v == "_meta" {
            ParamName::Meta
        } else {
            ParamName::Other(v)
        })
    }
}

/// Parses one frame. Errors are whole-frame failures (not JSON, empty batch, not an object).
pub fn parse_frame(bytes: &[u8]) -> Result<Frame, Invalid> {
    frame_from_value(parse_json(bytes)?)
}

/// Classifies parsed JSON as one message or a batch.
pub fn frame_from_value(value: Value) -> Result<Frame, Invalid> {
    match value {
        Value::Array(items) if items.is_empty() => Err(Invalid::anonymous(
            ErrorObject::invalid_request("empty batch"),
        )),
        Value::Array(items) => Ok(Frame::Batch(items.into_iter().map(classify).collect())),
        other => classify(other).map(Frame::Single),
    }
}

/// The members of a JSON-RPC object that [`classify`] reads (any others are ignored).
#[derive(Default)]
pub struct Members {
    /// `id`, as sent.
    id: Option<Value>,
    /// `jsonrpc`, as sent.
    jsonrpc: Option<Value>,
    /// `method`, as sent.
    method: Option<Value>,
    /// `params`, as sent (`_meta` apart).
    params: Option<Params>,
    /// `result`, as sent.
    result: Option<Value>,
    /// `error`, as sent.
    error: Option<Value>,
}

impl Members {
    /// The member names read.
    const NAMES: [&'static str; 6] = ["id", "jsonrpc", "method", "params", "result", "error"];

    /// Where member `name` goes; `None` for a member that is not read (and for `params`, which
    /// is read as [`Params`]).
    fn slot(&mut self, name: Option<&str>) -> Option<&mut Option<Value>> {
        Some(match name? {
            "id" => &mut self.id,
            "jsonrpc" => &mut self.jsonrpc,
            "method" => &mut self.method,
            "result" => &mut self.result,
            "error" => &mut self.error,
            _ => return None,
        })
    }
}

/// Classifies one JSON value as a JSON-RPC message, or says precisely why it is not one.
pub fn classify(value: Value) -> Result<Message, Invalid> {
    let Value::Object(obj) = value else {
        return Err(Invalid::anonymous(ErrorObject::invalid_request(format!(
            "expected a JSON object, got {}",
            json_type(&value)
        ))));
    };
    // The members are taken in one pass over the object rather than removed by key: each
    // removal SipHashes its key (`preserve_order`): 1,830 instructions a frame before, 720 after
    // (callgrind, a stateless `tools/call`).
    let mut members = Members::default();
    for (key, value) in obj {
        if key == "params" {
            members.params = Some(Params::of_value(value));
        } else if let Some(slot) = members.slot(Some(&key)) {
            *slot = Some(value);
        }
    }
    classify_members(members)
}

/// [`classify`] of an object's members.
fn classify_members(members: Members) -> Result<Message, Invalid> {
    let Members {
        id: raw_id,
        jsonrpc,
        method,
        params,
        result,
        error,
    } = members;
    // Read the id first so that every later error can echo it.
    let id = match &raw_id {
        None => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None if v.is_null() && method.is_none() => None,
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
            if !(p.value.is_object() || p.value.is_array()) {
                return Err(fail(format!(
                    "\"params\" must be an object (or a JSON-RPC array), got {}",
                    describe(&p.value)
                )));
            }
        }
        return Ok(match id {
            Some(id) => {
                let (params, meta) = params.map_or((None, None), |p| {
                    let (params, meta) = p.of_request();
                    (Some(params), meta)
                });
                Message::Request(Request {
                    id,
                    method,
                    params,
                    meta,
                })
            }
            None => Message::Notification(Notification {
                method,
                params: params.map(Params::of_notification),
            }),
        });
    }
    // From here on the frame is shaped like a response: errors about it are sent with a null
    // id, because a reply carrying its id would look like the answer to a request of the
    // peer's own with that id.
    let fail = |detail: String| Invalid::anonymous(ErrorObject::invalid_request(detail));
    match (raw_id, result, error) {
        (None, _, _) => Err(fail(
            "a message needs a \"method\" (request or notification) or an \"id\" (response)".into(),
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

impl Message {
    /// A success response.
    pub fn response(id: RequestId, result: Value) -> Self {
        Self::Response { id, result }
    }
    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self::Error { id, error }
    }
    /// A request.
    pub fn request(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        Self::Request(Request {
            id,
            method: method.into(),
            params,
            meta: None,
        })
    }
    /// A notification.
    pub fn notification(method: impl Into<String>, params: Option<Value>) -> Self {
        Self::Notification(Notification {
            method: method.into(),
            params,
        })
    }

    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match self {
            Self::Request(r) => Some(&r.method),
            Self::Notification(n) => Some(&n.method),
            _ => None,
        }
    }

    /// The id, for requests and responses.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Request(r) => Some(&r.id),
            Self::Response { id, .. } => Some(id),
            Self::Error { id, .. } => id.as_ref(),
            Self::Notification(_) => None,
        }
    }

    /// The wire form, with members in the conventional order (the `Serialize` impl below).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The wire text (compact JSON, no trailing newline), written without building the value
    /// first (every outgoing frame comes here).
    pub fn to_json(&self) -> String {
        to_json(self)
    }
}

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
impl serde::Serialize for Message {
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
                match (&r.params, &r.meta) {
                    (Some(Value::Object(p)), Some(meta)) => {
                        // A received request written out again: its `_meta` back in params.
                        let mut p = p.clone();
                        p.insert("_meta".to_owned(), Value::Object(meta.to_map()));
                        m.serialize_entry("params", &p)?;
                    }
                    (Some(p), _) => m.serialize_entry("params", p)?,
                    (None, _) => {}
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
    use serde_json::json;

    #[test]
    fn a_raw_frame_classifies_as_the_parsed_value_does() {
        let nest = |n: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"_meta":{{"a":{}{}}}}}}}"#,
                "[".repeat(n),
                "]".repeat(n)
            )
        };
        // Accepted by a Value parse but too deep for the strict check; refused by both.
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
            // a notification, and what only a strict parse refuses (or a Value parse accepts).
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1},"b":2,"c":3,"d":4}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":2,"_meta":{"a":[1,{}]},"c":3}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":2,"c":3,"_meta":{ "a" : "x" }}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1},"b":2,"_meta":{"z":2}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":2,"_meta":5,"c":3,"d":4}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"b":2,"_m\u0065ta":{"k\/":"\u00e9"},"c":3}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":1},"b":2,"c":3}}]"#,
            r#"{"jsonrpc":"2.0","method":"n","params":{"b":2,"_meta":{"a":1},"c":3,"d":4}}"#,
            r#"{"jsonrpc":"2.0","method":"n","params":{"b":2,"_meta":[5],"c":3}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":"\ud800"}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":[1e400]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":[1,]}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":7e400}}"#,
            &deep,
            &too_deep,
        ];
        for text in frames {
            let expected = parse_json_str(text).and_then(frame_from_value);
            let got = parse_raw_str(&Arc::from(text)).and_then(RawFrame::classify);
            assert_eq!(got, expected, "{text}");
            // The same order too (map equality ignores it).
            assert_eq!(format!("{got:?}"), format!("{expected:?}"), "{text}");
        }
    }

    #[test]
    fn a_request_s_params_are_ordered_as_removing_meta_from_the_map_leaves_them() {
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
            let meta = expected.remove("_meta").filter(Value::is_object);
            let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#);
            let Ok(Frame::Single(Message::Request(r))) =
                parse_raw_str(&Arc::from(text)).and_then(RawFrame::classify)
            else {
                panic!("{params}")
            };
            assert_eq!(
                r.params.map(|p| p.to_string()),
                Some(Value::Object(expected).to_string()),
                "{params}"
            );
            assert_eq!(r.meta.map(|m| Value::Object(m.to_map())), meta, "{params}");
        }
    }

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
    fn serializes_in_conventional_order() {
        let m = Message::error(Some(3.into()), ErrorObject::method_not_found("x"));
        assert_eq!(
            m.to_json(),
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found: x"}}"#
        );
    }

    #[test]
    fn deeply_nested_input_does_not_crash() {
        let deep = "[".repeat(100_000);
        assert_eq!(err(deep.as_bytes()).error.code, code::PARSE_ERROR);
    }
}
