//! Dialects: the servers a client will really meet differ on points the spec leaves open or that
//! their SDKs get wrong. A server given a [`Dialect`] speaks like that peer on each point below,
//! and like the spec (this server's own choice) everywhere else. Each point was measured against
//! the real peer (docs/dialects.md, `tests/test_dialects.py`).

use crate::jsonrpc::{code, ErrorObject};
use serde_json::{json, Value};

/// A peer to speak like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// A server written with the official Python SDK (`mcp` 2.x, `MCPServer`).
    PythonSdk,
    /// A server written with the official TypeScript SDK (`@modelcontextprotocol/sdk` 1.x,
    /// `McpServer`).
    TypescriptSdk,
    /// The reference server (`@modelcontextprotocol/server-everything`): the TypeScript SDK's
    /// answers, and its own transport wiring.
    Reference,
    /// A minimal hand-rolled kit (the seed-001 "universal-mcp-sdk", as its README describes
    /// it): 2024-11-05 only, no sessions and no SSE, tool and resource failures as `isError`
    /// results, only a schema's top-level `required` checked.
    UniversalMcpSdk,
}

impl Dialect {
    /// Every dialect's name, as `--dialect` takes it.
    pub const NAMES: [&'static str; 4] = [
        "python-sdk",
        "typescript-sdk",
        "reference",
        "universal-mcp-sdk",
    ];

    /// The dialect named `name`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "python-sdk" => Ok(Self::PythonSdk),
            "typescript-sdk" => Ok(Self::TypescriptSdk),
            "reference" => Ok(Self::Reference),
            "universal-mcp-sdk" => Ok(Self::UniversalMcpSdk),
            other => Err(format!(
                "unknown dialect {other:?}; known: {}",
                Self::NAMES.join(", ")
            )),
        }
    }

    /// Its name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::PythonSdk => "python-sdk",
            Self::TypescriptSdk => "typescript-sdk",
            Self::Reference => "reference",
            Self::UniversalMcpSdk => "universal-mcp-sdk",
        }
    }

    /// Whether SSE lines end with CRLF (the Python SDK's `sse-starlette`) rather than LF.
    pub const fn sse_crlf(self) -> bool {
        matches!(self, Self::PythonSdk)
    }

    /// A message's wire text as this peer writes it, when that differs from this server's
    /// (`{"jsonrpc", "id", …}`): the TypeScript SDK spreads the message before adding
    /// `jsonrpc` and `id`, so a response is `{"result", "jsonrpc", "id"}`, a notification
    /// `{"method", "params", "jsonrpc"}`, a request `{"method", "params", "jsonrpc", "id"}`
    /// (an error stays `{"jsonrpc", "id", "error"}`). The members' own text is kept.
    pub fn written(self, text: &str) -> Option<String> {
        if !matches!(self, Self::TypescriptSdk | Self::Reference) || !text.starts_with('{') {
            return None;
        }
        let members: std::collections::HashMap<&str, &serde_json::value::RawValue> =
            serde_json::from_str(text).ok()?;
        let order: &[&str] = if members.contains_key("result") {
            &["result", "jsonrpc", "id"]
        } else if members.contains_key("error") {
            return None;
        } else if members.contains_key("id") {
            &["method", "params", "jsonrpc", "id"]
        } else {
            &["method", "params", "jsonrpc"]
        };
        if members.keys().any(|k| !order.contains(k)) {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        out.push('{');
        for name in order {
            if let Some(raw) = members.get(name) {
                if out.len() > 1 {
                    out.push(',');
                }
                out.push('"');
                out.push_str(name);
                out.push_str("\":");
                out.push_str(raw.get());
            }
        }
        out.push('}');
        Some(out)
    }

    /// Whether this peer's answers apply to requests of the stateless era too (measured there:
    /// the Python SDK's; the TypeScript SDK installed here predates the era).
    pub const fn answers_stateless(self) -> bool {
        matches!(self, Self::PythonSdk)
    }

    /// The error for an unknown method, when the peer words it its own way: the Python SDK's
    /// `Method not found` with the method as `data`.
    pub fn method_not_found(self, method: &str) -> Option<ErrorObject> {
        match self {
            Self::PythonSdk => Some(
                ErrorObject::new(code::METHOD_NOT_FOUND, "Method not found")
                    .with_data(json!(method)),
            ),
            _ => None,
        }
    }

    /// The JSON-RPC code of the `406` for an `Accept` without both types: `-32600` from the
    /// Python SDK (this server's transport errors are `-32000`, as the TypeScript SDK's).
    pub const fn not_acceptable_code(self) -> i64 {
        match self {
            Self::PythonSdk => code::INVALID_REQUEST,
            _ => -32000,
        }
    }

    /// The answer to a POST whose `Content-Type` is not JSON, when the peer gives its own: the
    /// Python SDK's `400` with the plain text `Invalid Content-Type header` (this server's is
    /// the TypeScript SDK's `415` JSON-RPC error).
    pub const fn wrong_content_type(self) -> Option<(u16, &'static str)> {
        match self {
            Self::PythonSdk => Some((400, "Invalid Content-Type header")),
            _ => None,
        }
    }

    /// Whether the `405` to a GET or DELETE naming the 2026-07-28 revision has an empty body
    /// (the Python SDK's) rather than a JSON-RPC error.
    pub const fn bare_405(self) -> bool {
        matches!(self, Self::PythonSdk)
    }

    /// Whether a request's era is read from its `MCP-Protocol-Version` header alone (the Python
    /// SDK): a POST carrying the 2026-07-28 envelope without that header takes the handshake
    /// era's path, and without a session it is `400 Bad Request: Missing session ID`.
    pub const fn era_by_header(self) -> bool {
        matches!(self, Self::PythonSdk)
    }

    /// Whether a stdio server outlives its stdin while a timer of its runs (a logging or
    /// subscription toggle): the reference has no stdin EOF handler, and its intervals keep
    /// the process alive until a signal ends it.
    pub const fn outlives_stdin_with_timers(self) -> bool {
        matches!(self, Self::Reference)
    }

    /// The one revision this peer speaks, if it speaks only one (the kit: 2024-11-05).
    pub const fn only_revision(self) -> Option<super::revision::Revision> {
        match self {
            Self::UniversalMcpSdk => Some(super::revision::Revision::V2024_11_05),
            _ => None,
        }
    }

    /// Whether this is the kit's HTTP front: no sessions (every POST stands alone), JSON
    /// answers only, a notification answered `204`, `GET /mcp` a description of the server,
    /// `GET /` a health document, CORS `*` with `OPTIONS` answered `204`.
    pub const fn sessionless_http(self) -> bool {
        matches!(self, Self::UniversalMcpSdk)
    }

    /// Whether `method` is served: the kit knows `initialize`, `ping`, `tools/list`,
    /// `tools/call`, `resources/list` and `resources/read` (and what a server registers);
    /// anything else is `-32601`.
    pub fn serves(self, method: &str) -> bool {
        !matches!(self, Self::UniversalMcpSdk)
            || matches!(
                method,
                "initialize"
                    | "ping"
                    | "tools/list"
                    | "tools/call"
                    | "resources/list"
                    | "resources/read"
            )
    }

    /// The text of a failed tool or resource (its handler failed, it is unknown, a required
    /// argument is missing), when the peer words it its own way: the kit's
    /// `[Error] [<tool>] Error: <message>`.
    pub fn failure(self, name: &str, message: &str) -> String {
        match self {
            Self::UniversalMcpSdk => format!("[Error] [{name}] Error: {message}"),
            _ => message.to_string(),
        }
    }

    /// Whether tool arguments are checked only against the schema's top-level `required` (the
    /// kit), rather than validated against the whole schema.
    pub const fn checks_only_required(self) -> bool {
        matches!(self, Self::UniversalMcpSdk)
    }

    /// Whether `initialize` may leave out its params' members (the kit takes `{}`), and the
    /// bare notification name `initialized` counts as `notifications/initialized`.
    pub const fn lenient_handshake(self) -> bool {
        matches!(self, Self::UniversalMcpSdk)
    }

    /// Whether SSE events carry ids and a stream starts with a priming event (resumability):
    /// only with an event store, which neither SDK configures by default; the reference does.
    pub const fn sse_event_ids(self) -> bool {
        matches!(self, Self::Reference)
    }

    /// Whether a priming event carries the reconnection delay (`retry:`): the reference's
    /// carries none.
    pub const fn sse_retry(self) -> bool {
        !matches!(self, Self::Reference)
    }

    /// The SSE keep-alive comment: `: ping` (Python SDK) or `: keepalive` (this server's,
    /// the TypeScript SDK's keep-alive helper's).
    pub const fn sse_keepalive(self) -> &'static str {
        match self {
            Self::PythonSdk => ": ping",
            Self::TypescriptSdk | Self::Reference | Self::UniversalMcpSdk => ": keepalive",
        }
    }

    /// The answer to `tools/call` of an unknown tool (handshake era): both SDKs answer a result
    /// with `isError: true`, in their own words.
    pub fn unknown_tool(self, name: &str) -> Result<Value, ErrorObject> {
        let text = match self {
            Self::PythonSdk => format!("Unknown tool: {name}"),
            Self::TypescriptSdk | Self::Reference => {
                format!("MCP error -32602: Tool {name} not found")
            }
            Self::UniversalMcpSdk => self.failure(name, &format!("Unknown tool: {name}")),
        };
        Ok(json!({ "content": [{ "type": "text", "text": text }], "isError": true }))
    }

    /// The error for `prompts/get` of an unknown prompt: the Python SDK's has code `0` (and in
    /// the stateless era it is `-32603 Internal server error`, an SDK bug).
    pub fn unknown_prompt(self, name: &str, handshake: bool) -> ErrorObject {
        match self {
            Self::PythonSdk if !handshake => {
                ErrorObject::new(code::INTERNAL_ERROR, "Internal server error")
            }
            Self::PythonSdk => ErrorObject::new(0, format!("Unknown prompt: {name}")),
            Self::TypescriptSdk | Self::Reference | Self::UniversalMcpSdk => ErrorObject::new(
                code::INVALID_PARAMS,
                format!("MCP error -32602: Prompt {name} not found"),
            ),
        }
    }

    /// The answer to `resources/read` of an unknown resource (handshake era): `-32602` from
    /// both SDKs (the spec's `-32002` from neither), with the URI in `data` from Python's; an
    /// `isError` result from the kit.
    pub fn unknown_resource(self, uri: &str) -> Result<Value, ErrorObject> {
        Err(match self {
            Self::PythonSdk => {
                ErrorObject::new(code::INVALID_PARAMS, format!("Unknown resource: {uri}"))
                    .with_data(json!({ "uri": uri }))
            }
            Self::TypescriptSdk | Self::Reference => ErrorObject::new(
                code::INVALID_PARAMS,
                format!("MCP error -32602: Resource {uri} not found"),
            ),
            Self::UniversalMcpSdk => {
                let text = self.failure(uri, &format!("Resource not found: {uri}"));
                return Ok(
                    json!({ "content": [{ "type": "text", "text": text }], "isError": true }),
                );
            }
        })
    }

    /// Whether a successful tool result says `isError: false` (the Python SDK always does;
    /// the TypeScript SDK leaves it out).
    pub const fn says_is_error_false(self) -> bool {
        matches!(self, Self::PythonSdk)
    }

    /// The HTTP status of a request naming a session the server does not know: the reference
    /// answers `400` where the spec says `404`.
    pub const fn unknown_session_status(self) -> u16 {
        match self {
            Self::Reference => 400,
            Self::PythonSdk | Self::TypescriptSdk | Self::UniversalMcpSdk => 404,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in Dialect::NAMES {
            assert_eq!(Dialect::parse(name).unwrap().as_str(), name);
        }
        assert!(Dialect::parse("go-sdk").unwrap_err().contains("python-sdk"));
    }

    #[test]
    fn the_typescript_sdk_member_order() {
        let ts = Dialect::TypescriptSdk;
        assert_eq!(
            ts.written(r#"{"jsonrpc":"2.0","id":1,"result":{"a":1e21}}"#)
                .unwrap(),
            r#"{"result":{"a":1e21},"jsonrpc":"2.0","id":1}"#
        );
        assert_eq!(
            ts.written(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#)
                .unwrap(),
            r#"{"method":"notifications/x","jsonrpc":"2.0"}"#
        );
        assert_eq!(
            ts.written(r#"{"jsonrpc":"2.0","id":"s","method":"roots/list","params":{}}"#)
                .unwrap(),
            r#"{"method":"roots/list","params":{},"jsonrpc":"2.0","id":"s"}"#
        );
        assert_eq!(ts.written(r#"{"jsonrpc":"2.0","id":1,"error":{}}"#), None);
        assert_eq!(
            Dialect::PythonSdk.written(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            None
        );
        assert_eq!(ts.written("[]"), None);
    }
}
