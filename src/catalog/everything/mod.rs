//! The reference server's current surface (`@modelcontextprotocol/server-everything` 2026.x, v2):
//! kebab-case tools (`tools.rs`, the client-capability ones in `client_tools.rs`), the per-session
//! timers (`timers.rs`), `demo://` resources, templates, prompts and completions
//! (`resources.rs`), with the reference's names, schemas, annotations and texts.

mod client_tasks;
mod client_tools;
pub mod fetch;
mod research;
mod resources;
mod shared;
mod timers;
mod tools;

use crate::catalog::Options;
use crate::error::Error;
use crate::server::registry::{Registry, Tool};

pub use timers::{toggle_simulated_logging, trigger_long_running_operation};
pub use tools::{echo, get_sum};

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
