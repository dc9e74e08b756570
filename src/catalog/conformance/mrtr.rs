//! The conformance suite's multi-round-trip fixtures (SEP-2322, `input-required-result-*`) and
//! the stateless-era diagnostics that ask the client something (`test_missing_capability`,
//! `test_streaming_elicitation`). Each is written once against `RequestContext`: in the
//! stateless era an ask becomes an `inputRequests` entry under the key named here, in the
//! handshake era a real server → client request.

use super::shared::plain;
use crate::catalog::{object, text_result};
use crate::error::Error;
use crate::jsonrpc::ErrorObject;
use crate::server::context::RequestContext;
use crate::server::handler::{prompt_fn, tool_fn, HandlerError};
use crate::server::registry::{Prompt, Registry, Tool};
use crate::server::rounds::Ask;
use serde_json::{json, Value};

/// A form elicitation of one field of `kind` (`string`, `boolean`).
fn form(message: &str, field: &str, kind: &str) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": { "type": "object", "properties": { field: { "type": kind } }, "required": [field] }
    })
}

/// A sampling request of one user text.
fn sampling(text: &str, max_tokens: u32) -> Value {
    json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": text } }], "maxTokens": max_tokens })
}

/// An ask under `key`.
fn ask(key: &str, method: &str, params: Option<Value>) -> Ask {
    Ask {
        key: key.into(),
        method: method.into(),
        params,
    }
}

/// `content.<field>` of an elicitation answer, as text (`"<action>"` when not accepted).
fn field(answer: &Value, name: &str) -> String {
    match answer.pointer(&format!("/content/{name}")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => format!(
            "<{}>",
            answer
                .get("action")
                .and_then(Value::as_str)
                .unwrap_or("no answer")
        ),
    }
}

/// The text of a sampling answer.
fn sampled(answer: &Value) -> String {
    answer
        .pointer("/content/text")
        .and_then(Value::as_str)
        .unwrap_or("No response")
        .to_string()
}

/// How many roots a `roots/list` answer lists, and their URIs.
fn roots(answer: &Value) -> (usize, String) {
    let list = answer.get("roots").and_then(Value::as_array);
    let uris: Vec<&str> = list
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("uri").and_then(Value::as_str))
        .collect();
    (list.map_or(0, Vec::len), uris.join(", "))
}

/// A JSON-RPC error from an ask, as the handler's error (so -32021 and friends reach the wire).
fn rpc(e: ErrorObject) -> HandlerError {
    HandlerError::Rpc(e)
}

/// The marker a handler stores in its round state to prove the state came back.
const STATE_MARK: &str = "conformance-state";

/// Asks `confirm` (boolean `ok`) with a state of its own; the final text says `state-ok` when
/// the state the handler stored before asking came back with the answer.
async fn confirm_with_state(ctx: RequestContext) -> Result<Value, HandlerError> {
    let carried = ctx.round_state();
    ctx.set_round_state(json!(STATE_MARK));
    let answer = ctx
        .ask_keyed(
            "confirm",
            "elicitation/create",
            Some(form("Please confirm", "ok", "boolean")),
        )
        .await
        .map_err(rpc)?;
    // The handshake era runs once, with no state to carry: there the answer is enough.
    let ok = carried == json!(STATE_MARK) || ctx.rounds.is_none();
    let verdict = if ok { "state-ok" } else { "state-missing" };
    Ok(text_result(format!(
        "{verdict}: confirmed={}",
        field(&answer, "ok")
    )))
}

/// Registers every fixture (after the suite's other tools and prompts, keeping their order).
pub(super) fn load(registry: &mut Registry) -> Result<(), Error> {
    for tool in tools()? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    for prompt in prompts() {
        registry.prompts.insert(prompt.name().to_string(), prompt);
    }
    Ok(())
}

/// Every fixture tool.
fn tools() -> Result<Vec<Tool>, Error> {
    Ok(vec![
        plain("test_input_required_result_elicitation", "MRTR (SEP-2322): asks the user's name (key user_name), then greets them").serve(tool_fn(|ctx, _| async move {
                let answer = ctx.ask_keyed("user_name", "elicitation/create", Some(form("What is your name?", "name", "string"))).await.map_err(rpc)?;
                Ok(text_result(format!("Hello, {}!", field(&answer, "name"))))
            }))?,
        plain("test_input_required_result_sampling", "MRTR (SEP-2322): asks the client's LLM (key sample_request)").serve(tool_fn(|ctx, _| async move {
                let answer = ctx.ask_keyed("sample_request", "sampling/createMessage", Some(sampling("What is the capital of France?", 100))).await.map_err(rpc)?;
                Ok(text_result(format!("LLM response: {}", sampled(&answer))))
            }))?,
        plain("test_input_required_result_list_roots", "MRTR (SEP-2322): asks the client's roots (key roots_request)").serve(tool_fn(|ctx, _| async move {
                let answer = ctx.ask_keyed("roots_request", "roots/list", None).await.map_err(rpc)?;
                let (n, uris) = roots(&answer);
                Ok(text_result(format!("Found {n} root(s){}", if uris.is_empty() { String::new() } else { format!(": {uris}") })))
            }))?,
        plain("test_input_required_result_request_state", "MRTR (SEP-2322): asks a confirmation (key confirm) and proves its requestState came back (state-ok)").serve(tool_fn(|ctx, _| confirm_with_state(ctx)))?,
        plain("test_input_required_result_multiple_inputs", "MRTR (SEP-2322): asks elicitation (user_name), sampling (greeting) and roots (client_roots) in one round").serve(tool_fn(|ctx, _| async move {
                let answers = ctx.ask_all(&[
                    ask("user_name", "elicitation/create", Some(form("What is your name?", "name", "string"))),
                    ask("greeting", "sampling/createMessage", Some(sampling("Generate a greeting", 50))),
                    ask("client_roots", "roots/list", None),
                ]).await.map_err(rpc)?;
                let (n, _) = roots(&answers[2]);
                Ok(text_result(format!("All inputs received: name={}, greeting={}, roots={n}", field(&answers[0], "name"), sampled(&answers[1]))))
            }))?,
        plain("test_input_required_result_multi_round", "MRTR (SEP-2322): two elicitation rounds (step1, step2) before completing").serve(tool_fn(|ctx, _| async move {
                let name = ctx.ask_keyed("step1", "elicitation/create", Some(form("Step 1: What is your name?", "name", "string"))).await.map_err(rpc)?;
                let color = ctx.ask_keyed("step2", "elicitation/create", Some(form("Step 2: What is your favorite color?", "color", "string"))).await.map_err(rpc)?;
                Ok(text_result(format!("Hello {}, your favorite color is {}", field(&name, "name"), field(&color, "color"))))
            }))?,
        plain("test_input_required_result_tampered_state", "MRTR (SEP-2322): its requestState is HMAC-signed; a tampered one is refused with -32602").serve(tool_fn(|ctx, _| confirm_with_state(ctx)))?,
        plain("test_input_required_result_capabilities", "MRTR (SEP-2322): asks only what the client declared it can answer (elicitation, sampling)").serve(tool_fn(|ctx, _| async move {
                let caps = ctx.client_capabilities();
                let mut asks = Vec::new();
                if caps.get("elicitation").is_some() {
                    asks.push(ask("user_name", "elicitation/create", Some(form("What is your name?", "name", "string"))));
                }
                if caps.get("sampling").is_some() {
                    asks.push(ask("greeting", "sampling/createMessage", Some(sampling("Generate a greeting", 50))));
                }
                if asks.is_empty() {
                    return Ok(text_result("The client declared neither elicitation nor sampling: nothing to ask".into()));
                }
                let answers = ctx.ask_all(&asks).await.map_err(rpc)?;
                let got: Vec<String> = asks.iter().zip(&answers).map(|(a, r)| match a.key.as_str() {
                    "user_name" => format!("name={}", field(r, "name")),
                    _ => format!("greeting={}", sampled(r)),
                }).collect();
                Ok(text_result(format!("Received: {}", got.join(", "))))
            }))?,
        plain("test_missing_capability", "Asks the client's LLM: a client without the sampling capability gets -32021").serve(tool_fn(|ctx, _| async move {
                let answer = ctx.ask_keyed("sample_request", "sampling/createMessage", Some(sampling("Say hello", 50))).await.map_err(rpc)?;
                Ok(text_result(format!("LLM response: {}", sampled(&answer))))
            }))?,
        plain("test_streaming_elicitation", "Elicits through the request's own answer (input_required), never an independent request on its stream").serve(tool_fn(|ctx, _| async move {
                let answer = ctx.ask_keyed("confirmation", "elicitation/create", Some(form("Please confirm to continue", "confirmed", "boolean"))).await.map_err(rpc)?;
                Ok(text_result(format!("Elicitation completed: confirmed={}", field(&answer, "confirmed"))))
            }))?,
    ])
}

/// Every fixture prompt.
fn prompts() -> Vec<Prompt> {
    vec![Prompt {
        definition: object(json!({
            "name": "test_input_required_result_prompt",
            "description": "MRTR (SEP-2322) on prompts/get: asks the context to use (key user_context)"
        })),
        handler: prompt_fn(|ctx, _| async move {
            let answer = ctx
                .ask_keyed(
                    "user_context",
                    "elicitation/create",
                    Some(form(
                        "What context should the prompt use?",
                        "context",
                        "string",
                    )),
                )
                .await
                .map_err(rpc)?;
            let text = format!("Use this context: {}", field(&answer, "context"));
            Ok(
                json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": text } }] }),
            )
        }),
    }]
}
