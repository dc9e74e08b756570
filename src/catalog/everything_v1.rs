//! The reference server's legacy surface (v1, `everything.ts`, npm `0.6.2` … `2025.12.18`):
//! camelCase tools, `test://static/resource/1..100`, `simple_prompt` / `complex_prompt` /
//! `resource_prompt`, v1 completions, and the automatic per-session timers (resource updates
//! every 10 s, random log messages every 15 s).
//!
//! v1 answered every failure (bad arguments, thrown handler errors, unknown resources and
//! prompts) with a JSON-RPC `-32603` error carrying the bare message, not an `isError`
//! result; the tools here do the same. Argument errors reproduce zod v3's issue list
//! (`JSON.stringify(issues, null, 2)`), so each tool checks its own arguments instead of the
//! core's JSON Schema validator. See `docs/catalog-everything-v1.md` for the deliberate
//! differences from the reference.

use super::{js_string, object, schema, starts_with, string_arg, text_result, user_text};
use crate::error::Error;
use crate::jsnum;
use crate::jsonrpc::{code, ErrorObject};
use crate::protocol::LogLevel;
use crate::server::pagination::Page;
use crate::server::registry::{
    complete_fn, prompt_fn, resource_fn, template_fn, tool_fn, CompletionKey, ErrorDialect,
    HandlerError, Prompt, Registry, Resource, ResourceTemplate, Tool, ToolFn,
};
use crate::server::session::Session;
use crate::server::Server;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Our own tiny image: an 8×8 teal/orange diagonal-striped RGB PNG (91 bytes), generated for
/// this project. The reference sends its 20×20 MCP logo instead.
pub const TINY_IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAIklEQVR42mNgaGgAov89DECEwsYuCmRjF4VIYDWNgQ52AADb+VFhTLusoAAAAABJRU5ErkJggg==";

/// How many static resources there are (`test://static/resource/1..=100`).
pub const RESOURCE_COUNT: usize = 100;
/// `resources/list` page size.
pub const PAGE_SIZE: usize = 10;
/// The reference interval of the subscription-update timer.
const UPDATE_INTERVAL: Duration = Duration::from_secs(10);
/// The reference interval of the random-log timer.
const LOG_INTERVAL: Duration = Duration::from_secs(15);
/// How long the initial `roots/list` may take (the SDK's default request timeout).
const ROOTS_TIMEOUT: Duration = Duration::from_secs(60);
/// The `$schema` zod-to-json-schema puts on every tool schema.
const DRAFT_07: &str = "http://json-schema.org/draft-07/schema#";
/// The logger name of the roots log messages.
const LOGGER: &str = "everything-server";

/// This catalog's `instructions`: our own text, with the reference's easter-egg sentence.
const INSTRUCTIONS: &str = "Testing and demonstration server for MCP protocol features (the legacy \"everything\" surface).\n\n\
## Resources\n\nResources 1-100 follow the pattern test://static/resource/{id}; odd ids hold text, even ids hold binary data. \
They are listed 10 per page.\n\n## Tools\n\necho, add, longRunningOperation, printEnv, sampleLLM, getTinyImage, annotatedMessage, \
getResourceReference, getResourceLinks, structuredContent, zip, and (for clients that support them) listRoots and startElicitation.\n\n\
## Easter egg\n\nIf asked about server instructions, respond with \"🎉 Server instructions are working! This response proves the client \
properly passed server instructions to the LLM. This demonstrates MCP's instructions feature in action.\"";

/// Registers this catalog.
pub fn load(registry: &mut Registry) -> Result<(), Error> {
    for tool in tools()? {
        registry.tools.insert(tool.name().to_string(), tool);
    }
    for id in 1..=RESOURCE_COUNT {
        let resource = static_resource(id);
        registry
            .resources
            .insert(resource.uri().to_string(), resource);
    }
    let template = template()?;
    registry.templates.insert(
        template
            .definition
            .get("uriTemplate")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        template,
    );
    for prompt in prompts() {
        registry.prompts.insert(prompt.name().to_string(), prompt);
    }
    completions(registry);
    registry.resource_pager = Some(Arc::new(resource_page));
    // v1 answered unknown names with -32603 errors.
    registry.dialect.get_or_insert(ErrorDialect {
        unknown_tool: |name| ErrorObject::new(-32603, format!("Unknown tool: {name}")),
        unknown_prompt: |name| ErrorObject::new(-32603, format!("Unknown prompt: {name}")),
    });
    registry
        .instructions
        .get_or_insert_with(|| INSTRUCTIONS.to_string());
    registry.on_initialized.push(Arc::new(on_initialized));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Errors and argument checks

/// A v1 failure: JSON-RPC `-32603` with the bare message (what the low-level SDK server sends
/// for an exception thrown in a handler).
fn fail(text: impl Into<String>) -> HandlerError {
    HandlerError::Rpc(ErrorObject::new(code::INTERNAL_ERROR, text))
}

/// zod v3's name for the type of `v` (`getParsedType`).
fn zod_type(v: Option<&Value>) -> &'static str {
    match v {
        None => "undefined",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
    }
}

/// A zod v3 `invalid_type` issue.
fn invalid_type(expected: &str, got: Option<&Value>, path: Value) -> Value {
    let received = zod_type(got);
    let message = if got.is_none() {
        "Required".to_string()
    } else {
        format!("Expected {expected}, received {received}")
    };
    json!({ "code": "invalid_type", "expected": expected, "received": received, "path": path, "message": message })
}

/// Whether `s` parses as an absolute URL (it has a scheme), as zod's `.url()` needs.
fn looks_like_url(s: &str) -> bool {
    s.split_once(':').is_some_and(|(scheme, _)| {
        let mut chars = scheme.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// Checks `args` against a v1 input schema the way its zod original parsed them, property by
/// property in schema order: defaults filled in, `trimmed` strings trimmed, extra keys kept.
/// Returns zod v3 issues (empty when the arguments are fine).
fn zod_issues(schema: &Value, args: &mut Map<String, Value>, trimmed: &[&str]) -> Vec<Value> {
    let mut issues = Vec::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return issues;
    };
    for (name, prop) in properties {
        if !args.contains_key(name) {
            if let Some(default) = prop.get("default") {
                args.insert(name.clone(), default.clone());
            }
        }
        if trimmed.contains(&name.as_str()) {
            if let Some(Value::String(s)) = args.get_mut(name) {
                *s = s.trim().to_string();
            }
        }
        let value = args.get(name);
        let path = json!([name]);
        if let Some(options) = prop.get("enum").and_then(Value::as_array) {
            match value {
                Some(v) if options.contains(v) => {}
                Some(Value::String(s)) => {
                    let expected: Vec<String> = options
                        .iter()
                        .map(|o| format!("'{}'", js_string(o)))
                        .collect();
                    issues.push(json!({
                        "received": s,
                        "code": "invalid_enum_value",
                        "options": options,
                        "path": path,
                        "message": format!("Invalid enum value. Expected {}, received '{s}'", expected.join(" | "))
                    }));
                }
                other => {
                    let expected: Vec<String> = options
                        .iter()
                        .map(|o| format!("'{}'", js_string(o)))
                        .collect();
                    issues.push(invalid_type(&expected.join(" | "), other, path));
                }
            }
            continue;
        }
        let expected = prop.get("type").and_then(Value::as_str).unwrap_or("any");
        match (expected, value) {
            ("number", Some(Value::Number(n))) => {
                let n = n.as_f64().unwrap_or_default();
                if let Some(min) = prop.get("minimum").and_then(Value::as_f64) {
                    if n < min {
                        issues.push(json!({ "code": "too_small", "minimum": jsnum::to_json(min), "type": "number", "inclusive": true, "exact": false,
                            "message": format!("Number must be greater than or equal to {}", jsnum::format(min)), "path": path }));
                        continue;
                    }
                }
                if let Some(max) = prop.get("maximum").and_then(Value::as_f64) {
                    if n > max {
                        issues.push(json!({ "code": "too_big", "maximum": jsnum::to_json(max), "type": "number", "inclusive": true, "exact": false,
                            "message": format!("Number must be less than or equal to {}", jsnum::format(max)), "path": path }));
                    }
                }
            }
            ("string", Some(Value::String(s))) => {
                if let Some(min) = prop.get("minLength").and_then(Value::as_u64) {
                    if (s.encode_utf16().count() as u64) < min {
                        issues.push(json!({ "code": "too_small", "minimum": min, "type": "string", "inclusive": true, "exact": false,
                            "message": format!("String must contain at least {min} character(s)"), "path": path }));
                    }
                }
            }
            ("boolean", Some(Value::Bool(_))) => {}
            ("object", Some(Value::Object(record))) => {
                // The only object argument in v1 is `zip`'s `files`: a record of URL strings.
                for (key, v) in record {
                    let path = json!([name, key]);
                    match v {
                        Value::String(s) if looks_like_url(s) => {}
                        Value::String(_) => issues.push(json!({ "validation": "url", "code": "invalid_string", "message": "Invalid url", "path": path })),
                        other => issues.push(invalid_type("string", Some(other), path)),
                    }
                }
            }
            ("any", _) => {}
            (_, got) => issues.push(invalid_type(expected, got, path)),
        }
    }
    issues
}

/// A v1 tool: the definition gets `additionalProperties:false` and `$schema` (as
/// zod-to-json-schema emits them); arguments are checked zod-style by the wrapper, and a
/// failure is a `-32603` whose message is the pretty-printed zod issues.
fn v1_tool(
    definition: Value,
    trimmed: &'static [&'static str],
    handler: ToolFn,
) -> Result<Tool, Error> {
    let mut definition = definition;
    if let Some(schema) = definition
        .get_mut("inputSchema")
        .and_then(Value::as_object_mut)
    {
        schema.insert("additionalProperties".into(), false.into());
        schema.insert("$schema".into(), DRAFT_07.into());
    }
    let schema = definition.get("inputSchema").cloned().unwrap_or_default();
    let checked = tool_fn(move |ctx, mut args| {
        let issues = zod_issues(&schema, &mut args, trimmed);
        let handler = handler.clone();
        async move {
            if !issues.is_empty() {
                let text = serde_json::to_string_pretty(&issues).unwrap_or_default();
                return Err(fail(text));
            }
            handler(ctx, args).await
        }
    });
    let mut tool = Tool::new(definition, checked)?;
    // The wrapper checks the arguments (with v1's error shape); let the core accept anything.
    tool.validator = Arc::new(
        jsonschema::validator_for(&json!({}))
            .map_err(|e| Error::Definition(format!("empty schema: {e}")))?,
    );
    Ok(tool)
}

/// A number argument (defaults were filled in by the check).
fn number(args: &Map<String, Value>, key: &str) -> f64 {
    args.get(key).and_then(Value::as_f64).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Static resources

/// The URI of static resource `id` (1-based).
fn resource_uri(id: usize) -> String {
    format!("test://static/resource/{id}")
}

/// Resource `id` (1..=100) as v1 builds it: `{uri, name, mimeType, text|blob}`. The 0-based
/// index decides: even index (odd id) → text, odd index (even id) → blob.
pub fn resource_object(id: usize) -> Value {
    let uri = resource_uri(id);
    let name = format!("Resource {id}");
    if id % 2 == 1 {
        json!({ "uri": uri, "name": name, "mimeType": "text/plain",
                "text": format!("Resource {id}: This is a plaintext resource") })
    } else {
        json!({ "uri": uri, "name": name, "mimeType": "application/octet-stream",
                "blob": STANDARD.encode(format!("Resource {id}: This is a base64 blob")) })
    }
}

/// A listed static resource; its list entry carries the content inline (a v1 quirk).
fn static_resource(id: usize) -> Resource {
    let contents = resource_object(id);
    Resource {
        definition: object(contents.clone()),
        handler: resource_fn(move |_, _| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        }),
    }
}

/// `test://static/resource/{id}`: the same contents for 1..=100, else `Unknown resource`.
fn template() -> Result<ResourceTemplate, Error> {
    let uri_template = "test://static/resource/{id}";
    ResourceTemplate::new(
        json!({
            "uriTemplate": uri_template,
            "name": "Static Resource",
            "description": "A static resource with a numeric ID"
        }),
        template_fn(|_, uri, vars| async move {
            let id = vars
                .get("id")
                .and_then(Value::as_str)
                .and_then(|s| s.parse::<usize>().ok())
                .filter(|id| (1..=RESOURCE_COUNT).contains(id) && resource_uri(*id) == uri);
            match id {
                Some(id) => Ok(vec![resource_object(id)]),
                None => Err(fail(format!("Unknown resource: {uri}"))),
            }
        }),
    )
}

/// v1's `resources/list` paging: 10 per page, cursor `btoa(String(startIndex))`. A cursor
/// that decodes to a non-number restarts at 0; one that is not base64 is a `-32603`.
pub fn resource_page(len: usize, params: &Map<String, Value>) -> Result<Page, ErrorObject> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => {
            let bytes = STANDARD.decode(c).map_err(|_| {
                ErrorObject::new(
                    code::INTERNAL_ERROR,
                    "Failed to execute 'atob' on 'Window': The string to be decoded is not correctly encoded.",
                )
            })?;
            String::from_utf8_lossy(&bytes)
                .trim()
                .parse::<usize>()
                .unwrap_or(0)
        }
        Some(other) => js_parse_int(&js_string(other)).map_or(0, |n| n.max(0) as usize),
    };
    let start = start.min(len);
    let end = (start + PAGE_SIZE).min(len);
    Ok(Page {
        start,
        end,
        next_cursor: (end < len).then(|| STANDARD.encode(end.to_string())),
    })
}

// ---------------------------------------------------------------------------------------------
// Tools

fn tools() -> Result<Vec<Tool>, Error> {
    Ok(vec![
        echo()?,
        add()?,
        long_running_operation()?,
        print_env()?,
        sample_llm()?,
        get_tiny_image()?,
        annotated_message()?,
        get_resource_reference()?,
        get_resource_links()?,
        structured_content()?,
        zip()?,
        list_roots()?.requiring("roots"),
        start_elicitation()?.requiring("elicitation"),
    ])
}

fn echo() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "echo",
            "description": "Echoes back the input",
            "inputSchema": schema(json!({ "message": { "type": "string", "description": "Message to echo" } }), &["message"])
        }),
        &[],
        tool_fn(|_, args| async move {
            Ok(text_result(format!(
                "Echo: {}",
                string_arg(&args, "message")
            )))
        }),
    )
}

fn add() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "add",
            "description": "Adds two numbers",
            "inputSchema": schema(json!({
                "a": { "type": "number", "description": "First number" },
                "b": { "type": "number", "description": "Second number" }
            }), &["a", "b"])
        }),
        &[],
        tool_fn(|_, args| async move {
            let (a, b) = (number(&args, "a"), number(&args, "b"));
            Ok(text_result(crate::catalog::sum_text(a, b)))
        }),
    )
}

fn long_running_operation() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "longRunningOperation",
            "description": "Demonstrates a long running operation with progress updates",
            "inputSchema": schema(json!({
                "duration": { "type": "number", "default": 10, "description": "Duration of the operation in seconds" },
                "steps": { "type": "number", "default": 5, "description": "Number of steps in the operation" }
            }), &[])
        }),
        &[],
        tool_fn(|ctx, args| async move {
            let (duration, steps) = (number(&args, "duration"), number(&args, "steps"));
            crate::catalog::long_running_operation(&ctx, duration, steps)
                .await
                .ok_or_else(|| fail("cancelled"))
        }),
    )
}

fn print_env() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "printEnv",
            "description": "Prints all environment variables, helpful for debugging MCP server configuration",
            "inputSchema": schema(json!({}), &[])
        }),
        &[],
        tool_fn(
            |ctx, _| async move { Ok(text_result(super::env_json(ctx.server.config.expose_env))) },
        ),
    )
}

/// The SDK's error for a server request the client has no capability for.
fn unsupported(
    ctx: &crate::server::context::RequestContext,
    capability: &str,
    method: &str,
) -> Option<HandlerError> {
    ctx.client_capabilities()
        .get(capability)
        .is_none()
        .then(|| {
            fail(format!(
                "Client does not support {capability} (required for {method})"
            ))
        })
}

/// The text of a sampling result's content (one block or an array of blocks), concatenated.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        Some(block) => block
            .get("text")
            .map_or_else(|| "undefined".to_string(), js_string),
        None => "undefined".to_string(),
    }
}

fn sample_llm() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "sampleLLM",
            "description": "Samples from an LLM using MCP's sampling feature",
            "inputSchema": schema(json!({
                "prompt": { "type": "string", "description": "The prompt to send to the LLM" },
                "maxTokens": { "type": "number", "default": 100, "description": "Maximum number of tokens to generate" }
            }), &["prompt"])
        }),
        &[],
        tool_fn(|ctx, args| async move {
            if let Some(e) = unsupported(&ctx, "sampling", "sampling/createMessage") {
                return Err(e);
            }
            let params = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Resource sampleLLM context: {}", string_arg(&args, "prompt")) } }],
                "systemPrompt": "You are a helpful test server.",
                "maxTokens": jsnum::to_json(number(&args, "maxTokens")),
                "temperature": 0.7,
                "includeContext": "thisServer"
            });
            let result = ctx.sample(params).await.map_err(|e| fail(e.message))?;
            Ok(text_result(format!(
                "LLM sampling result: {}",
                content_text(result.get("content"))
            )))
        }),
    )
}

fn get_tiny_image() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "getTinyImage",
            "description": "Returns the MCP_TINY_IMAGE",
            "inputSchema": schema(json!({}), &[])
        }),
        &[],
        tool_fn(|_, _| async move {
            Ok(json!({ "content": [
                { "type": "text", "text": "This is a tiny image:" },
                { "type": "image", "data": TINY_IMAGE, "mimeType": "image/png" },
                { "type": "text", "text": "The image above is the MCP tiny image." }
            ] }))
        }),
    )
}

fn annotated_message() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "annotatedMessage",
            "description": "Demonstrates how annotations can be used to provide metadata about content",
            "inputSchema": schema(json!({
                "messageType": { "type": "string", "enum": ["error", "success", "debug"], "description": "Type of message to demonstrate different annotation patterns" },
                "includeImage": { "type": "boolean", "default": false, "description": "Whether to include an example image" }
            }), &["messageType"])
        }),
        &[],
        tool_fn(|_, args| async move {
            let mut content = vec![match string_arg(&args, "messageType").as_str() {
                "error" => {
                    json!({ "type": "text", "text": "Error: Operation failed", "annotations": { "priority": 1, "audience": ["user", "assistant"] } })
                }
                "success" => {
                    json!({ "type": "text", "text": "Operation completed successfully", "annotations": { "priority": 0.7, "audience": ["user"] } })
                }
                _ => {
                    json!({ "type": "text", "text": "Debug: Cache hit ratio 0.95, latency 150ms", "annotations": { "priority": 0.3, "audience": ["assistant"] } })
                }
            }];
            if args.get("includeImage").and_then(Value::as_bool) == Some(true) {
                content.push(json!({ "type": "image", "data": TINY_IMAGE, "mimeType": "image/png", "annotations": { "priority": 0.5, "audience": ["user"] } }));
            }
            Ok(json!({ "content": content }))
        }),
    )
}

/// The static resource with this numeric id, if it is an integer in 1..=100.
fn resource_by_number(n: f64) -> Option<usize> {
    (n.fract() == 0.0 && (1.0..=RESOURCE_COUNT as f64).contains(&n)).then_some(n as usize)
}

fn get_resource_reference() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "getResourceReference",
            "description": "Returns a resource reference that can be used by MCP clients",
            "inputSchema": schema(json!({
                "resourceId": { "type": "number", "minimum": 1, "maximum": 100, "description": "ID of the resource to reference (1-100)" }
            }), &["resourceId"])
        }),
        &[],
        tool_fn(|_, args| async move {
            let n = number(&args, "resourceId");
            let id = resource_by_number(n).ok_or_else(|| {
                fail(format!(
                    "Resource with ID {} does not exist",
                    jsnum::format(n)
                ))
            })?;
            let mut resource = resource_object(id);
            if let Some(r) = resource.as_object_mut() {
                r.shift_remove("name");
            }
            Ok(json!({ "content": [
                { "type": "text", "text": format!("Returning resource reference for Resource {id}:") },
                { "type": "resource", "resource": resource },
                { "type": "text", "text": format!("You can access this resource using the URI: {}", resource_uri(id)) }
            ] }))
        }),
    )
}

fn get_resource_links() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "getResourceLinks",
            "description": "Returns multiple resource links that reference different types of resources",
            "inputSchema": schema(json!({
                "count": { "type": "number", "minimum": 1, "maximum": 10, "default": 3, "description": "Number of resource links to return (1-10)" }
            }), &[])
        }),
        &[],
        tool_fn(|_, args| async move {
            let count = number(&args, "count");
            let mut content = vec![json!({ "type": "text", "text": format!(
                "Here are {} resource links to resources available in this server (see full output in tool response if your client does not support resource_link yet):",
                jsnum::format(count)
            ) })];
            let mut id = 1;
            while (id as f64) <= count {
                let text = id % 2 == 1;
                content.push(json!({
                    "type": "resource_link",
                    "uri": resource_uri(id),
                    "name": format!("Resource {id}"),
                    "description": format!("Resource {id}: {}", if text { "plaintext resource" } else { "binary blob resource" }),
                    "mimeType": if text { "text/plain" } else { "application/octet-stream" }
                }));
                id += 1;
            }
            Ok(json!({ "content": content }))
        }),
    )
}

fn structured_content() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "structuredContent",
            "description": "Returns structured content along with an output schema for client data validation",
            "inputSchema": schema(json!({
                "location": { "type": "string", "minLength": 1, "description": "City name or zip code" }
            }), &["location"]),
            "outputSchema": {
                "type": "object",
                "properties": {
                    "temperature": { "type": "number", "description": "Temperature in celsius" },
                    "conditions": { "type": "string", "description": "Weather conditions description" },
                    "humidity": { "type": "number", "minimum": 0, "maximum": 100, "description": "Humidity percentage" }
                },
                "required": ["temperature", "conditions", "humidity"],
                "additionalProperties": false,
                "$schema": DRAFT_07
            }
        }),
        &["location"],
        tool_fn(|_, _| async move {
            let weather =
                json!({ "temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65 });
            Ok(json!({
                "content": [{ "type": "text", "text": weather.to_string() }],
                "structuredContent": weather
            }))
        }),
    )
}

// --- zip --------------------------------------------------------------------------------------

/// CRC-32 (IEEE), as zip files need.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A zip archive of `files` (name, bytes), stored without compression (JSZip's default), with
/// a fixed 1980-01-01 timestamp so the output is reproducible.
pub fn zip_store(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let (mut out, mut central) = (Vec::new(), Vec::new());
    let le16 = |v: &mut Vec<u8>, n: u16| v.extend_from_slice(&n.to_le_bytes());
    let le32 = |v: &mut Vec<u8>, n: u32| v.extend_from_slice(&n.to_le_bytes());
    for (name, data) in files {
        let (crc, size, offset) = (crc32(data), data.len() as u32, out.len() as u32);
        let flags: u16 = if name.is_ascii() { 0 } else { 0x0800 };
        le32(&mut out, 0x0403_4b50);
        for n in [10, flags, 0, 0, 0x21] {
            le16(&mut out, n); // version, flags, method (store), time, date (1980-01-01)
        }
        for n in [crc, size, size] {
            le32(&mut out, n);
        }
        le16(&mut out, name.len() as u16);
        le16(&mut out, 0);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);

        le32(&mut central, 0x0201_4b50);
        for n in [20, 10, flags, 0, 0, 0x21] {
            le16(&mut central, n);
        }
        for n in [crc, size, size] {
            le32(&mut central, n);
        }
        for n in [name.len() as u16, 0, 0, 0, 0] {
            le16(&mut central, n);
        }
        le32(&mut central, 0);
        le32(&mut central, offset);
        central.extend_from_slice(name.as_bytes());
    }
    let (cd_offset, cd_size) = (out.len() as u32, central.len() as u32);
    out.extend_from_slice(&central);
    le32(&mut out, 0x0605_4b50);
    for n in [0, 0, files.len() as u16, files.len() as u16] {
        le16(&mut out, n);
    }
    le32(&mut out, cd_size);
    le32(&mut out, cd_offset);
    le16(&mut out, 0);
    out
}

fn zip() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "zip",
            "description": "Compresses the provided resource files (mapping of name to URI, which can be a data URI) to a zip file, which it returns as a data URI resource link.",
            "inputSchema": schema(json!({
                "files": {
                    "type": "object",
                    "additionalProperties": { "type": "string", "format": "uri", "description": "URL of the file to include in the zip" },
                    "description": "Mapping of file names to URLs to include in the zip"
                }
            }), &["files"])
        }),
        &[],
        tool_fn(|_, args| async move {
            let mut files = Vec::new();
            for (name, url) in args
                .get("files")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let url = url.as_str().unwrap_or_default();
                let data = super::data_url::bytes(url)
                    .ok_or("fetch failed")
                    .map_err(|e| fail(format!("Error fetching file {url}: {e}")))?;
                files.push((name.clone(), data));
            }
            let uri = format!(
                "data:application/zip;base64,{}",
                STANDARD.encode(zip_store(&files))
            );
            Ok(
                json!({ "content": [{ "type": "resource_link", "name": "files.zip", "mimeType": "application/zip", "uri": uri }] }),
            )
        }),
    )
}

// --- roots and elicitation ----------------------------------------------------------------------

/// The `listRoots` text for a `roots/list` result.
pub fn roots_text(roots: &[Value]) -> String {
    if roots.is_empty() {
        return "The client supports roots but no roots are currently configured.\n\nThis could mean:\n1. The client hasn't provided any roots yet\n2. The client provided an empty roots list\n3. The roots configuration is still being loaded".into();
    }
    let items: Vec<String> = roots
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let name = r
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .unwrap_or("Unnamed Root");
            let uri = r.get("uri").map(js_string).unwrap_or_default();
            format!("{}. {name}\n   URI: {uri}", i + 1)
        })
        .collect();
    format!(
        "Current MCP Roots ({} total):\n\n{}\n\nNote: This server demonstrates the roots protocol capability but doesn't actually access files. The roots are provided by the MCP client and can be used by servers that need file system access.",
        roots.len(),
        items.join("\n\n")
    )
}

fn list_roots() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "listRoots",
            "description": "Lists the current MCP roots provided by the client. Demonstrates the roots protocol capability even though this server doesn't access files.",
            "inputSchema": schema(json!({}), &[])
        }),
        &[],
        tool_fn(|ctx, _| async move {
            if ctx.client_capabilities().get("roots").is_none() {
                return Ok(text_result("The MCP client does not support the roots protocol.\n\nThis means the server cannot access information about the client's workspace directories or file system roots.".into()));
            }
            let result = ctx.list_roots().await.map_err(|e| fail(e.message))?;
            let roots = result
                .get("roots")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Ok(text_result(roots_text(&roots)))
        }),
    )
}

fn start_elicitation() -> Result<Tool, Error> {
    v1_tool(
        json!({
            "name": "startElicitation",
            "description": "Elicitation test tool that demonstrates how to request user input with various field types (string, boolean, email, uri, date, integer, number, enum)",
            "inputSchema": schema(json!({}), &[])
        }),
        &[],
        tool_fn(|ctx, _| async move {
            if let Some(e) = unsupported(&ctx, "elicitation", "elicitation/create") {
                return Err(e);
            }
            let params = json!({
                "message": "Please provide inputs for the following fields:",
                "requestedSchema": super::elicitation::form()
            });
            let result = ctx.elicit(params).await.map_err(|e| fail(e.message))?;
            Ok(json!({ "content": super::elicitation::summary(&result) }))
        }),
    )
}

// ---------------------------------------------------------------------------------------------
// Prompts and completions

/// JavaScript's `parseInt(s, 10)`: optional whitespace and sign, then the leading digits.
pub fn js_parse_int(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (sign, digits) = match t.as_bytes().first() {
        Some(b'-') => (-1, &t[1..]),
        Some(b'+') => (1, &t[1..]),
        _ => (1, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end]
        .parse::<i64>()
        .ok()
        .map(|n| n.saturating_mul(sign))
}

fn prompts() -> Vec<Prompt> {
    vec![
        Prompt {
            definition: object(
                json!({ "name": "simple_prompt", "description": "A prompt without arguments" }),
            ),
            handler: prompt_fn(|_, _| async {
                Ok(
                    json!({ "messages": [user_text("This is a simple prompt without arguments.".into())] }),
                )
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "complex_prompt",
                "description": "A prompt with arguments",
                "arguments": [
                    { "name": "temperature", "description": "Temperature setting", "required": true },
                    { "name": "style", "description": "Output style", "required": false }
                ]
            })),
            handler: prompt_fn(|_, args| async move {
                let arg = |k: &str| {
                    args.get(k)
                        .map_or_else(|| "undefined".to_string(), js_string)
                };
                Ok(json!({ "messages": [
                    user_text(format!("This is a complex prompt with arguments: temperature={}, style={}", arg("temperature"), arg("style"))),
                    { "role": "assistant", "content": { "type": "text", "text": "I understand. You've provided a complex prompt with temperature and style arguments. How would you like me to proceed?" } },
                    { "role": "user", "content": { "type": "image", "data": TINY_IMAGE, "mimeType": "image/png" } }
                ] }))
            }),
        },
        Prompt {
            definition: object(json!({
                "name": "resource_prompt",
                "description": "A prompt that includes an embedded resource reference",
                "arguments": [{ "name": "resourceId", "description": "Resource ID to include (1-100)", "required": true }]
            })),
            handler: prompt_fn(|_, args| async move {
                let raw = args
                    .get("resourceId")
                    .map_or_else(|| "undefined".to_string(), js_string);
                let id = js_parse_int(&raw)
                    .filter(|n| (1..=RESOURCE_COUNT as i64).contains(n))
                    .ok_or_else(|| {
                        fail(format!(
                            "Invalid resourceId: {raw}. Must be a number between 1 and 100."
                        ))
                    })?;
                Ok(json!({ "messages": [
                    user_text(format!("This prompt includes Resource {id}. Please analyze the following resource:")),
                    { "role": "user", "content": { "type": "resource", "resource": resource_object(id as usize) } }
                ] }))
            }),
        },
    ]
}

/// v1's completion values by argument name (the prompt name is ignored).
const PROMPT_COMPLETIONS: [(&str, &[&str]); 3] = [
    ("style", &["casual", "formal", "technical", "friendly"]),
    ("temperature", &["0", "0.5", "0.7", "1.0"]),
    ("resourceId", &["1", "2", "3", "4", "5"]),
];

/// Resource ids offered for `ref/resource` completion.
const RESOURCE_ID_COMPLETIONS: &[&str] = &["1", "2", "3", "4", "5"];

fn prefix_completer(values: &'static [&'static str]) -> crate::server::registry::CompleteFn {
    complete_fn(move |_, _, value, _| async move { Ok(starts_with(values, &value)) })
}

fn completions(registry: &mut Registry) {
    for prompt in ["simple_prompt", "complex_prompt", "resource_prompt"] {
        for (argument, values) in PROMPT_COMPLETIONS {
            registry.completions.insert(
                CompletionKey {
                    ref_type: "ref/prompt".into(),
                    ref_name: prompt.into(),
                    argument: argument.into(),
                },
                prefix_completer(values),
            );
        }
    }
    registry.completions.insert(
        CompletionKey {
            ref_type: "ref/resource".into(),
            ref_name: "test://static/resource/{id}".into(),
            argument: "id".into(),
        },
        prefix_completer(RESOURCE_ID_COMPLETIONS),
    );
}

// ---------------------------------------------------------------------------------------------
// Per-session timers and roots

/// On `notifications/initialized`: the roots handshake and the two automatic timers.
fn on_initialized(server: Arc<Server>, session: Arc<Session>) {
    let capabilities = session.read(|s| s.client_capabilities.clone());
    if capabilities.get("roots").is_some() {
        let session = session.clone();
        tokio::spawn(async move {
            let asked = tokio::time::timeout(
                ROOTS_TIMEOUT,
                session.request(&session.sink, "roots/list", None),
            )
            .await
            .unwrap_or_else(|_| Err(ErrorObject::new(code::INTERNAL_ERROR, "Request timed out")));
            let (level, data) = match asked {
                Ok(r) => match r.get("roots").and_then(Value::as_array).map_or(0, Vec::len) {
                    0 => (
                        LogLevel::Warning,
                        "Client returned no roots set".to_string(),
                    ),
                    n => (
                        LogLevel::Info,
                        format!("Initial roots received: {n} root(s) from client"),
                    ),
                },
                Err(e) => (
                    LogLevel::Error,
                    format!("Failed to request initial roots from client: {}", e.message),
                ),
            };
            session.log_to(&session.sink, level, Value::String(data), Some(LOGGER));
        });
    } else {
        session.log_to(
            &session.sink,
            LogLevel::Info,
            "Client does not support MCP roots protocol".into(),
            Some(LOGGER),
        );
    }

    super::every(
        &session,
        server.tick(UPDATE_INTERVAL),
        session.closed.clone(),
        |session| {
            let mut uris: Vec<String> = session.state().subscriptions.into_iter().collect();
            uris.sort();
            for uri in uris {
                session.sink.send(&crate::jsonrpc::Message::notification(
                    "notifications/resources/updated",
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    );

    let mut seed = super::clock_seed();
    super::every(
        &session,
        server.tick(LOG_INTERVAL),
        session.closed.clone(),
        move |session| {
            let (level, text) = super::random_log(&mut seed);
            let data = match super::session_id(session) {
                Some(id) => format!("{text} - SessionId {id}"),
                None => text.to_string(),
            };
            session.log_to(&session.sink, level, Value::String(data), None);
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Map<String, Value> {
        object(v)
    }

    #[test]
    fn pages_with_btoa_cursors() {
        let p = resource_page(100, &Map::new()).unwrap();
        assert_eq!(
            (p.start, p.end, p.next_cursor.as_deref()),
            (0, 10, Some("MTA="))
        );
        let p = resource_page(100, &params(json!({ "cursor": "OTA=" }))).unwrap();
        assert_eq!((p.start, p.end, p.next_cursor), (90, 100, None));
        // Not a number after decoding: restart at 0. Not base64: -32603.
        let p = resource_page(100, &params(json!({ "cursor": "YWJj" }))).unwrap();
        assert_eq!(p.start, 0);
        let e = resource_page(100, &params(json!({ "cursor": "!!" }))).unwrap_err();
        assert_eq!(e.code, code::INTERNAL_ERROR);
    }

    #[test]
    fn resources_alternate_text_and_blob() {
        assert_eq!(
            resource_object(1)["text"],
            "Resource 1: This is a plaintext resource"
        );
        assert_eq!(
            resource_object(2)["blob"],
            "UmVzb3VyY2UgMjogVGhpcyBpcyBhIGJhc2U2NCBibG9i"
        );
        assert_eq!(resource_object(2)["mimeType"], "application/octet-stream");
    }

    #[test]
    fn zod_issues_match_zod_v3() {
        let input = schema(json!({ "message": { "type": "string" } }), &["message"]);
        let issues = zod_issues(&input, &mut Map::new(), &[]);
        assert_eq!(
            serde_json::to_string(&issues).unwrap(),
            r#"[{"code":"invalid_type","expected":"string","received":"undefined","path":["message"],"message":"Required"}]"#
        );
        let input = schema(
            json!({ "count": { "type": "number", "minimum": 1, "maximum": 10, "default": 3 } }),
            &[],
        );
        let mut args = Map::new();
        assert!(zod_issues(&input, &mut args, &[]).is_empty());
        assert_eq!(args["count"], 3);
        let issues = zod_issues(&input, &mut params(json!({ "count": 11 })), &[]);
        assert_eq!(
            issues[0]["message"],
            "Number must be less than or equal to 10"
        );
    }

    #[test]
    fn parse_int() {
        assert_eq!(js_parse_int(" 5abc"), Some(5));
        assert_eq!(js_parse_int("abc"), None);
    }

    #[test]
    fn crc_and_zip() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let z = zip_store(&[("a.txt".into(), b"hi".to_vec())]);
        assert_eq!(&z[..4], b"PK\x03\x04");
        assert_eq!(&z[z.len() - 22..z.len() - 18], b"PK\x05\x06");
    }
}
