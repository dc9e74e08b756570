//! What the conformance fixtures share: the test image and audio, the pause step, a tool
//! without arguments, an elicitation's text, a pause that honours cancellation.

use crate::catalog::builder::{tool, ToolDef};
use crate::catalog::{js_string, text_result};
use crate::server::context::RequestContext;
use crate::server::handler::HandlerError;
use serde_json::{json, Value};
use std::time::Duration;

/// A 1×1 red PNG (the suite's test image).
pub const TEST_IMAGE_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A tiny WAV file (the suite's test audio).
pub const TEST_AUDIO_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
/// The pause between the steps of the logging and progress fixtures.
pub const STEP: Duration = Duration::from_millis(50);
/// A tool with no arguments.
pub fn plain(name: &str, description: &str) -> ToolDef {
    tool(name).description(description).no_input()
}
/// The suite's test image as an image content block.
pub fn image() -> Value {
    json!({ "type": "image", "data": TEST_IMAGE_BASE64, "mimeType": "image/png" })
}
/// `Elicitation completed: action=…, content=…` / `User response: …`, or the error text.
pub fn elicitation_text(prefix: &str, answer: Result<Value, crate::jsonrpc::ErrorObject>) -> Value {
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
pub async fn pause(ctx: &RequestContext, d: Duration) -> Result<(), HandlerError> {
    tokio::select! {
        () = ctx.cancelled() => Err(HandlerError::failed("cancelled")),
        () = ctx.server.clock.sleep(d) => Ok(()),
    }
}
