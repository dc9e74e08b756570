//! The reference server's legacy surface (v1, `everything.ts`, npm `0.6.2` … `2025.12.18`):
//! camelCase tools, `test://static/resource/1..100`, `simple_prompt` / `complex_prompt` /
//! `resource_prompt`.

use crate::error::Error;
use crate::server::registry::Registry;

/// Registers this catalog.
pub fn load(_registry: &mut Registry) -> Result<(), Error> {
    Ok(())
}
