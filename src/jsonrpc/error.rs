//! Error objects, the standard codes, and a message that could not be accepted.

use super::id::RequestId;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

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
}
