//! Built-in surfaces, selectable by name and combinable. Each catalog adds its tools,
//! resources and prompts to a registry.

pub mod conformance;
pub mod elicitation;
pub mod everything;
pub mod everything_v1;
pub mod review_lab;

use crate::error::Error;
use crate::jsnum;
use crate::server::registry::Registry;
use serde_json::{json, Map, Value};

/// Catalog names accepted by [`load`].
pub const NAMES: &[&str] = &[
    "everything",
    "everything-v1",
    "conformance",
    "review-lab",
    "none",
];

/// Adds catalog `name` to `registry`.
pub fn load(name: &str, registry: &mut Registry) -> Result<(), Error> {
    match name {
        "everything" => everything::load(registry),
        "everything-v1" => everything_v1::load(registry),
        "conformance" => conformance::load(registry),
        "review-lab" => review_lab::load(registry),
        "none" => Ok(()),
        other => Err(Error::Config(format!(
            "unknown catalog {other:?} (known: {})",
            NAMES.join(", ")
        ))),
    }
}

/// A `CallToolResult` with one text block.
pub fn text_result(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }] })
}

/// An object input schema with these `properties` and `required` names.
pub fn schema(properties: Value, required: &[&str]) -> Value {
    let mut s = Map::new();
    s.insert("type".into(), "object".into());
    s.insert("properties".into(), properties);
    if !required.is_empty() {
        s.insert("required".into(), json!(required));
    }
    Value::Object(s)
}

/// A JSON value as JavaScript's `String(value)` prints it (strings bare, numbers the JS way).
pub fn js_string(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), jsnum::format),
        other => other.to_string(),
    }
}

/// Runs `tick` every `interval` until `stop` fires or the session is gone: the periodic timers
/// of the catalogs (simulated logs, subscription updates), which belong to their session.
pub fn every(
    session: &std::sync::Arc<crate::server::session::Session>,
    interval: std::time::Duration,
    stop: tokio_util::sync::CancellationToken,
    mut tick: impl FnMut(&crate::server::session::Session) + Send + 'static,
) {
    let weak = std::sync::Arc::downgrade(session);
    tokio::spawn(async move {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(interval) => {}
            }
            let Some(session) = weak.upgrade() else {
                return;
            };
            tick(&session);
        }
    });
}
