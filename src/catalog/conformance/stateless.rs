//! Fixtures the suite's 2026-07-28 (stateless era) scenarios call: `test_logging_tool` (logs
//! only for a request that asked for logs with its envelope's `logLevel`), `test_header_param`
//! (an argument mirrored into the `Mcp-Param-Region` header, SEP-2243) and the resource
//! `test://stateless-static-text`, with the texts of the suite's reference server. The fixtures
//! that ask the client something (`test_missing_capability`, `test_streaming_elicitation`) are
//! in `mrtr.rs`.

use super::resources::fixed_resource;
use crate::catalog::builder::tool;
use crate::catalog::{string_arg, text_result};
use crate::error::Error;
use crate::protocol::LogLevel;
use crate::server::handler::tool_fn;
use crate::server::registry::{Resource, Tool};
use serde_json::json;

/// The stateless-era tools.
pub(super) fn tools() -> Result<Vec<Tool>, Error> {
    Ok(vec![
        tool("test_logging_tool").description("Diagnostic logging validator tool: logs one info message, which reaches only a request whose envelope carries a logLevel").no_input().serve(// The tool always logs; the core drops the message for a stateless request without
            // `logLevel` (and below its level), which is what the suite checks.
            tool_fn(|ctx, _| async move {
                ctx.log(
                    LogLevel::Info,
                    json!("Diagnostic trace logging activated"),
                    None,
                );
                Ok(text_result("Logging evaluated".into()))
            }))?,
        tool("test_header_param").description("Echoes its region, which HTTP clients mirror into the Mcp-Param-Region header (x-mcp-header, SEP-2243); the server refuses a call whose header disagrees with the argument").input(json!({
                    "type": "object",
                    "properties": {
                        "region": { "type": "string", "description": "Mirrored into Mcp-Param-Region", "x-mcp-header": "Region" }
                    },
                    "required": ["region"]
                })).serve(tool_fn(|_, args| async move {
                Ok(text_result(format!(
                    "Region: {}",
                    string_arg(&args, "region")
                )))
            }))?,
    ])
}

/// The stateless-era resources.
pub(super) fn resources() -> Vec<Resource> {
    vec![fixed_resource(
        json!({ "uri": "test://stateless-static-text", "name": "Stateless Static Text", "description": "A static text resource served on the draft path", "mimeType": "text/plain" }),
        json!({ "uri": "test://stateless-static-text", "mimeType": "text/plain", "text": "Static text content from the stateless draft path." }),
    )]
}

/// Registers the stateless-era fixtures (after the others: the suite's older scenarios see the
/// catalog they always saw first).
pub(super) fn load(registry: &mut crate::server::registry::Registry) -> Result<(), Error> {
    for tool in tools()? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    for resource in resources() {
        registry
            .resources
            .insert(resource.uri().to_string(), resource);
    }
    Ok(())
}
