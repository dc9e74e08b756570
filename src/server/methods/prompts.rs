//! `prompts/list` and `prompts/get`.

use super::{handler_error, optional_object, required_str};
use crate::jsonrpc::ErrorObject;
use crate::server::context::RequestContext;
use crate::server::pagination::{list_result, page};
use crate::server::Server;
use serde_json::{Map, Value};

/// `prompts/list`, paginated; `title` is dropped before 2025-06-18.
pub fn list(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let registry = server.registry();
    let p = page(
        "prompts",
        registry.prompts.len(),
        params,
        server.config.page_size,
    )?;
    let items = registry
        .prompts
        .values()
        .skip(p.start)
        .take(p.end - p.start)
        .map(|prompt| {
            let mut def = prompt.definition.clone();
            if !ctx.revision.has_titles() {
                def.shift_remove("title");
            }
            Value::Object(def)
        });
    Ok(list_result("prompts", items.collect(), p.next_cursor))
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
