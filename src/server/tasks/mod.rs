//! Tasks: a `tools/call` answered with a handle at once and run in the background, the client
//! polling for its status and outcome. Both eras are served by one store and one runner; only
//! the wire differs ([`wire`]):
//!
//! - **Handshake era, 2025-11-25 (SEP-1686).** The client asks for a task with `params.task`
//!   on a tool whose `execution.taskSupport` allows it (capability `tasks`). Tasks belong to
//!   their session. `tasks/get`, `tasks/result` (blocks until the task settles, delivering the
//!   task's queued requests on its stream), `tasks/list`, `tasks/cancel`;
//!   `notifications/tasks/status` on every status update. The work asks the client with real
//!   requests carrying `_meta["io.modelcontextprotocol/related-task"]`.
//! - **Stateless era, 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663).**
//!   The server decides: a task-supporting tool called by a client whose request declares the
//!   extension gets a task. `tasks/get` inlines the result, the error or the pending
//!   `inputRequests`; `tasks/update` answers them; `tasks/cancel` acknowledges.
//!
//! The work is the tool's ordinary handler, run with a [`RequestContext`] whose `task` is set:
//! its asks become the task's input requests, and `RequestContext::task_status` reports
//! progress as the task's status message. Handlers stay era-agnostic. A tool with a test's
//! gate ([`gate`]) runs the gate's hold loop instead of its handler.

pub mod gate;
pub mod mailbox;
pub mod store;
pub mod task;
pub mod wire;

pub use super::config::{POLL_INTERVAL, TTL};
pub use store::TaskStore;
pub use task::{Status, Task, TaskEra, TaskSupport};

use super::context::RequestContext;
use super::scope::{Declared, Scope};
use super::session::Session;
use super::sink::Sink;
use crate::jsonrpc::{ErrorObject, Message};
use crate::protocol::envelope;
use crate::protocol::method_names::NotificationMethod;
use crate::traffic::TransportKind;
use futures::FutureExt;
use gate::{Command, Gate};
use serde_json::{json, Value};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The extension's identifier (capabilities, `-32021` data).
pub use crate::protocol::capabilities::TASKS_EXTENSION as EXTENSION;

/// The `_meta` key tying a message to its task (handshake era).
pub use crate::protocol::capabilities::RELATED_TASK;

/// The status message of a task the client cancelled (the reference's words).
pub const CANCELLED_BY_CLIENT: &str = "Client cancelled task execution.";

/// How a `tools/call` is served, decided before its handler runs.
pub enum Decision {
    /// An ordinary call.
    Call,
    /// Run as a task: answer with its handle.
    Task,
    /// Refused (the era's answer to a client that cannot call the tool this way).
    Refuse(Result<Value, ErrorObject>),
}

/// Whether the client of this stateless request declared the tasks extension.
pub fn client_declares_extension(ctx: &RequestContext) -> bool {
    ctx.client_capabilities()
        .get("extensions")
        .and_then(|e| e.get(EXTENSION))
        .is_some()
}

/// The `-32021` for a request that needs the extension the client did not declare.
pub fn extension_required(what: &str) -> ErrorObject {
    envelope::missing_capability_error(
        format!("{what} needs the {EXTENSION} extension, which the request's client capabilities do not declare"),
        json!({ "extensions": { EXTENSION: {} } }),
    )
}

/// Decides how `tools/call` of `name` (with this `support`) is served. `task_param` is the
/// request's `params.task` (the handshake era's ask for a task).
pub fn decide(
    ctx: &RequestContext,
    name: &str,
    support: TaskSupport,
    task_param: Option<&Value>,
) -> Decision {
    if ctx.task.is_some() {
        return Decision::Call; // already inside a task (a tool calling a tool)
    }
    if !ctx.scope.revision.has_handshake() {
        // The extension: the server decides; a legacy `task` param changes nothing.
        return match (support, client_declares_extension(ctx)) {
            (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Decision::Call,
            (_, true) => Decision::Task,
            (TaskSupport::Required, false) => Decision::Refuse(Err(extension_required(&format!(
                "Tool {name} runs only as a task: it"
            )))),
        };
    }
    // Before 2025-11-25 nobody can ask for a task (a `task` param means nothing), so a tool
    // that runs only as one is refused as the reference refuses it, whatever the revision.
    // 2025-11-25's `task` is a TaskMetadata object: another type is -32602 rather than a call
    // run as if no task was asked for (`null` stands for absent, as clients write an unset field).
    if let Some(other) = task_param.filter(|t| !t.is_object() && !t.is_null()) {
        if ctx.scope.revision.has_tasks() {
            return Decision::Refuse(Err(ErrorObject::invalid_params(format!(
                "\"task\" must be an object (TaskMetadata), got {}",
                crate::jsonrpc::json_type(other)
            ))));
        }
    }
    let asked = ctx.scope.revision.has_tasks() && task_param.is_some_and(Value::is_object);
    match (support, asked) {
        (TaskSupport::Forbidden, false) | (TaskSupport::Optional, false) => Decision::Call,
        (TaskSupport::Optional | TaskSupport::Required, true) => Decision::Task,
        // The reference answers an isError result here (the spec: -32601), in these words.
        (TaskSupport::Required, false) => Decision::Refuse(Ok(super::handler::error_result(
            format!("MCP error -32601: Tool {name} requires task augmentation (taskSupport: 'required')"),
        ))),
        (TaskSupport::Forbidden, true) => Decision::Refuse(Err(ErrorObject::new(
            crate::jsonrpc::code::METHOD_NOT_FOUND,
            format!("Tool {name} does not support task augmentation (taskSupport: 'forbidden')"),
        ))),
    }
}

/// Starts `work` as a task for the request `ctx` is serving (a call of `tool` with
/// `arguments`) and returns the answer to that request: the era's `CreateTaskResult`. The task
/// is in the store before this returns (the spec: durably created), and in the handshake era
/// its first status notification has gone out. `message` is its first status message.
pub fn start<F, Fut>(
    ctx: &RequestContext,
    tool: &str,
    arguments: Value,
    message: Option<String>,
    work: F,
) -> Value
where
    F: FnOnce(RequestContext) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    let server = ctx.server.clone();
    let handshake = ctx.scope.revision.has_handshake();
    let (era, scope, cancel) = if handshake {
        (
            TaskEra::Handshake,
            Some(ctx.session.id.clone()),
            ctx.session.closed.child_token(),
        )
    } else {
        // A stateless request's session ends with the request; the task outlives it.
        (TaskEra::Stateless, None, CancellationToken::new())
    };
    let task = Arc::new(Task::new(
        scope,
        era,
        tool.to_string(),
        arguments,
        (
            server.config.task_ttl,
            server.config.task_poll_interval,
            server.clock.clone(),
        ),
        cancel.clone(),
        message,
    ));
    server.tasks.insert(task.clone());
    // The task's mailbox as a sink of `session`'s connection (its frames are recorded there).
    let mailbox_sink = |session: &Session| {
        Sink::new(
            Arc::new(task::TaskOutlet(task.clone())),
            server.wire(),
            session.transport,
            session.id.clone(),
        )
    };
    let (session, sink, declared) = if handshake {
        let session = ctx.session.clone();
        // Over Streamable HTTP the call's stream is answered and gone: the work's messages wait
        // in the task's mailbox for a `tasks/result` stream. Elsewhere the connection carries
        // them inline.
        let sink = if session.transport == TransportKind::Http {
            mailbox_sink(&session)
        } else {
            session.sink.clone()
        };
        (session, sink, ctx.scope.declared.clone())
    } else {
        // Progress and log messages are not sent for a stateless task (SEP-2663): it runs on a
        // connection of its own that logs nothing, ends with the task, and whose sink is a
        // mailbox nobody opens.
        let sink = mailbox_sink(&ctx.session);
        let session = Arc::new(Session::standing(
            ctx.session.id.clone(),
            ctx.session.transport,
            sink.clone(),
            cancel.clone(),
            ctx.declarations().without_logs(),
        ));
        (session, sink, Declared::Connection)
    };
    let meta = if handshake {
        ctx.meta.clone()
    } else {
        ctx.meta.as_ref().map(|m| m.without("progressToken"))
    };
    let task_ctx = RequestContext {
        server: server.clone(),
        session: session.clone(),
        sink,
        request_id: ctx.request_id.clone(),
        method: ctx.method.clone(),
        scope: Scope {
            revision: ctx.scope.revision,
            declared,
            cancel: cancel.clone(),
        },
        meta,
        rounds: None,
        task: Some(task.clone()),
        task_allowed: false,
    };
    if handshake {
        // Weak: a task outlives its session in the store until its TTL; it must not keep the
        // session alive.
        let weak = Arc::downgrade(&session);
        task.announce_with(Box::new(move |t| {
            if let Some(session) = weak.upgrade() {
                announce(&session, t);
            }
        }));
        announce(&session, &task);
    } else {
        // The listen streams that name this task hear of every update (weak: a task must not
        // keep the server alive).
        let weak = Arc::downgrade(&server);
        task.announce_with(Box::new(move |t| {
            if let Some(server) = weak.upgrade().filter(|s| s.listeners.want_task(&t.id)) {
                let detailed = wire::detailed(t);
                server
                    .listeners
                    .broadcast(super::listeners::Event::Task(&t.id, &detailed));
            }
        }));
    }
    let runner = task.clone();
    tokio::spawn(async move {
        let work = AssertUnwindSafe(work(task_ctx)).catch_unwind();
        let outcome = tokio::select! {
            r = work => r.unwrap_or_else(|panic| Err(ErrorObject::internal(format!(
                "the task's work panicked: {}",
                super::handler::panic_message(panic.as_ref())
            )))),
            () = cancel.cancelled() => return,
        };
        runner.settle(outcome);
    });
    wire::create_result(&task)
}

/// For a tool that starts its own task ([`crate::server::registry::Tool::starts_own_task`]):
/// once its handler has what it needs (e.g. input gathered over multi-round-trip requests),
/// it hands the rest of its `work` to this. When the call may become a task, `work` runs as
/// one and the answer is the `CreateTaskResult`; otherwise (the client cannot take a task,
/// or this already is one) `work` runs here and its answer is the call's.
pub async fn escalate<F, Fut>(
    ctx: &RequestContext,
    tool: &str,
    arguments: Value,
    message: Option<String>,
    work: F,
) -> Result<Value, ErrorObject>
where
    F: FnOnce(RequestContext) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Value, ErrorObject>> + Send + 'static,
{
    if ctx.task_allowed && ctx.task.is_none() {
        return Ok(start(ctx, tool, arguments, message, work));
    }
    work(ctx.clone()).await
}

/// Sends `notifications/tasks/status` with the task as it is now (handshake era).
fn announce(session: &Session, task: &Task) {
    let params = Value::Object(wire::task(task));
    session.sink.send(&Message::notification(
        NotificationMethod::TaskStatus.as_str(),
        Some(params),
    ));
}

/// The work of a task this gate holds: registers it, then obeys commands until told to
/// complete or fail. (Cancellation stops it from outside: [`start`] drops it.)
pub async fn hold(gate: Arc<Gate>, ctx: RequestContext) -> Result<Value, ErrorObject> {
    let Some(task) = ctx.task.clone() else {
        return Err(ErrorObject::internal("a gate holds only tasks"));
    };
    let mut inbox = gate.admit(task);
    while let Some(command) = inbox.recv().await {
        match command {
            Command::Status(message, ack) => {
                ctx.task_status(None, Some(message));
                let _ = ack.send(());
            }
            // One ask at a time: later commands wait in the inbox until it is answered.
            Command::Ask(ask, reply) => {
                let answer = ctx.ask_all(std::slice::from_ref(&ask)).await;
                let _ = reply.send(answer.map(|mut a| a.pop().unwrap_or(Value::Null)));
            }
            Command::Complete(result) => return Ok(result),
            Command::Fail(error) => return Err(error),
        }
    }
    // Not reached: the gate keeps every held task's sender, and this future keeps the gate.
    std::future::pending().await
}
