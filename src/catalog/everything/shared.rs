//! What the `everything` catalog's modules share: its tiny image, tool annotations, the
//! definition builder, a session's label.

use crate::catalog::builder::{tool, ToolDef};
use crate::catalog::{session_id, DRAFT_07};
use crate::server::session::Session;
use serde_json::{json, Value};

/// Our own 20×20 PNG, returned where the reference returns its logo (a deliberate difference:
/// the logo is not ours to ship).
pub const TINY_IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0NAAAAKklEQVR42mPgF9f6T03MMLQMVE1+TRamv4HEglEDRw0c2QYO3rw8MgpYAAx7hFK4Zg4RAAAAAElFTkSuQmCC";
/// `readOnlyHint, destructiveHint, idempotentHint, openWorldHint`.
pub fn annotations(
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
) -> Value {
    json!({ "readOnlyHint": read_only, "destructiveHint": destructive, "idempotentHint": idempotent, "openWorldHint": open_world })
}
/// A tool definition with the reference's common fields: its input schema says it is
/// draft-07, and it never runs as a task unless the tool says otherwise.
pub fn definition(
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
pub fn session_label(session: &Session) -> String {
    session_id(session).unwrap_or("undefined").to_string()
}
