//! One module per MCP method family; [`call`] routes a request to its handler.

pub mod completion;
pub mod lifecycle;
pub mod logging;
pub mod prompts;
pub mod resources;
pub mod tools;

use super::context::RequestContext;
use super::registry::HandlerError;
use super::Server;
use crate::jsonrpc::ErrorObject;
use serde_json::{Map, Value};
use std::sync::Arc;

/// Serves one request (after the lifecycle checks in `dispatch`).
pub async fn call(
    server: &Arc<Server>,
    ctx: RequestContext,
    method: &str,
    params: Map<String, Value>,
) -> Result<Value, ErrorObject> {
    match method {
        "logging/setLevel" => logging::set_level(&ctx, &params),
        "tools/list" => tools::list(server, &ctx, &params),
        "tools/call" => tools::call(server, ctx, params).await,
        "resources/list" => resources::list(server, &ctx, &params),
        "resources/templates/list" => resources::list_templates(server, &ctx, &params),
        "resources/read" => resources::read(server, ctx, &params).await,
        "resources/subscribe" => resources::subscribe(server, &ctx, &params, true),
        "resources/unsubscribe" => resources::subscribe(server, &ctx, &params, false),
        "prompts/list" => prompts::list(server, &ctx, &params),
        "prompts/get" => prompts::get(server, ctx, &params).await,
        "completion/complete" => completion::complete(server, ctx, &params).await,
        other => match server.registry().methods.get(other).cloned() {
            Some(custom) => custom(ctx, params).await.map_err(handler_error),
            None => Err(ErrorObject::method_not_found(other)),
        },
    }
}

/// A required string parameter, or `-32602` naming it.
pub fn required_str<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, ErrorObject> {
    match params.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"{key}\" must be a string, got {}",
            crate::jsonrpc::json_type(other)
        ))),
        None => Err(ErrorObject::invalid_params(format!(
            "missing required \"{key}\""
        ))),
    }
}

/// A required object parameter, or `-32602` naming it.
pub fn required_object(
    params: &Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match params.get(key) {
        None | Some(Value::Null) => Err(ErrorObject::invalid_params(format!(
            "missing required \"{key}\""
        ))),
        Some(_) => optional_object(params, key),
    }
}

/// An optional object parameter (absent → empty), or `-32602` naming it; taken out of
/// `params` rather than copied.
pub fn take_optional_object(
    params: &mut Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match params.get_mut(key) {
        Some(Value::Object(m)) => Ok(std::mem::take(m)),
        _ => optional_object(params, key),
    }
}

/// An optional object parameter (absent → empty), or `-32602` naming it.
pub fn optional_object(
    params: &Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"{key}\" must be an object, got {}",
            crate::jsonrpc::json_type(other)
        ))),
    }
}

/// Outside tools, a handler failure is a JSON-RPC error.
pub fn handler_error(e: HandlerError) -> ErrorObject {
    match e {
        HandlerError::Failed(text) => ErrorObject::internal(text),
        HandlerError::Rpc(e) => e,
    }
}
