//! Tool arguments mirrored into HTTP headers (2026-07-28, SEP-2243): a property of a tool's
//! `inputSchema` annotated `x-mcp-header: "{Name}"` is sent by clients as `Mcp-Param-{Name}` as
//! well as in the arguments, so proxies can route on it. Read once, when the tool is
//! registered ([`crate::server::registry::Tool::header_params`]); the stateless HTTP transport
//! checks each request's headers against them.

use crate::field;
use serde_json::Value;

/// The schema keyword that asks clients to mirror a tool argument into a header.
const X_MCP_HEADER: &str = "x-mcp-header";

/// One argument a tool's schema mirrors into a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// Where it is in the arguments: the property names from the arguments object down to it.
    pub path: Vec<String>,
    /// `{Name}` of `Mcp-Param-{Name}`.
    pub header: String,
}

/// Every `x-mcp-header` annotation of `schema` reachable from its root through `properties`
/// alone (the only places the spec lets clients read them from). Most tools have none.
pub fn of_schema(schema: &Value) -> Vec<HeaderParam> {
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), &mut out);
    out
}

/// Adds the annotations below `schema` to `out`; `path` leads to `schema`.
fn walk<'a>(schema: &'a Value, path: &mut Vec<&'a str>, out: &mut Vec<HeaderParam>) {
    let Some(properties) = field::member(schema, "properties").and_then(Value::as_object) else {
        return;
    };
    for (key, property) in properties {
        path.push(key);
        if let Some(header) = field::member(property, X_MCP_HEADER).and_then(Value::as_str) {
            out.push(HeaderParam {
                path: path.iter().map(|p| (*p).to_owned()).collect(),
                header: header.to_owned(),
            });
        }
        walk(property, path, out);
        path.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_annotations_reachable_through_properties_only() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": { "type": "string", "x-mcp-header": "Region" },
                "nested": { "type": "object", "properties": { "tenant": { "type": "string", "x-mcp-header": "Tenant" } } },
                "list": { "type": "array", "items": { "type": "string", "x-mcp-header": "Item" } }
            }
        });
        let found: Vec<(String, String)> = of_schema(&schema)
            .into_iter()
            .map(|m| (m.path.join("."), m.header))
            .collect();
        assert_eq!(
            found,
            [
                ("region".to_string(), "Region".to_string()),
                ("nested.tenant".into(), "Tenant".into())
            ]
        );
    }
}
