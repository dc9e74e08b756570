//! `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` and `tasks/update`: the client's
//! side of a task (see [`crate::server::tasks`] for the two eras). Handshake-era answers use
//! the reference server's words (`MCP error -32602: Failed to retrieve task: Task not found`,
//! ...), since clients compare against it.

use super::params::{required_object, required_str};
use crate::jsonrpc::ErrorObject;
use crate::server::context::RequestContext;
use crate::server::model::Server;
use crate::server::tasks::{self, wire, Task, CANCELLED_BY_CLIENT};
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// A `-32602` in the reference's words (its message as is, already prefixed).
fn invalid(message: String) -> ErrorObject {
    ErrorObject::new(crate::jsonrpc::code::INVALID_PARAMS, message)
}

/// `tasks/list` page size (the reference's).
const PAGE: usize = 10;

/// Who is asking: the session in the handshake era; nobody in particular in the stateless era
/// (the task id is the key).
fn scope(ctx: &RequestContext) -> Option<&str> {
    ctx.scope.revision.has_handshake().then(|| &*ctx.session.id)
}

/// Refuses the tasks methods to a client that cannot have tasks: before 2025-11-25 they do not
/// exist (`-32601`); a stateless request must declare the extension (`-32021`).
fn gate(ctx: &RequestContext) -> Result<(), ErrorObject> {
    if ctx.scope.revision.has_handshake() {
        if !ctx.scope.revision.has_tasks() {
            return Err(ErrorObject::method_not_found(&ctx.method));
        }
        return Ok(());
    }
    if !tasks::client_declares_extension(ctx) {
        return Err(tasks::extension_required(&ctx.method));
    }
    Ok(())
}

/// The task named by `params.taskId` for a client that may have tasks ([`gate`]), or
/// `-32602`: in the handshake era in the reference's words (`not_found`, given the id), in the
/// stateless era naming the id.
fn find_or(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
    not_found: impl FnOnce(&str) -> String,
) -> Result<Arc<Task>, ErrorObject> {
    gate(ctx)?;
    let id = required_str(params, "taskId")?;
    server.tasks.get(id, scope(ctx)).ok_or_else(|| {
        invalid(if ctx.scope.revision.has_handshake() {
            not_found(id)
        } else {
            format!("Invalid params: unknown task {id}")
        })
    })
}

/// [`find_or`] with the reference's `tasks/get` and `tasks/cancel` words.
fn find(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Arc<Task>, ErrorObject> {
    find_or(server, ctx, params, |_| {
        "MCP error -32602: Failed to retrieve task: Task not found".into()
    })
}

/// `tasks/get`: the task (handshake era), the task with its outcome or pending input requests
/// (stateless era).
pub fn get(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let task = find(server, ctx, params)?;
    Ok(Value::Object(wire::detailed(&task)))
}

/// `tasks/result` (handshake era): blocks until the task settles, delivering the task's
/// queued messages on this request's stream meanwhile, then answers exactly what the call
/// would have: its result (with the related-task `_meta`) or its error.
pub async fn result(
    server: &Server,
    ctx: RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let task = find_or(server, &ctx, params, |id| {
        format!("MCP error -32602: Task not found: {id}")
    })?;
    task.mailbox.attach(ctx.sink.outlet());
    let settled = tokio::select! {
        () = task.settled() => true,
        () = ctx.scope.cancel.cancelled() => false,
    };
    task.mailbox.detach();
    if !settled {
        return Err(ErrorObject::internal("the request was cancelled"));
    }
    let outcome = task.state().outcome.clone();
    match outcome {
        Some(Ok(Value::Object(mut result))) => {
            let meta = result
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(tasks::RELATED_TASK.into(), json!({ "taskId": &*task.id }));
            }
            Ok(Value::Object(result))
        }
        Some(Ok(other)) => Ok(other),
        Some(Err(error)) => Err(error),
        None => Err(ErrorObject::internal(format!(
            "Task {} was cancelled: it has no result",
            task.id
        ))),
    }
}

/// `tasks/list` (handshake era): the session's tasks, oldest first, ten a page; the cursor is
/// the last task id of the page before (as the reference pages).
pub fn list(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    gate(ctx)?;
    let all = server.tasks.list(scope(ctx));
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(cursor) => {
            let cursor = cursor.as_str().unwrap_or_default();
            let at = all.iter().position(|t| &*t.id == cursor).ok_or_else(|| {
                invalid(format!(
                    "MCP error -32602: Failed to list tasks: Invalid cursor: {cursor}"
                ))
            })?;
            at + 1
        }
    };
    let page: Vec<Value> = all
        .iter()
        .skip(start)
        .take(PAGE)
        .map(|t| Value::Object(wire::task(t)))
        .collect();
    let mut result = Map::new();
    if start + PAGE < all.len() {
        result.insert("nextCursor".into(), (*all[start + PAGE - 1].id).into());
    }
    result.insert("tasks".into(), Value::Array(page));
    Ok(Value::Object(result))
}

/// `tasks/cancel`. Handshake era: the task, now `cancelled`; a settled task is refused
/// (`-32602`, as the spec requires). Stateless era: an empty acknowledgement, also for a
/// settled task (the extension makes cancelling idempotent).
pub fn cancel(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let handshake = ctx.scope.revision.has_handshake();
    let task = find(server, ctx, params)?;
    let cancelled = task.cancel(CANCELLED_BY_CLIENT);
    if !handshake {
        return Ok(Value::Object(Map::new()));
    }
    if !cancelled {
        return Err(invalid(format!(
            "MCP error -32602: Cannot cancel task in terminal status: {}",
            task.status().as_str()
        )));
    }
    Ok(Value::Object(wire::task(&task)))
}

/// `tasks/update` (stateless era): delivers `inputResponses` to the task's pending input
/// requests (keys not pending are ignored) and acknowledges.
pub fn update(
    server: &Server,
    ctx: &RequestContext,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let task = find(server, ctx, params)?;
    let responses = required_object(params, "inputResponses")?;
    task.answer(&responses);
    Ok(Value::Object(Map::new()))
}
