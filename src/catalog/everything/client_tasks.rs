//! The reference's client-hosted task demos (handshake era, SEP-1686 both ways):
//! `trigger-sampling-request-async` and `trigger-elicitation-request-async`. The server sends
//! `sampling/createMessage` / `elicitation/create` with `params.task`; a client that runs it as
//! a task answers with a `CreateTaskResult`, and the tool polls the client's `tasks/get` every
//! second (up to the reference's limit), then fetches the client's `tasks/result`. A client
//! that answers at once gets `[SYNC] …`. The texts are the reference's.
//!
//! Only a client that declared the capability (`sampling` / `elicitation`) and the task-augmented
//! request (`tasks.requests.sampling.createMessage` / `tasks.requests.elicitation.create`) sees
//! them. The stateless era (2026-07-28) has no client-hosted tasks (SEP-2663 removed them, and
//! its client capabilities have no `tasks`): there the tools are not listed.

use super::shared::{annotations, definition};
use crate::catalog::elicitation::truthy;
use crate::catalog::{js_string, pretty, text_result, Options};
use crate::clock::Timer;
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::protocol::method_names::ServerRequest;
use crate::server::context::RequestContext;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::Tool;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// How long the tools wait for each answer of the client: the reference's SDK default.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How often the client's task is polled (the reference's 1 s; `--tick-ms` replaces it).
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// The tools, in the reference's order.
pub fn tools(options: &Options) -> Result<Vec<Tool>, Error> {
    let every = options.tick(POLL_INTERVAL);
    Ok(vec![
        trigger_sampling_request_async(every)?
            .requiring("sampling")
            .requiring("tasks.requests.sampling.createMessage")
            .in_handshake_era_only(),
        trigger_elicitation_request_async(every)?
            .requiring("elicitation")
            .requiring("tasks.requests.elicitation.create")
            .in_handshake_era_only(),
    ])
}

/// A request to the client on this call's stream, failing as the reference's SDK does: the
/// client's error as `MCP error <code>: <message>`, no answer within [`REQUEST_TIMEOUT`] as
/// `MCP error -32001: Request timed out` (both become the tool's `isError` result).
async fn ask(
    ctx: &RequestContext,
    timer: &mut Timer,
    method: ServerRequest,
    params: Value,
) -> Result<Value, String> {
    let sent = ctx
        .session
        .request(&ctx.sink, method.as_str(), Some(params));
    tokio::select! {
        answer = timer.timeout(REQUEST_TIMEOUT, sent) => match answer {
            Some(Ok(result)) => Ok(result),
            Some(Err(e)) => Err(mcp_error(&e)),
            None => Err("MCP error -32001: Request timed out".into()),
        },
        () = ctx.cancelled() => Err("MCP error -32001: Request was cancelled".into()),
    }
}

/// An error as the reference's SDK words it.
fn mcp_error(e: &ErrorObject) -> String {
    format!("MCP error {}: {}", e.code, e.message)
}

/// How a poll is recorded in the progress lines.
#[derive(Clone, Copy)]
enum Logging {
    /// Every poll (the sampling tool).
    EveryPoll,
    /// The first, every tenth and every one not `input_required` (the elicitation tool: a
    /// user may take minutes).
    Sparse,
}

/// How a client-hosted task ended.
enum Outcome {
    /// The client answered at once: its answer.
    Sync(Value),
    /// The task never settled within the poll limit.
    TimedOut,
    /// The task failed or was cancelled: its status and last status message.
    Ended(String, Option<String>),
    /// The task completed: the client's `tasks/result`.
    Completed(Value),
}

/// The client's answer to a task-augmented request and, if it is a task, the polls of it.
struct Run {
    /// How it ended.
    outcome: Outcome,
    /// `Task created: <id>`, then `Poll <n>: <status>[ - <message>]` lines.
    progress: Vec<String>,
    /// The poll limit (named in the timeout text).
    limit: u32,
}

/// Sends `method` with `params` (which carry `task`) and follows the client's task: polls
/// `tasks/get` every `every` until it settles or `limit` polls were made, then fetches
/// `tasks/result`. `sync` picks the fields of a synchronous answer (the reference parses it with
/// a schema that drops the rest) or refuses it.
async fn run(
    ctx: &RequestContext,
    (method, params): (ServerRequest, Value),
    (every, limit, logging): (Duration, u32, Logging),
    sync: fn(&Value) -> Option<Value>,
) -> Result<Run, String> {
    let mut timer = ctx.server.clock.timer();
    let answer = ask(ctx, &mut timer, method, params).await?;
    let handle = answer.get("task").filter(|t| truthy(Some(t)));
    let Some(handle) = handle else {
        let shown = sync(&answer).ok_or_else(|| {
            format!(
                "The client's answer to {method} is neither a CreateTaskResult nor a result: {answer}"
            )
        })?;
        return Ok(Run {
            outcome: Outcome::Sync(shown),
            progress: Vec::new(),
            limit,
        });
    };
    let field = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    let (Some(task_id), Some(mut status)) = (field(handle, "taskId"), field(handle, "status"))
    else {
        return Err(format!(
            "The client's CreateTaskResult for {method} has no taskId or status: {answer}"
        ));
    };
    let mut progress = vec![format!("Task created: {task_id}")];
    let mut message: Option<String> = None;
    let mut attempts = 0;
    while !matches!(status.as_str(), "completed" | "failed" | "cancelled") && attempts < limit {
        tokio::select! {
            () = timer.sleep(every) => {}
            () = ctx.cancelled() => return Err("MCP error -32001: Request was cancelled".into()),
        }
        attempts += 1;
        let polled = ask(
            ctx,
            &mut timer,
            ServerRequest::GetTask,
            json!({ "taskId": task_id }),
        )
        .await?;
        status = field(&polled, "status")
            .ok_or_else(|| format!("The client's tasks/get answer has no status: {polled}"))?;
        message = field(&polled, "statusMessage");
        let log = match logging {
            Logging::EveryPoll => true,
            Logging::Sparse => attempts == 1 || attempts % 10 == 0 || status != "input_required",
        };
        if log {
            let note = message
                .as_deref()
                .filter(|m| !m.is_empty())
                .map(|m| format!(" - {m}"))
                .unwrap_or_default();
            progress.push(format!("Poll {attempts}: {status}{note}"));
        }
    }
    // As the reference: reaching the limit is a timeout even when the last poll settled it.
    let outcome = if attempts >= limit {
        Outcome::TimedOut
    } else if status == "failed" || status == "cancelled" {
        Outcome::Ended(status, message)
    } else {
        Outcome::Completed(
            ask(
                ctx,
                &mut timer,
                ServerRequest::TaskResult,
                json!({ "taskId": task_id }),
            )
            .await?,
        )
    };
    Ok(Run {
        outcome,
        progress,
        limit,
    })
}

impl Run {
    /// The text of an outcome every tool words the same (`Sync`, `TimedOut`, `Ended`), or
    /// `None` for a completion, which each tool words its own way.
    fn common_text(&self) -> Option<String> {
        let progress = self.progress.join("\n");
        match &self.outcome {
            Outcome::Sync(answer) => Some(format!(
                "[SYNC] Client executed synchronously:\n{}",
                pretty(answer)
            )),
            Outcome::TimedOut => Some(format!(
                "[TIMEOUT] Task timed out after {} poll attempts\n\nProgress:\n{progress}",
                self.limit
            )),
            Outcome::Ended(status, message) => Some(format!(
                "[{}] {}\n\nProgress:\n{progress}",
                status.to_uppercase(),
                message
                    .as_deref()
                    .filter(|m| !m.is_empty())
                    .unwrap_or("No message")
            )),
            Outcome::Completed(_) => None,
        }
    }
}

/// What the reference's result schema says of one key.
#[derive(Clone, Copy)]
enum Rule {
    /// A required string.
    Text,
    /// An optional string.
    MaybeText,
    /// Anything, or nothing (`z.any()`).
    Any,
}

/// The keys of `value` the reference's result schema keeps, in the schema's order (a zod
/// object drops the rest); `None` when the answer does not fit the schema.
fn pick(value: &Value, schema: &[(&str, Rule)]) -> Option<Value> {
    let mut out = Map::new();
    for (key, rule) in schema {
        let v = value.get(*key);
        let fits = match rule {
            Rule::Text => v.is_some_and(Value::is_string),
            Rule::MaybeText => v.is_none_or(Value::is_string),
            Rule::Any => true,
        };
        if !fits {
            return None;
        }
        if let Some(v) = v {
            out.insert((*key).into(), v.clone());
        }
    }
    Some(Value::Object(out))
}

fn trigger_sampling_request_async(every: Duration) -> Result<Tool, Error> {
    let input = super::client_tools::sampling_input();
    definition(
            "trigger-sampling-request-async",
            "Trigger Async Sampling Request Tool",
            "Trigger an async sampling request that the CLIENT executes as a background task. Demonstrates bidirectional MCP tasks where the server sends a request and the client executes it asynchronously, allowing the server to poll for progress and results.",
            input,
            annotations(false, false, false, true),
        ).serve(tool_fn(move |ctx, args| async move {
            let prompt = args.get("prompt").and_then(Value::as_str).unwrap_or_default();
            let max_tokens = args.get("maxTokens").cloned().unwrap_or(json!(100));
            let params = json!({
                "task": { "ttl": 300_000 },
                "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Resource trigger-sampling-request-async context: {prompt}") } }],
                "systemPrompt": "You are a helpful test server.",
                "maxTokens": max_tokens,
                "temperature": 0.7
            });
            let sync = |answer: &Value| {
                pick(answer, &[("role", Rule::Text), ("content", Rule::Any), ("model", Rule::Text), ("stopReason", Rule::MaybeText)])
            };
            let run = run(&ctx, (ServerRequest::CreateMessage, params), (every, 60, Logging::EveryPoll), sync)
                .await
                .map_err(HandlerError::Failed)?;
            let text = run.common_text().unwrap_or_else(|| {
                let result = match &run.outcome {
                    Outcome::Completed(r) => pretty(r),
                    _ => String::new(),
                };
                format!(
                    "[COMPLETED] Async sampling completed!\n\n**Progress:**\n{}\n\n**Result:**\n{result}",
                    run.progress.join("\n")
                )
            });
            Ok(text_result(text))
        }))
}

fn trigger_elicitation_request_async(every: Duration) -> Result<Tool, Error> {
    definition(
            "trigger-elicitation-request-async",
            "Trigger Async Elicitation Request Tool",
            "Trigger an async elicitation request that the CLIENT executes as a background task. Demonstrates bidirectional MCP tasks where the server sends an elicitation request and the client handles user input asynchronously, allowing the server to poll for completion.",
            json!({ "type": "object", "properties": {} }),
            annotations(false, false, false, false),
        ).serve(tool_fn(move |ctx, _| async move {
            let params = json!({
                "task": { "ttl": 600_000 },
                "message": "Please provide inputs for the following fields (async task demo):",
                "requestedSchema": {
                    "type": "object",
                    "properties": {
                        "name": { "title": "Your Name", "type": "string", "description": "Your full name" },
                        "favoriteColor": {
                            "title": "Favorite Color",
                            "type": "string",
                            "description": "What is your favorite color?",
                            "enum": ["Red", "Blue", "Green", "Yellow", "Purple"]
                        },
                        "agreeToTerms": { "title": "Terms Agreement", "type": "boolean", "description": "Do you agree to the terms and conditions?" }
                    },
                    "required": ["name"]
                }
            });
            let sync = |answer: &Value| pick(answer, &[("action", Rule::Text), ("content", Rule::Any)]);
            let run = run(&ctx, (ServerRequest::Elicit, params), (every, 600, Logging::Sparse), sync)
                .await
                .map_err(HandlerError::Failed)?;
            if let Some(text) = run.common_text() {
                return Ok(text_result(text));
            }
            let Outcome::Completed(result) = &run.outcome else {
                unreachable!("common_text words every other outcome")
            };
            Ok(json!({ "content": elicitation_summary(result, &run.progress) }))
        }))
}

/// The elicitation tool's answer for a completed client task: a headline per action, the
/// user's inputs, then the progress lines and the raw result.
fn elicitation_summary(result: &Value, progress: &[String]) -> Vec<Value> {
    let text = |t: String| json!({ "type": "text", "text": t });
    let mut content = Vec::new();
    match result.get("action").and_then(Value::as_str) {
        Some("accept") if truthy(result.get("content")) => {
            content.push(text(
                "[COMPLETED] User provided the requested information!".into(),
            ));
            let data = &result["content"];
            let mut lines = Vec::new();
            if truthy(data.get("name")) {
                lines.push(format!("- Name: {}", js_string(&data["name"])));
            }
            if truthy(data.get("favoriteColor")) {
                lines.push(format!(
                    "- Favorite Color: {}",
                    js_string(&data["favoriteColor"])
                ));
            }
            if let Some(agreed) = data.get("agreeToTerms") {
                lines.push(format!("- Agreed to terms: {}", js_string(agreed)));
            }
            content.push(text(format!("User inputs:\n{}", lines.join("\n"))));
        }
        Some("decline") => content.push(text(
            "[DECLINED] User declined to provide the requested information.".into(),
        )),
        Some("cancel") => content.push(text(
            "[CANCELLED] User cancelled the elicitation dialog.".into(),
        )),
        _ => {}
    }
    content.push(text(format!(
        "\nProgress:\n{}\n\nRaw result: {}",
        progress.join("\n"),
        pretty(result)
    )));
    content
}
