//! Canned tools: a tool defined at run time by its definition and the answers it gives, one per
//! call (the last repeating), as WireMock's stubs are — what the control API's
//! `POST /_control/tools` registers, so a test in any language can give its client a tool to
//! call without writing a handler. An answer `{"error": {"code", "message", "data"}}` is that
//! JSON-RPC error; any other is the `tools/call` result as given.

use crate::field_error::FieldError;
use crate::jsonrpc::ErrorObject;
use crate::server::handler::{tool_fn, HandlerError};
use crate::server::registry::Tool;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A canned tool as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    /// The tool's name.
    name: String,
    /// Its `title`, if any.
    #[serde(default)]
    title: Option<String>,
    /// Its description.
    #[serde(default)]
    description: Option<String>,
    /// Its `inputSchema` (default: any object).
    #[serde(default, rename = "inputSchema")]
    input_schema: Option<Value>,
    /// Its `outputSchema`, if any.
    #[serde(default, rename = "outputSchema")]
    output_schema: Option<Value>,
    /// Its `annotations`, if any.
    #[serde(default)]
    annotations: Option<Value>,
    /// One answer per call, the last repeating.
    #[serde(default)]
    results: Option<Vec<Value>>,
    /// The one answer of every call (`results` with one item).
    #[serde(default)]
    result: Option<Value>,
}

/// A JSON-RPC error answer (`{"error": {...}}`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorAnswer {
    /// The error.
    error: ErrorSpec,
}

/// The error of an [`ErrorAnswer`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorSpec {
    /// Its code.
    code: i64,
    /// Its message.
    message: String,
    /// Its data, if any.
    #[serde(default)]
    data: Option<Value>,
}

/// What a canned tool answers a call: a result or an error.
#[derive(Debug, Clone)]
enum Answer {
    /// The `tools/call` result.
    Result(Value),
    /// A JSON-RPC error.
    Error(ErrorObject),
}

/// Builds the canned tool written as `text` (JSON); the error names the member at fault
/// (its path, or empty) and the problem.
pub fn tool(text: &str) -> Result<Tool, FieldError> {
    let spec: Spec = crate::field_error::from_json(text)?;
    let items = match (spec.results, spec.result) {
        (Some(_), Some(_)) => {
            return Err(FieldError::at(
                "results",
                "give \"results\" or \"result\", not both",
            ))
        }
        (Some(items), None) if items.is_empty() => {
            return Err(FieldError::at("results", "needs at least one answer"))
        }
        (Some(items), None) => items,
        (None, Some(one)) => vec![one],
        (None, None) => {
            return Err(FieldError::at(
                "",
                "needs \"results\" (a list) or \"result\"",
            ))
        }
    };
    let answers = items
        .into_iter()
        .enumerate()
        .map(|(i, item)| answer(item).map_err(|e| FieldError::at(&format!("results[{i}]"), e)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut definition = Map::new();
    definition.insert("name".into(), spec.name.into());
    for (key, value) in [
        ("title", spec.title.map(Value::String)),
        ("description", spec.description.map(Value::String)),
    ] {
        if let Some(v) = value {
            definition.insert(key.into(), v);
        }
    }
    let schema = spec
        .input_schema
        .unwrap_or_else(|| serde_json::json!({ "type": "object" }));
    definition.insert("inputSchema".into(), schema);
    for (key, value) in [
        ("outputSchema", spec.output_schema),
        ("annotations", spec.annotations),
    ] {
        if let Some(v) = value {
            definition.insert(key.into(), v);
        }
    }
    let answers = Arc::new(answers);
    let calls = Arc::new(AtomicUsize::new(0));
    let handler = tool_fn(move |_ctx, _args| {
        let n = calls.fetch_add(1, Ordering::Relaxed);
        let answer = answers[n.min(answers.len() - 1)].clone();
        async move {
            match answer {
                Answer::Result(v) => Ok(v),
                Answer::Error(e) => Err(HandlerError::Rpc(e)),
            }
        }
    });
    Tool::new(Value::Object(definition), handler).map_err(|e| FieldError::at("", e.to_string()))
}

/// One answer as written: an error, or a result (an object).
fn answer(item: Value) -> Result<Answer, String> {
    let Value::Object(map) = &item else {
        return Err("an answer is a tools/call result (an object) or {\"error\": {...}}".into());
    };
    if !map.contains_key("error") {
        return Ok(Answer::Result(item));
    }
    let ErrorAnswer { error } = serde_json::from_value(item).map_err(|e| e.to_string())?;
    let e = ErrorObject::new(error.code, error.message);
    Ok(Answer::Error(match error.data {
        Some(d) => e.with_data(d),
        None => e,
    }))
}
