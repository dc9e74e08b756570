//! The fixtures the official conformance suite (`@modelcontextprotocol/conformance`) calls, with
//! the texts of the suite's own reference server: tools `test_*` (`tools.rs`), resources
//! `test://…`, the template and prompts `test_*_prompt…` (`resources.rs`), the listen triggers
//! (`listen.rs`), the task fixtures (`tasks.rs`).

mod listen;
mod mrtr;
mod resources;
mod stateless;
mod tasks;
mod tools;

use super::{js_string, text_result, Options};
use crate::catalog::builder::{tool, ToolDef};
use crate::error::Error;
use crate::server::context::RequestContext;
use crate::server::handler::HandlerError;
use crate::server::registry::Registry;
use serde_json::{json, Value};
use std::time::Duration;

/// A 1×1 red PNG (the suite's test image).
pub const TEST_IMAGE_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A tiny WAV file (the suite's test audio).
pub const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// The pause between the steps of the logging and progress fixtures.
const STEP: Duration = Duration::from_millis(50);

/// Registers every fixture.
pub fn load(registry: &mut Registry, _options: &Options) -> Result<(), Error> {
    for tool in tools::tools()? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    for tool in listen::tools()? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    for resource in resources::resources() {
        registry
            .resources
            .insert(resource.uri().to_string(), resource);
    }
    let template = resources::template()?;
    registry
        .templates
        .insert("test://template/{id}/data".into(), template);
    for prompt in resources::prompts() {
        registry.prompts.insert(prompt.name().to_string(), prompt);
    }
    stateless::load(registry)?;
    mrtr::load(registry)?;
    tasks::load(registry)?;
    Ok(())
}

/// A tool with no arguments.
pub(super) fn plain(name: &str, description: &str) -> ToolDef {
    tool(name).description(description).no_input()
}

/// The suite's test image as an image content block.
pub(super) fn image() -> Value {
    json!({ "type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png" })
}

/// `Elicitation completed: action=…, content=…` / `User response: …`, or the error text.
pub(super) fn elicitation_text(
    prefix: &str,
    answer: Result<Value, crate::jsonrpc::ErrorObject>,
) -> Value {
    match answer {
        Ok(r) => {
            let action = r
                .get("action")
                .map_or_else(|| "undefined".into(), js_string);
            let content = r
                .get("content")
                .filter(|c| !c.is_null())
                .cloned()
                .unwrap_or_else(|| json!({}));
            text_result(format!("{prefix}: action={action}, content={content}"))
        }
        Err(e) => text_result(format!("Elicitation not supported or error: {}", e.message)),
    }
}

/// Waits `d` unless the request is cancelled first.
pub(super) async fn pause(ctx: &RequestContext, d: Duration) -> Result<(), HandlerError> {
    tokio::select! {
        () = ctx.cancelled() => Err(HandlerError::failed("cancelled")),
        () = tokio::time::sleep(d) => Ok(()),
    }
}
