//! `resources/list`, `resources/templates/list`, `resources/read`, and
//! `resources/subscribe` / `resources/unsubscribe`.

use super::list::ListRequest;
use super::params::required_str;
use crate::jsonrpc::ErrorObject;
use crate::protocol::shape::Shape;
use crate::server::context::RequestContext;
use crate::server::handler::handler_error;
use crate::server::model::Server;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// `-32002`: the handshake-era code for an unknown resource.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// `resources/list`, paginated (by the registry's pager when it brings one).
pub fn list(request: &ListRequest<'_>) -> Result<Value, ErrorObject> {
    let registry = request.server.registry();
    // The server's resources, then the session's own (created at runtime by a tool).
    let own = request.ctx.session.own_resources();
    let capabilities = request.ctx.client_capabilities();
    let all = registry.resources.values().chain(own.iter());
    let shown = registry.shown(request.ctx, &capabilities, all.map(|r| &r.definition));
    let pager = registry.resource_pager.as_ref();
    let definitions = shown.iter().map(AsRef::as_ref);
    request.page("resources", Shape::Resource, definitions, pager)
}

/// `resources/templates/list`, paginated.
pub fn list_templates(request: &ListRequest<'_>) -> Result<Value, ErrorObject> {
    let registry = request.server.registry();
    let capabilities = request.ctx.client_capabilities();
    let all = registry.templates.values().map(|t| &t.definition);
    let shown = registry.shown(request.ctx, &capabilities, all);
    let definitions = shown.iter().map(AsRef::as_ref);
    request.page(
        "resourceTemplates",
        Shape::ResourceTemplate,
        definitions,
        None,
    )
}

/// `resources/read`: an exact resource first, then the first template that matches.
pub async fn read(
    server: &Server,
    ctx: RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let uri = required_str(params, "uri")?.to_string();
    let registry = server.registry();
    let own = ctx.session.own_resources();
    let stateless = !ctx.scope.revision.has_handshake();
    let contents = if let Some(resource) = registry
        .resources
        .get(&uri)
        .or_else(|| own.iter().find(|r| r.uri() == uri))
    {
        (resource.handler.clone())(ctx, uri.clone()).await
    } else if let Some((template, vars)) = registry
        .templates
        .values()
        .find_map(|t| t.template.matches(&uri).map(|v| (t, v)))
    {
        (template.handler)(ctx, uri.clone(), vars).await
    } else {
        // SEP-2164: the stateless era standardizes on -32602 (with the URI in `data`); the
        // handshake era keeps the -32002 its clients know.
        let handshake = ctx.scope.revision.has_handshake();
        let dialect = server.config.dialect;
        if let Some(dialect) = dialect.filter(|d| handshake || d.answers_stateless()) {
            return dialect.unknown_resource(&uri);
        }
        let code = if ctx.scope.revision.has_handshake() {
            RESOURCE_NOT_FOUND
        } else {
            crate::jsonrpc::code::INVALID_PARAMS
        };
        return Err(ErrorObject::new(code, format!("Resource not found: {uri}"))
            .with_data(json!({ "uri": uri })));
    };
    let mut result = json!({ "contents": contents.map_err(handler_error)? });
    if let Some((ttl, scope)) = registry.read_cache.get(&uri) {
        if stateless {
            result["ttlMs"] = (*ttl).into();
            result["cacheScope"] = (*scope).into();
        }
    }
    Ok(result)
}

/// `resources/subscribe` (`subscribe = true`) and `resources/unsubscribe`; the registry's
/// subscription hooks run after the session's set changed.
pub fn subscribe(
    server: &Arc<Server>,
    ctx: &RequestContext,
    params: &Map<String, Value>,
    subscribe: bool,
) -> Result<Value, ErrorObject> {
    let uri = required_str(params, "uri")?.to_string();
    ctx.session.update(|s| {
        if subscribe {
            s.subscriptions.insert(uri.clone());
        } else {
            s.subscriptions.remove(&uri);
        }
    });
    for hook in &server.registry().on_subscribe {
        hook(server.clone(), ctx.session.clone(), uri.clone(), subscribe);
    }
    Ok(Value::Object(Map::new()))
}
