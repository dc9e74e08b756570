//! The reference server's current surface (`@modelcontextprotocol/server-everything` 2026.x).
//! So far: `echo` and `get-sum`, with the reference's exact names, schemas and output texts.

use super::text_result;
use crate::error::Error;
use crate::jsnum;
use crate::protocol::LogLevel;
use crate::server::registry::{tool_fn, HandlerError, Registry, Tool};
use crate::server::session::Session;
use crate::traffic::TransportKind;
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Registers this catalog's tools.
pub fn load(registry: &mut Registry) -> Result<(), Error> {
    for tool in [
        echo()?,
        get_sum()?,
        toggle_simulated_logging()?,
        trigger_long_running_operation()?,
    ] {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    Ok(())
}

/// Annotations the reference puts on its read-only tools.
fn read_only_annotations() -> Value {
    json!({ "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false })
}

/// `echo`: returns `Echo: <message>`.
pub fn echo() -> Result<Tool, Error> {
    let definition = json!({
        "name": "echo",
        "title": "Echo Tool",
        "description": "Echoes back the input string",
        "inputSchema": {
            "type": "object",
            "properties": { "message": { "type": "string", "description": "Message to echo" } },
            "required": ["message"],
            "$schema": "http://json-schema.org/draft-07/schema#"
        },
        "annotations": read_only_annotations(),
        "execution": { "taskSupport": "forbidden" }
    });
    Tool::new(
        definition,
        tool_fn(|_ctx, args| async move {
            let message = args
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Ok(text_result(format!("Echo: {message}")))
        }),
    )
}

/// `get-sum`: returns `The sum of <a> and <b> is <a+b>.` with JavaScript number formatting.
pub fn get_sum() -> Result<Tool, Error> {
    let definition = json!({
        "name": "get-sum",
        "title": "Get Sum Tool",
        "description": "Returns the sum of two numbers",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": { "type": "number", "description": "First number" },
                "b": { "type": "number", "description": "Second number" }
            },
            "required": ["a", "b"],
            "$schema": "http://json-schema.org/draft-07/schema#"
        },
        "annotations": read_only_annotations(),
        "execution": { "taskSupport": "forbidden" }
    });
    Tool::new(
        definition,
        tool_fn(|_ctx, args| async move {
            let num = |k: &str| {
                args.get(k)
                    .and_then(Value::as_f64)
                    .ok_or_else(|| HandlerError::failed(format!("{k} must be a number")))
            };
            let (a, b) = (num("a")?, num("b")?);
            Ok(text_result(format!(
                "The sum of {} and {} is {}.",
                jsnum::format(a),
                jsnum::format(b),
                jsnum::format(a + b)
            )))
        }),
    )
}

/// The session id as the reference server prints it: `undefined` on stdio (it has none).
fn session_label(session: &Session) -> String {
    match session.transport {
        TransportKind::Http | TransportKind::Sse => session.id.to_string(),
        TransportKind::Stdio | TransportKind::Memory => "undefined".into(),
    }
}

/// The reference's eight simulated log messages (including its `Alert level-message` typo).
const SIMULATED_LOGS: [(LogLevel, &str); 8] = [
    (LogLevel::Debug, "Debug-level message"),
    (LogLevel::Info, "Info-level message"),
    (LogLevel::Notice, "Notice-level message"),
    (LogLevel::Warning, "Warning-level message"),
    (LogLevel::Error, "Error-level message"),
    (LogLevel::Critical, "Critical-level message"),
    (LogLevel::Alert, "Alert level-message"),
    (LogLevel::Emergency, "Emergency-level message"),
];

/// How often simulated logging sends a message.
const SIMULATED_LOG_PACE: Duration = Duration::from_secs(5);

/// Per-session switch of `toggle-simulated-logging`: the running logger, if on.
#[derive(Default)]
struct SimulatedLogging(Mutex<Option<CancellationToken>>);

/// Sends one simulated log message at a random level (dropped if below the session's level).
fn send_simulated_log(session: &Session, seed: &mut u64) {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    let (level, text) = SIMULATED_LOGS[(*seed % 8) as usize];
    let data = match session.transport {
        TransportKind::Http | TransportKind::Sse => format!("{text} - SessionId {}", session.id),
        TransportKind::Stdio | TransportKind::Memory => text.to_string(),
    };
    session.log_to(&session.sink, level, Value::String(data), None);
}

/// `toggle-simulated-logging`: starts (one message now, then one every 5 s, at random levels
/// the session's `logging/setLevel` filters) or stops simulated logging for this session.
pub fn toggle_simulated_logging() -> Result<Tool, Error> {
    let definition = json!({
        "name": "toggle-simulated-logging",
        "title": "Toggle Simulated Logging",
        "description": "Toggles simulated, random-leveled logging on or off.",
        "inputSchema": { "type": "object", "properties": {}, "$schema": "http://json-schema.org/draft-07/schema#" },
        "annotations": { "readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false },
        "execution": { "taskSupport": "forbidden" }
    });
    Tool::new(
        definition,
        tool_fn(|ctx, _args| async move {
            let session = ctx.session.clone();
            let label = session_label(&session);
            let switch = session.extension::<SimulatedLogging>();
            let mut running = switch.0.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(stop) = running.take() {
                stop.cancel();
                return Ok(text_result(format!(
                    "Stopped simulated logging for session {label}"
                )));
            }
            let stop = session.closed.child_token();
            *running = Some(stop.clone());
            drop(running);
            let weak = Arc::downgrade(&session);
            let mut seed = u64::from(std::process::id())
                ^ (std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
                    | 1);
            send_simulated_log(&session, &mut seed);
            tokio::spawn(async move {
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(SIMULATED_LOG_PACE) => {}
                    }
                    let Some(session) = weak.upgrade() else {
                        return;
                    };
                    send_simulated_log(&session, &mut seed);
                }
            });
            Ok(text_result(format!(
                "Started simulated, random-leveled logging for session {label} at a 5 second pace. Client's selected logging level will be respected. If an interval elapses and the message to be sent is below the selected level, it will not be sent. Thus at higher chosen logging levels, messages should arrive further apart. "
            )))
        }),
    )
}

/// A number argument with a default.
fn number_or(args: &Map<String, Value>, key: &str, default: f64) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or(default)
}

/// `trigger-long-running-operation`: `steps` steps over `duration` seconds, with a progress
/// notification per step when the client asked for progress; stops early if cancelled.
pub fn trigger_long_running_operation() -> Result<Tool, Error> {
    let definition = json!({
        "name": "trigger-long-running-operation",
        "title": "Trigger Long Running Operation Tool",
        "description": "Demonstrates a long running operation with progress updates.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "duration": { "type": "number", "default": 10, "description": "Duration of the operation in seconds" },
                "steps": { "type": "number", "default": 5, "description": "Number of steps in the operation" }
            },
            "$schema": "http://json-schema.org/draft-07/schema#"
        },
        "annotations": read_only_annotations(),
        "execution": { "taskSupport": "forbidden" }
    });
    Tool::new(
        definition,
        tool_fn(|ctx, args| async move {
            let duration = number_or(&args, "duration", 10.0);
            let steps = number_or(&args, "steps", 5.0);
            let pause =
                Duration::try_from_secs_f64(if steps > 0.0 { duration / steps } else { 0.0 })
                    .unwrap_or(Duration::ZERO);
            let mut step = 1.0;
            while step <= steps {
                tokio::select! {
                    () = ctx.cancelled() => return Err(HandlerError::failed("cancelled")),
                    () = tokio::time::sleep(pause) => {}
                }
                ctx.progress(step, Some(steps), None);
                step += 1.0;
            }
            Ok(text_result(format!(
                "Long running operation completed. Duration: {} seconds, Steps: {}.",
                jsnum::format(duration),
                jsnum::format(steps)
            )))
        }),
    )
}
