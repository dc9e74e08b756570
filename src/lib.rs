//! everything-mcp: a Model Context Protocol test server.
//!
//! Module map (one concept per module):
//! - [`jsonrpc`]: JSON-RPC 2.0: ids, messages, error objects, classification, encoding.
//! - [`protocol`]: MCP revisions and negotiation, capabilities, log levels, reading a frame
//!   (`protocol::frame`) and a request's `_meta` (`protocol::meta`).
//! - [`server`]: the server, its sessions, the dispatcher, `RequestContext`, the registry, and
//!   one module per method family under `server::methods`.
//! - [`catalog`]: built-in surfaces (`everything`, ...), e.g. `catalog::everything::echo`.
//! - [`transport`]: stdio, in-memory connections, Streamable HTTP and legacy HTTP+SSE (one axum
//!   app), and the relay socket through which a stdio process reaches an in-process server.
//! - [`traffic`]: the recorder of every frame in and out.
//! - [`error`]: failures of the server itself (protocol errors are JSON-RPC error objects).
//! - [`field`]: members of small JSON objects found without hashing (the request path's lookups).
//! - [`jsnum`]: numbers printed as JavaScript prints them, as the reference server's texts do.
//! - [`python`]: the PyO3 binding, the only module that knows Python.

/// mimalloc instead of the C library's allocator: the request path allocates small JSON values
/// from several threads at once, where glibc's arena locks took a quarter of the server's CPU
/// (docs/benchmarks.md). Only the core's own allocations use it; Python's are untouched.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A hash map for the per-request paths (the recorder's open requests, a session's in-flight
/// requests and streams, the session table): std's map with foldhash instead of SipHash, whose
/// hashing showed in the request path's profile. Keys are ids the server hands out or checks.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// An insertion-ordered map with foldhash: the registry's tables, which keep registration order
/// (the order `*/list` shows) and are looked up by name on every call (`tools/call` looks its
/// tool up twice over HTTP: the header check and the call), where SipHash showed in the profile.
pub type FastIndexMap<K, V> = indexmap::IndexMap<K, V, foldhash::fast::RandomState>;

/// The set counterpart of [`FastMap`].
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

pub mod catalog;
pub mod error;
pub mod field;
pub mod jsnum;
pub mod jsonrpc;
pub mod protocol;
mod python;
pub mod server;
pub mod traffic;
pub mod transport;

pub use error::Error;

/// Locks `m`, taking the data of a poisoned lock as it is: a panic inside a handler must not
/// make the session (or stream) it touched unusable, and no critical section here leaves its
/// data half-changed.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
pub use server::{Server, ServerConfig};
