//! The parts of v1 that ask the client for something: `sampleLLM` (sampling), `listRoots`
//! (roots) and `startElicitation` (elicitation), the SDK's error for a client without the
//! capability, and the roots handshake after `initialized`.

use super::shared::{fail, number, v1_tool};
use crate::catalog::builder::tool;
use crate::catalog::{js_string, schema, string_arg, text_result};
use crate::clock::Clock;
use crate::error::Error;
use crate::jsnum;
use crate::jsonrpc::{code, ErrorObject};
use crate::protocol::method_names::ServerRequest;
use crate::protocol::LogLevel;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::Tool;
use crate::server::session::Session;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// How long the initial `roots/list` may take (the SDK's default request timeout).
const ROOTS_TIMEOUT: Duration = Duration::from_secs(60);
/// The logger name of the roots log messages.
const LOGGER: &str = "everything-server";

/// The SDK's error for a server request the client has no capability for.
fn unsupported(
    ctx: &crate::server::context::RequestContext,
    capability: &str,
    method: &str,
) -> Option<HandlerError> {
    ctx.client_capabilities()
        .get(capability)
        .is_none()
        .then(|| {
            fail(format!(
                "Client does not support {capability} (required for {method})"
            ))
        })
}

/// The text of a sampling result's content (one block or an array of blocks), concatenated.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        Some(block) => block
            .get("text")
            .map_or_else(|| "undefined".to_string(), js_string),
        None => "undefined".to_string(),
    }
}

/// `sampleLLM`: one `sampling/createMessage` to the client, its text returned.
pub fn sample_llm() -> Result<Tool, Error> {
    v1_tool(tool("sampleLLM").description("Samples from an LLM using MCP's sampling feature").input(schema(json!({
                "prompt": { "type": "string", "description": "The prompt to send to the LLM" },
                "maxTokens": { "type": "number", "default": 100, "description": "Maximum number of tokens to generate" }
            }), &["prompt"])), &[], tool_fn(|ctx, args| async move {
            if let Some(e) = unsupported(&ctx, "sampling", "sampling/createMessage") {
                return Err(e);
            }
            let params = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Resource sampleLLM context: {}", string_arg(&args, "prompt")) } }],
                "systemPrompt": "You are a helpful test server.",
                "maxTokens": jsnum::to_json(number(&args, "maxTokens")),
                "temperature": 0.7,
                "includeContext": "thisServer"
            });
            let result = ctx.sample(params).await.map_err(|e| fail(e.message))?;
            Ok(text_result(format!(
                "LLM sampling result: {}",
                content_text(result.get("content"))
            )))
        }))
}

/// The `listRoots` text for a `roots/list` result.
pub fn roots_text(roots: &[Value]) -> String {
    let entries: Vec<(&str, String)> = roots
        .iter()
        .map(|r| {
            let name = r
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .unwrap_or("Unnamed Root");
            let uri = r.get("uri").map(js_string).unwrap_or_default();
            (name, uri)
        })
        .collect();
    crate::catalog::roots::listing(&entries)
}

/// `listRoots`: the client's roots as [`roots_text`] prints them.
pub fn list_roots() -> Result<Tool, Error> {
    v1_tool(tool("listRoots").description("Lists the current MCP roots provided by the client. Demonstrates the roots protocol capability even though this server doesn't access files.").input(schema(json!({}), &[])), &[], tool_fn(|ctx, _| async move {
            if ctx.client_capabilities().get("roots").is_none() {
                return Ok(text_result("The MCP client does not support the roots protocol.\n\nThis means the server cannot access information about the client's workspace directories or file system roots.".into()));
            }
            let result = ctx.list_roots().await.map_err(|e| fail(e.message))?;
            let roots = result
                .get("roots")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Ok(text_result(roots_text(&roots)))
        }))
}

/// `startElicitation`: the shared elicitation form, and the summary of the answer.
pub fn start_elicitation() -> Result<Tool, Error> {
    v1_tool(tool("startElicitation").description("Elicitation test tool that demonstrates how to request user input with various field types (string, boolean, email, uri, date, integer, number, enum)").input(schema(json!({}), &[])), &[], tool_fn(|ctx, _| async move {
            if let Some(e) = unsupported(&ctx, "elicitation", "elicitation/create") {
                return Err(e);
            }
            let params = json!({
                "message": "Please provide inputs for the following fields:",
                "requestedSchema": crate::catalog::elicitation::form()
            });
            let result = ctx.elicit(params).await.map_err(|e| fail(e.message))?;
            Ok(json!({ "content": crate::catalog::elicitation::summary(&result) }))
        }))
}

/// After `initialized`: ask a client with roots for them (logging what came back), or log that
/// it has none.
pub fn initial_roots(clock: &Clock, session: &Arc<Session>) {
    let capabilities = session.read(|s| s.declared.client_capabilities.clone());
    if capabilities.get("roots").is_some() {
        let (session, clock) = (session.clone(), clock.clone());
        // Not made for a client request, so on the session's (standalone) stream, bounded by
        // ROOTS_TIMEOUT; `listRoots` asks on its own request's stream (`ctx.list_roots`).
        tokio::spawn(async move {
            let asked = clock
                .timeout(
                    ROOTS_TIMEOUT,
                    session.request(&session.sink, ServerRequest::ListRoots.as_str(), None),
                )
                .await
                .unwrap_or_else(|| {
                    Err(ErrorObject::new(code::INTERNAL_ERROR, "Request timed out"))
                });
            let (level, data) = match asked {
                Ok(r) => match r.get("roots").and_then(Value::as_array).map_or(0, Vec::len) {
                    0 => (
                        LogLevel::Warning,
                        "Client returned no roots set".to_string(),
                    ),
                    n => (
                        LogLevel::Info,
                        format!("Initial roots received: {n} root(s) from client"),
                    ),
                },
                Err(e) => (
                    LogLevel::Error,
                    format!("Failed to request initial roots from client: {}", e.message),
                ),
            };
            session.log_to(&session.sink, level, Value::String(data), Some(LOGGER));
        });
    } else {
        session.log_to(
            &session.sink,
            LogLevel::Info,
            "Client does not support MCP roots protocol".into(),
            Some(LOGGER),
        );
    }
}
