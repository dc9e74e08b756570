//! Canned tools, resources and prompts: an item defined at run time by its definition and the
//! answers it gives, one per call (the last repeating), as WireMock's stubs are — what the
//! control API's `POST /_control/tools` (`resources`, `prompts`) registers, so a test in any
//! language can give its client something to call without writing a handler. An answer
//! `{"error": {"code", "message", "data"}}` is that JSON-RPC error; any other is the
//! `tools/call` (`resources/read`, `prompts/get`) result as given.

use crate::field_error::FieldError;
use crate::jsonrpc::ErrorObject;
use crate::server::handler::{prompt_fn, resource_fn, tool_fn, HandlerError};
use crate::server::registry::{Prompt, Resource, Tool};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A canned resource as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceSpec {
    /// Its URI.
    uri: String,
    /// Its name (default: the URI).
    #[serde(default)]
    name: Option<String>,
    /// Its `title`, if any.
    #[serde(default)]
    title: Option<String>,
    /// Its description.
    #[serde(default)]
    description: Option<String>,
    /// Its `mimeType` (default `text/plain`).
    #[serde(default, rename = "mimeType")]
    mime_type: Option<String>,
    /// Its `annotations`, if any.
    #[serde(default)]
    annotations: Option<Value>,
    /// The text every read answers (the one-item form of `results`, as one text content).
    #[serde(default)]
    text: Option<String>,
    /// One `resources/read` result (`{"contents": [...]}`) or error per read, the last
    /// repeating.
    #[serde(default)]
    results: Option<Vec<Value>>,
    /// The one answer of every read.
    #[serde(default)]
    result: Option<Value>,
}

/// A canned prompt as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptSpec {
    /// Its name.
    name: String,
    /// Its `title`, if any.
    #[serde(default)]
    title: Option<String>,
    /// Its description.
    #[serde(default)]
    description: Option<String>,
    /// Its `arguments` (`[{"name", "description", "required"}]`), if any.
    #[serde(default)]
    arguments: Option<Value>,
    /// One `prompts/get` result (`{"messages": [...]}`) or error per get, the last repeating.
    #[serde(default)]
    results: Option<Vec<Value>>,
    /// The one answer of every get.
    #[serde(default)]
    result: Option<Value>,
}

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

/// The answers of a canned item, served in turn (the last repeating).
struct Answers {
    /// As written, checked.
    items: Vec<Answer>,
    /// Calls so far.
    calls: AtomicUsize,
}

impl Answers {
    /// Reads `results` or `result` (one of them, at least one answer), each answer checked by
    /// `check` (what a result of this kind must hold); the error names the member at fault.
    fn of(
        results: Option<Vec<Value>>,
        result: Option<Value>,
        check: fn(&Map<String, Value>) -> Result<(), String>,
    ) -> Result<Arc<Self>, FieldError> {
        let items = match (results, result) {
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
        let items = items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                answer(item, check).map_err(|e| FieldError::at(&format!("results[{i}]"), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(Self {
            items,
            calls: AtomicUsize::new(0),
        }))
    }

    /// The next call's answer.
    fn next(&self) -> Result<Value, HandlerError> {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        match &self.items[n.min(self.items.len() - 1)] {
            Answer::Result(v) => Ok(v.clone()),
            Answer::Error(e) => Err(HandlerError::Rpc(e.clone())),
        }
    }
}

/// Copies the members of `optional` that are set into `definition`.
fn put<const N: usize>(definition: &mut Map<String, Value>, optional: [(&str, Option<Value>); N]) {
    for (key, value) in optional {
        if let Some(v) = value {
            definition.insert(key.into(), v);
        }
    }
}

/// A tool result is any object.
fn any_object(_: &Map<String, Value>) -> Result<(), String> {
    Ok(())
}

/// Builds the canned tool written as `text` (JSON); the error names the member at fault
/// (its path, or empty) and the problem.
pub fn tool(text: &str) -> Result<Tool, FieldError> {
    let spec: Spec = crate::field_error::from_json(text)?;
    let answers = Answers::of(spec.results, spec.result, any_object)?;
    let mut definition = Map::new();
    definition.insert("name".into(), spec.name.into());
    put(
        &mut definition,
        [
            ("title", spec.title.map(Value::String)),
            ("description", spec.description.map(Value::String)),
        ],
    );
    let schema = spec
        .input_schema
        .unwrap_or_else(|| serde_json::json!({ "type": "object" }));
    definition.insert("inputSchema".into(), schema);
    put(
        &mut definition,
        [
            ("outputSchema", spec.output_schema),
            ("annotations", spec.annotations),
        ],
    );
    let handler = tool_fn(move |_ctx, _args| {
        let answer = answers.next();
        async move { answer }
    });
    Tool::new(Value::Object(definition), handler).map_err(|e| FieldError::at("", e.to_string()))
}

/// Builds the canned resource written as `text` (JSON): `text` answers every read with that
/// text; `results` / `result` give `resources/read` results (`{"contents": [...]}`) or errors.
pub fn resource(text: &str) -> Result<Resource, FieldError> {
    let spec: ResourceSpec = crate::field_error::from_json(text)?;
    if spec.uri.is_empty() {
        return Err(FieldError::at("uri", "must not be empty"));
    }
    let mime = spec.mime_type.unwrap_or_else(|| "text/plain".into());
    let (results, result) = match spec.text {
        Some(_) if spec.results.is_some() || spec.result.is_some() => {
            return Err(FieldError::at(
                "text",
                "give \"text\", \"results\" or \"result\", one of them",
            ))
        }
        Some(body) => (
            None,
            Some(serde_json::json!({
                "contents": [{ "uri": spec.uri, "mimeType": mime, "text": body }]
            })),
        ),
        None => (spec.results, spec.result),
    };
    let answers = Answers::of(results, result, has_contents)?;
    let mut definition = Map::new();
    definition.insert("uri".into(), spec.uri.clone().into());
    definition.insert("name".into(), spec.name.unwrap_or(spec.uri).into());
    put(
        &mut definition,
        [
            ("title", spec.title.map(Value::String)),
            ("description", spec.description.map(Value::String)),
        ],
    );
    definition.insert("mimeType".into(), mime.into());
    put(&mut definition, [("annotations", spec.annotations)]);
    let handler = resource_fn(move |_ctx, _uri| {
        let answer = answers
            .next()
            .map(|mut result| match result["contents"].take() {
                Value::Array(contents) => contents,
                _ => Vec::new(),
            });
        async move { answer }
    });
    Ok(Resource {
        definition,
        handler,
    })
}

/// A `resources/read` result holds a `contents` list.
fn has_contents(result: &Map<String, Value>) -> Result<(), String> {
    holds_list(result, "contents", "resources/read")
}

/// Whether `result` (of `method`) holds a list under `key`; the error says what it should be.
fn holds_list(result: &Map<String, Value>, key: &str, method: &str) -> Result<(), String> {
    match result.get(key) {
        Some(Value::Array(_)) => Ok(()),
        _ => Err(format!("a {method} result is {{\"{key}\": [...]}}")),
    }
}

/// Builds the canned prompt written as `text` (JSON): `results` / `result` give `prompts/get`
/// results (`{"messages": [...]}`) or errors.
pub fn prompt(text: &str) -> Result<Prompt, FieldError> {
    let spec: PromptSpec = crate::field_error::from_json(text)?;
    if spec.name.is_empty() {
        return Err(FieldError::at("name", "must not be empty"));
    }
    if spec.arguments.as_ref().is_some_and(|a| !a.is_array()) {
        return Err(FieldError::at("arguments", "must be a list"));
    }
    let answers = Answers::of(spec.results, spec.result, has_messages)?;
    let mut definition = Map::new();
    definition.insert("name".into(), spec.name.into());
    put(
        &mut definition,
        [
            ("title", spec.title.map(Value::String)),
            ("description", spec.description.map(Value::String)),
        ],
    );
    put(&mut definition, [("arguments", spec.arguments)]);
    let handler = prompt_fn(move |_ctx, _args| {
        let answer = answers.next();
        async move { answer }
    });
    Ok(Prompt {
        definition,
        handler,
    })
}

/// A `prompts/get` result holds a `messages` list.
fn has_messages(result: &Map<String, Value>) -> Result<(), String> {
    holds_list(result, "messages", "prompts/get")
}

/// One answer as written: an error, or a result (an object `check` accepts).
fn answer(
    item: Value,
    check: fn(&Map<String, Value>) -> Result<(), String>,
) -> Result<Answer, String> {
    let Value::Object(map) = &item else {
        return Err("an answer is a result (an object) or {\"error\": {...}}".into());
    };
    if !map.contains_key("error") {
        check(map)?;
        return Ok(Answer::Result(item));
    }
    let ErrorAnswer { error } = serde_json::from_value(item).map_err(|e| e.to_string())?;
    let e = ErrorObject::new(error.code, error.message);
    Ok(Answer::Error(match error.data {
        Some(d) => e.with_data(d),
        None => e,
    }))
}
