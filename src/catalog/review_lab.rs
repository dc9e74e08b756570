//! The resource-subscription lab for CLI agents: `test://review/status` moves from version 1 to
//! version 2 a while after it is subscribed to, and subscribers are told.

use crate::error::Error;
use crate::server::registry::Registry;

/// Registers this catalog.
pub fn load(_registry: &mut Registry) -> Result<(), Error> {
    Ok(())
}
