//! What one request is served under — its [`Scope`]: the revision it speaks, what its client
//! declared (identity, capabilities, the log messages it wants) and the token that stops it.
//!
//! The two eras differ in where the declarations live, and nowhere else. In the handshake era
//! `initialize` declares them once for the whole connection (and `logging/setLevel` changes the
//! log level later), so a request reads them from its [`super::session::Session`] when it uses
//! them ([`Declared::Connection`]). In the stateless era each request's `_meta` envelope declares
//! them for that request alone ([`Declared::Request`]); the connection it came on (a stdio pipe
//! serving 2026-07-28, say) keeps only what connections keep (requests in flight, requests the
//! server waits on).

use crate::jsonrpc::Message;
use crate::protocol::envelope::Envelope;
use crate::protocol::method_names::NotificationMethod;
use crate::protocol::{LogFilter, LogLevel, Revision};
use serde_json::Value;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A client's `clientInfo`: from `initialize`, or shared with a stateless request's envelope
/// (copied only when read: few handlers look at it).
#[derive(Debug, Clone)]
pub enum ClientInfo {
    /// From `initialize`.
    Value(Value),
    /// From a stateless request's `_meta`.
    Sent(Arc<Value>),
}

impl ClientInfo {
    /// The identity, as a value.
    pub fn to_value(&self) -> Value {
        match self {
            Self::Value(v) => v.clone(),
            Self::Sent(sent) => Value::clone(sent),
        }
    }

    /// The client's `name`, if it gave one (a string).
    pub fn name(&self) -> Option<String> {
        let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_owned);
        match self {
            Self::Value(v) => name(v),
            Self::Sent(sent) => name(sent),
        }
    }
}

/// What a client declared about itself: who it is, what it can do, which log messages it wants.
#[derive(Debug, Clone)]
pub struct Declarations {
    /// `clientInfo` as the client sent it.
    pub client_info: Option<ClientInfo>,
    /// `capabilities` as the client sent it (an object; `{}` before `initialize`). Shared:
    /// every `tools/call` reads it to decide which tools the client can see.
    pub client_capabilities: Arc<Value>,
    /// Which `notifications/message` go out: all until `logging/setLevel` (as the reference
    /// server does); for a stateless request, what its envelope asked for.
    pub log_filter: LogFilter,
}

impl Declarations {
    /// Nothing declared yet (before `initialize`): no capabilities, every log message wanted
    /// (as the reference server does until `logging/setLevel`).
    pub fn none() -> Self {
        Self {
            client_info: None,
            client_capabilities: crate::protocol::capabilities::declared_none(),
            log_filter: LogFilter::All,
        }
    }

    /// What a stateless request's envelope declares, and the revision it names. Its
    /// `clientInfo` stays text ([`ClientInfo::Sent`]) until someone reads it; no log level
    /// means no log messages.
    pub fn of_envelope(envelope: Envelope) -> (Revision, Self) {
        let declared = Self {
            client_info: envelope.client_info.map(ClientInfo::Sent),
            client_capabilities: envelope.client_capabilities,
            log_filter: envelope
                .log_level
                .map_or(LogFilter::Off, LogFilter::AtLeast),
        };
        (envelope.revision, declared)
    }

    /// The same declarations without log messages: what a stateless task runs under (the
    /// tasks extension sends a task none) and what a listen stream carries (only what its
    /// filter names).
    pub fn without_logs(&self) -> Self {
        Self {
            log_filter: LogFilter::Off,
            ..self.clone()
        }
    }
}

/// Where a request's client declarations are read.
#[derive(Debug, Clone)]
pub enum Declared {
    /// From the connection's session, when used: the handshake era's `initialize` (and a
    /// later `logging/setLevel`), or a connection that stands for one stateless exchange.
    Connection,
    /// The request's own (a stateless request on a connection that serves that era).
    Request(Arc<Declarations>),
}

/// What one request is served under.
#[derive(Debug, Clone)]
pub struct Scope {
    /// The revision the request is served under: the connection's negotiated one, or its
    /// envelope's.
    pub revision: Revision,
    /// Where its client's declarations are read.
    pub declared: Declared,
    /// Cancelled by `notifications/cancelled`, or when the connection ends (and, in the
    /// stateless era, when a round ends because input is needed).
    pub cancel: CancellationToken,
}

/// The `notifications/message` for a log message.
pub fn log_message(level: LogLevel, data: Value, logger: Option<&str>) -> Message {
    let mut params = serde_json::Map::new();
    params.insert("level".into(), level.as_str().into());
    if let Some(l) = logger {
        params.insert("logger".into(), l.into());
    }
    params.insert("data".into(), data);
    Message::notification(
        NotificationMethod::Message.as_str(),
        Some(Value::Object(params)),
    )
}
