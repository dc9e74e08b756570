//! One module per MCP method family; [`call`] routes a request ([`Route`]) to its handler.

pub mod completion;
pub mod lifecycle;
pub mod logging;
pub mod prompts;
pub mod resources;
pub mod skills;
pub mod tasks;
pub mod tools;

use super::context::RequestContext;
use super::handler::{HandlerError, MethodFn};
use super::pagination::{list_page, list_page_with, Pager};
use super::Server;
use crate::jsonrpc::ErrorObject;
use crate::protocol::methods::ClientRequest;
use crate::protocol::shape::Shape;
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a request's method name refers to: a built-in MCP method or a registered custom one.
#[derive(Clone)]
pub enum Route {
    /// One of the MCP requests this server implements.
    Builtin(ClientRequest),
    /// A method registered at runtime (`Server::add_method`), e.g. a vendor extension.
    Custom(MethodFn),
}

/// Serves one request (after the lifecycle checks in `dispatch`). The `match` is exhaustive
/// over [`ClientRequest`]: a method added there must be routed here to compile.
pub async fn call(
    server: &Arc<Server>,
    ctx: RequestContext,
    route: Route,
    params: Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let method = match route {
        Route::Builtin(method) => method,
        Route::Custom(custom) => return custom(ctx, params).await.map_err(handler_error),
    };
    match method {
        ClientRequest::Initialize => lifecycle::initialize(server, &ctx.session, &params),
        ClientRequest::Ping => lifecycle::ping(),
        ClientRequest::SetLogLevel => logging::set_level(&ctx, &params),
        ClientRequest::ListTools => tools::list(&ListRequest::new(server, &ctx, &params)),
        ClientRequest::CallTool => tools::call(server, ctx, params).await,
        ClientRequest::ListResources => resources::list(&ListRequest::new(server, &ctx, &params)),
        ClientRequest::ListResourceTemplates => {
            resources::list_templates(&ListRequest::new(server, &ctx, &params))
        }
        ClientRequest::ReadResource => resources::read(server, ctx, &params).await,
        ClientRequest::Subscribe => resources::subscribe(server, &ctx, &params, true),
        ClientRequest::Unsubscribe => resources::subscribe(server, &ctx, &params, false),
        ClientRequest::ListPrompts => prompts::list(&ListRequest::new(server, &ctx, &params)),
        ClientRequest::GetPrompt => prompts::get(server, ctx, &params).await,
        ClientRequest::Complete => completion::complete(server, ctx, &params).await,
        ClientRequest::Discover => lifecycle::discover(server),
        ClientRequest::Listen => super::listen::listen(server, ctx, &params).await,
        ClientRequest::GetTask => tasks::get(server, &ctx, &params),
        ClientRequest::TaskResult => tasks::result(server, ctx, &params).await,
        ClientRequest::ListTasks => tasks::list(server, &ctx, &params),
        ClientRequest::CancelTask => tasks::cancel(server, &ctx, &params),
        ClientRequest::UpdateTask => tasks::update(server, &ctx, &params),
        ClientRequest::ListSkills => skills::list(server, &params),
        ClientRequest::GetSkill => skills::get(server, &params),
        ClientRequest::ReadDirectory => skills::read_directory(server, &params),
    }
}

/// A `*/list` request of a registry family (`tools/list`, `resources/list`, …): what each reads
/// to cut and shape its page, so each family's list method says only what it lists.
pub struct ListRequest<'a> {
    /// The server: its registry snapshot and the configured page size.
    pub server: &'a Server,
    /// The request: its session (which may own resources) and revision (which fields a
    /// definition shows).
    pub ctx: &'a RequestContext,
    /// The request's params: the client's `cursor`.
    pub params: &'a Map<String, Value>,
}

impl<'a> ListRequest<'a> {
    /// The `*/list` request `params` of `ctx`, served by `server`.
    pub fn new(
        server: &'a Server,
        ctx: &'a RequestContext,
        params: &'a Map<String, Value>,
    ) -> Self {
        Self {
            server,
            ctx,
            params,
        }
    }

    /// The page of `definitions` the client's cursor asks for, as the result's `key`, each
    /// shaped as `shape` for the request's revision; cut by `pager` when the registry brings
    /// one, else by the configured page size.
    pub fn page<'d>(
        &self,
        key: &str,
        shape: Shape,
        definitions: impl ExactSizeIterator<Item = &'d Map<String, Value>>,
        pager: Option<&Pager>,
    ) -> Result<Value, ErrorObject> {
        let revision = self.ctx.revision;
        match pager {
            Some(pager) => list_page_with(key, definitions, self.params, pager, shape, revision),
            None => {
                let page_size = self.server.config.page_size;
                list_page(key, definitions, self.params, page_size, shape, revision)
            }
        }
    }
}

/// A required string parameter, or `-32602` naming it.
pub fn required_str<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, ErrorObject> {
    match crate::field::get(params, key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"{key}\" must be a string, got {}",
            crate::jsonrpc::json_type(other)
        ))),
        None => Err(ErrorObject::invalid_params(format!(
            "missing required \"{key}\""
        ))),
    }
}

/// A required object parameter, or `-32602` naming it.
pub fn required_object(
    params: &Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match params.get(key) {
        None | Some(Value::Null) => Err(ErrorObject::invalid_params(format!(
            "missing required \"{key}\""
        ))),
        Some(_) => optional_object(params, key),
    }
}

/// An optional object parameter (absent → empty), or `-32602` naming it; taken out of
/// `params` rather than copied.
pub fn take_optional_object(
    params: &mut Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match crate::field::get_mut(params, key) {
        Some(Value::Object(m)) => Ok(std::mem::take(m)),
        _ => optional_object(params, key),
    }
}

/// An optional object parameter (absent → empty), or `-32602` naming it.
pub fn optional_object(
    params: &Map<String, Value>,
    key: &str,
) -> Result<Map<String, Value>, ErrorObject> {
    match params.get(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(other) => Err(ErrorObject::invalid_params(format!(
            "\"{key}\" must be an object, got {}",
            crate::jsonrpc::json_type(other)
        ))),
    }
}

/// Outside tools, a handler failure is a JSON-RPC error.
pub fn handler_error(e: HandlerError) -> ErrorObject {
    match e {
        HandlerError::Failed(text) => ErrorObject::internal(text),
        HandlerError::Rpc(e) => e,
    }
}
