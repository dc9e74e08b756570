//! The fixtures the official conformance suite (`@modelcontextprotocol/conformance`) calls, with
//! the texts of the suite's own reference server: tools `test_*` (`tools.rs`), resources
//! `test://…`, the template and prompts `test_*_prompt…` (`resources.rs`), the listen triggers
//! (`listen.rs`), the task fixtures (`tasks.rs`), the legacy extension negotiation's
//! (`extensions.rs`).

mod extensions;
mod listen;
mod mrtr;
mod resources;
mod shared;
mod stateless;
mod tasks;
mod tools;

use super::Options;
use crate::error::Error;
use crate::server::registry::Registry;

/// Registers every fixture.
pub fn load(registry: &mut Registry, _options: &Options) -> Result<(), Error> {
    for tool in tools::tools()? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    for tool in listen::tools()? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    for resource in resources::resources() {
        registry
            .resources
            .insert(resource.uri().to_string(), resource);
    }
    let template = resources::template()?;
    registry
        .templates
        .insert("test://template/{id}/data".into(), template);
    for prompt in resources::prompts() {
        registry.prompts.insert(prompt.name().to_string(), prompt);
    }
    stateless::load(registry)?;
    mrtr::load(registry)?;
    tasks::load(registry)?;
    extensions::load(registry)?;
    Ok(())
}
