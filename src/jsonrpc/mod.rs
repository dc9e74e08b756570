//! JSON-RPC 2.0: ids ([`id`]), error objects ([`error`]), messages ([`message`]), the
//! classification of parsed JSON into a message or a precise, spec-conformant error
//! ([`classify`]), and the wire text of outgoing messages ([`encode`]).
//!
//! This layer knows nothing of MCP. A reader above it (`protocol::frame`, which keeps MCP's
//! `params._meta` apart as an [`Object`]) fills [`Fields`] as it parses a frame and classifies
//! them here, so every message is classified by the same code whichever way it was read.

pub mod classify;
pub mod encode;
pub mod error;
pub mod id;
pub mod message;
pub mod object;

pub use classify::{
    classify, frame_from_value, frame_with, json_type, parse_frame, parse_json, parse_json_str,
    Fields, Kept, KeptValue,
};
pub use encode::{response_json, to_json};
pub use error::{code, ErrorObject, Invalid};
pub use id::RequestId;
pub use message::{Frame, Message, Notification, Request};
pub use object::Object;
