//! The per-session timer tools of the `everything` catalog: `toggle-simulated-logging`,
//! `toggle-subscriber-updates`, and `trigger-long-running-operation` (progress).

use super::shared::{annotations, definition, session_label};
use crate::catalog::{clock_seed, random_log, session_id, text_result, Options};
use crate::error::Error;
use crate::jsonrpc::Message;
use crate::protocol::method_names::NotificationMethod;
use crate::server::context::RequestContext;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::Tool;
use crate::server::session::RunningTimers;
use crate::server::session::Session;
use serde_json::{json, Map, Value};
use std::sync::Mutex;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The reference's pace of both toggles (`--tick-ms` overrides it).
const PACE: Duration = Duration::from_secs(5);

/// A per-session on/off timer: the running task's stop token, if on.
#[derive(Default)]
struct Toggle(Mutex<Option<CancellationToken>>);

/// Per-session switch of `toggle-simulated-logging`.
#[derive(Default)]
struct SimulatedLogging(Toggle);

/// Per-session switch of `toggle-subscriber-updates`.
#[derive(Default)]
struct SubscriberUpdates(Toggle);

impl Toggle {
    /// Stops the timer if it runs (`false`), or starts `tick` now and then every `pace` until
    /// stopped or the session closes (`true`).
    fn flip(
        &self,
        ctx: &RequestContext,
        pace: Duration,
        tick: impl Fn(&Session) + Send + 'static,
    ) -> bool {
        let mut running = crate::lock::lock(&self.0);
        let counted = ctx.session.extension::<RunningTimers>();
        if let Some(stop) = running.take() {
            stop.cancel();
            counted.stopped();
            return false;
        }
        counted.started();
        let stop = ctx.session.closed.child_token();
        *running = Some(stop.clone());
        drop(running);
        tick(&ctx.session);
        crate::catalog::every(&ctx.server.clock, &ctx.session, pace, stop, tick);
        true
    }
}

/// `toggle-simulated-logging`: starts (one message now, then one every 5 s, at random levels
/// the session's `logging/setLevel` filters) or stops simulated logging for this session.
pub fn toggle_simulated_logging(options: &Options) -> Result<Tool, Error> {
    let pace = options.tick(PACE);
    definition(
            "toggle-simulated-logging",
            "Toggle Simulated Logging",
            "Toggles simulated, random-leveled logging on or off.",
            json!({ "type": "object", "properties": {} }),
            annotations(false, false, false, false),
        ).serve(tool_fn(move |ctx, _args| async move {
            let instead = "Log messages reach a stateless client only on the stream of the request that emits them, at the level its _meta asks for (io.modelcontextprotocol/logLevel); get-roots-list logs so (at info) in the round that brings the client's roots, and so does the conformance catalog's test_tool_with_logging.";
            if let Some(answer) = sessionless(&ctx, "toggle-simulated-logging", instead) {
                return Ok(answer);
            }
            let label = session_label(&ctx.session);
            let seed = Mutex::new(clock_seed());
            let started =
                ctx.session
                    .extension::<SimulatedLogging>()
                    .0
                    .flip(&ctx, pace, move |session| {
                        let mut seed = crate::lock::lock(&seed);
                        let (level, text) = random_log(&mut seed);
                        let data = match session_id(session) {
                            Some(id) => format!("{text} - SessionId {id}"),
                            None => text.to_string(),
                        };
                        session.log_to(&session.sink, level, Value::String(data), None);
                    });
            Ok(text_result(if started {
                format!("Started simulated, random-leveled logging for session {label} at a 5 second pace. Client's selected logging level will be respected. If an interval elapses and the message to be sent is below the selected level, it will not be sent. Thus at higher chosen logging levels, messages should arrive further apart. ")
            } else {
                format!("Stopped simulated logging for session {label}")
            }))
        }))
}

/// `toggle-subscriber-updates`: starts (now, then every 5 s: `notifications/resources/updated`
/// for every URI the session subscribed to) or stops simulated resource updates.
pub fn toggle_subscriber_updates(options: &Options) -> Result<Tool, Error> {
    let pace = options.tick(PACE);
    definition(
            "toggle-subscriber-updates",
            "Toggle Subscriber Updates",
            "Toggles simulated resource subscription updates on or off.",
            json!({ "type": "object", "properties": {} }),
            annotations(false, false, false, false),
        ).serve(tool_fn(move |ctx, _args| async move {
            let instead = "notifications/resources/updated reach a stateless client on its subscriptions/listen stream, for the URIs in its resourceSubscriptions, whenever the server publishes one (the review-lab catalog, or Server.notify_resource_updated from Python).";
            if let Some(answer) = sessionless(&ctx, "toggle-subscriber-updates", instead) {
                return Ok(answer);
            }
            let label = session_label(&ctx.session);
            let started =
                ctx.session
                    .extension::<SubscriberUpdates>()
                    .0
                    .flip(&ctx, pace, |session| {
                        let mut uris: Vec<String> =
                            session.state().subscriptions.into_iter().collect();
                        uris.sort();
                        for uri in uris {
                            let note = Message::notification(
                                NotificationMethod::ResourceUpdated.as_str(),
                                Some(json!({ "uri": uri })),
                            );
                            session.sink.send(&note);
                        }
                    });
            Ok(text_result(if started {
                // "the it" is the reference's own typo; clients compare the text.
                format!("Started simulated resource updated notifications for session {label} at a 5 second pace. Client will receive updates for any resources the it is subscribed to.")
            } else {
                format!("Stopped simulated resource updates for session {label}")
            }))
        }))
}

/// What a toggle answers in the stateless era (2026-07-28): there is no session to keep its
/// timer in (a connection holds nothing for its requests' client), so it starts nothing
/// and says so, with where the era delivers such notifications instead. An error result, so a
/// client cannot mistake it for a timer that runs.
fn sessionless(ctx: &RequestContext, tool: &str, instead: &str) -> Option<Value> {
    if ctx.scope.revision.has_handshake() {
        return None;
    }
    let text = format!("{tool} needs a session, and protocol {} has none (each request stands alone): nothing was started. {instead}", ctx.scope.revision);
    Some(json!({ "content": [{ "type": "text", "text": text }], "isError": true }))
}

/// A number argument with a default.
fn number_or(args: &Map<String, Value>, key: &str, default: f64) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or(default)
}

/// `trigger-long-running-operation`: `steps` steps over `duration` seconds, with a progress
/// notification per step when the client asked for progress; stops early if cancelled.
pub fn trigger_long_running_operation() -> Result<Tool, Error> {
    let input = json!({
        "type": "object",
        "properties": {
            "duration": { "type": "number", "default": 10, "description": "Duration of the operation in seconds" },
            "steps": { "type": "number", "default": 5, "description": "Number of steps in the operation" }
        }
    });
    definition(
        "trigger-long-running-operation",
        "Trigger Long Running Operation Tool",
        "Demonstrates a long running operation with progress updates.",
        input,
        annotations(true, false, true, false),
    )
    .serve(tool_fn(|ctx, args| async move {
        let duration = number_or(&args, "duration", 10.0);
        let steps = number_or(&args, "steps", 5.0);
        crate::catalog::long_running_operation(&ctx, duration, steps)
            .await
            .ok_or_else(|| HandlerError::failed("cancelled"))
    }))
}
