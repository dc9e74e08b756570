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
mod timers;
mod tools;
mod zip;
mod zod;

use crate::catalog::builder::ToolDef;
use crate::catalog::{pretty, Options, DRAFT_07};
use crate::error::Error;
use crate::jsonrpc::{code, ErrorObject};
use crate::server::handler::{tool_fn, HandlerError, ToolFn};
use crate::server::registry::{ErrorDialect, Registry, Tool};
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub use client_tools::roots_text;
pub use resources::{js_parse_int, resource_object, resource_page, PAGE_SIZE, RESOURCE_COUNT};
pub use zip::zip_store;

/// Our own tiny image: an 8×8 teal/orange diagonal-striped RGB PNG (91 bytes), generated for
/// this project. The reference sends its 20×20 MCP logo instead.
pub const TINY_IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAIklEQVR42mNgaGgAov89DECEwsYuCmRjF4VIYDWNgQ52AADb+VFhTLusoAAAAABJRU5ErkJggg==";

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
        .push(Arc::new(move |_server, session| {
            client_tools::initial_roots(&session);
            timers::start(&session, intervals);
        }));
    Ok(())
}

/// A v1 failure: JSON-RPC `-32603` with the bare message (what the low-level SDK server sends
/// for an exception thrown in a handler).
fn fail(text: impl Into<String>) -> HandlerError {
    HandlerError::Rpc(ErrorObject::new(code::INTERNAL_ERROR, text))
}

/// A v1 tool: the definition gets `additionalProperties:false` and `$schema` (as
/// zod-to-json-schema emits them); arguments are checked zod-style by the wrapper, and a
/// failure is a `-32603` whose message is the pretty-printed zod issues.
fn v1_tool(
    mut definition: ToolDef,
    trimmed: &'static [&'static str],
    handler: ToolFn,
) -> Result<Tool, Error> {
    if let Some(schema) = definition.input_mut() {
        schema.insert("additionalProperties".into(), false.into());
        schema.insert("$schema".into(), DRAFT_07.into());
    }
    let schema = (definition.input_mut().cloned())
        .map(Value::Object)
        .unwrap_or_default();
    let checked = tool_fn(move |ctx, mut args| {
        let issues = zod::zod_issues(&schema, &mut args, trimmed);
        let handler = handler.clone();
        async move {
            if !issues.is_empty() {
                return Err(fail(pretty(&Value::Array(issues))));
            }
            handler(ctx, args).await
        }
    });
    let mut tool = definition.serve(checked)?;
    // The wrapper checks the arguments (with v1's error shape); let the core accept anything.
    tool.validator = Arc::new(
        jsonschema::validator_for(&json!({}))
            .map_err(|e| Error::Definition(format!("empty schema: {e}")))?,
    );
    Ok(tool)
}

/// A number argument (defaults were filled in by the check).
fn number(args: &Map<String, Value>, key: &str) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or_default()
}
