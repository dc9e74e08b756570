//! `tools/list` and `tools/call`: listing shaped per revision, argument validation against the
//! tool's `inputSchema` (a failure is an `isError` result, SEP-1303), and running the handler.

use super::list::ListRequest;
use super::params::{required_str, take_optional_object};
use crate::jsonrpc::ErrorObject;
use crate::protocol::shape::Shape;
use crate::server::context::RequestContext;
use crate::server::handler::{error_result, HandlerError, ToolFn};
use crate::server::limits::{refused, Limit};
use crate::server::model::Server;
use crate::server::tasks::{self, Decision};
use serde_json::{Map, Value};

/// `tools/list`, paginated: the tools visible to this client in this revision.
pub fn list(request: &ListRequest<'_>) -> Result<Value, ErrorObject> {
    let registry = request.server.registry();
    let capabilities = request.ctx.client_capabilities();
    let handshake = request.ctx.scope.revision.has_handshake();
    let visible = registry
        .tools
        .values()
        .filter(|t| t.visible_to(&capabilities, handshake));
    let shown = registry.shown(request.ctx, &capabilities, visible.map(|t| &t.definition));
    request.page("tools", Shape::Tool, shown.iter().map(AsRef::as_ref), None)
}

/// `tools/call`: unknown tool → `-32602`; invalid arguments → `isError` result; a handler's
/// failure → `isError` result with its text; a handler's JSON-RPC error → that error.
pub async fn call(
    server: &Server,
    ctx: RequestContext,
    mut params: Map<String, Value>,
) -> Result<Value, ErrorObject> {
    required_str(&params, "name")?; // a missing name is reported before bad arguments
    let arguments = take_optional_object(&mut params, "arguments")?;
    let name = required_str(&params, "name")?;
    let capabilities = ctx.client_capabilities();
    // Borrowed from this snapshot of the registry, not copied: a tool's definition is a whole
    // JSON object, and copying it cost every call about a microsecond.
    let registry = server.registry();
    let tool = registry
        .tools
        .get(name)
        .filter(|t| t.visible_to(&capabilities, ctx.scope.revision.has_handshake()));
    let handshake = ctx.scope.revision.has_handshake();
    let dialect = server
        .config
        .dialect
        .filter(|d| handshake || d.answers_stateless());
    let Some(tool) = tool else {
        if let Some(dialect) = dialect {
            return dialect.unknown_tool(name);
        }
        return Err(match registry.dialect {
            Some(d) => (d.unknown_tool)(name),
            None => ErrorObject::invalid_params(format!("Unknown tool: {name}")),
        });
    };
    let instance = Value::Object(arguments);
    let validator = tool.validator.get().map_err(|e| {
        ErrorObject::internal(format!("tool {name:?} has an invalid inputSchema: {e}"))
    })?;
    if let Some(d) = dialect.filter(|d| d.checks_only_required()) {
        // Only the top-level `required` names, as the peer checks them.
        let missing = tool.definition["inputSchema"]["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|r| instance.get(*r).is_none());
        if let Some(missing) = missing {
            let text = d.failure(name, &format!("Missing required argument: {missing}"));
            return Ok(error_result(text));
        }
    }
    let problems: Vec<String> = match dialect.filter(|d| d.checks_only_required()) {
        Some(_) => Vec::new(),
        None => validator
            .iter_errors(&instance)
            .map(|e| describe_violation(&e))
            .collect(),
    };
    if !problems.is_empty() {
        return Ok(error_result(format!(
            "MCP error -32602: Input validation error: Invalid arguments for tool {name}: {}",
            problems.join("; ")
        )));
    }
    let Value::Object(arguments) = instance else {
        unreachable!("built from a map above")
    };
    let mut ctx = ctx;
    let decision = tasks::decide(&ctx, name, tool.task_support, params.get("task"));
    if matches!(decision, Decision::Task) {
        let max = server.config.limits.max_tasks;
        if server.tasks.len() >= max {
            server.limit_hits.hit(Limit::Tasks);
            return Err(refused(Limit::Tasks, max, "Too many tasks are kept"));
        }
    }
    if let (Decision::Task, Some(gate)) = (&decision, server.gates.get(name)) {
        // A test's gate holds the task instead of running the handler (even one that starts
        // its own task: the gate is what the test wants to drive).
        let shown = Value::Object(arguments);
        return Ok(tasks::start(&ctx, name, shown, None, move |ctx| {
            tasks::hold(gate, ctx)
        }));
    }
    match decision {
        Decision::Refuse(answer) => return answer,
        // A tool that starts its own task runs as a call and escalates when it is ready.
        Decision::Task if tool.starts_own_task => ctx.task_allowed = true,
        Decision::Task => {
            let handler = tool.handler.clone();
            let tool_name = name.to_string();
            let shown = Value::Object(arguments.clone());
            return Ok(tasks::start(
                &ctx,
                name,
                shown,
                None,
                move |ctx| async move { run(&handler, ctx, arguments, &tool_name).await },
            ));
        }
        Decision::Call => {}
    }
    let result = run(&tool.handler, ctx, arguments, name).await;
    match (result, dialect) {
        (Ok(Value::Object(mut result)), Some(d)) if d.says_is_error_false() => {
            result.entry("isError").or_insert(Value::Bool(false));
            Ok(Value::Object(result))
        }
        // A failure in the peer's words.
        (Ok(Value::Object(mut result)), Some(d))
            if result.get("isError") == Some(&Value::Bool(true)) =>
        {
            if let Some(Value::String(text)) = result
                .get_mut("content")
                .and_then(|c| c.get_mut(0))
                .and_then(|c| c.get_mut("text"))
            {
                *text = d.failure(name, text);
            }
            Ok(Value::Object(result))
        }
        (result, _) => result,
    }
}

/// Runs a tool's handler and shapes its answer: a `CallToolResult` for the revision (no
/// `structuredContent` before 2025-06-18), a handler's failure as an `isError` result, its
/// JSON-RPC error as is.
async fn run(
    handler: &ToolFn,
    ctx: RequestContext,
    arguments: Map<String, Value>,
    name: &str,
) -> Result<Value, ErrorObject> {
    let revision = ctx.scope.revision;
    match handler(ctx, arguments).await {
        Ok(Value::Object(mut result)) => {
            if !revision.has_structured_output() {
                result.shift_remove("structuredContent");
            }
            Ok(Value::Object(result))
        }
        Ok(other) => Err(ErrorObject::internal(format!(
            "tool {name} returned {other} instead of a CallToolResult object"
        ))),
        Err(HandlerError::Failed(text)) => Ok(error_result(text)),
        Err(HandlerError::Rpc(e)) => Err(e),
    }
}

/// One schema violation as "<message> at <path>" (path omitted at the root).
fn describe_violation(e: &jsonschema::ValidationError<'_>) -> String {
    let path = e.instance_path().to_string();
    if path.is_empty() {
        e.to_string()
    } else {
        format!("{e} at {}", path.trim_start_matches('/').replace('/', "."))
    }
}
