//! `prompts/list` and `prompts/get`.

use super::list::ListRequest;
use super::params::{optional_object, required_str};
use crate::jsonrpc::{code, ErrorObject};
use crate::protocol::shape::Shape;
use crate::server::context::RequestContext;
use crate::server::handler::handler_error;
use crate::server::model::Server;
use serde_json::{Map, Value};

/// `prompts/list`, paginated.
pub fn list(request: &ListRequest<'_>) -> Result<Value, ErrorObject> {
    let registry = request.server.registry();
    let definitions = registry.prompts.values().map(|p| &p.definition);
    request.page("prompts", Shape::Prompt, definitions, None)
}

/// The JavaScript `typeof`-style name zod reports for a received value.
fn js_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `prompts/get`: unknown prompt, non-string arguments and missing required arguments are `-32602`.
pub async fn get(
    server: &Server,
    ctx: RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let name = required_str(params, "name")?;
    let arguments = optional_object(params, "arguments")?;
    // Messages in the reference server's (TypeScript SDK) words, which clients compare.
    let registry = server.registry();
    let handshake = ctx.scope.revision.has_handshake();
    let dialect = server
        .config
        .dialect
        .filter(|d| handshake || d.answers_stateless());
    let Some(prompt) = registry.prompts.get(name).cloned() else {
        if let Some(dialect) = dialect {
            return Err(dialect.unknown_prompt(name, handshake));
        }
        return Err(match registry.dialect {
            Some(d) => (d.unknown_prompt)(name),
            None => ErrorObject::new(
                code::INVALID_PARAMS,
                format!("MCP error -32602: Prompt {name} not found"),
            ),
        });
    };
    if let Some((k, v)) = arguments.iter().find(|(_, v)| !v.is_string()) {
        return Err(ErrorObject::new(
            code::INVALID_PARAMS,
            format!(
                "MCP error -32602: Invalid arguments for prompt {name}: Invalid input: expected string, received {} at {k}",
                js_type(v)
            ),
        ));
    }
    let missing: Vec<String> = prompt
        .required_arguments()
        .into_iter()
        .filter(|a| !arguments.contains_key(a))
        .collect();
    if !missing.is_empty() {
        let issues: Vec<String> = missing
            .iter()
            .map(|a| format!("Invalid input: expected string, received undefined at {a}"))
            .collect();
        return Err(ErrorObject::new(
            code::INVALID_PARAMS,
            format!(
                "MCP error -32602: Invalid arguments for prompt {name}: {}",
                issues.join("; ")
            ),
        ));
    }
    (prompt.handler)(ctx, arguments)
        .await
        .map_err(handler_error)
}
