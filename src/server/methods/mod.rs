//! One module per MCP method family; [`call`] routes a request ([`Route`]) to its handler.

pub mod completion;
pub mod lifecycle;
pub mod list;
pub mod logging;
pub mod params;
pub mod prompts;
pub mod resources;
pub mod skills;
pub mod tasks;
pub mod tools;

use super::context::RequestContext;
use super::handler::{handler_error, MethodFn};
use crate::jsonrpc::ErrorObject;
use crate::protocol::method_names::ClientRequest;
use crate::server::model::{Responder, Server};
use list::ListRequest;
pub use params::{optional_object, required_object, required_str, take_optional_object};
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a request's method name refers to: a built-in MCP method or a registered custom one.
#[derive(Clone)]
pub enum Route {
    /// One of the MCP requests this server implements.
    Builtin(ClientRequest),
    /// A method registered at runtime (`Server::add_method`), e.g. a vendor extension.
    Custom(MethodFn),
    /// Any request, answered by the registry's responder (a replay).
    Respond(Arc<dyn Responder>),
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
        Route::Respond(responder) => return responder.answer(ctx, params).await,
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
