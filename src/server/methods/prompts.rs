//! `prompts/list` and `prompts/get`.

use super::{handler_error, optional_object, required_str};
use crate::jsonrpc::ErrorObject;
use crate::protocol::shape::Shape;
use crate::server::context::RequestContext;
use crate::server::pagination::list_page;
use crate::server::Server;
use serde_json::{Map, Value};

/// `prompts/list`, paginated.
pub fn list(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let registry = server.registry();
    let definitions = registry.prompts.values().map(|p| &p.definition);
    list_page(
        "prompts",
        definitions,
        params,
        server.config.page_size,
        Shape::Prompt,
        ctx.revision,
    )
}

/// `prompts/get`: unknown prompt, non-string arguments and missing required arguments are `-32602`.
pub async fn get(
    server: &Server,
    ctx: RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let name = required_str(params, "name")?;
    let arguments = optional_object(params, "arguments")?;
    let Some(prompt) = server.registry().prompts.get(name).cloned() else {
        return Err(ErrorObject::invalid_params(format!(
            "Unknown prompt: {name}"
        )));
    };
    if let Some((k, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
        return Err(ErrorObject::invalid_params(format!(
            "prompt argument {k:?} must be a string"
        )));
    }
    let missing: Vec<String> = prompt
        .required_arguments()
        .into_iter()
        .filter(|a| !arguments.contains_key(a))
        .collect();
    if !missing.is_empty() {
        return Err(ErrorObject::invalid_params(format!(
            "prompt {name:?} is missing required argument(s): {}",
            missing.join(", ")
        )));
    }
    (prompt.handler)(ctx, arguments)
        .await
        .map_err(handler_error)
}
