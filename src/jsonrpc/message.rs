//! The messages: requests, notifications, responses, and what one frame held.

use super::error::{ErrorObject, Invalid};
use super::id::RequestId;
use super::object::Object;
use serde_json::Value;

/// A request: it has an id and expects exactly one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Echoed in the response.
    pub id: RequestId,
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// `params` as sent (an object or an array), if any; of a received request, without the
    /// member its reader kept apart as `meta` (the others in the order sent).
    pub params: Option<Value>,
    /// A member of a received request's `params` object that its reader kept apart from them,
    /// when it is an object (MCP's `params._meta`: `protocol::frame` reads frames that way),
    /// so that it is read in one form only. A request the server builds to send has none; any
    /// such member it carries is in its `params`.
    pub meta: Option<Object>,
}

/// A notification: no id, no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method, e.g. `notifications/cancelled`.
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

/// What one frame (one stdio line, one HTTP body) held.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A single message (the normal case).
    Single(Message),
    /// A non-empty JSON array: each element classified on its own.
    Batch(Vec<Result<Message, Invalid>>),
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

    /// The wire form, with members in the conventional order (`encode`'s `Serialize` impl).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl Invalid {
    /// The error response for this invalid message.
    pub fn into_message(self) -> Message {
        Message::Error {
            id: self.id,
            error: *self.error,
        }
    }
}
