//! The tools a session sees only when its client declared a capability — `get-roots-list`
//! (roots), `trigger-elicitation-request` (elicitation), `trigger-url-elicitation`
//! (elicitation.url), `trigger-sampling-request` (sampling) — and the hooks that go with them:
//! one `notifications/tools/list_changed` per tool the reference registers after `initialized`
//! (these, `simulate-research-query` and the `*-async` tools) that the session sees, and the
//! roots sync (350 ms after `initialized`, and again on
//! `notifications/roots/list_changed`). Like every server → client request made while serving a
//! client request, `get-roots-list`'s own `roots/list` goes on that request's stream; only the
//! background sync uses the session's stream.

use super::shared::{annotations, definition};
use crate::catalog::{pretty, text_result, Options};
use crate::clock::Timer;
use crate::error::Error;
use crate::jsonrpc::{ErrorObject, Message};
use crate::protocol::method_names::{NotificationMethod, ServerRequest};
use crate::protocol::LogLevel;
use crate::server::context::ASK_TIMEOUT;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::{Registry, Tool};
use crate::server::scope::ClientInfo;
use crate::server::session::Session;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The tools, in the reference's order.
pub fn tools() -> Result<Vec<Tool>, Error> {
    Ok(vec![
        get_roots_list()?.requiring("roots"),
        trigger_elicitation_request()?.requiring("elicitation"),
        trigger_url_elicitation()?.requiring("elicitation.url"),
        trigger_sampling_request()?.requiring("sampling"),
    ])
}

/// The roots the client last reported, per session (`None`: not known, ask).
#[derive(Default)]
struct Roots(Mutex<Option<Vec<Value>>>);

/// The roots of a `roots/list` result, and the log message that says what arrived.
fn roots_received(result: &Value) -> (Vec<Value>, Value) {
    let roots = result
        .get("roots")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text = if roots.is_empty() {
        "Client returned no roots set".to_string()
    } else {
        format!(
            "Roots updated: {} root(s) received from client",
            roots.len()
        )
    };
    (roots, Value::String(text))
}

/// The logger the roots messages name.
const ROOTS_LOGGER: &str = "everything-server";

/// The roots sync outside any client request (after `initialized`, on `list_changed`): asked on
/// the session's own stream — over HTTP the standalone stream, which a client may never open.
/// So it gives up after [`ASK_TIMEOUT`], and a tool call never waits for it (it asks on its own
/// stream when nothing is known).
async fn sync_roots(session: Arc<Session>, mut timer: Timer) {
    let sink = session.sink.clone();
    let asked = timer
        .timeout(
            ASK_TIMEOUT,
            session.request(&sink, ServerRequest::ListRoots.as_str(), None),
        )
        .await
        .ok_or(());
    match asked {
        Ok(Ok(result)) => {
            let (roots, said) = roots_received(&result);
            session.log_to(&sink, LogLevel::Info, said, Some(ROOTS_LOGGER));
            *crate::lock::lock(&session.extension::<Roots>().0) = Some(roots);
        }
        Ok(Err(e)) => {
            tracing::warn!(session = %session.id, "Failed to request roots from client: {}", e.message);
        }
        Err(_) => {
            tracing::warn!(session = %session.id, "Failed to request roots from client: no answer within {} s", ASK_TIMEOUT.as_secs());
        }
    }
}

/// After `initialized`: announce the tools of `announced` (those the reference registers
/// then) this client sees, and sync roots.
pub fn hooks(registry: &mut Registry, options: &Options, announced: Vec<String>) {
    let delay = options.tick(Duration::from_millis(350));
    registry
        .on_initialized
        .push(Arc::new(move |server, session| {
            let capabilities = session.read(|s| s.declared.client_capabilities.clone());
            let registry = server.registry();
            let visible = announced
                .iter()
                .filter_map(|name| registry.tools.get(name))
                .filter(|t| t.visible_to(&capabilities, true))
                .count();
            for _ in 0..visible {
                session.sink.send(&Message::notification(
                    NotificationMethod::ToolListChanged.as_str(),
                    None,
                ));
            }
            if capabilities.get("roots").is_some() {
                let mut timer = server.clock.timer();
                let sleep = timer.sleep(delay);
                tokio::spawn(async move {
                    tokio::select! {
                        () = session.closed.cancelled() => {}
                        () = sleep => { sync_roots(session, timer).await; }
                    }
                });
            }
        }));
    registry
        .on_notification
        .push(Arc::new(|server, session, method, _params| {
            if method == NotificationMethod::RootsListChanged.as_str()
                && session.read(|s| s.declared.client_capabilities.get("roots").is_some())
            {
                // What we knew is stale now: until the sync is answered (if ever, see
                // `sync_roots`), `get-roots-list` asks the client itself.
                *crate::lock::lock(&session.extension::<Roots>().0) = None;
                tokio::spawn(sync_roots(session, server.clock.timer()));
            }
        }));
}

fn get_roots_list() -> Result<Tool, Error> {
    definition(
            "get-roots-list",
            "Get Roots List Tool",
            "Lists the current MCP roots provided by the client. Demonstrates the roots protocol capability even though this server doesn't access files.",
            json!({ "type": "object", "properties": {} }),
            annotations(true, false, true, false),
        ).serve(tool_fn(|ctx, _| async move {
            // The roots are the session's in the handshake era; a stateless request is asked
            // for its own every time.
            let handshake = ctx.scope.revision.has_handshake();
            let cached = if handshake {
                crate::lock::lock(&ctx.session.extension::<Roots>().0).clone()
            } else {
                None
            };
            let roots = match cached {
                Some(r) if !r.is_empty() => r,
                // Asked on this request's stream (over HTTP the POST's), like sampling and
                // elicitation: a client need not open the standalone stream.
                _ => match ctx.list_roots().await {
                    Ok(result) => {
                        let (roots, said) = roots_received(&result);
                        ctx.log(LogLevel::Info, said, Some(ROOTS_LOGGER));
                        if handshake {
                            *crate::lock::lock(&ctx.session.extension::<Roots>().0) =
                                Some(roots.clone());
                        }
                        roots
                    }
                    Err(e) => {
                        tracing::warn!(session = %ctx.session.id, "Failed to request roots from client: {}", e.message);
                        Vec::new()
                    }
                },
            };
            let entries: Vec<(&str, String)> = roots
                .iter()
                .map(|r| {
                    let name = r.get("name").and_then(Value::as_str).unwrap_or("Unnamed Root");
                    let uri = r.get("uri").and_then(Value::as_str).unwrap_or_default();
                    (name, uri.to_string())
                })
                .collect();
            Ok(text_result(crate::catalog::roots::listing(&entries)))
        }))
}

fn trigger_elicitation_request() -> Result<Tool, Error> {
    definition(
            "trigger-elicitation-request",
            "Trigger Elicitation Request Tool",
            "Trigger a Request from the Server for User Elicitation",
            json!({ "type": "object", "properties": {} }),
            annotations(false, false, false, false),
        ).serve(tool_fn(|ctx, _| async move {
            let params = json!({ "message": "Please provide inputs for the following fields:", "requestedSchema": crate::catalog::elicitation::form() });
            let result = ctx.elicit(params).await.map_err(HandlerError::Rpc)?;
            Ok(json!({ "content": crate::catalog::elicitation::summary(&result) }))
        }))
}

/// One-shot markers of `trigger-url-elicitation`'s error path, per session (the reference
/// keeps them module-global and never evicts them; here they go with the session).
#[derive(Default)]
struct UrlErrorMarkers(Mutex<HashSet<String>>);

/// The markers of stateless requests, which have no session to keep them on.
static STATELESS_URL_ERROR_MARKERS: std::sync::LazyLock<Arc<UrlErrorMarkers>> =
    std::sync::LazyLock::new(Arc::default);

fn trigger_url_elicitation() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": {
            "url": { "type": "string", "format": "uri", "description": "The URL the user should open" },
            "message": { "type": "string", "default": "Please open the link to complete this action.", "description": "Message shown to the user before opening the URL" },
            "elicitationId": { "type": "string", "description": "Optional explicit elicitation ID. Defaults to a random UUID." },
            "errorPath": {
                "type": "boolean",
                "default": false,
                "description": "Controls which elicitation mechanism is used. When false (default), sends an elicitation/create request (request path). When true, throws a UrlElicitationRequiredError (MCP error code -32042) so the client handles the URL elicitation via the error path rather than waiting for a response. To clear the error, satisfy the prerequisite and retry this call with the same arguments; the retry ignores errorPath and proceeds, so the client does not loop on the same error."
            }
        },
        "required": ["url"]
    });
    definition(
            "trigger-url-elicitation",
            "Trigger URL Elicitation Tool",
            "Trigger a URL elicitation so the client can direct the user to a browser flow. Supports two mechanisms: the request path (elicitation/create, default) which awaits the user's response, and the error path (UrlElicitationRequiredError, -32042) which signals the client to handle URL elicitation via the error response. Set errorPath=true to use the error path.",
            input,
            annotations(false, false, false, true),
        ).serve(tool_fn(|ctx, args| async move {
            let url = args.get("url").and_then(Value::as_str).unwrap_or_default().to_string();
            let message = args.get("message").and_then(Value::as_str).unwrap_or("Please open the link to complete this action.").to_string();
            let requested_id = args.get("elicitationId").and_then(Value::as_str).map(str::to_string);
            let error_path = args.get("errorPath").and_then(Value::as_bool).unwrap_or(false);
            // A stateless request's session lives for that request only: its markers must
            // outlive it so the retry proceeds (kept per client identity, process-wide).
            let (owner, markers) = if ctx.rounds.is_some() {
                let who = ctx
                    .client_info()
                    .as_ref()
                    .map(ClientInfo::to_value)
                    .unwrap_or_default();
                (who.to_string(), STATELESS_URL_ERROR_MARKERS.clone())
            } else {
                (ctx.session.id.to_string(), ctx.session.extension::<UrlErrorMarkers>())
            };
            let marker = format!("{owner}\0{url}\0{}", requested_id.clone().unwrap_or_default());
            let retry = crate::lock::lock(&markers.0).remove(&marker);
            if error_path && !retry {
                crate::lock::lock(&markers.0).insert(marker);
                let elicitation = json!({
                    "mode": "url",
                    "url": "https://modelcontextprotocol.io",
                    "message": "Open this link to satisfy the prerequisite, then retry the request.",
                    "elicitationId": uuid::Uuid::new_v4().to_string()
                });
                return Err(HandlerError::Rpc(
                    ErrorObject::new(-32042, "MCP error -32042: This request requires browser-based authorization.")
                        .with_data(json!({ "elicitations": [elicitation] })),
                ));
            }
            // A stateless request re-runs this handler on every round: a random id must be the
            // same on each, or the question would change and be asked again forever.
            let id = requested_id.unwrap_or_else(|| match ctx.round_state() {
                Value::String(carried) => carried,
                _ => uuid::Uuid::new_v4().to_string(),
            });
            ctx.set_round_state(json!(id));
            let params = json!({ "mode": "url", "url": url, "message": message, "elicitationId": id });
            let result = ctx.elicit(params).await.map_err(HandlerError::Rpc)?;
            let text = match result.get("action").and_then(Value::as_str) {
                Some("accept") => format!("✅ User completed the URL elicitation flow.\nElicitation ID: {id}\nURL: {url}"),
                Some("decline") => format!("❌ User declined to open the URL (Elicitation ID: {id})."),
                _ => format!("⚠️ User cancelled the URL elicitation (Elicitation ID: {id})."),
            };
            Ok(json!({ "content": [
                { "type": "text", "text": text },
                { "type": "text", "text": format!("\nRaw result: {}", pretty(&result)) }
            ] }))
        }))
}

/// A sampling result with the schema's keys first, as the reference's SDK parses it (and then
/// prints it): `_meta`, `model`, `stopReason`, `role`, `content`, then anything else.
fn schema_order(result: Value) -> Value {
    let Value::Object(mut rest) = result else {
        return result;
    };
    let mut ordered = serde_json::Map::new();
    for key in ["_meta", "model", "stopReason", "role", "content"] {
        if let Some(v) = rest.shift_remove(key) {
            ordered.insert(key.into(), v);
        }
    }
    ordered.extend(rest);
    Value::Object(ordered)
}

/// The input of both sampling triggers (`trigger-sampling-request` and its `-async` twin).
pub(super) fn sampling_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "prompt": { "type": "string", "description": "The prompt to send to the LLM" },
            "maxTokens": { "type": "number", "default": 100, "description": "Maximum number of tokens to generate" }
        },
        "required": ["prompt"]
    })
}

fn trigger_sampling_request() -> Result<Tool, Error> {
    let input = sampling_input();
    definition(
            "trigger-sampling-request",
            "Trigger Sampling Request Tool",
            "Trigger a Request from the Server for LLM Sampling",
            input,
            annotations(false, false, false, true),
        ).serve(tool_fn(|ctx, args| async move {
            let prompt = args
                .get("prompt")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let max_tokens = args.get("maxTokens").cloned().unwrap_or(json!(100));
            let params = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Resource trigger-sampling-request context: {prompt}") } }],
                "systemPrompt": "You are a helpful test server.",
                "maxTokens": max_tokens,
                "temperature": 0.7
            });
            let result = ctx.sample(params).await.map_err(HandlerError::Rpc)?;
            Ok(text_result(format!(
                "LLM sampling result: \n{}",
                pretty(&schema_order(result))
            )))
        }))
}
