//! What the `everything-v1` catalog's modules share: its tiny image, the v1 tool builder, a
//! failure, a number argument.

use crate::catalog::builder::ToolDef;
use crate::catalog::{pretty, DRAFT_07};
use crate::error::Error;
use crate::jsonrpc::{code, ErrorObject};
use crate::server::handler::{tool_fn, HandlerError, ToolFn};
use crate::server::model::InputValidator;
use crate::server::registry::Tool;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Our own tiny image: an 8×8 teal/orange diagonal-striped RGB PNG (91 bytes), generated for
/// this project. The reference sends its 20×20 MCP logo instead.
pub const TINY_IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAIklEQVR42mNgaGgAov89DECEwsYuCmRjF4VIYDWNgQ52AADb+VFhTLusoAAAAABJRU5ErkJggg==";
/// A v1 failure: JSON-RPC `-32603` with the bare message (what the low-level SDK server sends
/// for an exception thrown in a handler).
pub fn fail(text: impl Into<String>) -> HandlerError {
    HandlerError::Rpc(ErrorObject::new(code::INTERNAL_ERROR, text))
}
/// A v1 tool: the definition gets `additionalProperties:false` and `$schema` (as
/// zod-to-json-schema emits them); arguments are checked zod-style by the wrapper, and a
/// failure is a `-32603` whose message is the pretty-printed zod issues.
pub fn v1_tool(
    mut definition: ToolDef,
    trimmed: &'static [&'static str],
    handler: ToolFn,
) -> Result<Tool, Error> {
    if let Some(schema) = definition.input_mut() {
        schema.insert("additionalProperties".into(), false.into());
        schema.insert("$schema".into(), DRAFT_07.into());
    }
    let schema = (definition.input_mut().cloned())
        .map(Value::Object)
        .unwrap_or_default();
    let checked = tool_fn(move |ctx, mut args| {
        let issues = super::zod::zod_issues(&schema, &mut args, trimmed);
        let handler = handler.clone();
        async move {
            if !issues.is_empty() {
                return Err(fail(pretty(&Value::Array(issues))));
            }
            handler(ctx, args).await
        }
    });
    let mut tool = definition.serve(checked)?;
    // The wrapper checks the arguments (with v1's error shape); let the core accept anything.
    tool.validator = Arc::new(
        InputValidator::compiled(&json!({}))
            .map_err(|e| Error::Definition(format!("empty schema: {e}")))?,
    );
    Ok(tool)
}
/// A number argument (defaults were filled in by the check).
pub fn number(args: &Map<String, Value>, key: &str) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or_default()
}
