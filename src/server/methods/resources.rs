//! `resources/list`, `resources/templates/list`, `resources/read`, and
//! `resources/subscribe` / `resources/unsubscribe`.

use super::params::required_str;
use crate::jsonrpc::ErrorObject;
use crate::protocol::shape::Shape;
use crate::server::context::RequestContext;
use crate::server::handler::handler_error;
use crate::server::model::Server;
use crate::server::pagination::{list_page, list_page_with};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// `-32002`: the handshake-era code for an unknown resource.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// `resources/list`, paginated.
pub fn list(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let registry = server.registry();
    // The server's resources, then the session's own (created at runtime by a tool).
    let own = ctx.session.own_resources();
    let definitions: Vec<_> = registry
        .resources
        .values()
        .chain(own.iter())
        .map(|r| &r.definition)
        .collect();
    if let Some(pager) = &registry.resource_pager {
        return list_page_with(
            "resources",
            definitions.into_iter(),
            params,
            pager,
            Shape::Resource,
            ctx.revision,
        );
    }
    list_page(
        "resources",
        definitions.into_iter(),
        params,
        server.config.page_size,
        Shape::Resource,
        ctx.revision,
    )
}

/// `resources/templates/list`, paginated.
pub fn list_templates(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let registry = server.registry();
    let definitions = registry.templates.values().map(|t| &t.definition);
    list_page(
        "resourceTemplates",
        definitions,
        params,
        server.config.page_size,
        Shape::ResourceTemplate,
        ctx.revision,
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
        let code = if ctx.revision.has_handshake() {
            RESOURCE_NOT_FOUND
        } else {
            crate::jsonrpc::code::INVALID_PARAMS
        };
        return Err(ErrorObject::new(code, format!("Resource not found: {uri}"))
            .with_data(json!({ "uri": uri })));
    };
    Ok(json!({ "contents": contents.map_err(handler_error)? }))
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
