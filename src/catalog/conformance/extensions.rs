//! The legacy extension negotiation's fixture (the suite's opt-in `server-legacy-extensions`
//! scenario, pinned to 2025-11-25): fixed extension settings the server declares in the
//! `initialize` result of the handshake era, and a tool that echoes the extensions the client
//! declared (in `initialize`, or in a 2026-07-28 request's `_meta`), so a lossy SDK on either
//! side shows. The settings are not declared in `server/discover`: a `null` in a settings array
//! is refused by the 2026-07-28 schema (the prerelease suite failed `server/discover`'s result).

use super::shared::plain;
use crate::catalog::text_result;
use crate::error::Error;
use crate::server::handler::tool_fn;
use crate::server::registry::Registry;
use serde_json::{json, Map, Value};

/// The tool that echoes the client's extensions.
const ECHO_TOOL: &str = "test_legacy_extension_capabilities";

/// The settings the scenario expects the server to declare, each to survive unchanged: the MCP
/// Apps extension's empty object, nested values and an empty object.
fn server_extensions() -> Map<String, Value> {
    let declared = json!({
        "io.modelcontextprotocol/ui": {},
        "com.example/conformance": { "nested": { "enabled": true, "limit": 3 }, "values": [null, "b", 4] },
        "com.example/empty": {}
    });
    match declared {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Declares the extensions in the handshake era and registers the echo tool.
pub(super) fn load(registry: &mut Registry) -> Result<(), Error> {
    registry.handshake_extensions.extend(server_extensions());
    let echo = plain(
        ECHO_TOOL,
        "Echoes the extensions the client declared in its capabilities (legacy extension negotiation)",
    )
    .serve(tool_fn(|ctx, _| async move {
        // The handshake era's `initialize` capabilities, or this request's (2026-07-28).
        let declared = ctx.client_capabilities();
        let extensions = declared.get("extensions").cloned().unwrap_or_else(|| json!({}));
        Ok(text_result(json!({ "extensions": extensions }).to_string()))
    }))?;
    registry.tools.insert(ECHO_TOOL.into(), echo);
    Ok(())
}
