//! The core's error type: what can go wrong when configuring or running a server (as opposed
//! to protocol errors, which are JSON-RPC error objects sent to the client).

/// A failure of the server itself, reported to whoever configured or runs it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A tool, resource, template or prompt definition is malformed.
    #[error("invalid definition: {0}")]
    Definition(String),
    /// A configuration value is wrong (unknown catalog, unknown revision, bad limit).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A fault rule (or fault file) is malformed.
    #[error("invalid fault rule: {0}")]
    Fault(String),
    /// A traffic recording to replay cannot be read.
    #[error("invalid recording: {0}")]
    Recording(String),
    /// The server was stopped and cannot serve any more.
    #[error("the server is stopped")]
    Stopped,
    /// An operating-system error (binding, files, stdio).
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
