//! The conformance suite's task fixtures (`tasks-*`, the tasks extension SEP-2663; the same
//! tools serve the handshake era's task-augmented calls): a sync tool (`greet`), a sleeper
//! (`slow_compute`), tools that ask mid-task (`confirm_delete`, `multi_input`), a tool error
//! and a protocol error inside a task (`failing_job`, `protocol_error_job`), and a tool that
//! gathers input over multi-round-trip requests before it becomes a task
//! (`test_tool_with_task`).

use crate::catalog::builder::{tool, ToolDef};
use crate::catalog::{schema, string_arg, text_result};
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::server::context::RequestContext;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::Registry;
use crate::server::rounds::Ask;
use crate::server::tasks;
use serde_json::{json, Value};
use std::time::Duration;

/// A tool definition with `execution.taskSupport`.
fn definition(name: &str, description: &str, input: Value, support: &str) -> ToolDef {
    tool(name)
        .description(description)
        .input(input)
        .task_support(support)
}

/// A yes/no form elicitation.
fn confirm(message: String) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": { "type": "object", "properties": { "confirm": { "type": "boolean" } }, "required": ["confirm"] }
    })
}

/// A one-string form elicitation.
fn ask_text(message: &str, field: &str) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": { "type": "object", "properties": { field: { "type": "string" } }, "required": [field] }
    })
}

/// `content.<field>` of an accepted elicitation, if any.
fn accepted<'a>(answer: &'a Value, field: &str) -> Option<&'a Value> {
    (answer.get("action").and_then(Value::as_str) == Some("accept"))
        .then(|| answer.pointer(&format!("/content/{field}")))
        .flatten()
}

fn rpc(e: ErrorObject) -> HandlerError {
    HandlerError::Rpc(e)
}

/// Sleeps `seconds`, or until the work is cancelled.
async fn pause(ctx: &RequestContext, seconds: f64) {
    let wait = Duration::from_secs_f64(seconds.clamp(0.0, 3600.0));
    tokio::select! {
        () = ctx.server.clock.sleep(wait) => {}
        () = ctx.cancelled() => {}
    }
}

/// Registers the fixtures.
pub fn load(registry: &mut Registry) -> Result<(), Error> {
    let tools = [
        definition("greet", "Tasks (SEP-2663): a sync-only tool; returns Hello, {name}!", schema(json!({ "name": { "type": "string" } }), &["name"]), "forbidden").serve(tool_fn(|_, args| async move { Ok(text_result(format!("Hello, {}!", string_arg(&args, "name")))) }))?,
        definition(
                "slow_compute",
                "Tasks (SEP-2663): sleeps `seconds` and then answers; a task when the client can take one",
                schema(json!({ "seconds": { "type": "number", "minimum": 0 }, "label": { "type": "string" } }), &["seconds"]),
                "optional",
            ).serve(tool_fn(|ctx, args| async move {
                let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(0.0);
                pause(&ctx, seconds).await;
                let label = string_arg(&args, "label");
                Ok(text_result(format!("Computed {label} after {seconds} s")))
            }))?,
        definition(
                "confirm_delete",
                "Tasks (SEP-2663): asks the user to confirm deleting `filename` (one elicitation), then answers",
                schema(json!({ "filename": { "type": "string" } }), &["filename"]),
                "optional",
            ).serve(tool_fn(|ctx, args| async move {
                let filename = string_arg(&args, "filename");
                let answer = ctx.ask_keyed("confirm", "elicitation/create", Some(confirm(format!("Delete {filename}?")))).await.map_err(rpc)?;
                let yes = accepted(&answer, "confirm").and_then(Value::as_bool) == Some(true);
                Ok(text_result(if yes { format!("Deleted {filename}") } else { format!("Kept {filename}") }))
            }))?,
        definition("multi_input", "Tasks (SEP-2663): asks two questions at once (keys name and color), then answers", schema(json!({}), &[]), "optional").serve(tool_fn(|ctx, _| async move {
                let asks = [
                    Ask { key: "name".into(), method: "elicitation/create".into(), params: Some(ask_text("What is your name?", "name")) },
                    Ask { key: "color".into(), method: "elicitation/create".into(), params: Some(ask_text("What is your favorite color?", "color")) },
                ];
                let answers = ctx.ask_all(&asks).await.map_err(rpc)?;
                let show = |a: &Value, f: &str| accepted(a, f).map_or_else(|| "(none)".to_string(), crate::catalog::js_string);
                Ok(text_result(format!("Name: {}, color: {}", show(&answers[0], "name"), show(&answers[1], "color"))))
            }))?,
        definition("failing_job", "Tasks (SEP-2663): runs only as a task and ends, after about a second, in a tool error (isError)", schema(json!({}), &[]), "required").serve(tool_fn(|ctx, _| async move {
                pause(&ctx, 1.0).await;
                Err(HandlerError::failed("The job failed: this fixture always fails."))
            }))?,
        definition("protocol_error_job", "Tasks (SEP-2663): ends in a JSON-RPC error (the task fails)", schema(json!({}), &[]), "optional").serve(tool_fn(|_, _| async move {
                Err(rpc(ErrorObject::internal("The job hit an internal error (this fixture always does).")))
            }))?,
        definition(
                "test_tool_with_task",
                "Tasks and MRTR (SEP-2663): asks the user's name (key user_name) over multi-round-trip requests, then runs as a task that greets them",
                schema(json!({}), &[]),
                "required",
            ).serve(tool_fn(|ctx, args| async move {
                let answer = ctx.ask_keyed("user_name", "elicitation/create", Some(ask_text("What is your name?", "name"))).await.map_err(rpc)?;
                let name = accepted(&answer, "name").map_or_else(|| "stranger".to_string(), crate::catalog::js_string);
                tasks::escalate(&ctx, "test_tool_with_task", Value::Object(args), None, move |_| async move {
                    Ok(text_result(format!("Hello, {name}! (from a task)")))
                })
                .await
                .map_err(rpc)
            }))?
        .starting_its_own_task(),
    ];
    for tool in tools {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    Ok(())
}
