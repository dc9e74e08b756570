//! The `capabilities` object the server declares in `initialize`, shaped per revision.

use super::revision::Revision;
use serde_json::{json, Map, Value};
use std::sync::{Arc, LazyLock};

/// `{}`: the capabilities of a client that declared none (yet), shared. A fresh session and
/// every stateless envelope declaring none hold this one value instead of allocating their own
/// (about 150 instructions a stateless request, callgrind).
pub fn declared_none() -> Arc<Value> {
    static NONE: LazyLock<Arc<Value>> = LazyLock::new(|| Arc::new(Value::Object(Map::new())));
    NONE.clone()
}

/// The tasks extension's identifier (SEP-2663).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The skills extension's identifier (SEP-2640), declared by a registry that serves a skill;
/// its methods (`skills/list`, `skills/get`, `resources/directory/read`) are routed only then.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The `_meta` key tying a message to its task (handshake era, SEP-1686): here, below the
/// server, because the traffic recorder reads it too (a record's `task`).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// The server's capabilities for `revision`.
///
/// Everything the registry can hold is always declared (`listChanged: true` because tools,
/// resources and prompts can be added at runtime; `subscribe: true` because any resource can be
/// subscribed to), so a client sees the same surface whatever the catalog. Keys are only added
/// in the revisions that define them. `extensions` are the extensions the loaded catalogs
/// declare (`io.modelcontextprotocol/skills`, ...), shown under `capabilities.extensions` in the
/// revisions that have it (2026-07-28) and only when there is one. `tasks`: some tool can run
/// as a task, declared as the `tasks` capability in 2025-11-25 and as the
/// `io.modelcontextprotocol/tasks` extension from 2026-07-28. `handshake_extensions`: those
/// declared under `capabilities.extensions` in the handshake era too (the legacy negotiation).
pub fn server_capabilities(
    revision: Revision,
    extensions: &Map<String, Value>,
    handshake_extensions: &Map<String, Value>,
    tasks: bool,
) -> Value {
    let mut caps = Map::new();
    caps.insert("tools".into(), json!({ "listChanged": true }));
    caps.insert(
        "resources".into(),
        json!({ "subscribe": true, "listChanged": true }),
    );
    caps.insert("prompts".into(), json!({ "listChanged": true }));
    caps.insert("logging".into(), json!({}));
    if revision.has_completions_capability() {
        caps.insert("completions".into(), json!({}));
    }
    let mut extensions = extensions.clone();
    if tasks && revision.has_extensions_capability() {
        extensions.insert(TASKS_EXTENSION.into(), json!({}));
    } else if tasks && revision.has_tasks() {
        caps.insert(
            "tasks".into(),
            json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }),
        );
    }
    if revision.has_extensions_capability() && !extensions.is_empty() {
        caps.insert("extensions".into(), Value::Object(extensions));
    } else if !revision.has_extensions_capability() && !handshake_extensions.is_empty() {
        caps.insert(
            "extensions".into(),
            Value::Object(handshake_extensions.clone()),
        );
    }
    Value::Object(caps)
}
