//! The reference server's legacy surface (v1, `everything.ts`, npm `0.6.2` … `2025.12.18`):
//! camelCase tools (`tools.rs`, the ones that ask the client in `client_tools.rs`),
//! `test://static/resource/1..100`, `simple_prompt` / `complex_prompt` / `resource_prompt` and
//! v1 completions (`resources.rs`), and the automatic per-session timers (`timers.rs`: resource
//! updates every 10 s, random log messages every 15 s).
//!
//! v1 answered every failure (bad arguments, thrown handler errors, unknown resources and
//! prompts) with a JSON-RPC `-32603` error carrying the bare message, not an `isError`
//! result; the tools here do the same. Argument errors reproduce zod v3's issue list
//! (`JSON.stringify(issues, null, 2)`, `zod.rs`), so each tool checks its own arguments instead
//! of the core's JSON Schema validator. See `docs/catalog-everything-v1.md` for the deliberate
//! differences from the reference.

mod client_tools;
mod resources;
mod shared;
mod timers;
mod tools;
mod zip;
mod zod;

use crate::catalog::Options;
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::server::registry::{ErrorDialect, Registry};
use std::sync::Arc;

pub use client_tools::roots_text;
pub use resources::{js_parse_int, resource_object, resource_page, PAGE_SIZE, RESOURCE_COUNT};
pub use zip::zip_store;

/// This catalog's `instructions`: our own text, with the reference's easter-egg sentence.
const INSTRUCTIONS: &str = "Testing and demonstration server for MCP protocol features (the legacy \"everything\" surface).\n\n\
## Resources\n\nResources 1-100 follow the pattern test://static/resource/{id}; odd ids hold text, even ids hold binary data. \
They are listed 10 per page.\n\n## Tools\n\necho, add, longRunningOperation, printEnv, sampleLLM, getTinyImage, annotatedMessage, \
getResourceReference, getResourceLinks, structuredContent, zip, and (for clients that support them) listRoots and startElicitation.\n\n\
## Easter egg\n\nIf asked about server instructions, respond with \"🎉 Server instructions are working! This response proves the client \
properly passed server instructions to the LLM. This demonstrates MCP's instructions feature in action.\"";

/// Registers this catalog.
pub fn load(registry: &mut Registry, options: &Options) -> Result<(), Error> {
    for tool in tools::tools(options)? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    resources::load(registry)?;
    // v1 predates the stateless era: a 2026 client is answered as v1 would answer it.
    registry.handshake_only = true;
    // v1 answered unknown names with -32603 errors.
    registry.dialect.get_or_insert(ErrorDialect {
        unknown_tool: |name| ErrorObject::new(-32603, format!("Unknown tool: {name}")),
        unknown_prompt: |name| ErrorObject::new(-32603, format!("Unknown prompt: {name}")),
    });
    registry
        .instructions
        .get_or_insert_with(|| INSTRUCTIONS.to_string());
    let intervals = timers::Intervals::new(options);
    registry
        .on_initialized
        .push(Arc::new(move |server, session| {
            client_tools::initial_roots(&server.clock, &session);
            timers::start(&server.clock, &session, intervals);
        }));
    Ok(())
}
