//! `completion/complete`: argument completion for prompts and resource templates.

use super::params::{optional_object, required_object, required_str};
use crate::jsonrpc::ErrorObject;
use crate::server::context::RequestContext;
use crate::server::handler::handler_error;
use crate::server::model::Server;
use crate::server::registry::CompletionKey;
use serde_json::{json, Map, Value};

/// The most values one completion result may carry (the spec's limit).
const MAX_VALUES: usize = 100;

/// Finds the provider for `ref` + `argument.name` and returns its candidates (none → empty).
pub async fn complete(
    server: &Server,
    ctx: RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let reference = required_object(params, "ref")?;
    let argument = required_object(params, "argument")?;
    let ref_type = required_str(&reference, "type")?;
    let ref_name = match ref_type {
        "ref/prompt" => required_str(&reference, "name")?,
        "ref/resource" => required_str(&reference, "uri")?,
        other => {
            return Err(ErrorObject::invalid_params(format!(
                "unknown ref type {other:?} (expected ref/prompt or ref/resource)"
            )))
        }
    };
    let arg_name = required_str(&argument, "name")?;
    let value = required_str(&argument, "value")?;
    let context = optional_object(&optional_object(params, "context")?, "arguments")?;
    let registry = server.registry();
    if ref_type == "ref/prompt" && !registry.prompts.contains_key(ref_name) {
        return Err(ErrorObject::invalid_params(format!(
            "Unknown prompt: {ref_name}"
        )));
    }
    let key = CompletionKey {
        ref_type: ref_type.into(),
        ref_name: ref_name.into(),
        argument: arg_name.into(),
    };
    let mut values = match registry.completions.get(&key) {
        Some(f) => f(ctx, arg_name.to_string(), value.to_string(), context)
            .await
            .map_err(handler_error)?,
        None => Vec::new(),
    };
    let total = values.len();
    values.truncate(MAX_VALUES);
    Ok(json!({ "completion": { "values": values, "total": total, "hasMore": total > MAX_VALUES } }))
}
