//! Built-in surfaces, selectable by name and combinable. Each catalog adds its tools,
//! resources and prompts to a registry.

pub mod everything;

use crate::error::Error;
use crate::server::registry::Registry;

/// Catalog names accepted by [`load`].
pub const NAMES: &[&str] = &["everything", "none"];

/// Adds catalog `name` to `registry`.
pub fn load(name: &str, registry: &mut Registry) -> Result<(), Error> {
    match name {
        "everything" => everything::load(registry),
        "none" => Ok(()),
        other => Err(Error::Config(format!(
            "unknown catalog {other:?} (known: {})",
            NAMES.join(", ")
        ))),
    }
}
