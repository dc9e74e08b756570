//! The reference server's current surface (`@modelcontextprotocol/server-everything` 2026.x, v2):
//! kebab-case tools (`tools.rs`, the client-capability ones in `client_tools.rs`), the per-session
//! timers (`timers.rs`), `demo://` resources, templates, prompts and completions
//! (`resources.rs`), with the reference's names, schemas, annotations and texts.

mod client_tasks;
mod client_tools;
mod fetch;
mod research;
mod resources;
mod timers;
mod tools;

use crate::catalog::builder::{tool, ToolDef};
use crate::catalog::{session_id, Options, DRAFT_07};
use crate::error::Error;
use crate::server::registry::{Registry, Tool};
use crate::server::session::Session;
use serde_json::{json, Value};

pub use timers::{toggle_simulated_logging, trigger_long_running_operation};
pub use tools::{echo, get_sum};

/// Our own 20×20 PNG, returned where the reference returns its logo (a deliberate difference:
/// the logo is not ours to ship).
pub const TINY_IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0NAAAAKklEQVR42mPgF9f6T03MMLQMVE1+TRamv4HEglEDRw0c2QYO3rw8MgpYAAx7hFK4Zg4RAAAAAElFTkSuQmCC";

/// The server instructions of this catalog (our text, with the reference's easter egg).
pub const INSTRUCTIONS: &str = include_str!("docs/instructions.md");

/// Registers this catalog, in the reference's `tools/list` order: the static tools, then those
/// the reference registers once the client is initialized (the capability-gated ones, the
/// research task, the client-hosted task demos).
pub fn load(registry: &mut Registry, options: &Options) -> Result<(), Error> {
    let mut late: Vec<Tool> = client_tools::tools()?;
    late.push(research::simulate_research_query(options)?);
    late.extend(client_tasks::tools(options)?);
    let announced: Vec<String> = late.iter().map(|t| t.name().to_string()).collect();
    for tool in tools::static_tools(options)?.into_iter().chain(late) {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    resources::load(registry)?;
    client_tools::hooks(registry, options, announced);
    registry
        .instructions
        .get_or_insert_with(|| INSTRUCTIONS.to_string());
    Ok(())
}

/// `readOnlyHint, destructiveHint, idempotentHint, openWorldHint`.
fn annotations(read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> Value {
    json!({ "readOnlyHint": read_only, "destructiveHint": destructive, "idempotentHint": idempotent, "openWorldHint": open_world })
}

/// A tool definition with the reference's common fields: its input schema says it is
/// draft-07, and it never runs as a task unless the tool says otherwise.
fn definition(
    name: &str,
    title: &str,
    description: &str,
    input: Value,
    annotations: Value,
) -> ToolDef {
    let mut schema = input;
    if let Some(s) = schema.as_object_mut() {
        s.insert("$schema".into(), DRAFT_07.into());
    }
    tool(name)
        .title(title)
        .description(description)
        .input(schema)
        .annotations(annotations)
        .task_support("forbidden")
}

/// The session id as the reference server prints it: `undefined` on stdio (it has none).
fn session_label(session: &Session) -> String {
    session_id(session).unwrap_or("undefined").to_string()
}
