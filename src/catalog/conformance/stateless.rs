//! Fixtures the suite's 2026-07-28 (stateless era) scenarios call: `test_logging_tool` (logs
//! only for a request that asked for logs with its envelope's `logLevel`),
//! `test_missing_capability` (`-32021` without the sampling capability),
//! `test_streaming_elicitation` (a progress notification, then the result), `test_header_param`
//! (an argument mirrored into the `Mcp-Param-Region` header, SEP-2243) and the resource
//! `test://stateless-static-text`, with the texts of the suite's reference server.

use super::resources::fixed_resource;
use crate::catalog::{string_arg, text_result};
use crate::error::Error;
use crate::protocol::envelope;
use crate::protocol::LogLevel;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::{Resource, Tool};
use serde_json::json;

/// The stateless-era tools.
pub(super) fn tools() -> Result<Vec<Tool>, Error> {
    Ok(vec![
        Tool::new(
            json!({
                "name": "test_logging_tool",
                "description": "Diagnostic logging validator tool: logs one info message, which reaches only a request whose envelope carries a logLevel",
                "inputSchema": { "type": "object", "properties": {} }
            }),
            // The tool always logs; the core drops the message for a stateless request without
            // `logLevel` (and below its level), which is what the suite checks.
            tool_fn(|ctx, _| async move {
                ctx.log(
                    LogLevel::Info,
                    json!("Diagnostic trace logging activated"),
                    None,
                );
                Ok(text_result("Logging evaluated".into()))
            }),
        )?,
        Tool::new(
            json!({
                "name": "test_missing_capability",
                "description": "Needs the sampling client capability: a request whose envelope does not declare it is refused with -32021 naming it",
                "inputSchema": { "type": "object", "properties": {} }
            }),
            tool_fn(|ctx, _| async move {
                if ctx.client_capabilities().get("sampling").is_none() {
                    return Err(HandlerError::Rpc(envelope::missing_capability(
                        "this tool needs the sampling client capability, which the request does not declare",
                        json!({ "sampling": {} }),
                    )));
                }
                Ok(text_result("Success".into()))
            }),
        )?,
        Tool::new(
            json!({
                "name": "test_streaming_elicitation",
                "description": "Streams a progress notification before its result: the response's own stream carries only messages related to the request, never a server request",
                "inputSchema": { "type": "object", "properties": {} }
            }),
            tool_fn(|ctx, _| async move {
                ctx.progress(50.0, Some(100.0), None);
                Ok(text_result("Streaming complete".into()))
            }),
        )?,
        Tool::new(
            json!({
                "name": "test_header_param",
                "description": "Echoes its region, which HTTP clients mirror into the Mcp-Param-Region header (x-mcp-header, SEP-2243); the server refuses a call whose header disagrees with the argument",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "region": { "type": "string", "description": "Mirrored into Mcp-Param-Region", "x-mcp-header": "Region" }
                    },
                    "required": ["region"]
                }
            }),
            tool_fn(|_, args| async move {
                Ok(text_result(format!(
                    "Region: {}",
                    string_arg(&args, "region")
                )))
            }),
        )?,
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
