//! `apps`: the MCP Apps host lab (the extension `io.modelcontextprotocol/ui`, SEP-1865;
//! docs/apps.md). Tools linked to `ui://` views in every linkage, visibility and result
//! variant ([`tools`]); the views themselves, in every `_meta.ui` placement and CSP ([`views`]):
//! a self-testing view that runs the bridge spec's host requirements from inside the host's
//! iframe and posts its results back through an app-only tool, and negative views that
//! misbehave on purpose. The server's side of the grading (what the host declared, read and
//! called, on which session) is read off the traffic by the report (`everything_mcp.report.apps`).
//!
//! The extension is declared in both eras (an `initialize` result and `server/discover`). What a
//! host sees of the views' metadata follows the [`AppsMode`]: under `gate` (the spec's SHOULD)
//! only a host that declared the extension — in `initialize`, or in 2026-07-28 in the request
//! itself — sees `_meta.ui` and the app-only tools; the others get plain tools.

pub mod mode;
pub mod tools;
pub mod views;

pub use mode::{declared, shows_ui, AppsMode, EXTENSION, META_KEYS, MIME};

use crate::error::Error;
use crate::server::context::RequestContext;
use crate::server::registry::{Registry, Shown};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// Adds the catalog under `mode`.
pub fn load(registry: &mut Registry, mode: AppsMode) -> Result<(), Error> {
    if mode != AppsMode::Off {
        registry.extensions.insert(EXTENSION.into(), json!({}));
        registry
            .handshake_extensions
            .insert(EXTENSION.into(), json!({}));
    }
    tools::load(registry)?;
    let mut unlisted = Vec::new();
    views::load(registry, mode, &mut unlisted);
    registry
        .definition_views
        .push(Arc::new(move |ctx, capabilities, definition| {
            let uri = definition.get("uri").and_then(Value::as_str);
            if uri.is_some_and(|u| unlisted.iter().any(|x| x == u)) {
                return Shown::Hidden;
            }
            view(mode, ctx, capabilities, definition)
        }));
    Ok(())
}

/// What a client sees of a listed definition: the declared origins filled in, and under `gate`
/// (for a client without the extension) or `off` the UI metadata removed and app-only tools
/// left out.
fn view(
    mode: AppsMode,
    ctx: &RequestContext,
    capabilities: &Value,
    definition: &Map<String, Value>,
) -> Shown {
    let Some(meta) = definition.get("_meta").and_then(Value::as_object) else {
        return Shown::As;
    };
    if !META_KEYS.iter().any(|k| meta.contains_key(*k)) {
        return Shown::As;
    }
    let shows = match mode {
        AppsMode::Always => true,
        AppsMode::Off => false,
        AppsMode::Gate => declared(capabilities),
    };
    let mut definition = definition.clone();
    if shows {
        if let Some(ui) = definition.get_mut("_meta").and_then(|m| m.get_mut("ui")) {
            views::fill_origins(ui, ctx);
        }
        return Shown::Changed(definition);
    }
    if tools::app_only(&definition) {
        return Shown::Hidden;
    }
    if let Some(Value::Object(meta)) = definition.get_mut("_meta") {
        for key in META_KEYS {
            meta.shift_remove(key);
        }
        if meta.is_empty() {
            definition.shift_remove("_meta");
        }
    }
    Shown::Changed(definition)
}
