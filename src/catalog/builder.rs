//! One builder for the tool definitions every catalog writes ([`ToolDef`], started by
//! [`tool`]): the members a `tools/list` entry shows, in the order they are added (which is the
//! order on the wire), then the handler that serves the tool ([`ToolDef::serve`]). A catalog's
//! own conventions (the reference's annotations and `$schema`, v1's zod checks) are small
//! functions of that catalog that return a `ToolDef`.

use crate::catalog::schema;
use crate::error::Error;
use crate::server::handler::ToolFn;
use crate::server::registry::Tool;
use serde_json::{json, Map, Value};

/// A tool's definition being written: a JSON object whose members keep the order they were
/// added in.
#[must_use]
pub struct ToolDef(Map<String, Value>);

/// The definition of the tool `name` (its first member).
pub fn tool(name: &str) -> ToolDef {
    ToolDef(Map::new()).with("name", name)
}

impl ToolDef {
    /// Adds `title` (shown from 2025-06-18 on).
    pub fn title(self, title: &str) -> Self {
        self.with("title", title)
    }

    /// Adds `description`.
    pub fn description(self, description: &str) -> Self {
        self.with("description", description)
    }

    /// Adds `inputSchema`.
    pub fn input(self, schema: Value) -> Self {
        self.with("inputSchema", schema)
    }

    /// Adds an `inputSchema` of no arguments (`{"type": "object", "properties": {}}`).
    pub fn no_input(self) -> Self {
        self.input(schema(json!({}), &[]))
    }

    /// Adds `annotations` (the hints).
    pub fn annotations(self, annotations: Value) -> Self {
        self.with("annotations", annotations)
    }

    /// Sets `execution.taskSupport` (`forbidden`, `optional`, `required`); set again, it keeps
    /// its place.
    pub fn task_support(self, support: &str) -> Self {
        self.with("execution", json!({ "taskSupport": support }))
    }

    /// Adds (or replaces, in place) any other member.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.0.insert(key.into(), value.into());
        self
    }

    /// The `inputSchema`, to amend in place (a catalog's conventions add members to it).
    pub fn input_mut(&mut self) -> Option<&mut Map<String, Value>> {
        self.0.get_mut("inputSchema").and_then(Value::as_object_mut)
    }

    /// The definition as JSON.
    pub fn definition(self) -> Value {
        Value::Object(self.0)
    }

    /// The tool: this definition served by `handler` (a built-in one: its schema is compiled
    /// on its first call).
    pub fn serve(self, handler: ToolFn) -> Result<Tool, Error> {
        Tool::builtin(self.definition(), handler)
    }
}
