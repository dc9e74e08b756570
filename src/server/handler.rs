//! What runs when a client calls something: the handler function types (one per kind of
//! registry entry), how a handler fails, the hooks catalogs attach to session events, and the
//! wrappers that turn async closures into handlers. Kept apart from the registry so the
//! registry is plain data (definitions plus these opaque functions) and only this module ties
//! handlers to [`RequestContext`], [`Session`] and [`Server`].

use super::context::RequestContext;
use super::session::Session;
use super::Server;
use crate::jsonrpc::ErrorObject;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// A boxed, sendable future: what every handler returns.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// How a handler fails.
#[derive(Debug, Clone, PartialEq)]
pub enum HandlerError {
    /// A failure the caller should see as content: for tools an `isError: true` result (per the
    /// spec, tool execution errors are results), elsewhere a `-32603` error.
    Failed(String),
    /// A specific JSON-RPC error to send as is.
    Rpc(ErrorObject),
}

impl HandlerError {
    /// A failure with this text.
    pub fn failed(text: impl Into<String>) -> Self {
        Self::Failed(text.into())
    }
}

/// Result of a handler.
pub type HandlerResult<T> = Result<T, HandlerError>;

/// A handler of an object of arguments: `(context, arguments) -> JSON value`. Tools, prompts
/// and custom methods all have this shape (one type, so one wrapper serves all three).
pub type ObjectFn = Arc<
    dyn Fn(RequestContext, Map<String, Value>) -> BoxFuture<HandlerResult<Value>> + Send + Sync,
>;
/// Runs a tool: `(context, arguments) -> CallToolResult` (a JSON object).
pub type ToolFn = ObjectFn;
/// Serves a custom JSON-RPC method: `(context, params) -> result` (a JSON value).
pub type MethodFn = ObjectFn;
/// Reads a resource: `(context, uri) -> contents array`.
pub type ResourceFn =
    Arc<dyn Fn(RequestContext, String) -> BoxFuture<HandlerResult<Vec<Value>>> + Send + Sync>;
/// Reads a templated resource: `(context, uri, variables) -> contents array`.
pub type TemplateFn = Arc<
    dyn Fn(RequestContext, String, Map<String, Value>) -> BoxFuture<HandlerResult<Vec<Value>>>
        + Send
        + Sync,
>;
/// Renders a prompt: `(context, arguments) -> GetPromptResult` (a JSON object).
pub type PromptFn = ObjectFn;
/// Completes an argument: `(context, argument name, partial value, other arguments) ->
/// candidates`. The context is what every handler gets, so a Python completion is called the way
/// every other Python handler is.
pub type CompleteFn = Arc<
    dyn Fn(
            RequestContext,
            String,
            String,
            Map<String, Value>,
        ) -> BoxFuture<HandlerResult<Vec<String>>>
        + Send
        + Sync,
>;

/// A hook run on a client notification: `(server, session, method, params)`.
pub type NotificationHook =
    Arc<dyn Fn(Arc<Server>, Arc<Session>, &str, Option<&Value>) + Send + Sync>;

/// A hook run for a session (see [`Registry::on_initialized`]); spawn anything long-running,
/// and stop it when `session.closed` fires.
pub type SessionHook = Arc<dyn Fn(Arc<Server>, Arc<Session>) + Send + Sync>;

/// A hook run on (un)subscription: `(server, session, uri, subscribed)`.
pub type SubscribeHook = Arc<dyn Fn(Arc<Server>, Arc<Session>, String, bool) + Send + Sync>;

/// Wraps an async closure as an [`ObjectFn`]: a [`ToolFn`], a [`PromptFn`] or a [`MethodFn`]
/// (also named `tool_fn`, `prompt_fn` and `method_fn`, for the reader of a catalog).
pub fn object_fn<F, Fut>(f: F) -> ObjectFn
where
    F: Fn(RequestContext, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<Value>> + Send + 'static,
{
    Arc::new(move |ctx, args| Box::pin(f(ctx, args)))
}

/// Wraps an async closure as a [`ResourceFn`].
pub fn resource_fn<F, Fut>(f: F) -> ResourceFn
where
    F: Fn(RequestContext, String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<Vec<Value>>> + Send + 'static,
{
    Arc::new(move |ctx, uri| Box::pin(f(ctx, uri)))
}

/// Wraps an async closure as a [`TemplateFn`].
pub fn template_fn<F, Fut>(f: F) -> TemplateFn
where
    F: Fn(RequestContext, String, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<Vec<Value>>> + Send + 'static,
{
    Arc::new(move |ctx, uri, vars| Box::pin(f(ctx, uri, vars)))
}

/// Wraps an async closure as a [`CompleteFn`].
pub fn complete_fn<F, Fut>(f: F) -> CompleteFn
where
    F: Fn(RequestContext, String, String, Map<String, Value>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult<Vec<String>>> + Send + 'static,
{
    Arc::new(move |ctx, arg, value, context| Box::pin(f(ctx, arg, value, context)))
}

pub use object_fn as method_fn;
pub use object_fn as prompt_fn;
pub use object_fn as tool_fn;
