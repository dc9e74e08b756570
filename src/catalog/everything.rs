//! The reference server's current surface (`@modelcontextprotocol/server-everything` 2026.x).
//! So far: `echo` and `get-sum`, with the reference's exact names, schemas and output texts.

use crate::error::Error;
use crate::jsnum;
use crate::server::registry::{tool_fn, HandlerError, Registry, Tool};
use serde_json::{json, Value};

/// Registers this catalog's tools.
pub fn load(registry: &mut Registry) -> Result<(), Error> {
    for tool in [echo()?, get_sum()?] {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    Ok(())
}

/// Annotations the reference puts on its read-only tools.
fn read_only_annotations() -> Value {
    json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false })
}

/// A `CallToolResult` with one text block.
fn text_result(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// `echo`: returns `Echo: <message>`.
pub fn echo() -> Result<Tool, Error> {
    let definition = json!({
        "name": "echo",
        "title": "Echo Tool",
        "description": "Echoes back the input string",
        "inputSchema": {
            "type": "object",
            "properties": { "message": { "type": "string", "description": "Message to echo" } },
            "required": ["message"],
            "$schema": "http://json-schema.org/draft-07/schema#"
        },
        "annotations": read_only_annotations(),
        "execution": { "taskSupport": "forbidden" }
    });
    Tool::new(
        definition,
        tool_fn(|_ctx, args| async move {
            let message = args
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Ok(text_result(format!("Echo: {message}")))
        }),
    )
}

/// `get-sum`: returns `The sum of <a> and <b> is <a+b>.` with JavaScript number formatting.
pub fn get_sum() -> Result<Tool, Error> {
    let definition = json!({
        "name": "get-sum",
        "title": "Get Sum Tool",
        "description": "Returns the sum of two numbers",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": { "type": "number", "description": "First number" },
                "b": { "type": "number", "description": "Second number" }
            },
            "required": ["a", "b"],
            "$schema": "http://json-schema.org/draft-07/schema#"
        },
        "annotations": read_only_annotations(),
        "execution": { "taskSupport": "forbidden" }
    });
    Tool::new(
        definition,
        tool_fn(|_ctx, args| async move {
            let num = |k: &str| {
                args.get(k)
                    .and_then(Value::as_f64)
                    .ok_or_else(|| HandlerError::failed(format!("{k} must be a number")))
            };
            let (a, b) = (num("a")?, num("b")?);
            Ok(text_result(format!(
                "The sum of {} and {} is {}.",
                jsnum::format(a),
                jsnum::format(b),
                jsnum::format(a + b)
            )))
        }),
    )
}
