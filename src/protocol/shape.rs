//! Which fields of a listed object exist in which revision. Objects are registered in their
//! newest form; when listed to a client on an older revision, the fields that revision does
//! not define are removed, so every client sees exactly its revision's shapes. Unknown (custom)
//! fields pass through untouched.

use super::revision::Revision;
use serde_json::{Map, Value};

/// The kinds of objects shaped per revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// An entry of `tools/list`.
    Tool,
    /// An entry of `resources/list`.
    Resource,
    /// An entry of `resources/templates/list`.
    ResourceTemplate,
    /// An entry of `prompts/list` (its `arguments` are shaped too).
    Prompt,
    /// `serverInfo` / `clientInfo`.
    Implementation,
}

/// `(shape, field, first revision that defines it)`, read from each revision's schema.json.
const INTRODUCED: &[(Shape, &str, Revision)] = &[
    (Shape::Tool, "annotations", Revision::V2025_03_26),
    (Shape::Tool, "title", Revision::V2025_06_18),
    (Shape::Tool, "outputSchema", Revision::V2025_06_18),
    (Shape::Tool, "_meta", Revision::V2025_06_18),
    (Shape::Tool, "icons", Revision::V2025_11_25),
    (Shape::Tool, "execution", Revision::V2025_11_25),
    (Shape::Resource, "title", Revision::V2025_06_18),
    (Shape::Resource, "_meta", Revision::V2025_06_18),
    (Shape::Resource, "icons", Revision::V2025_11_25),
    (Shape::ResourceTemplate, "title", Revision::V2025_06_18),
    (Shape::ResourceTemplate, "_meta", Revision::V2025_06_18),
    (Shape::ResourceTemplate, "icons", Revision::V2025_11_25),
    (Shape::Prompt, "title", Revision::V2025_06_18),
    (Shape::Prompt, "_meta", Revision::V2025_06_18),
    (Shape::Prompt, "icons", Revision::V2025_11_25),
    (Shape::Implementation, "title", Revision::V2025_06_18),
    (Shape::Implementation, "description", Revision::V2025_11_25),
    (Shape::Implementation, "icons", Revision::V2025_11_25),
    (Shape::Implementation, "websiteUrl", Revision::V2025_11_25),
];

/// `(shape, field, revision that removed it)`.
const REMOVED: &[(Shape, &str, Revision)] = &[
    // Tasks moved to an extension in 2026-07-28.
    (Shape::Tool, "execution", Revision::V2026_07_28),
];

/// Removes from `object` the fields `revision` does not define for `shape`.
pub fn for_revision(shape: Shape, object: &mut Map<String, Value>, revision: Revision) {
    for (s, field, since) in INTRODUCED {
        if *s == shape && revision < *since {
            object.shift_remove(*field);
        }
    }
    for (s, field, until) in REMOVED {
        if *s == shape && revision >= *until {
            object.shift_remove(*field);
        }
    }
    if shape == Shape::Prompt && !revision.has_titles() {
        if let Some(Value::Array(args)) = object.get_mut("arguments") {
            for arg in args.iter_mut().filter_map(Value::as_object_mut) {
                arg.shift_remove("title");
            }
        }
    }
}

/// A shaped copy of `object`.
pub fn shaped(shape: Shape, object: &Map<String, Value>, revision: Revision) -> Value {
    let mut copy = object.clone();
    for_revision(shape, &mut copy, revision);
    Value::Object(copy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn removes_only_what_the_revision_lacks() {
        let tool = json!({ "name": "t", "title": "T", "inputSchema": {}, "annotations": {}, "outputSchema": {}, "execution": {}, "icons": [], "x-custom": 1 });
        let tool = tool.as_object().unwrap();
        let keys = |r| {
            shaped(Shape::Tool, tool, r)
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(
            keys(Revision::V2024_11_05),
            ["name", "inputSchema", "x-custom"]
        );
        assert_eq!(
            keys(Revision::V2025_03_26),
            ["name", "inputSchema", "annotations", "x-custom"]
        );
        assert_eq!(
            keys(Revision::V2025_06_18),
            [
                "name",
                "title",
                "inputSchema",
                "annotations",
                "outputSchema",
                "x-custom"
            ]
        );
        assert_eq!(keys(Revision::V2025_11_25).len(), 8);
        assert!(!keys(Revision::V2026_07_28).contains(&"execution".to_string()));
        let prompt =
            json!({ "name": "p", "title": "P", "arguments": [{ "name": "a", "title": "A" }] });
        let p = shaped(
            Shape::Prompt,
            prompt.as_object().unwrap(),
            Revision::V2025_03_26,
        );
        assert_eq!(p, json!({ "name": "p", "arguments": [{ "name": "a" }] }));
    }
}
