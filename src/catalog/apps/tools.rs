//! The `apps` catalog's tools (docs/apps.md, "Tools"): each linkage of a tool to its view (the
//! nested `_meta.ui.resourceUri`, the deprecated flat key, both, a value that is not `ui://`, a
//! URI that resolves to nothing, a tool with annotations and an output schema, no arguments, a
//! large argument, a slow cancellable call), each `visibility`, each kind of result, and the
//! app-only tools a view calls: where it posts its results, and the probes of what a host lets
//! through. Every result keeps a text fallback (except `apps_result_empty`, the empty result).

use super::mode::SUBMIT;
use super::views::{negative_uri, variant_uri, NEGATIVE, SELFTEST, VARIANTS};
use crate::catalog::builder::{tool, ToolDef};
use crate::catalog::{schema, string_arg, text_result};
use crate::error::Error;
use crate::server::context::RequestContext;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::Registry;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// The `_meta` key of a linked result's nonce (the view checks it matches the structured one).
pub const NONCE_META: &str = "everything-mcp/nonce";
/// The `_meta` key of a linked result's correlation id.
pub const CORRELATION_META: &str = "everything-mcp/correlationId";

/// A 1×1 PNG, base64 (`apps_result_media`'s image block).
const PIXEL: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/// Whether a tool definition's `visibility` leaves the model out (an app-only tool, or `[]`).
pub fn app_only(definition: &Map<String, Value>) -> bool {
    definition
        .get("_meta")
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array)
        .is_some_and(|v| !v.iter().any(|x| x == "model"))
}

/// A tool's `_meta.ui`-linked definition: `resourceUri` under the nested key.
fn linked(name: &str, description: &str, uri: &str) -> ToolDef {
    tool(name)
        .description(description)
        .no_input()
        .with("_meta", json!({ "ui": { "resourceUri": uri } }))
}

/// What a linked tool answers: the text fallback, and the nonce and correlation id (fresh per
/// call) in `structuredContent` and in `_meta`, so the view can check all three agree and the
/// report can pair the model's call with the view's.
pub fn linked_result(name: &str, uri: &str) -> Value {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let correlation = uuid::Uuid::new_v4().simple().to_string();
    json!({
        "content": [{ "type": "text", "text": format!("everything-mcp apps: {name} for {uri}; nonce {nonce}; correlation {correlation}") }],
        "structuredContent": { "nonce": nonce, "correlationId": correlation, "tool": name, "resourceUri": uri },
        "_meta": { NONCE_META: nonce, CORRELATION_META: correlation }
    })
}

/// A tool that answers [`linked_result`] for `uri`.
fn serve_linked(
    def: ToolDef,
    name: impl Into<String>,
    uri: String,
) -> Result<crate::server::registry::Tool, Error> {
    let name = name.into();
    def.serve(tool_fn(move |_, _| {
        let result = linked_result(&name, &uri);
        async move { Ok(result) }
    }))
}

/// The result of `apps_result_<kind>`: the linked result (its nonce and correlation id in the
/// text, which the view and the report read) cut down or added to as the kind says.
fn result_variant(name: &str) -> Value {
    let mut result = linked_result(name, SELFTEST);
    let Value::Object(map) = &mut result else {
        return result;
    };
    map.shift_remove("structuredContent");
    match name {
        "apps_result_text" => {
            map.shift_remove("_meta");
        }
        "apps_result_error" => {
            map.insert("isError".into(), true.into());
        }
        "apps_result_media" => {
            if let Some(Value::Array(content)) = map.get_mut("content") {
                content.push(json!({ "type": "image", "data": PIXEL, "mimeType": "image/png" }));
                content.push(json!({ "type": "resource", "resource": { "uri": "everything-mcp://apps/note.txt", "mimeType": "text/plain", "text": "an embedded note" } }));
            }
        }
        _ => return json!({ "content": [] }),
    }
    result
}

/// What an app-only or model-only probe answers: that the call reached the server.
fn reached(name: &'static str) -> Value {
    json!({
        "content": [{ "type": "text", "text": format!("{name} reached the server") }],
        "structuredContent": { "reached": true, "tool": name }
    })
}

/// The `_meta` of a tool with this `visibility` (and, when `uri` is given, linked to it).
fn visibility(uri: Option<&str>, visibility: Option<Value>) -> Value {
    let mut ui = Map::new();
    if let Some(uri) = uri {
        ui.insert("resourceUri".into(), uri.into());
    }
    if let Some(v) = visibility {
        ui.insert("visibility".into(), v);
    }
    json!({ "ui": ui })
}

/// Registers every tool.
pub(super) fn load(registry: &mut Registry) -> Result<(), Error> {
    let selftest = SELFTEST.to_string();
    let mut tools = vec![
        serve_linked(
            linked("apps_selftest", "Shows the self-testing view: it tests the host rendering it and posts its results back", SELFTEST)
                .input(schema(json!({ "note": { "type": "string", "description": "Any text; shown by the view" } }), &[])),
            "apps_selftest",
            selftest.clone(),
        )?,
        serve_linked(
            tool("apps_link_flat")
                .description("Linked to the self-testing view by the deprecated flat key _meta[\"ui/resourceUri\"] only")
                .no_input()
                .with("_meta", json!({ "ui/resourceUri": SELFTEST })),
            "apps_link_flat",
            selftest.clone(),
        )?,
        serve_linked(
            tool("apps_link_both")
                .description("Linked to the self-testing view by both keys (nested and flat), as the SDK's registerAppTool writes them")
                .no_input()
                .with("_meta", json!({ "ui": { "resourceUri": SELFTEST }, "ui/resourceUri": SELFTEST })),
            "apps_link_both",
            selftest.clone(),
        )?,
        serve_linked(
            linked("apps_link_not_ui", "Linked to a resourceUri that is not ui:// (a host must not render it)", "https://example.invalid/view.html"),
            "apps_link_not_ui",
            "https://example.invalid/view.html".into(),
        )?,
        serve_linked(
            linked("apps_link_missing", "Linked to a ui:// URI that resolves to nothing (resources/read fails)", "ui://everything-mcp/missing"),
            "apps_link_missing",
            "ui://everything-mcp/missing".into(),
        )?,
        serve_linked(
            linked("apps_link_annotated", "Linked to the self-testing view, with annotations and an outputSchema", SELFTEST)
                .annotations(json!({ "title": "Annotated app tool", "readOnlyHint": true, "openWorldHint": false }))
                .with("outputSchema", schema(json!({
                    "nonce": { "type": "string" }, "correlationId": { "type": "string" },
                    "tool": { "type": "string" }, "resourceUri": { "type": "string" }
                }), &["nonce", "correlationId", "tool", "resourceUri"])),
            "apps_link_annotated",
            selftest.clone(),
        )?,
        serve_linked(
            linked("apps_no_args", "Linked to the self-testing view; takes no arguments (the host sends tool-input with {})", SELFTEST),
            "apps_no_args",
            selftest.clone(),
        )?,
        serve_linked(
            linked("apps_large_input", "Linked to the self-testing view; takes a large text argument (a host may stream it as partial input)", SELFTEST)
                .input(schema(json!({ "text": { "type": "string", "description": "A long text" } }), &["text"])),
            "apps_large_input",
            selftest.clone(),
        )?,
        linked("apps_slow", "Linked to the slow view; answers after delayMs (default 30000) unless cancelled first", &variant_uri("slow"))
            .input(schema(json!({ "delayMs": { "type": "number", "minimum": 0, "maximum": 600_000 } }), &[]))
            .serve(tool_fn(slow))?,
    ];
    for (name, vis, description) in [
        (
            "apps_vis_model_app",
            Some(json!(["model", "app"])),
            "visibility [\"model\",\"app\"]",
        ),
        (
            "apps_vis_omitted",
            None,
            "visibility omitted (the default: model and app)",
        ),
        (
            "apps_vis_empty",
            Some(json!([])),
            "visibility [] (neither the model nor a view)",
        ),
    ] {
        tools.push(serve_linked(
            tool(name)
                .description(&format!("Linked to the self-testing view; {description}"))
                .no_input()
                .with("_meta", visibility(Some(SELFTEST), vis)),
            name,
            selftest.clone(),
        )?);
    }
    tools.extend([
        tool("apps_app_only").description("App-only (visibility [\"app\"]): a view may call it; the model must not see it").no_input()
            .with("_meta", visibility(None, Some(json!(["app"]))))
            .serve(tool_fn(|_, _| async { Ok(reached("apps_app_only")) }))?,
        tool("apps_model_only").description("Model-only (visibility [\"model\"]): a host must refuse a view's call to it").no_input()
            .with("_meta", visibility(None, Some(json!(["model"]))))
            .serve(tool_fn(|_, _| async { Ok(reached("apps_model_only")) }))?,
        tool(SUBMIT).description("App-only: a view of the apps catalog posts its checks here (the report shows them as apps.view.*)")
            .input(submit_schema())
            .with("_meta", visibility(None, Some(json!(["app"]))))
            .serve(tool_fn(|_, args| async move { Ok(submitted(&args)) }))?,
        tool("apps_early_probe").description("App-only: the early-calls view calls it before its handshake; a host should not let it through").no_input()
            .with("_meta", visibility(None, Some(json!(["app"]))))
            .serve(tool_fn(|_, _| async { Ok(reached("apps_early_probe")) }))?,
        tool("apps_input_required").description("App-only: asks the client a question (elicitation) before answering; a 2026-07-28 host sees input_required for its view's call").no_input()
            .with("_meta", visibility(None, Some(json!(["app"]))))
            .serve(tool_fn(|ctx, _| input_required(ctx)))?,
        tool("apps_task").description("App-only: may run as a task (taskSupport optional); answers after 100 ms").no_input()
            .task_support("optional")
            .with("_meta", visibility(None, Some(json!(["app"]))))
            .serve(tool_fn(|ctx, _| async move {
                pause(&ctx, Duration::from_millis(100)).await?;
                Ok(reached("apps_task"))
            }))?,
    ]);
    for (name, about) in [
        (
            "apps_result_text",
            "text only (no structuredContent, no _meta)",
        ),
        (
            "apps_result_error",
            "isError, its text and _meta (no structuredContent)",
        ),
        (
            "apps_result_media",
            "its text, an image and an embedded resource (no structuredContent)",
        ),
        (
            "apps_result_empty",
            "content [] and nothing else (the one result without a text fallback)",
        ),
    ] {
        tools.push(
            linked(
                name,
                &format!("Linked to the self-testing view; its result: {about}"),
                SELFTEST,
            )
            .serve(tool_fn(move |_, _| {
                let result = result_variant(name);
                async move { Ok(result) }
            }))?,
        );
    }
    for variant in VARIANTS.iter().filter(|v| v.name != "slow") {
        let name = format!("apps_view_{}", variant.name.replace('-', "_"));
        let uri = variant_uri(variant.name);
        tools.push(serve_linked(
            linked(
                &name,
                &format!(
                    "Shows the self-testing view as served by the {} variant: {}",
                    variant.name, variant.about
                ),
                &uri,
            ),
            name,
            uri,
        )?);
    }
    for (kind, about) in NEGATIVE {
        let name = format!("apps_negative_{}", kind.replace('-', "_"));
        let uri = negative_uri(kind);
        tools.push(serve_linked(
            linked(
                &name,
                &format!("Shows a view that misbehaves on purpose: {about}"),
                &uri,
            ),
            name,
            uri,
        )?);
    }
    for t in tools {
        registry.tools.insert(t.name().to_string(), t);
    }
    Ok(())
}

/// `apps_submit_results`' arguments.
fn submit_schema() -> Value {
    schema(
        json!({
            "view": { "type": "string" },
            "variant": { "type": "string" },
            "correlationId": { "type": ["string", "null"] },
            "phase": { "enum": ["initial", "final", "teardown"] },
            "checks": { "type": "array", "items": {
                "type": "object",
                "properties": {
                    "id": { "type": "string" },
                    "status": { "enum": ["pass", "fail", "not exercised"] },
                    "evidence": { "type": "string" }
                },
                "required": ["id", "status"]
            } },
            "hostInfo": { "type": ["object", "null"] },
            "userAgent": { "type": "string" }
        }),
        &["view", "checks"],
    )
}

/// What `apps_submit_results` answers: what it recorded (the traffic keeps the checks).
fn submitted(args: &Map<String, Value>) -> Value {
    let checks = args
        .get("checks")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let failed = args
        .get("checks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("status").and_then(Value::as_str) == Some("fail"))
        .count();
    text_result(format!(
        "recorded {checks} checks of view {} ({} failed)",
        string_arg(args, "view"),
        failed
    ))
}

/// `apps_slow`: the linked result after `delayMs`, or an `isError` result once cancelled.
async fn slow(ctx: RequestContext, args: Map<String, Value>) -> Result<Value, HandlerError> {
    let ms = args
        .get("delayMs")
        .and_then(Value::as_f64)
        .unwrap_or(30_000.0);
    pause(&ctx, Duration::from_secs_f64(ms / 1000.0)).await?;
    Ok(linked_result("apps_slow", &variant_uri("slow")))
}

/// Waits `d` on the server's clock unless the request is cancelled first.
async fn pause(ctx: &RequestContext, d: Duration) -> Result<(), HandlerError> {
    tokio::select! {
        () = ctx.cancelled() => Err(HandlerError::failed("cancelled")),
        () = ctx.server.clock.sleep(d) => Ok(()),
    }
}

/// `apps_input_required`: asks a yes/no question, then says what the answer was.
async fn input_required(ctx: RequestContext) -> Result<Value, HandlerError> {
    let form = json!({
        "mode": "form",
        "message": "everything-mcp apps: may the view go on?",
        "requestedSchema": { "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] }
    });
    let answer = ctx
        .ask_keyed("apps_ok", "elicitation/create", Some(form))
        .await
        .map_err(HandlerError::Rpc)?;
    let action = answer.get("action").and_then(Value::as_str).unwrap_or("?");
    Ok(json!({
        "content": [{ "type": "text", "text": format!("everything-mcp apps: the client answered {action}") }],
        "structuredContent": { "reached": true, "tool": "apps_input_required", "action": action }
    }))
}
