//! everything-mcp: a Model Context Protocol test server.
//!
//! Module map (one concept per module):
//! - [`jsonrpc`]: JSON-RPC 2.0: ids, messages, error objects, classification, encoding.
//! - [`protocol`]: MCP revisions and negotiation, capabilities, log levels, reading a frame
//!   (`protocol::frame`) and a request's `_meta` (`protocol::meta`).
//! - [`server`]: the server, its sessions, the dispatcher, `RequestContext`, the registry, and
//!   one module per method family under `server::methods`.
//! - [`catalog`]: built-in surfaces (`everything`, ...), e.g. `catalog::everything::echo`.
//! - [`replay`]: a server answering from recorded traffic instead of a catalog.
//! - [`transport`]: stdio, in-memory connections, Streamable HTTP and legacy HTTP+SSE (one axum
//!   app), and the relay socket through which a stdio process reaches an in-process server.
//! - [`traffic`]: the recorder of every frame in and out.
//! - [`error`]: failures of the server itself (protocol errors are JSON-RPC error objects).
//! - [`fast_map`]: the hash maps of the request path (foldhash instead of SipHash).
//! - [`lock`]: the one way to take a mutex (a poisoned one is taken as it is).
//! - [`field`]: members of small JSON objects found without hashing (the request path's lookups).
//! - [`options`]: every option a server and an HTTP listener take, each written once, and
//!   their conversion to the configurations the core reads.
//! - [`jsnum`]: numbers printed as JavaScript prints them, as the reference server's texts do.
//! - [`cli`]: the serving commands' flags (one definition for the native command and
//!   `python -m everything_mcp`), and the server they launch.
//! - [`logging`]: the server's own diagnostics on stderr.
//! - [`python`]: the PyO3 binding (the `python` feature), the only module that knows Python.

/// mimalloc instead of the C library's allocator: the request path allocates small JSON values
/// from several threads at once, where glibc's arena locks took a quarter of the server's CPU
/// (docs/benchmarks.md). Only the core's own allocations use it; Python's are untouched.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub mod catalog;
pub mod cli;
pub mod clock;
pub mod error;
pub mod fast_map;
pub mod faults;
pub mod field;
pub mod field_error;
#[cfg(any(feature = "fuzzing", test))]
pub mod fuzzing;
pub mod jsnum;
pub mod jsonrpc;
pub mod lock;
pub mod logging;
pub mod options;
pub mod protocol;
#[cfg(feature = "python")]
mod python;
pub mod replay;
pub mod server;
pub mod traffic;
pub mod transport;

pub use error::Error;

pub use server::{Server, ServerConfig};
