//! What the command line's arguments ask for ([`Invocation`]): a serving command with its flags,
//! or a command of the Python package.

use super::flags::{HttpFlags, ReplayFlags, ServerFlags, StdioFlags, VerifyFlags};

/// Which transport a serving command serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Newline-delimited JSON-RPC on the process's stdin and stdout.
    Stdio,
    /// Streamable HTTP at `/mcp` (legacy SSE at `/sse` too).
    Http,
    /// Legacy HTTP+SSE at `/sse` (Streamable HTTP at `/mcp` too); announced as `sse`.
    Sse,
}

/// A serving command, parsed.
#[derive(Debug, Clone)]
pub struct Serve {
    /// What is served.
    pub transport: Transport,
    /// The server's flags.
    pub server: ServerFlags,
    /// The listener's flags (`http`, `sse`; defaults for `stdio`).
    pub http: HttpFlags,
    /// `stdio`'s own flags (defaults for `http`, `sse`).
    pub stdio: StdioFlags,
    /// `replay`'s recordings and matching (`None`: the catalogs serve).
    pub replay: Option<ReplayFlags>,
}

/// What the arguments ask for.
#[derive(Debug, Clone)]
pub enum Invocation {
    /// Serve.
    Serve(Box<Serve>),
    /// Send a recording's client side to a live server and compare its answers.
    Verify(VerifyFlags),
    /// `report` or `config`, with their arguments: the Python package's commands.
    Python {
        /// `report` or `config`.
        command: String,
        /// The arguments after it.
        args: Vec<String>,
    },
}
