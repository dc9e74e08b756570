//! What runs when a client calls something: the handler function types (one per kind of
//! registry entry, defined in [`super::model`] beside the context they take), how a handler
//! fails, the hooks catalogs attach to session events, and the wrappers that turn async
//! closures into handlers.

use super::model::RequestContext;
pub use super::model::{
    BoxFuture, CompleteFn, HandlerError, HandlerResult, MethodFn, NotificationHook, ObjectFn,
    PromptFn, ResourceFn, SessionHook, SubscribeHook, TemplateFn, ToolFn,
};
use crate::jsonrpc::ErrorObject;
use serde_json::json;
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;

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

/// Outside tools, a handler failure is a JSON-RPC error.
pub fn handler_error(e: HandlerError) -> ErrorObject {
    match e {
        HandlerError::Failed(text) => ErrorObject::internal(text),
        HandlerError::Rpc(e) => e,
    }
}

/// `{"content":[{"type":"text","text":…}],"isError":true}`.
pub fn error_result(text: String) -> Value {
    json!({ "content": [{ "type": "text", "text": text }], "isError": true })
}

/// The text of a panic payload.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
